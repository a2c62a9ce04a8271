/**
 * A loopback fake of Slack for the Slack channel's tests and bench, written from Slack's
 * public API docs: the Web API (`POST /api/<method>`, form or JSON bodies, `Authorization:
 * Bearer`) for the methods the channel calls, the external file upload flow, `url_private`
 * downloads, and the Socket Mode WebSocket (`hello`, `events_api` envelopes the client must
 * acknowledge with their `envelope_id`, `disconnect`). An envelope not acknowledged is
 * delivered again on the next connection, as Slack does. Slash commands come as
 * `slash_commands` envelopes (or as the form fields HTTP mode posts) with a `response_url`
 * on this server that records what is posted to it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

type Json = any;

export interface SlackPost {
  channel: string;
  text: string;
  threadTs?: string;
  ts: string;
}

export interface SlackUpload {
  channel: string;
  fileName: string;
  data: Buffer;
  threadTs?: string;
}

interface Pending {
  envelopeId: string;
  type: string;
  payload: Json;
  attempts: number;
  acked: (response?: Json) => void;
}

/** One answer posted to a slash command's response_url. */
export interface SlashResponse {
  triggerId: string;
  responseType: string;
  text: string;
}

export const BOT_TOKEN = 'xoxb-1111-2222-fakebottoken';
export const APP_TOKEN = 'xapp-1-A111-3333-fakeapptoken';
export const BOT_USER = 'UBOT0001';

export class FakeSlack {
  readonly botToken = BOT_TOKEN;
  readonly appToken = APP_TOKEN;
  readonly botUser = BOT_USER;
  private server?: Server;
  private wss?: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  private readonly pending = new Map<string, Pending>();
  private posts: SlackPost[] = [];
  private uploads: SlackUpload[] = [];
  private readonly uploading = new Map<string, { fileName: string; data?: Buffer }>();
  readonly reactions: Array<{ channel: string; timestamp: string; name: string }> = [];
  /** reactions.add and reactions.remove, in order ("+eyes" / "-eyes"). */
  readonly reactionLog: string[] = [];
  /** assistant.threads.setStatus calls, in order. */
  readonly statuses: Array<{ channel: string; threadTs: string; status: string }> = [];
  readonly responses: SlashResponse[] = [];
  /** response_url answers 404 (expired, used up), as Slack does after thirty minutes or five answers. */
  responseUrlGone = false;
  /** Methods that answer with this Slack error (`missing_scope`, …) instead of working. */
  readonly failing = new Map<string, string>();
  readonly calls: string[] = [];
  readonly files = new Map<string, { data: Buffer; mimeType: string }>();
  /** chat.postMessage answers 429 with this Retry-After (seconds) this many times. */
  private rateLimited = { times: 0, retryAfter: 1 };
  rateLimitedAt: number[] = [];
  private readonly postListeners = new Set<(post: SlackPost, at: number) => void>();
  /** Socket Mode connections opened so far. */
  connections = 0;
  private seq = 0;
  private tsCounter = 0;

  get apiUrl(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/api/`;
  }

  private get origin(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.onHttp(req, res));
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/socket')) return socket.destroy();
      this.wss!.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss?.close();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  reset(): void {
    this.posts = [];
    this.uploads = [];
    this.reactions.length = 0;
    this.reactionLog.length = 0;
    this.statuses.length = 0;
    this.responses.length = 0;
    this.failing.clear();
    this.responseUrlGone = false;
    this.calls.length = 0;
    this.rateLimited = { times: 0, retryAfter: 1 };
    this.rateLimitedAt = [];
    this.pending.clear();
  }

  /** Called at each chat.postMessage the fake accepts; returns the unsubscribe. */
  onPost(listener: (post: SlackPost, at: number) => void): () => void {
    this.postListeners.add(listener);
    return () => this.postListeners.delete(listener);
  }

  sent(): SlackPost[] {
    return [...this.posts];
  }

  uploaded(): SlackUpload[] {
    return [...this.uploads];
  }

  /** Envelopes delivered and not acknowledged yet. */
  unacked(): number {
    return this.pending.size;
  }

  connectedSockets(): number {
    return this.sockets.size;
  }

  rateLimitPosts(times: number, retryAfter: number): void {
    this.rateLimited = { times, retryAfter };
  }

  /** A file behind a `url_private` address that wants the bot token. */
  addFile(id: string, data: Buffer, mimeType: string): string {
    this.files.set(id, { data, mimeType });
    return `${this.origin}/files-pri/${id}`;
  }

  /** Ask the connected clients to reconnect, as Slack does before it recycles a socket. */
  requestReconnect(): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }));
  }

  nextTs(): string {
    return `${Math.floor(Date.now() / 1000)}.${String(++this.tsCounter).padStart(6, '0')}`;
  }

  /**
   * Deliver an Events API event; resolves once the client acknowledged its envelope (it may
   * be redelivered on a later connection first). `eventId` repeats a delivery Slack retries.
   */
  deliver(event: Json, options: { eventId?: string } = {}): Promise<void> {
    const payload = {
      token: 'verification-token',
      team_id: 'T0001',
      api_app_id: 'A0001',
      type: 'event_callback',
      event_id: options.eventId ?? `Ev${this.seq.toString().padStart(8, '0')}`,
      event_time: Math.floor(Date.now() / 1000),
      event: { event_ts: event.ts, ...event },
    };
    return this.envelope('events_api', payload).then(() => undefined);
  }

  /** Deliver an envelope; resolves with the acknowledgement's payload (if any). */
  envelope(type: string, payload: Json): Promise<Json> {
    const envelopeId = `env-${++this.seq}`;
    return new Promise<Json>((resolve) => {
      this.pending.set(envelopeId, { envelopeId, type, payload, attempts: 0, acked: resolve });
      for (const ws of this.sockets) this.push(ws, this.pending.get(envelopeId)!);
    });
  }

  /** A slash command's fields, as Slack posts them in HTTP mode and sends them in Socket Mode. */
  slashFields(options: {
    user: string;
    text: string;
    command?: string;
    channel?: string;
    channelName?: string;
  }): Record<string, string> {
    const triggerId = `${++this.seq}.${Date.now()}.trigger`;
    const channel = options.channel ?? `D${options.user}`;
    return {
      token: 'verification-token',
      team_id: 'T0001',
      team_domain: 'acme',
      channel_id: channel,
      channel_name: options.channelName ?? (channel.startsWith('D') ? 'directmessage' : 'general'),
      user_id: options.user,
      user_name: options.user.toLowerCase(),
      command: options.command ?? '/openclaw',
      text: options.text,
      api_app_id: 'A0001',
      response_url: `${this.origin}/commands/T0001/${encodeURIComponent(triggerId)}`,
      trigger_id: triggerId,
    };
  }

  /** Send a slash command over Socket Mode; resolves with the acknowledgement's payload (undefined when empty). */
  async slashCommand(fields: Record<string, string>): Promise<Json> {
    const response = await this.envelope('slash_commands', fields);
    return response && Object.keys(response).length > 0 ? response : undefined;
  }

  /** A user's message event in a DM (`D<user>`), a channel, or a thread. */
  message(options: {
    user: string;
    text: string;
    channel?: string;
    ts?: string;
    threadTs?: string;
    files?: Json[];
  }): Json {
    const channel = options.channel ?? `D${options.user}`;
    return {
      type: 'message',
      channel,
      channel_type: channel.startsWith('D') ? 'im' : 'channel',
      user: options.user,
      text: options.text,
      ts: options.ts ?? this.nextTs(),
      team: 'T0001',
      ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
      ...(options.files ? { files: options.files, subtype: 'file_share' } : {}),
    };
  }

  private push(ws: WebSocket, pending: Pending): void {
    pending.attempts++;
    ws.send(
      JSON.stringify({
        envelope_id: pending.envelopeId,
        type: pending.type,
        accepts_response_payload: pending.type !== 'events_api',
        retry_attempt: pending.attempts - 1,
        retry_reason: pending.attempts > 1 ? 'timeout' : '',
        payload: pending.payload,
      }),
    );
  }

  private onSocket(ws: WebSocket): void {
    this.connections++;
    this.sockets.add(ws);
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('message', (raw) => {
      let frame: Json;
      try {
        frame = JSON.parse(String(raw));
      } catch {
        return;
      }
      const pending = frame?.envelope_id ? this.pending.get(String(frame.envelope_id)) : undefined;
      if (!pending) return;
      this.pending.delete(pending.envelopeId);
      pending.acked(frame.payload);
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.sockets.size,
        connection_info: { app_id: 'A0001' },
        debug_info: { host: 'fake', approximate_connection_time: 18060 },
      }),
    );
    for (const pending of this.pending.values()) this.push(ws, pending);
  }

  private async body(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  private async onHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    const raw = await this.body(req);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (url.pathname.startsWith('/files-pri/')) {
      const file = this.files.get(url.pathname.slice('/files-pri/'.length));
      if (bearer !== this.botToken || !file) return void res.writeHead(bearer ? 404 : 401).end();
      res.writeHead(200, { 'content-type': file.mimeType });
      return void res.end(file.data);
    }
    if (url.pathname.startsWith('/upload/')) {
      const upload = this.uploading.get(url.pathname.slice('/upload/'.length));
      if (!upload) return void res.writeHead(404).end();
      // The file goes up as the body itself or as the one part of a multipart form.
      const type = String(req.headers['content-type'] ?? '');
      if (type.startsWith('multipart/form-data')) {
        const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
        const part = [...form.values()].find((value) => typeof value !== 'string') as Blob | undefined;
        upload.data = part ? Buffer.from(await part.arrayBuffer()) : Buffer.alloc(0);
      } else upload.data = raw;
      return void res.writeHead(200).end('OK');
    }
    if (url.pathname.startsWith('/commands/')) {
      // A response_url: no token, the address itself is the credential.
      if (this.responseUrlGone) return void res.writeHead(404).end('expired_url');
      const body = JSON.parse(raw.toString() || '{}');
      this.responses.push({
        triggerId: decodeURIComponent(url.pathname.split('/').pop()!),
        responseType: String(body.response_type ?? 'ephemeral'),
        text: String(body.text ?? ''),
      });
      return void res.writeHead(200).end('ok');
    }
    if (!url.pathname.startsWith('/api/')) return void res.writeHead(404).end();
    const method = url.pathname.slice('/api/'.length);
    this.calls.push(method);
    const type = req.headers['content-type'] ?? '';
    const args: Json = type.includes('json')
      ? JSON.parse(raw.toString() || '{}')
      : Object.fromEntries(new URLSearchParams(raw.toString()));
    if (method === 'apps.connections.open') {
      if (bearer !== this.appToken) return json(200, { ok: false, error: 'invalid_auth' });
      return json(200, {
        ok: true,
        url: `ws://127.0.0.1:${(this.server!.address() as AddressInfo).port}/socket?ticket=${++this.seq}`,
      });
    }
    if (bearer !== this.botToken) return json(200, { ok: false, error: 'invalid_auth' });
    const failure = this.failing.get(method);
    if (failure) return json(200, { ok: false, error: failure });
    switch (method) {
      case 'auth.test':
        return json(200, {
          ok: true,
          url: 'https://acme.slack.com/',
          team: 'Acme',
          user: 'clawbot',
          team_id: 'T0001',
          user_id: this.botUser,
          bot_id: 'B0001',
        });
      case 'chat.postMessage': {
        if (this.rateLimited.times > 0) {
          this.rateLimited.times--;
          this.rateLimitedAt.push(Date.now());
          return json(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(this.rateLimited.retryAfter) });
        }
        if (!args.channel || !args.text) return json(200, { ok: false, error: 'no_text' });
        const ts = this.nextTs();
        const post: SlackPost = {
          channel: String(args.channel),
          text: String(args.text),
          ts,
          ...(args.thread_ts ? { threadTs: String(args.thread_ts) } : {}),
        };
        this.posts.push(post);
        for (const listener of this.postListeners) listener(post, performance.now());
        return json(200, { ok: true, channel: args.channel, ts, message: { text: args.text, ts } });
      }
      case 'conversations.open':
        return json(200, { ok: true, channel: { id: `D${String(args.users)}` } });
      case 'reactions.add':
        this.reactions.push({
          channel: String(args.channel),
          timestamp: String(args.timestamp),
          name: String(args.name),
        });
        this.reactionLog.push(`+${String(args.name)}`);
        return json(200, { ok: true });
      case 'reactions.remove':
        this.reactionLog.push(`-${String(args.name)}`);
        return json(200, { ok: true });
      case 'assistant.threads.setStatus':
        this.statuses.push({
          channel: String(args.channel_id),
          threadTs: String(args.thread_ts),
          status: String(args.status ?? ''),
        });
        return json(200, { ok: true });
      case 'files.getUploadURLExternal': {
        const id = `F${++this.seq}`;
        this.uploading.set(id, { fileName: String(args.filename) });
        return json(200, { ok: true, upload_url: `${this.origin}/upload/${id}`, file_id: id });
      }
      case 'files.completeUploadExternal': {
        const files = typeof args.files === 'string' ? JSON.parse(args.files) : args.files;
        for (const file of files ?? []) {
          const upload = this.uploading.get(String(file.id));
          if (!upload?.data) return json(200, { ok: false, error: 'file_not_found' });
          this.uploads.push({
            channel: String(args.channel_id),
            fileName: upload.fileName,
            data: upload.data,
            ...(args.thread_ts ? { threadTs: String(args.thread_ts) } : {}),
          });
        }
        return json(200, { ok: true, files: files ?? [] });
      }
      default:
        return json(200, { ok: false, error: 'unknown_method' });
    }
  }
}
