/**
 * A fake Discord on 127.0.0.1 for tests and benchmarks: the REST API under `/api/v10` and
 * the WebSocket gateway at `/gateway`, on one port. discord.js reaches it through
 * `DISCORD_API_URL` (its REST base) and, via `GET /gateway/bot`, the gateway URL.
 *
 * What it holds to, because the channel relies on it:
 *  - Gateway: op 10 HELLO, op 1 → op 11 heartbeats, op 2 IDENTIFY → READY (session_id,
 *    resume_gateway_url) then GUILD_CREATE per guild, op 6 RESUME → the dispatches the
 *    client missed (by `seq`) then RESUMED. Dispatches made while no socket is attached
 *    are kept and replayed on RESUME, as Discord does. `dropSocket()` cuts the connection.
 *  - REST: bot auth (`Authorization: Bot <token>`), messages as JSON or multipart
 *    (`payload_json` + `files[n]`), typing, reactions, DM channel creation, application
 *    command overwrite, interaction callbacks and webhook edits / follow-ups.
 *  - Rate limits: `rateLimit(pattern, seconds, { global })` answers the next matching
 *    request with 429, `Retry-After` and (when global) `X-RateLimit-Global: true`; a global
 *    limit then answers every request 429 until it runs out, as Discord does.
 *
 * Every REST call is recorded with its arrival time (`performance.now()`).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

type Json = any;

export interface DiscordFile {
  name: string;
  contentType?: string;
  data: Buffer;
}

export interface DiscordCall {
  method: string;
  /** Path after /api/v10. */
  path: string;
  body: Json;
  files: DiscordFile[];
  status: number;
  at: number;
}

/** A message the bot posted (channel message, interaction reply or follow-up). */
export interface DiscordSent {
  id: string;
  channelId: string;
  /** The user, for a DM channel. */
  recipientId?: string;
  content: string;
  files: DiscordFile[];
  replyTo?: string;
  via: 'channel' | 'interaction-original' | 'interaction-followup';
  flags?: number;
  at: number;
}

export interface FakeChannel {
  id: string;
  type: number;
  name?: string;
  guild_id?: string;
  parent_id?: string;
  recipientId?: string;
}

interface Session {
  id: string;
  seq: number;
  log: Array<{ s: number; t: string; d: Json }>;
  socket?: WebSocket;
}

interface RateLimitScript {
  pattern: RegExp;
  retryAfter: number;
  global: boolean;
}

const API_PREFIX = '/api/v10';
let snowflakeCounter = 0n;

/** A fresh snowflake (monotonic, numeric). */
export function snowflake(): string {
  snowflakeCounter += 1n;
  return String((BigInt(Date.now() - 1420070400000) << 22n) + snowflakeCounter);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** multipart/form-data → fields and files. */
function parseMultipart(body: Buffer, contentType: string): { fields: Record<string, string>; files: DiscordFile[] } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const fields: Record<string, string> = {};
  const files: DiscordFile[] = [];
  if (!boundary) return { fields, files };
  const marker = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  let start = body.indexOf(marker);
  while (start !== -1) {
    const next = body.indexOf(marker, start + marker.length);
    if (next === -1) break;
    const part = body.subarray(start + marker.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, split).toString('utf8');
    const data = part.subarray(split + 4);
    const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1];
    if (filename !== undefined)
      files.push({ name: filename, ...(type ? { contentType: type } : {}), data: Buffer.from(data) });
    else fields[name] = data.toString('utf8');
    start = next;
  }
  return { fields, files };
}

export interface FakeDiscordOptions {
  token?: string;
  heartbeatIntervalMs?: number;
}

export class FakeDiscord {
  readonly token: string;
  readonly bot = {
    id: snowflake(),
    username: 'clawbot',
    discriminator: '0',
    global_name: 'Claw',
    avatar: null,
    bot: true,
  };
  readonly guildId = snowflake();
  readonly roleId = snowflake();
  private server?: Server;
  private wss?: WebSocketServer;
  private port = 0;
  private readonly heartbeatIntervalMs: number;
  private readonly calls: DiscordCall[] = [];
  private readonly sentMessages: DiscordSent[] = [];
  readonly channels = new Map<string, FakeChannel>();
  private readonly files = new Map<string, DiscordFile>();
  private readonly rateLimits: RateLimitScript[] = [];
  /** When the last global 429 runs out (epoch ms). */
  private globalUntil = 0;
  private readonly listeners = new Set<(sent: DiscordSent) => void>();
  private session?: Session;
  /** IDENTIFY and RESUME payloads received, in order. */
  readonly gatewayOps: Array<{ op: number; d: Json }> = [];
  /** Application commands as last overwritten. */
  commands: Json[] = [];
  /** Dispatch times of MESSAGE_CREATE by message id (benchmarks). */
  readonly dispatchedAt = new Map<string, number>();

  constructor(options: FakeDiscordOptions = {}) {
    // The shape of a real bot token (base64 id . timestamp . hmac), random each run.
    this.token =
      options.token ??
      `${Buffer.from(this.bot.id).toString('base64url')}.${randomBytes(4).toString('base64url')}.${randomBytes(20).toString('base64url')}`;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 41_250;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}${API_PREFIX}`;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}/gateway`;
  }

  async start(): Promise<void> {
    this.server = createServer(
      (req, res) => void this.handle(req, res).catch((error) => this.reply(res, 500, { message: String(error) })),
    );
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/gateway')) return socket.destroy();
      this.wss!.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const client of this.wss?.clients ?? []) client.terminate();
    this.wss?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Forget sent messages and calls (the session and channels stay). */
  reset(): void {
    this.calls.length = 0;
    this.sentMessages.length = 0;
    this.rateLimits.length = 0;
    this.globalUntil = 0;
  }

  sent(): DiscordSent[] {
    return [...this.sentMessages];
  }

  log(): DiscordCall[] {
    return [...this.calls];
  }

  onSent(listener: (sent: DiscordSent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The next request whose "METHOD path" matches gets a 429 with this retry_after (seconds). */
  rateLimit(pattern: RegExp, retryAfter: number, options: { global?: boolean } = {}): void {
    this.rateLimits.push({ pattern, retryAfter, global: options.global === true });
  }

  // ── Channels and messages the test makes ─────────────────────────────────────────

  addChannel(channel: Omit<FakeChannel, 'id'> & { id?: string }): FakeChannel {
    const full = { id: channel.id ?? snowflake(), ...channel } as FakeChannel;
    this.channels.set(full.id, full);
    return full;
  }

  /** A guild text channel (in the fake's guild unless told). */
  textChannel(name: string, id?: string): FakeChannel {
    return this.addChannel({ ...(id ? { id } : {}), type: 0, name, guild_id: this.guildId });
  }

  thread(parent: FakeChannel, name: string): FakeChannel {
    return this.addChannel({ type: 11, name, guild_id: parent.guild_id!, parent_id: parent.id });
  }

  dmChannelFor(userId: string): FakeChannel {
    const existing = [...this.channels.values()].find(
      (channel) => channel.type === 1 && channel.recipientId === userId,
    );
    return existing ?? this.addChannel({ type: 1, recipientId: userId });
  }

  /** Serve a file for inbound attachments; returns its attachment object. */
  attachment(name: string, data: Buffer, contentType: string): Json {
    const id = snowflake();
    this.files.set(`${id}/${name}`, { name, contentType, data });
    return {
      id,
      filename: name,
      size: data.length,
      content_type: contentType,
      url: `http://127.0.0.1:${this.port}/attachments/${id}/${name}`,
      proxy_url: `http://127.0.0.1:${this.port}/attachments/${id}/${name}`,
    };
  }

  user(id: string, name = id): Json {
    return { id, username: name, discriminator: '0', global_name: name, avatar: null };
  }

  /** A MESSAGE_CREATE from a user: a DM (`dm: userId`) or in a guild channel. */
  userMessage(options: {
    authorId: string;
    authorName?: string;
    channel: FakeChannel;
    content: string;
    id?: string;
    mention?: boolean;
    attachments?: Json[];
    roles?: string[];
    replyToBot?: string;
  }): Json {
    const mention = options.mention ? `<@${this.bot.id}> ` : '';
    const guild = options.channel.guild_id;
    return {
      id: options.id ?? snowflake(),
      channel_id: options.channel.id,
      ...(guild
        ? {
            guild_id: guild,
            member: {
              roles: options.roles ?? [],
              joined_at: new Date().toISOString(),
              deaf: false,
              mute: false,
              flags: 0,
            },
          }
        : {}),
      author: this.user(options.authorId, options.authorName),
      content: `${mention}${options.content}`,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: options.mention ? [this.bot] : [],
      mention_roles: [],
      attachments: options.attachments ?? [],
      embeds: [],
      pinned: false,
      type: options.replyToBot ? 19 : 0,
      ...(options.replyToBot
        ? {
            message_reference: { message_id: options.replyToBot, channel_id: options.channel.id },
            referenced_message: {
              id: options.replyToBot,
              channel_id: options.channel.id,
              author: this.bot,
              content: '',
              attachments: [],
              embeds: [],
              mentions: [],
            },
          }
        : {}),
    };
  }

  /** Dispatch a gateway event (kept for RESUME when no socket is attached). Returns its seq. */
  dispatch(t: string, d: Json): number {
    const session = this.session;
    if (!session) throw new Error('no gateway session yet: the bot has not identified');
    const s = ++session.seq;
    session.log.push({ s, t, d });
    if (t === 'MESSAGE_CREATE') this.dispatchedAt.set(String(d.id), performance.now());
    if (session.socket?.readyState === 1) session.socket.send(JSON.stringify({ op: 0, t, s, d }));
    return s;
  }

  /** Dispatch an earlier event again (same payload, new seq), as Discord may after a reconnect. */
  redeliver(id: string): number {
    const entry = this.session?.log.findLast((item) => item.d?.id === id);
    if (!entry) throw new Error(`no dispatched event with id ${id}`);
    return this.dispatch(entry.t, entry.d);
  }

  /** A slash command invocation; returns the interaction id. */
  interaction(options: { name: string; userId: string; channel: FakeChannel; args?: string }): string {
    const id = snowflake();
    const user = this.user(options.userId);
    const guild = options.channel.guild_id;
    this.dispatch('INTERACTION_CREATE', {
      id,
      application_id: this.bot.id,
      type: 2,
      token: `itoken-${id}`,
      version: 1,
      channel_id: options.channel.id,
      channel: { id: options.channel.id, type: options.channel.type },
      ...(guild
        ? {
            guild_id: guild,
            member: {
              user,
              roles: [],
              permissions: '0',
              joined_at: new Date().toISOString(),
              deaf: false,
              mute: false,
              flags: 0,
            },
          }
        : { user }),
      data: {
        id: this.commands.find((command) => command.name === options.name)?.id ?? snowflake(),
        name: options.name,
        type: 1,
        ...(options.args ? { options: [{ name: 'args', type: 3, value: options.args }] } : {}),
      },
      app_permissions: '0',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: {},
      context: guild ? 0 : 1,
    });
    return id;
  }

  get connected(): boolean {
    return this.session?.socket?.readyState === 1;
  }

  /** Cut the gateway connection without a close frame (the client sees 1006 and resumes). */
  dropSocket(): void {
    const socket = this.session?.socket;
    if (this.session) this.session.socket = undefined;
    socket?.terminate();
  }

  // ── Gateway ──────────────────────────────────────────────────────────────────────

  private onSocket(ws: WebSocket): void {
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatIntervalMs }, s: null, t: null }));
    ws.on('message', (raw) => {
      let payload: Json;
      try {
        payload = JSON.parse(String(raw));
      } catch {
        return ws.close(4002, 'Error while decoding payload.');
      }
      if (payload.op === 1) return ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
      if (payload.op === 2) {
        this.gatewayOps.push({ op: 2, d: payload.d });
        if (payload.d?.token !== this.token) return ws.close(4004, 'Authentication failed.');
        this.session?.socket?.terminate();
        this.session = { id: randomBytes(8).toString('hex'), seq: 0, log: [], socket: ws };
        this.dispatch('READY', {
          v: 10,
          user: this.bot,
          guilds: [{ id: this.guildId, unavailable: true }],
          session_id: this.session.id,
          resume_gateway_url: this.gatewayUrl,
          application: { id: this.bot.id, flags: 0 },
          shard: [0, 1],
        });
        this.dispatch('GUILD_CREATE', this.guildPayload());
        return;
      }
      if (payload.op === 6) {
        this.gatewayOps.push({ op: 6, d: payload.d });
        const session = this.session;
        if (!session || payload.d?.session_id !== session.id || payload.d?.token !== this.token)
          return ws.send(JSON.stringify({ op: 9, d: false, s: null, t: null }));
        session.socket?.terminate();
        session.socket = ws;
        for (const entry of session.log)
          if (entry.s > Number(payload.d.seq ?? 0))
            ws.send(JSON.stringify({ op: 0, t: entry.t, s: entry.s, d: entry.d }));
        this.dispatch('RESUMED', {});
      }
    });
    ws.on('close', () => {
      if (this.session?.socket === ws) this.session.socket = undefined;
    });
  }

  private guildPayload(): Json {
    const channels = [...this.channels.values()].filter((channel) => channel.guild_id === this.guildId);
    const wire = (channel: FakeChannel) => ({
      id: channel.id,
      type: channel.type,
      name: channel.name,
      guild_id: channel.guild_id,
      ...(channel.parent_id ? { parent_id: channel.parent_id } : {}),
      position: 0,
      permission_overwrites: [],
    });
    return {
      id: this.guildId,
      name: 'Fake Guild',
      unavailable: false,
      owner_id: snowflake(),
      icon: null,
      roles: [
        {
          id: this.guildId,
          name: '@everyone',
          permissions: '0',
          position: 0,
          color: 0,
          hoist: false,
          managed: false,
          mentionable: false,
          flags: 0,
        },
      ],
      channels: channels.filter((channel) => channel.type !== 11).map(wire),
      threads: channels
        .filter((channel) => channel.type === 11)
        .map((channel) => ({
          ...wire(channel),
          owner_id: this.bot.id,
          thread_metadata: {
            archived: false,
            auto_archive_duration: 60,
            archive_timestamp: new Date().toISOString(),
            locked: false,
          },
        })),
      members: [],
      member_count: 2,
      emojis: [],
      stickers: [],
      features: [],
      joined_at: new Date().toISOString(),
      large: false,
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }

  // ── REST ─────────────────────────────────────────────────────────────────────────

  private reply(res: ServerResponse, status: number, body?: Json, headers: Record<string, string> = {}): void {
    if (status === 204) {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body ?? {}));
  }

  private messageObject(channelId: string, content: string, files: DiscordFile[]): Json {
    return {
      id: snowflake(),
      channel_id: channelId,
      author: this.bot,
      content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: files.map((file) => ({
        id: snowflake(),
        filename: file.name,
        size: file.data.length,
        url: 'http://127.0.0.1/none',
        proxy_url: 'http://127.0.0.1/none',
      })),
      embeds: [],
      pinned: false,
      type: 0,
    };
  }

  private record(sent: Omit<DiscordSent, 'at'>): void {
    const full = { ...sent, at: performance.now() };
    this.sentMessages.push(full);
    for (const listener of this.listeners) listener(full);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const at = performance.now();
    const raw = await readBody(req);
    if (url.pathname.startsWith('/attachments/')) {
      const file = this.files.get(decodeURIComponent(url.pathname.slice('/attachments/'.length)));
      if (!file) return this.reply(res, 404, { message: 'Not Found' });
      res.writeHead(200, {
        'content-type': file.contentType ?? 'application/octet-stream',
        'content-length': String(file.data.length),
      });
      res.end(file.data);
      return;
    }
    if (!url.pathname.startsWith(API_PREFIX)) return this.reply(res, 404, { message: '404: Not Found', code: 0 });
    const path = url.pathname.slice(API_PREFIX.length);
    const method = req.method ?? 'GET';
    let body: Json = undefined;
    let files: DiscordFile[] = [];
    const type = req.headers['content-type'] ?? '';
    if (type.startsWith('multipart/form-data')) {
      const parsed = parseMultipart(raw, type);
      body = parsed.fields.payload_json ? JSON.parse(parsed.fields.payload_json) : {};
      files = parsed.files;
    } else if (raw.length > 0) {
      body = JSON.parse(raw.toString('utf8'));
    }
    const call: DiscordCall = { method, path, body, files, status: 0, at };
    this.calls.push(call);
    const answer = (status: number, payload?: Json, headers?: Record<string, string>) => {
      call.status = status;
      this.reply(res, status, payload, headers);
    };

    const limitedFor = (this.globalUntil - Date.now()) / 1000;
    if (limitedFor > 0) {
      const retryAfter = Math.round(limitedFor * 1000) / 1000;
      return answer(
        429,
        { message: 'You are being rate limited.', retry_after: retryAfter, global: true },
        { 'retry-after': String(retryAfter), 'x-ratelimit-scope': 'global', 'x-ratelimit-global': 'true' },
      );
    }
    const limited = this.rateLimits.findIndex((script) => script.pattern.test(`${method} ${path}`));
    if (limited !== -1) {
      const [script] = this.rateLimits.splice(limited, 1);
      if (script!.global) this.globalUntil = Date.now() + script!.retryAfter * 1000;
      return answer(
        429,
        { message: 'You are being rate limited.', retry_after: script!.retryAfter, global: script!.global },
        {
          'retry-after': String(script!.retryAfter),
          'x-ratelimit-scope': script!.global ? 'global' : 'user',
          ...(script!.global ? { 'x-ratelimit-global': 'true' } : {}),
        },
      );
    }

    // Interaction callbacks and webhook messages authenticate with their token in the path.
    const tokenRoute = path.startsWith('/interactions/') || path.startsWith('/webhooks/');
    if (!tokenRoute && req.headers.authorization !== `Bot ${this.token}`)
      return answer(401, { message: '401: Unauthorized', code: 0 });

    let match: RegExpExecArray | null;
    if (method === 'GET' && path === '/gateway/bot') {
      return answer(200, {
        url: this.gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    }
    if (method === 'GET' && path === '/users/@me') return answer(200, this.bot);
    if (method === 'POST' && path === '/users/@me/channels') {
      const channel = this.dmChannelFor(String(body?.recipient_id));
      return answer(200, { id: channel.id, type: 1, recipients: [this.user(channel.recipientId!)] });
    }
    if ((match = /^\/applications\/([^/]+)\/commands$/.exec(path)) && method === 'PUT') {
      this.commands = (body as Json[]).map((command) => ({
        ...command,
        id: snowflake(),
        application_id: match![1],
        version: snowflake(),
      }));
      return answer(200, this.commands);
    }
    if ((match = /^\/channels\/([^/]+)$/.exec(path)) && method === 'GET') {
      const channel = this.channels.get(decodeURIComponent(match[1]!));
      if (!channel) return answer(404, { message: 'Unknown Channel', code: 10003 });
      return answer(200, {
        id: channel.id,
        type: channel.type,
        name: channel.name,
        guild_id: channel.guild_id,
        parent_id: channel.parent_id,
      });
    }
    if ((match = /^\/channels\/([^/]+)\/typing$/.exec(path)) && method === 'POST') return answer(204);
    if ((match = /^\/channels\/([^/]+)\/messages\/([^/]+)\/reactions\/([^/]+)\/@me$/.exec(path)) && method === 'PUT')
      return answer(204);
    if ((match = /^\/channels\/([^/]+)\/messages$/.exec(path)) && method === 'POST') {
      const channel = this.channels.get(decodeURIComponent(match[1]!));
      if (!channel) return answer(404, { message: 'Unknown Channel', code: 10003 });
      const content = String(body?.content ?? '');
      if (content.length > 2000)
        return answer(400, {
          message: 'Invalid Form Body',
          code: 50035,
          errors: {
            content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
          },
        });
      if (!content && files.length === 0) return answer(400, { message: 'Cannot send an empty message', code: 50006 });
      const message = this.messageObject(channel.id, content, files);
      this.record({
        id: message.id,
        channelId: channel.id,
        ...(channel.recipientId ? { recipientId: channel.recipientId } : {}),
        content,
        files,
        ...(body?.message_reference?.message_id ? { replyTo: String(body.message_reference.message_id) } : {}),
        via: 'channel',
        ...(body?.flags !== undefined ? { flags: body.flags } : {}),
      });
      return answer(200, message);
    }
    if ((match = /^\/channels\/([^/]+)\/messages\/([^/]+)$/.exec(path)) && method === 'PATCH') {
      return answer(200, this.messageObject(decodeURIComponent(match[1]!), String(body?.content ?? ''), files));
    }
    if ((match = /^\/interactions\/([^/]+)\/([^/]+)\/callback$/.exec(path)) && method === 'POST') return answer(204);
    if ((match = /^\/webhooks\/([^/]+)\/([^/]+)\/messages\/@original$/.exec(path)) && method === 'PATCH') {
      const interactionId = match[2]!.replace(/^itoken-/, '');
      const channelId = this.interactionChannel(interactionId);
      const content = String(body?.content ?? '');
      const message = this.messageObject(channelId, content, files);
      this.record({ id: message.id, channelId, content, files, via: 'interaction-original', replyTo: interactionId });
      return answer(200, message);
    }
    if ((match = /^\/webhooks\/([^/]+)\/([^/]+)$/.exec(path)) && method === 'POST') {
      const interactionId = match[2]!.replace(/^itoken-/, '');
      const channelId = this.interactionChannel(interactionId);
      const content = String(body?.content ?? '');
      const message = this.messageObject(channelId, content, files);
      this.record({
        id: message.id,
        channelId,
        content,
        files,
        via: 'interaction-followup',
        replyTo: interactionId,
        ...(body?.flags !== undefined ? { flags: body.flags } : {}),
      });
      return answer(200, message);
    }
    return answer(404, { message: `404: Not Found (${method} ${path})`, code: 0 });
  }

  private interactionChannel(interactionId: string): string {
    const entry = this.session?.log.find((item) => item.t === 'INTERACTION_CREATE' && item.d.id === interactionId);
    return String(entry?.d.channel_id ?? '');
  }
}
