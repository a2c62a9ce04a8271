/**
 * One Telegram bot account at run time: a grammY `Bot`, fed by long polling (`bot.start`)
 * or by the gateway's webhook route, turning each message into an InboundMessage for the
 * kernel's pipeline.
 *
 * Ordering: grammY hands updates over one at a time; each is put on its chat's queue and
 * grammY moves on. A chat's messages therefore reach the pipeline strictly in order (a slow
 * photo download holds back only its own chat), while different chats run side by side —
 * the runner's `sequentialize` semantics without the runner.
 *
 * Confirmation: Telegram forgets an update once a later getUpdates asks past it (the
 * offset). Before each getUpdates the account waits until every update it handed over has
 * reached the pipeline — for a message to the agent, until it is in the agent's intake
 * journal — and asks again from the first one the pipeline could not accept (a gateway
 * shutting down), so an update is confirmed only once it is safe on disk. A webhook
 * answers 200 under the same rule, else 503 so Telegram retries.
 *
 * Supervision: a network failure never fails `start` (the gateway must come up while
 * Telegram is unreachable); polling restarts with backoff and `status()` shows the last
 * error. Only a token Telegram rejects stops the account for good.
 */
import { timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAbsolute, join } from 'node:path';
import type { Bot, Transformer } from 'grammy';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, writeFileAtomicAsync } from '../../sdk/index.js';
import type {
  AckReaction,
  ChannelAccountContext,
  ChannelStatus,
  InboundMedia,
  InboundMessage,
  OutboundMessage,
  ReplyObserver,
  SendResult,
} from '../../sdk/channels/index.js';
import type { ChatCommandInfo } from '../../sdk/agent/index.js';
import type { Redactor } from '../../sdk/index.js';
import { readRequestBody } from '../../sdk/net/index.js';
import { configPath, TOKEN_ENV, type TelegramAccountSettings } from './config.js';
import { parseMessage, type Attachment, type TgMessage } from './inbound.js';
import { CommandMenu } from './menu.js';
import { ReplyTracker } from './replies.js';
import { deletePage, ORPHAN_TTL_MS, type PreviewLedger } from './previews.js';
import { describeError, grammySignal, isTokenRejected, TelegramSender } from './send.js';

export type Grammy = typeof import('grammy');

let grammyModule: Promise<Grammy> | undefined;

/** grammY, imported on first use: a gateway without Telegram configured never loads it. */
export function loadGrammy(): Promise<Grammy> {
  grammyModule ??= import('grammy').then(
    // Loaded as CommonJS, grammY's exports may sit on `default` depending on the loader.
    (mod) => ((mod as Partial<Grammy>).Bot ? mod : (mod as unknown as { default: Grammy }).default) as Grammy,
    (error: unknown) => {
      grammyModule = undefined;
      throw error;
    },
  );
  return grammyModule;
}

/** Only messages are handled; asking for nothing else saves Telegram and us the traffic. */
const ALLOWED_UPDATES = ['message'] as const;
const POLL_TIMEOUT_SECONDS = 30;
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
/** A download stopped at channels.telegram.mediaMaxMb. */
class TooLarge extends Error {}
const DOWNLOAD_TIMEOUT_MS = 60_000;
const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/** After the pipeline refused an update (gateway stopping), wait this long before polling again. */
const REFUSED_RETRY_MS = 5_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** Resolves when `promise` settles or `ms` pass, whichever is first; never rejects. */
function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    promise.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });
}

function safeEqual(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Per-key FIFO queues: tasks of one key run one after another, keys run concurrently. */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly onError: (error: unknown) => void) {}

  push(key: string, task: () => Promise<void>): void {
    const tail = (this.tails.get(key) ?? Promise.resolve()).then(task).catch(this.onError);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
  }

  get size(): number {
    return this.tails.size;
  }

  /** Resolves when every queued task has run, or after `ms`. */
  idle(ms: number): Promise<void> {
    return settleWithin(Promise.all([...this.tails.values()]), ms);
  }
}

export class TelegramAccount {
  readonly accountId: string;
  readonly mode: 'polling' | 'webhook';
  readonly sender: TelegramSender;
  private readonly bot: Bot;
  private readonly abort = new AbortController();
  private readonly queues: KeyedQueue;
  private connected = false;
  private webhookSet = false;
  private lastError?: string;
  private supervisor?: Promise<void>;
  private stopping?: Promise<void>;
  /** Updates handed to the pipeline and not yet confirmed: resolves false when one must be delivered again. */
  private readonly unconfirmed = new Map<number, Promise<boolean>>();
  /** Updates the pipeline refused (the gateway was stopping): never confirmed until accepted. */
  private readonly refused = new Set<number>();

  private readonly replies: ReplyTracker;
  private readonly menu: CommandMenu;

  constructor(
    readonly settings: TelegramAccountSettings,
    private readonly ctx: ChannelAccountContext,
    grammy: Grammy,
    private readonly redact: Pick<Redactor, 'text'>,
    /** The slash commands and skills the menu lists (the agent's). */
    commands: () => Promise<readonly ChatCommandInfo[] | undefined>,
    /** Reply preview pages up in chats, kept across restarts (previews.ts). */
    private readonly ledger?: PreviewLedger,
  ) {
    this.accountId = settings.accountId;
    this.mode = settings.webhook ? 'webhook' : 'polling';
    this.queues = new KeyedQueue((error) =>
      ctx.logger.error(`telegram: an incoming message failed: ${describeError(error)}`),
    );
    this.bot = new grammy.Bot(settings.token, { client: { apiRoot: settings.apiRoot } });
    this.bot.api.config.use(this.tracker());
    this.bot.api.config.use(this.confirmGate());
    this.bot.use((context) => this.accept(context.update.update_id, context.update.message as TgMessage | undefined));
    this.bot.catch((error) => ctx.logger.error(`telegram: update handling failed: ${describeError(error.error)}`));
    this.sender = new TelegramSender(this.bot.api, grammy.InputFile, { linkPreview: settings.linkPreview });
    this.replies = new ReplyTracker(settings, this.sender, ctx.logger, ledger);
    this.menu = new CommandMenu({
      settings: settings.commandMenu,
      source: commands,
      apply: (list) => this.sender.setCommands(list),
      logger: ctx.logger,
      where: this.where,
    });
  }

  /** The pipeline hands one of this account's messages to the agent (ack reaction, draft). */
  replyStarted(message: InboundMessage, ack: AckReaction): ReplyObserver | undefined {
    return this.replies.started(message, ack);
  }

  /** One outbound piece; a reply being previewed is finished in its draft message. */
  send(message: OutboundMessage): Promise<SendResult> {
    return this.replies.send(message);
  }

  /** Rebuild the command menu now (the command set may have changed). */
  refreshMenu(): Promise<void> {
    return this.menu.refresh();
  }

  get webhookPath(): string | undefined {
    return this.settings.webhook?.path;
  }

  /** Keeps `connected` and `lastError` true to what the Bot API last said. */
  private tracker(): Transformer {
    const watched = new Set(['getUpdates', 'setWebhook', 'getMe']);
    return (async (prev, method, payload, signal) => {
      try {
        const result = await prev(method, payload, signal);
        if (watched.has(method)) {
          if (result.ok && method !== 'getMe') this.connected = true;
          if (!result.ok) this.failed(`${method}: ${result.error_code} ${result.description}`);
        }
        return result;
      } catch (error) {
        // A poll cut short by stop() is not a failure.
        if (watched.has(method) && !this.abort.signal.aborted) this.failed(`${method}: ${describeError(error)}`);
        throw error;
      }
    }) as Transformer;
  }

  /** Holds each getUpdates until what it would confirm is durable; see "Confirmation" above. */
  private confirmGate(): Transformer {
    return (async (prev, method, payload, signal) => {
      if (method !== 'getUpdates') return prev(method, payload, signal);
      const offset = (payload as { offset?: number }).offset;
      if (offset === undefined) return prev(method, payload, signal);
      await this.settled(offset);
      const redeliverFrom = this.refused.size > 0 ? Math.min(...this.refused) : undefined;
      if (redeliverFrom === undefined) return prev(method, payload, signal);
      // Refused means the gateway is stopping: ask again only after a pause (or not at all,
      // once stopped), and never past the refused update.
      if (!this.abort.signal.aborted) await sleep(REFUSED_RETRY_MS, this.abort.signal);
      return prev(method, { ...payload, offset: Math.min(offset, redeliverFrom) }, signal);
    }) as Transformer;
  }

  /** Waits for every update below `offset` to be settled, noting the ones the pipeline refused. */
  private async settled(offset: number): Promise<void> {
    for (const [updateId, accepted] of [...this.unconfirmed]) {
      if (updateId >= offset) continue;
      this.unconfirmed.delete(updateId);
      if (await accepted) this.refused.delete(updateId);
      else this.refused.add(updateId);
    }
  }

  private failed(error: string): void {
    this.connected = false;
    // grammY's network errors quote the request URL, …/bot<token>/getUpdates.
    this.lastError = this.redact.text(error);
  }

  private get where(): string {
    return this.accountId === 'default' ? 'Telegram' : `Telegram account "${this.accountId}"`;
  }

  private tokenHint(): string {
    return `check ${configPath(this.accountId)}.botToken${this.accountId === 'default' ? ` or ${TOKEN_ENV}` : ''}`;
  }

  async start(): Promise<void> {
    // Pages a previous process left that no reply takes over in time are deleted, not left half written.
    if (this.ledger?.hasOrphans) {
      const sweep = setTimeout(() => void this.sweepPages(), ORPHAN_TTL_MS + 1000);
      sweep.unref();
      this.abort.signal.addEventListener('abort', () => clearTimeout(sweep), { once: true });
    }
    try {
      this.bot.botInfo = await this.bot.api.getMe(grammySignal(AbortSignal.timeout(START_TIMEOUT_MS)));
    } catch (error) {
      if (isTokenRejected(error))
        throw new Error(`${this.where} rejected the bot token (${describeError(error)}): ${this.tokenHint()}`);
      this.failed(`getMe: ${describeError(error)}`);
      this.ctx.logger.warn(
        `${this.where}: cannot reach the Bot API at ${this.settings.apiRoot} yet (${describeError(error)}); retrying in the background`,
      );
    }
    if (this.settings.webhook && this.bot.isInited()) {
      try {
        await this.registerWebhook();
      } catch (error) {
        const code = (error as { error_code?: number }).error_code;
        // A refusal (bad URL, bad secret) will not fix itself; an outage might.
        if (code !== undefined && code >= 400 && code < 500 && code !== 429) {
          throw new Error(`${this.where} refused the webhook ${this.settings.webhook.url}: ${describeError(error)}`);
        }
        this.ctx.logger.warn(
          `${this.where}: could not set the webhook yet (${describeError(error)}); retrying in the background`,
        );
      }
    }
    this.supervisor = this.supervise();
  }

  private async registerWebhook(): Promise<void> {
    const webhook = this.settings.webhook!;
    await this.bot.api.setWebhook(
      webhook.url,
      { secret_token: webhook.secret, allowed_updates: [...ALLOWED_UPDATES], drop_pending_updates: false },
      grammySignal(AbortSignal.timeout(START_TIMEOUT_MS)),
    );
    this.webhookSet = true;
    this.ctx.logger.info(`${this.where}: webhook set to ${webhook.url} (served at ${webhook.path})`);
  }

  private async supervise(): Promise<void> {
    let delay = 1000;
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        if (!this.bot.isInited()) await this.bot.init(grammySignal(signal));
        // The token works: the menu follows the command set from here on.
        this.menu.start();
        if (this.settings.webhook) {
          if (!this.webhookSet) await this.registerWebhook();
          // Telegram delivers from here on; nothing to run.
          return;
        }
        await this.bot.start({
          allowed_updates: [...ALLOWED_UPDATES],
          timeout: POLL_TIMEOUT_SECONDS,
          // The webhook is gone and the token works: from here a quiet bot is a connected one.
          onStart: (me) => {
            delay = 1000;
            this.connected = true;
            this.ctx.logger.info(`${this.where}: polling as @${me.username}`);
          },
        });
        if (signal.aborted) return;
        throw new Error('long polling stopped unexpectedly');
      } catch (error) {
        if (signal.aborted) return;
        this.failed(describeError(error));
        if (isTokenRejected(error)) {
          this.ctx.logger.error(
            `${this.where} rejected the bot token (${describeError(error)}): ${this.tokenHint()}; the account is stopped`,
          );
          return;
        }
        this.ctx.logger.warn(`${this.where}: ${describeError(error)}; retrying in ${Math.round(delay / 1000)} s`);
        await sleep(delay, signal);
        delay = Math.min(delay * 2, 60_000);
      }
    }
  }

  private async sweepPages(): Promise<void> {
    if (!this.ledger) return;
    for (const page of this.ledger.expired()) await deletePage(this.ledger, this.sender, page, this.ctx.logger);
  }

  /** Stop polling, let queued messages reach the pipeline (bounded), and release grammY. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      this.menu.stop();
      // bot.stop() confirms the last offset with one more getUpdates; an unreachable API must not hang shutdown.
      if (this.bot.isRunning()) await settleWithin(this.bot.stop(), STOP_TIMEOUT_MS);
      if (this.supervisor) await settleWithin(this.supervisor, STOP_TIMEOUT_MS);
      await this.queues.idle(STOP_TIMEOUT_MS);
      this.connected = false;
    })();
    return this.stopping;
  }

  status(): ChannelStatus {
    const username = this.bot.isInited() ? this.bot.botInfo.username : undefined;
    return {
      accountId: this.accountId,
      connected: this.connected,
      running: !this.stopping,
      mode: this.mode,
      ...(username
        ? { username, detail: `@${username} via ${this.mode === 'webhook' ? 'webhook' : 'long polling'}` }
        : {}),
      ...(this.bot.isInited() ? { botId: this.bot.botInfo.id } : {}),
      ...(this.settings.webhook
        ? { webhookUrl: this.settings.webhook.url, webhookPath: this.settings.webhook.path }
        : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  // ── Inbound ──────────────────────────────────────────────────────────────────────

  /** Runs inside grammY's update loop: must return at once. */
  private accept(updateId: number, message: TgMessage | undefined): void {
    if (!message?.chat) return;
    if (this.stopping) {
      this.unconfirmed.set(updateId, Promise.resolve(false));
      return;
    }
    let settle!: (accepted: boolean) => void;
    this.unconfirmed.set(updateId, new Promise<boolean>((resolve) => (settle = resolve)));
    this.queues.push(String(message.chat.id), async () => {
      try {
        settle((await this.process(message)) !== 'unavailable');
      } catch (error) {
        // Failed for good (logged by the queue); asking Telegram again would fail the same way.
        settle(true);
        throw error;
      }
    });
  }

  private async process(message: TgMessage): Promise<string | undefined> {
    const parsed = parseMessage(message, this.bot.botInfo, { mediaMaxBytes: this.settings.mediaMaxBytes });
    if (!parsed) return undefined;
    const { media, notes } = await this.fetchAttachments(parsed.attachments);
    const text = [parsed.inbound.text, ...notes].filter(Boolean).join('\n');
    const inbound: InboundMessage = {
      accountId: this.accountId,
      ...parsed.inbound,
      text: text || (media.length > 0 ? '[image]' : ''),
      ...(media.length > 0 ? { media } : {}),
    };
    const outcome = await this.ctx.receive(inbound);
    this.ctx.logger.debug(
      `telegram: message ${inbound.messageId} in ${inbound.peer.kind} ${inbound.peer.id}: ${outcome.status}`,
    );
    return outcome.status;
  }

  /**
   * Images go inline (base64) so the model sees them. Other files are saved under the
   * state dir and named in the text, since the pipeline hands the agent images only.
   */
  private async fetchAttachments(attachments: Attachment[]): Promise<{ media: InboundMedia[]; notes: string[] }> {
    const media: InboundMedia[] = [];
    const notes: string[] = [];
    const limitMb = Number((this.settings.mediaMaxBytes / 1024 / 1024).toFixed(2));
    const tooLarge = (label: string) =>
      `[${label} not downloaded: larger than ${limitMb} MB (channels.telegram.mediaMaxMb)]`;
    for (const attachment of attachments) {
      const label = attachment.fileName ? `${attachment.kind} "${attachment.fileName}"` : attachment.kind;
      if (attachment.size !== undefined && attachment.size > this.settings.mediaMaxBytes) {
        notes.push(tooLarge(label));
        continue;
      }
      try {
        const data = await this.download(attachment);
        const mimeType = attachment.mimeType ?? 'application/octet-stream';
        if (mimeType.startsWith('image/')) {
          media.push({
            data: data.toString('base64'),
            mimeType,
            ...(attachment.fileName ? { fileName: attachment.fileName } : {}),
          });
          continue;
        }
        const dir = join(this.ctx.stateDir, 'media', 'telegram', this.accountId);
        await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
        const safeName = (attachment.fileName ?? `${attachment.kind}`).replace(/[^\w.-]+/g, '_').slice(0, 100);
        const path = join(dir, `${attachment.uniqueId}-${safeName}`);
        await writeFileAtomicAsync(path, data, { mode: PRIVATE_FILE_MODE });
        media.push({ url: path, mimeType, ...(attachment.fileName ? { fileName: attachment.fileName } : {}) });
        notes.push(`[${label} (${mimeType}, ${data.length} bytes) saved at ${path}]`);
      } catch (error) {
        this.ctx.logger.warn(`telegram: could not download a ${attachment.kind}: ${describeError(error)}`);
        // Cut off at the limit mid-download: nothing was written.
        notes.push(error instanceof TooLarge ? tooLarge(label) : `[${label} could not be downloaded]`);
      }
    }
    return { media, notes };
  }

  private async download(attachment: Attachment): Promise<Buffer> {
    const file = await this.bot.api.getFile(attachment.fileId, grammySignal(AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)));
    if (!file.file_path) throw new Error('the Bot API gave no file_path');
    // A self-hosted Bot API server in --local mode answers with a path on this machine.
    if (isAbsolute(file.file_path) && existsSync(file.file_path)) return readFile(file.file_path);
    const response = await fetch(`${this.settings.apiRoot}/file/bot${this.settings.token}/${file.file_path}`, {
      signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
    });
    // The URL holds the token: errors name the status only.
    if (!response.ok || !response.body) throw new Error(`download failed with HTTP ${response.status}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > this.settings.mediaMaxBytes) throw new TooLarge(`larger than ${this.settings.mediaMaxBytes} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
  }

  // ── Webhook ──────────────────────────────────────────────────────────────────────

  /** One POST from Telegram: check the secret, hand the update to grammY, answer fast. */
  async handleWebhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, body = '') => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (!safeEqual(req.headers['x-telegram-bot-api-secret-token'], this.settings.webhook!.secret)) {
      req.resume();
      return reply(401, '{"error":"wrong or missing X-Telegram-Bot-Api-Secret-Token"}');
    }
    // Telegram retries until it gets a 2xx; a 503 before getMe succeeded just delays the update.
    if (!this.bot.isInited() || this.stopping) {
      req.resume();
      return reply(503, '{"error":"the Telegram account is not ready"}');
    }
    let update: unknown;
    try {
      update = JSON.parse(
        (await readRequestBody(req, { limit: WEBHOOK_BODY_LIMIT, timeoutMs: 30_000 })).toString('utf8'),
      );
    } catch (error) {
      return reply(
        (error as { status?: number }).status ?? 400,
        JSON.stringify({ error: `bad update: ${(error as Error).message}` }),
      );
    }
    if (!update || typeof update !== 'object' || typeof (update as { update_id?: unknown }).update_id !== 'number')
      return reply(400, '{"error":"not a Telegram update"}');
    this.connected = true;
    const updateId = (update as { update_id: number }).update_id;
    await this.bot.handleUpdate(update as Parameters<Bot['handleUpdate']>[0]);
    const accepted = await (this.unconfirmed.get(updateId) ?? true);
    this.unconfirmed.delete(updateId);
    if (!accepted) return reply(503, '{"error":"the gateway is restarting; retry"}');
    reply(200);
  }
}
