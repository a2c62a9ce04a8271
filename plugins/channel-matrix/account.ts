/**
 * One Matrix login at run time: the /sync loop that turns room events into InboundMessages
 * for the pipeline, the rooms it has joined, its invites, and the sender for replies.
 *
 * Durable intake: a batch's messages are handed to the pipeline one by one — `receive`
 * resolves once a message is journaled — and only then is the batch's `next_batch` stored
 * as the new `since`. A crash in between replays the batch at the next start; the
 * pipeline's persistent dedupe (conversation + event id) drops what it already has, so
 * nothing is missed and nothing is answered twice. A message the pipeline cannot take
 * (shutting down) leaves `since` where it was.
 *
 * First start (no stored `since`): one catch-up sync learns the rooms, DMs and invites and
 * the recent messages (`initialSyncLimit`), which are not answered: they were written before
 * the bot was listening.
 */
import { join } from 'node:path';
import { writeFileAtomicAsync, type Redactor } from '../../sdk/index.js';
import {
  ChannelSendError,
  type ChannelAccountContext,
  type ChannelStatus,
  type InboundMedia,
  type InboundMessage,
} from '../../sdk/channels/index.js';
import {
  createMatrixApi,
  describeError,
  httpStatus,
  isAuthRejected,
  passwordLogin,
  retryAfterMs,
  type MatrixApi,
  type MatrixSdk,
} from './client.js';
import { configPath, type MatrixAccountSettings } from './config.js';
import { applyState, newRoom, parseMessage, type MatrixMedia, type ParsedEvent, type RoomInfo } from './inbound.js';
import { MatrixSender } from './send.js';
import {
  credentialsFile,
  forgetCredentials,
  loadCredentials,
  loadSyncState,
  saveCredentials,
  saveSyncState,
  syncFile,
  type SyncState,
} from './state.js';

type Json = any;

/** How long the homeserver may hold one /sync open when nothing happens. */
export const SYNC_TIMEOUT_MS = 30_000;
/** Events per room in one incremental sync; a busier gap is read back with /messages. */
const TIMELINE_LIMIT = 100;
const MAX_BACKOFF_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 60_000;
/** Event ids remembered for "is this a reply to the bot?" and "which room was that in?". */
const REMEMBERED = 2000;

class Bounded<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }
  override set(key: K, value: V): this {
    super.set(key, value);
    if (this.size > this.limit) this.delete(this.keys().next().value as K);
    return this;
  }
}

export class MatrixAccount {
  readonly accountId: string;
  private currentSender?: MatrixSender;
  private api?: MatrixApi;
  private userId: string;
  private deviceId?: string;
  private state?: SyncState;
  private readonly rooms = new Map<string, RoomInfo>();
  private readonly directRooms = new Set<string>();
  private readonly sentEvents = new Bounded<string, true>(REMEMBERED);
  private readonly sentIds = { has: (id: string) => this.sentEvents.has(id) };
  private readonly eventRooms = new Bounded<string, string>(REMEMBERED);
  private readonly pendingInvites = new Map<string, { inviter?: string; reason: string }>();
  private readonly abort = new AbortController();
  private connected = false;
  private lastError?: string;
  private lastSyncAt?: number;
  private failures = 0;
  private roomsKnown = false;
  private loop?: Promise<void>;
  private stopping?: Promise<void>;

  constructor(
    readonly settings: MatrixAccountSettings,
    private readonly ctx: ChannelAccountContext,
    private readonly sdk: MatrixSdk,
    private readonly redact: Pick<Redactor, 'text' | 'add'>,
  ) {
    this.accountId = settings.accountId;
    this.userId = settings.userId;
  }

  private get where(): string {
    return this.accountId === 'default' ? 'Matrix' : `Matrix account "${this.accountId}"`;
  }

  private warn(line: string): void {
    this.ctx.logger.warn(`${this.where}: ${this.redact.text(line)}`);
  }

  async start(): Promise<void> {
    try {
      await this.login();
    } catch (error) {
      // A homeserver that does not answer yet is retried by the loop; a refused login is final.
      if (httpStatus(error) !== undefined || !(error as Error).message?.includes('cannot reach')) throw error;
      this.lastError = this.redact.text((error as Error).message);
    }
    this.loop = this.run();
  }

  /** Log in (or check the token) and load the sync state for whoever the homeserver says we are. */
  private async login(): Promise<void> {
    const { homeserver, accessToken, password } = this.settings;
    const warn = (line: string) => this.warn(line);
    const reach = async <T>(call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        if (httpStatus(error) === undefined && !(error as { errcode?: string }).errcode)
          throw new Error(`${this.where} cannot reach the homeserver ${homeserver} (${describeError(error)})`);
        throw error;
      }
    };
    let api: MatrixApi | undefined;
    let whoami: Json;
    if (accessToken) {
      api = createMatrixApi(this.sdk, { baseUrl: homeserver, accessToken, warn });
      try {
        whoami = await reach(() => api!.request('GET', '/account/whoami'));
      } catch (error) {
        if (isAuthRejected(error))
          throw new Error(
            `${this.where}: the homeserver rejected the access token (${describeError(error)}): check ${configPath(this.accountId)}.accessToken`,
          );
        throw error;
      }
      if (this.settings.userId && whoami.user_id !== this.settings.userId)
        throw new Error(
          `${this.where}: the access token belongs to ${whoami.user_id}, not ${this.settings.userId} (${configPath(this.accountId)}.userId)`,
        );
    } else {
      const file = credentialsFile(this.ctx.stateDir, this.accountId);
      const cached = loadCredentials(file, homeserver, this.settings.userId);
      if (cached) {
        this.redact.add(cached.accessToken);
        api = createMatrixApi(this.sdk, { baseUrl: homeserver, accessToken: cached.accessToken, warn });
        try {
          whoami = await reach(() => api!.request('GET', '/account/whoami'));
        } catch (error) {
          if (!isAuthRejected(error)) throw error;
          // The device was logged out elsewhere: log in again with the password.
          forgetCredentials(file);
          api = undefined;
        }
      }
      if (!api) {
        let login: Awaited<ReturnType<typeof passwordLogin>>;
        try {
          login = await reach(() =>
            passwordLogin(this.sdk, {
              baseUrl: homeserver,
              userId: this.settings.userId,
              password: password!,
              ...(this.settings.deviceId ? { deviceId: this.settings.deviceId } : {}),
              deviceName: this.settings.deviceName,
              warn,
            }),
          );
        } catch (error) {
          const code = (error as { errcode?: string }).errcode;
          if (code === 'M_FORBIDDEN' || code === 'M_USER_DEACTIVATED')
            throw new Error(
              `${this.where}: the homeserver refused the password for ${this.settings.userId} (${describeError(error)}): check ${configPath(this.accountId)}.password`,
            );
          throw error;
        }
        this.redact.add(login.accessToken);
        saveCredentials(file, { version: 1, homeserver, ...login });
        api = createMatrixApi(this.sdk, { baseUrl: homeserver, accessToken: login.accessToken, warn });
        whoami = { user_id: login.userId, device_id: login.deviceId };
      }
    }
    this.api = api;
    this.userId = String(whoami.user_id);
    this.deviceId = typeof whoami.device_id === 'string' ? whoami.device_id : undefined;
    this.state = loadSyncState(syncFile(this.ctx.stateDir, this.accountId), homeserver, this.userId);
    const state = this.state;
    // An incremental sync carries m.direct only when it changes: read it once per login.
    try {
      this.learnDirect(await api.request('GET', `/user/${encodeURIComponent(this.userId)}/account_data/m.direct`));
    } catch (error) {
      if (httpStatus(error) !== 404) this.warn(`could not read m.direct: ${describeError(error)}`);
    }
    this.currentSender = new MatrixSender(
      api,
      this.userId,
      {
        get: (user) => state.dmRooms[user],
        set: (user, room) => {
          state.dmRooms[user] = room;
          this.saveState();
        },
      },
      this.settings.mediaMaxBytes,
      (eventId) => this.sentEvents.set(eventId, true),
    );
  }

  /** Replies go out through the login's sender; before the first login there is none. */
  get sender(): MatrixSender {
    if (!this.currentSender)
      throw new ChannelSendError(`${this.where} has not logged in yet${this.lastError ? ` (${this.lastError})` : ''}`, {
        retryable: true,
      });
    return this.currentSender;
  }

  private saveState(): void {
    if (this.state) saveSyncState(syncFile(this.ctx.stateDir, this.accountId), this.state);
  }

  private filter(limit: number): string {
    return JSON.stringify({
      room: { timeline: { limit }, state: { lazy_load_members: false } },
      presence: { types: [] },
    });
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        if (!this.api) await this.login();
        const initial = !this.state!.since;
        // The first sync of a run asks for every room's full state: rooms, names, members and
        // DM markers are known before the first message is judged.
        const fullState = !initial && !this.roomsKnown;
        const batch: Json = await this.api!.request(
          'GET',
          '/sync',
          {
            ...(initial ? {} : { since: this.state!.since! }),
            ...(fullState ? { full_state: 'true' } : {}),
            timeout: String(initial ? 0 : SYNC_TIMEOUT_MS),
            filter: this.filter(initial ? this.settings.initialSyncLimit : TIMELINE_LIMIT),
            set_presence: 'offline',
          },
          undefined,
          { signal, timeoutMs: SYNC_TIMEOUT_MS + 30_000 },
        );
        if (signal.aborted) break;
        if (typeof batch?.next_batch !== 'string') throw new Error('the homeserver answered /sync without next_batch');
        this.connected = true;
        this.lastError = undefined;
        this.failures = 0;
        this.lastSyncAt = Date.now();
        await this.processBatch(batch, initial);
        this.roomsKnown = true;
        if (signal.aborted) break;
        this.state!.since = batch.next_batch;
        this.saveState();
      } catch (error) {
        if (signal.aborted) break;
        this.connected = false;
        this.lastError = this.redact.text(`sync: ${describeError(error)}`);
        if (isAuthRejected(error)) {
          // A password account logs in again; a rejected access token waits for a config change.
          if (!this.settings.accessToken) {
            forgetCredentials(credentialsFile(this.ctx.stateDir, this.accountId));
            this.api = undefined;
          } else
            this.lastError = `the homeserver rejected the access token (${describeError(error)}): check ${configPath(this.accountId)}.accessToken`;
        }
        this.failures++;
        const wait = retryAfterMs(error) ?? Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(this.failures, 6));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
  }

  /** The bot's `m.direct` map (person → DM rooms): those rooms are DMs. */
  private learnDirect(content: unknown): void {
    if (!content || typeof content !== 'object') return;
    for (const [user, roomIds] of Object.entries(content as Record<string, unknown>))
      if (Array.isArray(roomIds))
        for (const roomId of roomIds)
          if (typeof roomId === 'string') {
            this.directRooms.add(roomId);
            const room = this.rooms.get(roomId);
            if (room) room.direct = true;
            this.state!.dmRooms[user] ??= roomId;
          }
  }

  /** One /sync answer, in order: DM markers, invites, left rooms, then each joined room's events. */
  private async processBatch(batch: Json, initial: boolean): Promise<void> {
    for (const event of batch.account_data?.events ?? [])
      if (event?.type === 'm.direct') this.learnDirect(event.content);
    for (const [roomId, invite] of Object.entries<Json>(batch.rooms?.invite ?? {}))
      await this.onInvite(roomId, invite?.invite_state?.events ?? []);
    for (const roomId of Object.keys(batch.rooms?.leave ?? {})) {
      this.rooms.delete(roomId);
      this.pendingInvites.delete(roomId);
    }
    for (const [roomId, joined] of Object.entries<Json>(batch.rooms?.join ?? {})) {
      this.pendingInvites.delete(roomId);
      let room = this.rooms.get(roomId);
      if (!room) {
        room = newRoom(roomId);
        room.direct = this.directRooms.has(roomId);
        this.rooms.set(roomId, room);
      }
      for (const event of joined?.state?.events ?? []) applyState(room, event, this.userId);
      let timeline: Json[] = joined?.timeline?.events ?? [];
      if (!initial && joined?.timeline?.limited && typeof joined.timeline.prev_batch === 'string')
        timeline = [...(await this.readGap(roomId, joined.timeline.prev_batch)), ...timeline];
      for (const event of timeline) {
        if (typeof event?.state_key === 'string') {
          applyState(room, event, this.userId);
          continue;
        }
        if (initial) continue;
        if (event?.type === 'm.room.encrypted') {
          this.reportEncrypted(room);
          continue;
        }
        const parsed = parseMessage(event, room, { userId: this.userId, sentEventIds: this.sentIds }, this.settings);
        if (parsed) await this.deliver(parsed);
      }
      if (room.encrypted && !initial) this.reportEncrypted(room);
    }
  }

  /**
   * The events a `limited` timeline left out (more arrived since the last sync than one
   * answer carries), read backwards from `prev_batch` to the stored `since`.
   */
  private async readGap(roomId: string, from: string): Promise<Json[]> {
    const events: Json[] = [];
    let token = from;
    for (let page = 0; page < 20; page++) {
      const answer: Json = await this.api!.request('GET', `/rooms/${encodeURIComponent(roomId)}/messages`, {
        from: token,
        to: this.state!.since!,
        dir: 'b',
        limit: '100',
      });
      const chunk: Json[] = Array.isArray(answer?.chunk) ? answer.chunk : [];
      events.unshift(...chunk.reverse());
      if (chunk.length === 0 || typeof answer.end !== 'string' || answer.end === token) break;
      token = answer.end;
    }
    return events;
  }

  private reportEncrypted(room: RoomInfo): void {
    if (this.state!.reportedEncrypted.includes(room.id)) return;
    this.state!.reportedEncrypted.push(room.id);
    this.warn(
      `room ${room.id}${room.name ? ` ("${room.name}")` : ''} is end-to-end encrypted and claw's Matrix channel does not decrypt (encryption is off): its messages are not read`,
    );
  }

  private async onInvite(roomId: string, stateEvents: Json[]): Promise<void> {
    const own = stateEvents.find((event) => event?.type === 'm.room.member' && event.state_key === this.userId);
    const inviter = typeof own?.sender === 'string' ? own.sender : undefined;
    const direct = own?.content?.is_direct === true;
    const { autoJoin, autoJoinAllowlist } = this.settings;
    let allowed = autoJoin === 'always';
    if (autoJoin === 'allowlist') allowed = await this.onJoinAllowlist(roomId, autoJoinAllowlist);
    if (!allowed) {
      const reason =
        autoJoin === 'off'
          ? `autoJoin is "off" (${configPath(this.accountId)}.autoJoin)`
          : `the room is not in ${configPath(this.accountId)}.autoJoinAllowlist`;
      if (!this.pendingInvites.has(roomId))
        this.ctx.logger.info(
          `${this.where}: invited to ${roomId}${inviter ? ` by ${inviter}` : ''}; not joining: ${reason}`,
        );
      this.pendingInvites.set(roomId, { ...(inviter ? { inviter } : {}), reason });
      return;
    }
    try {
      await this.api!.request('POST', `/join/${encodeURIComponent(roomId)}`, undefined, {});
    } catch (error) {
      this.pendingInvites.set(roomId, {
        ...(inviter ? { inviter } : {}),
        reason: `joining failed: ${describeError(error)}`,
      });
      this.warn(`could not join ${roomId}: ${describeError(error)}`);
      return;
    }
    this.pendingInvites.delete(roomId);
    if (direct) {
      this.directRooms.add(roomId);
      if (inviter) this.state!.dmRooms[inviter] = roomId;
    }
  }

  /** Alias entries are resolved by the homeserver, not by what the invite claims about the room. */
  private async onJoinAllowlist(roomId: string, allowlist: string[]): Promise<boolean> {
    if (allowlist.includes(roomId) || allowlist.includes('*')) return true;
    for (const entry of allowlist.filter((item) => item.startsWith('#'))) {
      const resolved = await this.sender.resolveAlias(entry).catch(() => undefined);
      if (resolved === roomId) return true;
    }
    return false;
  }

  private async deliver(parsed: ParsedEvent): Promise<void> {
    const { inbound: base, roomId } = parsed;
    this.eventRooms.set(base.messageId, roomId);
    // A person's replies go to the DM room they wrote from last (they may have several).
    if (base.peer.kind === 'direct' && base.peer.id === base.sender.id) this.state!.dmRooms[base.sender.id] = roomId;
    const fetched = parsed.media ? await this.fetchMedia(parsed.media, base.messageId) : undefined;
    const inbound: InboundMessage = {
      accountId: this.accountId,
      ...base,
      text: [base.text, fetched?.note].filter(Boolean).join('\n'),
      ...(fetched?.media ? { media: [fetched.media] } : {}),
    };
    const outcome = await this.ctx.receive(inbound);
    // Not taken (shutting down): the batch is not acknowledged, and is synced again.
    if (outcome.status === 'unavailable') throw new Error(outcome.reason);
    if (outcome.status === 'dispatched')
      void this.sender
        .readReceipt(roomId, base.messageId)
        .catch((error) => this.warn(`read receipt for ${base.messageId}: ${describeError(error)}`));
  }

  /**
   * A file from the content repository, saved under `<stateDir>/media/matrix/<account>/`
   * (owner-only, written whole or not at all) and named in the text; images also go inline.
   */
  private async fetchMedia(file: MatrixMedia, eventId: string): Promise<{ media?: InboundMedia; note: string }> {
    const label = `"${file.fileName}"`;
    const max = this.settings.mediaMaxBytes;
    const tooLarge = `[${file.kind} ${label} not downloaded: larger than mediaMaxMb (${Math.round(max / 1024 / 1024)} MB)]`;
    if (file.size !== undefined && file.size > max) return { note: tooLarge };
    const url = this.api!.downloadUrl(file.mxc);
    if (!url) return { note: `[${file.kind} ${label} not downloaded: not a valid mxc:// address]` };
    try {
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${this.api!.accessToken}` },
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)]),
      });
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        size += chunk.length;
        if (size > max) {
          await response.body.cancel().catch(() => undefined);
          return { note: tooLarge };
        }
        chunks.push(Buffer.from(chunk));
      }
      const data = Buffer.concat(chunks);
      const mimeType =
        file.mimeType ?? response.headers.get('content-type')?.split(';')[0] ?? 'application/octet-stream';
      const safeName = file.fileName.replace(/[^\w.-]+/g, '_').slice(0, 100) || 'file';
      const path = join(
        this.ctx.stateDir,
        'media',
        'matrix',
        this.accountId,
        `${eventId.replace(/[^\w]+/g, '_')}-${safeName}`,
      );
      await writeFileAtomicAsync(path, data);
      return {
        media: mimeType.startsWith('image/')
          ? { data: data.toString('base64'), mimeType, fileName: file.fileName }
          : { url: path, mimeType, fileName: file.fileName },
        note: `[${file.kind} ${label} saved to ${path}]`,
      };
    } catch (error) {
      return { note: `[${file.kind} ${label} could not be downloaded: ${this.redact.text(describeError(error))}]` };
    }
  }

  /** The room an inbound event arrived in (for reactions), while it is remembered. */
  roomOf(eventId: string): string | undefined {
    return this.eventRooms.get(eventId);
  }

  room(roomId: string): RoomInfo | undefined {
    return this.rooms.get(roomId);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      await this.loop?.catch(() => undefined);
      this.connected = false;
    })();
    return this.stopping;
  }

  status(): ChannelStatus {
    const encrypted = [...this.rooms.values()].filter((room) => room.encrypted).map((room) => room.id);
    const invites = [...this.pendingInvites].map(([roomId, invite]) => ({ roomId, ...invite }));
    return {
      accountId: this.accountId,
      connected: this.connected,
      running: !this.stopping,
      homeserver: this.settings.homeserver,
      ...(this.userId ? { userId: this.userId, username: this.userId } : {}),
      ...(this.deviceId ? { deviceId: this.deviceId } : {}),
      rooms: this.rooms.size,
      detail: `${this.userId || this.settings.homeserver} in ${this.rooms.size} room${this.rooms.size === 1 ? '' : 's'}${encrypted.length ? `; ${encrypted.length} encrypted (not read: E2EE is off)` : ''}${invites.length ? `; ${invites.length} invite${invites.length === 1 ? '' : 's'} waiting` : ''}`,
      ...(encrypted.length ? { encryptedRooms: encrypted } : {}),
      ...(invites.length ? { pendingInvites: invites } : {}),
      ...(this.lastSyncAt ? { lastSyncAt: this.lastSyncAt } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }
}
