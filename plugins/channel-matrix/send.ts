/**
 * Outbound Matrix: one piece → `m.room.message` events (text as HTML-formatted Markdown,
 * files uploaded to the content repository first), and failures → what the kernel should
 * do about them.
 *
 * Every event is sent with a transaction id the sender keeps across its own retries, so a
 * response lost on the way back and sent again is stored once by the homeserver. A 429
 * (`M_LIMIT_EXCEEDED`) is waited out here when the server asks for ten seconds or less,
 * else handed to the kernel with its wait.
 *
 * Targets: `!room:server` (or `room:!…`), `#alias:server`, `@user:server` (or `user:@…`):
 * a person is reached in their DM room — the one they wrote from, else the bot's `m.direct`
 * entry, else a new direct room the bot creates and invites them to.
 */
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChannelSendError, sleepAtLeast, type OutboundMessage, type SendResult } from '../../sdk/channels/index.js';
import { describeError, httpStatus, retryAfterMs, type MatrixApi } from './client.js';
import { textContent } from './format.js';

type Json = any;

/** Where the bot's DM rooms are remembered (the running account's sync state). */
export interface DmDirectory {
  get(userId: string): string | undefined;
  set(userId: string, roomId: string): void;
}

const MAX_ATTEMPTS = 4;
/** A 429 asking for longer than this goes back to the kernel, which owns long waits. */
const INLINE_RATE_LIMIT_MS = 10_000;

const MIME: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ogg': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
};

const enc = encodeURIComponent;

export function newTxnId(): string {
  return `claw.${Date.now().toString(36)}.${randomBytes(6).toString('hex')}`;
}

function localPath(url: string): string | undefined {
  if (url.startsWith('file:')) return fileURLToPath(url);
  return /^[a-z][a-z0-9+.-]*:/i.test(url) ? undefined : url;
}

function msgtypeFor(mimeType: string): string {
  if (mimeType.startsWith('image/')) return 'm.image';
  if (mimeType.startsWith('audio/')) return 'm.audio';
  if (mimeType.startsWith('video/')) return 'm.video';
  return 'm.file';
}

export function toSendError(error: unknown, what: string): ChannelSendError {
  if (error instanceof ChannelSendError) return error;
  const message = `matrix ${what} failed: ${describeError(error)}`;
  const wait = retryAfterMs(error);
  if (wait !== undefined) return new ChannelSendError(message, { retryable: true, retryAfterMs: wait, cause: error });
  const status = httpStatus(error);
  // No status: the request never got an answer (refused, reset, timed out), worth another try.
  return new ChannelSendError(message, { retryable: status === undefined || status >= 500, cause: error });
}

export class MatrixSender {
  private readonly aliases = new Map<string, string>();

  constructor(
    private readonly api: MatrixApi,
    private readonly botUserId: string,
    private readonly dms: DmDirectory,
    private readonly mediaMaxBytes: number,
    /** Told every event id the bot sent (a reply to one of them addresses the bot). */
    private readonly onSent: (eventId: string) => void = () => undefined,
  ) {}

  /** PUT an event under one transaction id, retried here on transport errors and short rate limits. */
  async sendEvent(roomId: string, type: string, content: Json): Promise<string> {
    const txnId = newTxnId();
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await this.api.request(
          'PUT',
          `/rooms/${enc(roomId)}/send/${enc(type)}/${enc(txnId)}`,
          undefined,
          content,
        );
        const eventId = String(answer?.event_id ?? '');
        if (!eventId)
          throw new ChannelSendError('matrix send failed: the homeserver returned no event_id', { retryable: true });
        this.onSent(eventId);
        return eventId;
      } catch (error) {
        const failure = toSendError(error, `sending to ${roomId}`);
        const wait = failure.retryAfterMs ?? 250 * 2 ** (attempt - 1);
        if (!failure.retryable || attempt >= MAX_ATTEMPTS || wait > INLINE_RATE_LIMIT_MS) throw failure;
        await sleepAtLeast(wait);
      }
    }
  }

  /** The room a target names (see the file comment). */
  async roomFor(to: string): Promise<string> {
    const target = to
      .trim()
      .replace(/^matrix:/i, '')
      .replace(/^(room|channel|user):/i, '');
    if (target.startsWith('!')) return target;
    if (target.startsWith('#')) return this.resolveAlias(target);
    if (target.startsWith('@')) return this.directRoom(target);
    throw new ChannelSendError(
      `"${to}" is not a Matrix target: use a room id (!…:server), a room alias (#…:server) or a user id (@…:server)`,
      { retryable: false },
    );
  }

  async resolveAlias(alias: string): Promise<string> {
    const known = this.aliases.get(alias);
    if (known) return known;
    try {
      const answer = await this.api.request('GET', `/directory/room/${enc(alias)}`);
      const roomId = String(answer?.room_id ?? '');
      if (!roomId) throw new Error('no room_id in the answer');
      this.aliases.set(alias, roomId);
      return roomId;
    } catch (error) {
      if (httpStatus(error) === 404)
        throw new ChannelSendError(`the Matrix room alias ${alias} does not exist`, { retryable: false });
      throw toSendError(error, `resolving ${alias}`);
    }
  }

  private async directRoom(userId: string): Promise<string> {
    const known = this.dms.get(userId);
    if (known) return known;
    const path = `/user/${enc(this.botUserId)}/account_data/m.direct`;
    let direct: Record<string, string[]> = {};
    try {
      direct = (await this.api.request('GET', path)) ?? {};
    } catch (error) {
      if (httpStatus(error) !== 404) throw toSendError(error, 'reading m.direct');
    }
    const listed = Array.isArray(direct[userId]) ? direct[userId]!.filter((id) => typeof id === 'string') : [];
    if (listed.length) {
      const roomId = listed[listed.length - 1]!;
      this.dms.set(userId, roomId);
      return roomId;
    }
    try {
      const created = await this.api.request('POST', '/createRoom', undefined, {
        is_direct: true,
        invite: [userId],
        preset: 'trusted_private_chat',
      });
      const roomId = String(created?.room_id ?? '');
      if (!roomId) throw new Error('no room_id in the answer');
      await this.api.request('PUT', path, undefined, { ...direct, [userId]: [...listed, roomId] });
      this.dms.set(userId, roomId);
      return roomId;
    } catch (error) {
      throw toSendError(error, `opening a direct room with ${userId}`);
    }
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const roomId = await this.roomFor(message.to);
    const relation = relationFor(message);
    const links: string[] = [];
    let lastId: string | undefined;
    for (const item of message.media ?? []) {
      const path = localPath(item.url);
      // A web address is not fetched to be re-uploaded: clients show the link.
      if (!path) {
        links.push(item.caption ? `[${item.caption}](${item.url})` : item.url);
        continue;
      }
      const size = (await stat(path).catch(() => undefined))?.size;
      if (size === undefined) throw new ChannelSendError(`matrix: cannot read ${path}`, { retryable: false });
      if (size > this.mediaMaxBytes)
        throw new ChannelSendError(
          `matrix: ${basename(path)} is ${Math.ceil(size / 1024 / 1024)} MB, over mediaMaxMb (${Math.round(this.mediaMaxBytes / 1024 / 1024)} MB)`,
          { retryable: false },
        );
      const mimeType = item.mimeType ?? MIME[extname(path).toLowerCase()] ?? 'application/octet-stream';
      let mxc: string;
      try {
        mxc = await this.api.upload(await readFile(path), basename(path), mimeType);
      } catch (error) {
        throw toSendError(error, `uploading ${basename(path)}`);
      }
      lastId = await this.sendEvent(roomId, 'm.room.message', {
        msgtype: msgtypeFor(mimeType),
        body: item.caption ?? basename(path),
        ...(item.caption ? { filename: basename(path) } : {}),
        url: mxc,
        info: { mimetype: mimeType, size },
        ...relation,
      });
    }
    const text = [message.text ?? '', ...links].filter(Boolean).join('\n');
    if (text) lastId = await this.sendEvent(roomId, 'm.room.message', { ...textContent(text), ...relation });
    return { ...(lastId ? { messageId: lastId } : {}), roomId };
  }

  async typing(roomId: string, typing: boolean): Promise<void> {
    await this.api.request('PUT', `/rooms/${enc(roomId)}/typing/${enc(this.botUserId)}`, undefined, {
      typing,
      ...(typing ? { timeout: 30_000 } : {}),
    });
  }

  react(roomId: string, eventId: string, key: string): Promise<string> {
    return this.sendEvent(roomId, 'm.reaction', {
      'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key },
    });
  }

  async redact(roomId: string, eventId: string): Promise<void> {
    await this.api.request('PUT', `/rooms/${enc(roomId)}/redact/${enc(eventId)}/${enc(newTxnId())}`, undefined, {});
  }

  async readReceipt(roomId: string, eventId: string): Promise<void> {
    await this.api.request('POST', `/rooms/${enc(roomId)}/receipt/m.read/${enc(eventId)}`, undefined, {});
  }
}

/** Threads and quotes: `threadId` puts the piece in the thread, `replyTo` quotes a message. */
export function relationFor(message: Pick<OutboundMessage, 'threadId' | 'replyTo'>): Json {
  if (message.threadId)
    return {
      'm.relates_to': {
        rel_type: 'm.thread',
        event_id: message.threadId,
        // Clients without threads show the piece as a reply to what it answers.
        is_falling_back: !message.replyTo,
        'm.in_reply_to': { event_id: message.replyTo ?? message.threadId },
      },
    };
  if (message.replyTo) return { 'm.relates_to': { 'm.in_reply_to': { event_id: message.replyTo } } };
  return {};
}
