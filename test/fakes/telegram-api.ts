/**
 * A fake Telegram Bot API server on 127.0.0.1 for tests and benchmarks. grammY talks to it
 * through `client.apiRoot`, exactly as it would to api.telegram.org or a self-hosted Bot API
 * server: `POST /bot<token>/<method>` with JSON or multipart bodies, `{ ok, result }` or
 * `{ ok: false, error_code, description, parameters }` answers, file downloads under
 * `/file/bot<token>/<path>`.
 *
 * What it holds to, because the channel relies on it:
 *  - getUpdates is real long polling: `offset` confirms (drops) earlier updates, an empty
 *    queue holds the request up to `timeout` seconds, a second poller ends the first with
 *    409, and polling while a webhook is set is a 409 too.
 *  - With a webhook set, updates are POSTed to it with `X-Telegram-Bot-Api-Secret-Token`.
 *  - HTML parse mode is checked the way Telegram checks it (known tags only, properly
 *    nested, entities escaped); a bad message gets the real 400 "can't parse entities".
 *    Text limits (4096, captions 1024) are counted after parsing.
 *  - Any method can be scripted to fail: an error answer (429 with `retry_after`, 400, 5xx),
 *    a raw non-JSON answer, a dropped connection, or a delay.
 *
 * Every call is recorded with its arrival time (`performance.now()`).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = any;

export interface UploadedFile {
  filename: string;
  data: Buffer;
}

export interface TelegramCall {
  method: string;
  params: Record<string, Json>;
  /** Multipart uploads, by the param that referenced them (`photo`, `document`, …). */
  files: Record<string, UploadedFile>;
  at: number;
  /** HTTP status answered (0 when the connection was dropped). */
  status: number;
  /** When the answer was written (`performance.now()`). */
  answeredAt?: number;
  result?: Json;
  error?: { error_code: number; description: string };
  /** The label of an apiRoot ending in `/<label>` (e.g. one per gateway process in a crash storm). */
  via?: string;
}

export type ScriptedAnswer =
  | { error_code: number; description: string; parameters?: { retry_after?: number; migrate_to_chat_id?: number } }
  | { raw: { status: number; body: string; contentType?: string } }
  | { drop: true }
  | { delayMs: number };

interface Script {
  method: string;
  answer: ScriptedAnswer;
  times: number;
  when?: (params: Record<string, Json>) => boolean;
}

interface PendingUpdate {
  update: Json;
  handed?: () => void;
}

interface LongPoll {
  offset: number;
  limit: number;
  respond(updates: Json[] | null, conflict?: boolean): void;
}

export interface StoredFile {
  fileId: string;
  uniqueId: string;
  path: string;
  data: Buffer;
  /** Delay before the download answers (for ordering tests). */
  delayMs?: number;
}

export interface FakeTelegramOptions {
  token?: string;
  botId?: number;
  username?: string;
}

const SEND_METHODS = [
  'sendMessage',
  'sendPhoto',
  'sendDocument',
  'sendVideo',
  'sendAudio',
  'sendVoice',
  'sendAnimation',
];
const MEDIA_FIELD: Record<string, string> = {
  sendPhoto: 'photo',
  sendDocument: 'document',
  sendVideo: 'video',
  sendAudio: 'audio',
  sendVoice: 'voice',
  sendAnimation: 'animation',
};

export class FakeTelegramApi {
  readonly token: string;
  readonly bot: { id: number; is_bot: true; first_name: string; username: string };
  readonly calls: TelegramCall[] = [];
  /** update_id → performance.now() when first handed to the bot (getUpdates answer or webhook POST). */
  readonly handedAt = new Map<number, number>();
  webhook?: { url: string; secret?: string; allowedUpdates?: string[] };
  readonly webhookDeliveries: Array<{ updateId: number; status: number }> = [];

  private server?: Server;
  private port = 0;
  private pending: PendingUpdate[] = [];
  private nextUpdateId = 1;
  private poll?: LongPoll;
  private scripts: Script[] = [];
  private lastMessageId = 0;
  private files = new Map<string, StoredFile>();
  /** Text of the bot's text messages by `chat:message_id`, for edits and deletes. */
  private readonly texts = new Map<string, string>();
  /** The bot's command menu as setMyCommands last set it. */
  commands: Array<{ command: string; description: string }> = [];
  /** The bot's reactions by `chat:message_id`. */
  readonly reactions = new Map<string, string[]>();
  private listeners = new Set<() => void>();
  private callListeners = new Set<(call: TelegramCall) => void>();

  constructor(options: FakeTelegramOptions = {}) {
    this.bot = {
      id: options.botId ?? 7_000_001,
      is_bot: true,
      first_name: 'Claw Test',
      username: options.username ?? 'claw_test_bot',
    };
    this.token = options.token ?? `${this.bot.id}:${randomBytes(18).toString('base64url')}`;
  }

  /** Whether a getUpdates long poll is open right now; a stopped bot has hung up its last one. */
  get polling(): boolean {
    return this.poll !== undefined;
  }

  /** The value for grammY's `client.apiRoot` (no trailing slash). */
  get apiRoot(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.server = createServer((req, res) => void this.handle(req, res));
    // Long polls and webhook keep-alives must not hold the server open at stop.
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.poll?.respond([]);
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Forget calls, queued updates, scripts, files and the webhook. */
  reset(): void {
    this.calls.length = 0;
    this.pending = [];
    this.scripts = [];
    this.handedAt.clear();
    this.webhook = undefined;
    this.webhookDeliveries.length = 0;
    this.files.clear();
    this.texts.clear();
    this.reactions.clear();
    this.commands = [];
  }

  /** What a message of the bot reads now (after edits); undefined once deleted. */
  textOf(chatId: number | string, messageId: number): string | undefined {
    return this.texts.get(`${chatId}:${messageId}`);
  }

  /** Answer the next `times` calls of `method` (those matching `when`) with `answer`. */
  script(
    method: string,
    answer: ScriptedAnswer,
    options: { times?: number; when?: (params: Record<string, Json>) => boolean } = {},
  ): void {
    this.scripts.push({ method, answer, times: options.times ?? 1, when: options.when });
  }

  /** A file the bot can fetch with getFile and download. Returns its file_id. */
  addFile(data: Buffer, options: { path?: string; delayMs?: number } = {}): StoredFile {
    const fileId = `file-${randomBytes(6).toString('hex')}`;
    const stored: StoredFile = {
      fileId,
      uniqueId: `u${fileId}`,
      path: options.path ?? `documents/${fileId}.bin`,
      data,
      delayMs: options.delayMs,
    };
    this.files.set(fileId, stored);
    return stored;
  }

  /**
   * Queue an update (update_id is assigned). Resolves with the update id once the bot has
   * it: a getUpdates answer carried it, or the webhook POST was answered.
   */
  pushUpdate(update: Record<string, Json>): Promise<number> {
    const full = { update_id: this.nextUpdateId++, ...update };
    if (this.webhook) return this.deliverWebhook(full).then(() => full.update_id);
    return new Promise((resolve) => {
      this.pending.push({ update: full, handed: () => resolve(full.update_id) });
      if (this.poll) this.answerPoll(this.poll);
    });
  }

  /** POST an update to the webhook, optionally with another secret (or none). Returns the HTTP status. */
  async deliverWebhook(update: Json, options: { secret?: string | null; url?: string } = {}): Promise<number> {
    const url = options.url ?? this.webhook?.url;
    if (!url) throw new Error('no webhook is set');
    const secret = options.secret === undefined ? this.webhook?.secret : options.secret;
    const handed = performance.now();
    if (typeof update.update_id === 'number' && !this.handedAt.has(update.update_id))
      this.handedAt.set(update.update_id, handed);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
      body: JSON.stringify(update),
    });
    await response.arrayBuffer();
    this.webhookDeliveries.push({ updateId: update.update_id, status: response.status });
    return response.status;
  }

  /** A user's message as Telegram would deliver it (`message` field of an update). */
  message(options: {
    chatId: number | string;
    chatType?: 'private' | 'group' | 'supergroup';
    title?: string;
    isForum?: boolean;
    from: { id: number | string; first_name?: string; last_name?: string; username?: string };
    text?: string;
    caption?: string;
    entities?: Json[];
    messageId?: number | string;
    threadId?: number | string;
    replyTo?: Json;
    extra?: Record<string, Json>;
  }): Json {
    const chatType = options.chatType ?? 'private';
    const chat =
      chatType === 'private'
        ? { id: options.chatId, type: 'private', first_name: options.from.first_name ?? 'User' }
        : {
            id: options.chatId,
            type: chatType,
            title: options.title ?? `Group ${options.chatId}`,
            ...(options.isForum ? { is_forum: true } : {}),
          };
    return {
      message_id: options.messageId ?? this.nextMessageId(),
      date: Math.floor(Date.now() / 1000),
      chat,
      from: { is_bot: false, first_name: 'User', ...options.from },
      ...(options.text !== undefined ? { text: options.text } : {}),
      ...(options.caption !== undefined ? { caption: options.caption } : {}),
      ...(options.entities ? { [options.text !== undefined ? 'entities' : 'caption_entities']: options.entities } : {}),
      ...(options.threadId !== undefined ? { message_thread_id: options.threadId, is_topic_message: true } : {}),
      ...(options.replyTo ? { reply_to_message: options.replyTo } : {}),
      ...options.extra,
    };
  }

  /** Called with each call once it is answered (or dropped). Returns an unsubscribe function. */
  onCall(listener: (call: TelegramCall) => void): () => void {
    this.callListeners.add(listener);
    return () => this.callListeners.delete(listener);
  }

  /** Calls of one method. */
  callsTo(method: string): TelegramCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Messages the bot sent successfully (text and media), oldest first. */
  sent(): TelegramCall[] {
    return this.calls.filter((call) => SEND_METHODS.includes(call.method) && call.status === 200);
  }

  /** The first recorded call matching `test` (waits for it). */
  waitFor(
    test: (call: TelegramCall) => boolean,
    timeoutMs = 5000,
    what = 'a matching Bot API call',
  ): Promise<TelegramCall> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.calls.find(test);
        if (!found) return false;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; calls: ${this.calls.map((call) => `${call.method}(${call.status})`).join(', ')}`,
          ),
        );
      }, timeoutMs);
      if (!check()) this.listeners.add(check);
    });
  }

  // ── HTTP ─────────────────────────────────────────────────────────────────────────

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    // An apiRoot may end in one label segment, so a test can tell which process made a call.
    const labelled = /^\/(g\d+)(\/.*)$/.exec(url.pathname);
    const path = labelled ? labelled[2]! : url.pathname;
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(path);
    if (download) return this.download(download[1]!, decodeURIComponent(download[2]!), res);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(path);
    if (!match) return this.json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method] = match;
    const body = await readBody(req);
    const { params, files } = parseParams(req.headers['content-type'] ?? '', body, url.searchParams);
    const call: TelegramCall = {
      method: method!,
      params,
      files,
      at: performance.now(),
      status: 0,
      ...(labelled ? { via: labelled[1] } : {}),
    };
    this.calls.push(call);

    const finish = (status: number, payload: Json) => {
      call.status = status;
      call.answeredAt = performance.now();
      if (payload.ok) call.result = payload.result;
      else call.error = { error_code: payload.error_code, description: payload.description };
      this.json(res, status, payload);
      this.notify(call);
    };

    if (token !== this.token) return finish(401, { ok: false, error_code: 401, description: 'Unauthorized' });

    const script = this.scripts.find(
      (candidate) => candidate.method === method && candidate.times > 0 && (!candidate.when || candidate.when(params)),
    );
    if (script) {
      script.times--;
      const answer = script.answer;
      if ('drop' in answer) {
        call.status = 0;
        this.notify(call);
        req.socket.destroy();
        return;
      }
      if ('raw' in answer) {
        call.status = answer.raw.status;
        this.notify(call);
        res.writeHead(answer.raw.status, { 'content-type': answer.raw.contentType ?? 'text/html' });
        res.end(answer.raw.body);
        return;
      }
      if ('delayMs' in answer) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      else return finish(answer.error_code, { ok: false, ...answer });
    }

    try {
      if (method === 'getUpdates') return this.getUpdates(params, res, finish);
      const result = this.answer(method!, params, files);
      finish(200, { ok: true, result });
    } catch (error) {
      if (error instanceof ApiFailure)
        finish(error.code, { ok: false, error_code: error.code, description: error.message });
      else
        finish(500, { ok: false, error_code: 500, description: `Internal Server Error: ${(error as Error).message}` });
    }
  }

  private json(res: ServerResponse, status: number, payload: Json): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }

  private notify(call: TelegramCall): void {
    for (const listener of this.callListeners) listener(call);
    for (const listener of [...this.listeners]) listener();
  }

  private async download(token: string, path: string, res: ServerResponse): Promise<void> {
    const file = [...this.files.values()].find((candidate) => candidate.path === path);
    if (token !== this.token || !file)
      return this.json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    if (file.delayMs) await new Promise((resolve) => setTimeout(resolve, file.delayMs));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.data.length });
    res.end(file.data);
  }

  private getUpdates(
    params: Record<string, Json>,
    res: ServerResponse,
    finish: (status: number, payload: Json) => void,
  ): void {
    if (this.webhook) {
      return finish(409, {
        ok: false,
        error_code: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      });
    }
    const offset = Number(params.offset ?? 0);
    // A non-zero offset confirms every earlier update.
    if (offset) this.pending = this.pending.filter((item) => item.update.update_id >= offset);
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    const timeoutSeconds = Number(params.timeout ?? 0);
    // Telegram ends an older long poll when a newer one arrives.
    this.poll?.respond(null, true);
    let timer: NodeJS.Timeout | undefined;
    const poll: LongPoll = {
      offset,
      limit,
      respond: (updates, conflict) => {
        if (this.poll === poll) this.poll = undefined;
        if (timer) clearTimeout(timer);
        if (conflict)
          return finish(409, {
            ok: false,
            error_code: 409,
            description:
              'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
          });
        finish(200, { ok: true, result: updates ?? [] });
      },
    };
    if (this.pending.some((item) => item.update.update_id >= offset) || timeoutSeconds <= 0)
      return this.answerPoll(poll);
    this.poll = poll;
    timer = setTimeout(() => poll.respond([]), timeoutSeconds * 1000);
    // The bot gave up (stop, abort): the next update must wait for the next poll.
    res.once('close', () => {
      if (this.poll === poll) this.poll = undefined;
      if (timer) clearTimeout(timer);
    });
  }

  private answerPoll(poll: LongPoll): void {
    const batch = this.pending.filter((item) => item.update.update_id >= poll.offset).slice(0, poll.limit);
    const now = performance.now();
    for (const item of batch) {
      if (!this.handedAt.has(item.update.update_id)) this.handedAt.set(item.update.update_id, now);
    }
    poll.respond(batch.map((item) => item.update));
    for (const item of batch) {
      item.handed?.();
      item.handed = undefined;
    }
  }

  /**
   * Telegram numbers messages per chat; one counter across all chats is a valid instance of
   * that (increasing and unique within every chat) and keeps ids unique across chats.
   */
  private nextMessageId(): number {
    return ++this.lastMessageId;
  }

  private sentMessage(params: Record<string, Json>, extra: Record<string, Json>): Json {
    const chatId = params.chat_id;
    if (chatId === undefined || chatId === '') throw new ApiFailure(400, 'Bad Request: chat_id is empty');
    const numeric = typeof chatId === 'number' || /^-?\d+$/.test(String(chatId));
    const id = numeric ? Number(chatId) : chatId;
    const type = numeric && Number(chatId) < 0 ? 'supergroup' : 'private';
    return {
      message_id: this.nextMessageId(),
      date: Math.floor(Date.now() / 1000),
      chat: { id, type },
      from: this.bot,
      ...(params.message_thread_id !== undefined
        ? { message_thread_id: Number(params.message_thread_id), is_topic_message: true }
        : {}),
      ...extra,
    };
  }

  private answer(method: string, params: Record<string, Json>, files: Record<string, UploadedFile>): Json {
    switch (method) {
      case 'getMe':
        return {
          ...this.bot,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case 'setWebhook': {
        if (typeof params.url !== 'string' || !params.url)
          throw new ApiFailure(400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
        if (params.secret_token !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(String(params.secret_token)))
          throw new ApiFailure(400, 'Bad Request: secret token contains unallowed characters');
        this.webhook = { url: params.url, secret: params.secret_token, allowedUpdates: params.allowed_updates };
        this.poll?.respond(null, true);
        return true;
      }
      case 'deleteWebhook':
        this.webhook = undefined;
        if (params.drop_pending_updates) this.pending = [];
        return true;
      case 'getWebhookInfo':
        return {
          url: this.webhook?.url ?? '',
          has_custom_certificate: false,
          pending_update_count: this.pending.length,
        };
      case 'sendChatAction':
        if (!params.chat_id) throw new ApiFailure(400, 'Bad Request: chat_id is empty');
        return true;
      case 'getFile': {
        const file = this.files.get(String(params.file_id));
        if (!file) throw new ApiFailure(400, 'Bad Request: invalid file_id');
        return {
          file_id: file.fileId,
          file_unique_id: file.uniqueId,
          file_size: file.data.length,
          file_path: file.path,
        };
      }
      case 'sendMessage': {
        const text = String(params.text ?? '');
        const plain = this.parsed(text, params.parse_mode);
        if (!plain.trim()) throw new ApiFailure(400, 'Bad Request: message text is empty');
        if (plain.length > 4096) throw new ApiFailure(400, 'Bad Request: message is too long');
        const sent = this.sentMessage(params, { text: plain });
        this.texts.set(`${sent.chat.id}:${sent.message_id}`, plain);
        return sent;
      }
      case 'editMessageText': {
        const key = `${Number(params.chat_id)}:${Number(params.message_id)}`;
        const before = this.texts.get(key);
        if (before === undefined) throw new ApiFailure(400, 'Bad Request: message to edit not found');
        const plain = this.parsed(String(params.text ?? ''), params.parse_mode);
        if (!plain.trim()) throw new ApiFailure(400, 'Bad Request: message text is empty');
        if (plain.length > 4096) throw new ApiFailure(400, 'Bad Request: MESSAGE_TOO_LONG');
        // Telegram compares the text and its entities; formatting alone counts as a change.
        const entitiesKey = `${key}:html`;
        const html = params.parse_mode === 'HTML' ? String(params.text) : '';
        if (before === plain && (this.texts.get(entitiesKey) ?? '') === html) {
          throw new ApiFailure(
            400,
            'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
          );
        }
        this.texts.set(key, plain);
        this.texts.set(entitiesKey, html);
        return {
          message_id: Number(params.message_id),
          chat: { id: Number(params.chat_id), type: Number(params.chat_id) < 0 ? 'supergroup' : 'private' },
          from: this.bot,
          text: plain,
          edit_date: Math.floor(Date.now() / 1000),
        };
      }
      case 'deleteMessage': {
        const key = `${Number(params.chat_id)}:${Number(params.message_id)}`;
        if (!this.texts.delete(key)) throw new ApiFailure(400, 'Bad Request: message to delete not found');
        return true;
      }
      case 'setMessageReaction': {
        const reaction = (params.reaction ?? []) as Array<{ type: string; emoji?: string }>;
        if (!Array.isArray(reaction) || reaction.some((entry) => entry.type !== 'emoji' || !entry.emoji))
          throw new ApiFailure(400, 'Bad Request: REACTION_INVALID');
        this.reactions.set(
          `${params.chat_id}:${params.message_id}`,
          reaction.map((entry) => entry.emoji!),
        );
        return true;
      }
      case 'setMyCommands': {
        const commands = params.commands as Array<{ command: string; description: string }>;
        if (!Array.isArray(commands) || commands.length > 100)
          throw new ApiFailure(400, 'Bad Request: BOT_COMMANDS_TOO_MUCH');
        for (const entry of commands) {
          if (!/^[a-z0-9_]{1,32}$/.test(entry.command)) throw new ApiFailure(400, 'Bad Request: BOT_COMMAND_INVALID');
          if (typeof entry.description !== 'string' || entry.description.length < 1 || entry.description.length > 256)
            throw new ApiFailure(400, 'Bad Request: BOT_COMMAND_DESCRIPTION_INVALID');
        }
        this.commands = commands;
        return true;
      }
      case 'deleteMyCommands':
        this.commands = [];
        return true;
      default: {
        const field = MEDIA_FIELD[method];
        if (!field) throw new ApiFailure(404, 'Not Found: method not found');
        const media = files[field] ? `attach:${files[field].filename}` : params[field];
        if (!media) throw new ApiFailure(400, `Bad Request: there is no ${field} in the request`);
        const caption =
          params.caption === undefined ? undefined : this.parsed(String(params.caption), params.parse_mode);
        if (caption !== undefined && caption.length > 1024)
          throw new ApiFailure(400, 'Bad Request: message caption is too long');
        return this.sentMessage(params, {
          [field]: { file_id: `sent-${randomBytes(4).toString('hex')}` },
          ...(caption !== undefined ? { caption } : {}),
        });
      }
    }
  }

  private parsed(text: string, parseMode: unknown): string {
    if (parseMode !== 'HTML') return text;
    const result = parseTelegramHtml(text);
    if ('error' in result) throw new ApiFailure(400, `Bad Request: can't parse entities: ${result.error}`);
    return result.plain;
  }
}

class ApiFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

// ── Telegram's HTML parse mode ─────────────────────────────────────────────────────

const ALLOWED_TAGS = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'span',
  'tg-spoiler',
  'a',
  'code',
  'pre',
  'blockquote',
  'tg-emoji',
]);
const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/**
 * Check text the way the Bot API's HTML parse mode does and return what the user sees,
 * or the reason it would be rejected.
 */
export function parseTelegramHtml(html: string): { plain: string } | { error: string } {
  let plain = '';
  const open: string[] = [];
  for (let at = 0; at < html.length;) {
    const char = html[at]!;
    if (char === '<') {
      const tag =
        /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*>/.exec(
          html.slice(at),
        );
      if (!tag) return { error: `Unexpected end of name token at byte offset ${at}` };
      const [whole, closing, rawName, attributes] = tag;
      const name = rawName!.toLowerCase();
      if (!ALLOWED_TAGS.has(name)) return { error: `Unsupported start tag "${name}" at byte offset ${at}` };
      if (closing) {
        if (open[open.length - 1] !== name)
          return { error: `Can't find end tag corresponding to start tag "${open[open.length - 1] ?? name}"` };
        open.pop();
      } else {
        if ((open.includes('code') || open.includes('pre')) && !(name === 'code' && open[open.length - 1] === 'pre')) {
          return { error: `Can't parse entities: "${name}" inside code at byte offset ${at}` };
        }
        if (name === 'a' && !/\bhref\s*=/.test(attributes ?? ''))
          return { error: `Can't parse entities: link without href at byte offset ${at}` };
        // Only bold, italic, underline, strikethrough and spoiler nest freely; a link holds none of the rest.
        if (open.includes('a') && (name === 'a' || name === 'code' || name === 'pre' || name === 'blockquote'))
          return { error: `Can't parse entities: "${name}" inside a link at byte offset ${at}` };
        if (name === 'span' && !/class\s*=\s*"tg-spoiler"/.test(attributes ?? ''))
          return { error: `Unsupported start tag "span" at byte offset ${at}` };
        if (name === 'blockquote' && open.includes('blockquote'))
          return { error: `Can't parse entities: nested blockquote at byte offset ${at}` };
        open.push(name);
      }
      at += whole.length;
      continue;
    }
    if (char === '>') return { error: `Unexpected end tag at byte offset ${at}` };
    if (char === '&') {
      const entity = /^&(?:(lt|gt|amp|quot)|#(\d+)|#x([0-9a-fA-F]+));/.exec(html.slice(at));
      if (!entity) return { error: `Unsupported HTML entity at byte offset ${at}` };
      plain += entity[1]
        ? NAMED_ENTITIES[entity[1]]!
        : String.fromCodePoint(entity[2] ? Number(entity[2]) : parseInt(entity[3]!, 16));
      at += entity[0].length;
      continue;
    }
    plain += char;
    at++;
  }
  if (open.length) return { error: `Can't find end tag corresponding to start tag "${open[open.length - 1]}"` };
  return { plain };
}

// ── Request bodies ─────────────────────────────────────────────────────────────────

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function fieldValue(value: string): Json {
  const trimmed = value.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return value;
    }
  }
  return value;
}

/** JSON, urlencoded or multipart (grammY's own format: lowercase headers, unquoted filename). */
function parseParams(
  contentType: string,
  body: Buffer,
  query: URLSearchParams,
): { params: Record<string, Json>; files: Record<string, UploadedFile> } {
  const params: Record<string, Json> = Object.fromEntries(query.entries());
  const files: Record<string, UploadedFile> = {};
  if (body.length === 0) return { params, files };
  if (contentType.includes('application/json'))
    return { params: { ...params, ...JSON.parse(body.toString('utf8')) }, files };
  if (contentType.includes('application/x-www-form-urlencoded')) {
    for (const [key, value] of new URLSearchParams(body.toString('utf8'))) params[key] = fieldValue(value);
    return { params, files };
  }
  const boundary = /boundary=([^;]+)/.exec(contentType)?.[1];
  if (!boundary) return { params, files };
  const attachments = new Map<string, UploadedFile>();
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    // Each part: CRLF, headers, blank line, content, CRLF before the next delimiter.
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, split).toString('utf8');
    const content = part.subarray(split + 4);
    const name = /name="([^"]+)"/i.exec(headers)?.[1];
    const filename = /filename=("?)([^";\r\n]+)\1/i.exec(headers)?.[2];
    if (name && filename !== undefined) attachments.set(name, { filename, data: Buffer.from(content) });
    else if (name) params[name] = fieldValue(content.toString('utf8'));
    at = next;
  }
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'string' && value.startsWith('attach://')) {
      const file = attachments.get(value.slice('attach://'.length));
      if (file) files[key] = file;
    }
  }
  return { params, files };
}
