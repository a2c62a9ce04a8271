/**
 * The gateway server: one port for WebSocket RPC and HTTP. The socket is accepting as soon
 * as the port is bound; the HTTP app (fastify) is brought up by the first HTTP request.
 *
 * Every inbound frame goes through onMessage → (handshake | dispatch); every outbound
 * frame through send(), which is where slow consumers are handled. Every request, from
 * any connection, reaches a method through invoke(): scope, params, idempotency, handler.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import type { RawData, WebSocket as WsSocket, WebSocketServer as WsServer } from 'ws';
import {
  ErrorCodes,
  MAX_PREAUTH_PAYLOAD_BYTES,
  parseFrame,
  ProtocolError,
  errorShape,
  type ErrorShape,
  type EmittedEvent,
  type GatewayMethodContext,
  type KernelServices,
  type Logger,
  type RequestFrame,
  buildAgentMainSessionKey,
  normalizeAgentId,
  normalizeMainKey,
  stateDirTightenedMessage,
  tightenStateDir,
  trace,
} from '../../sdk/index.js';
import { admitConnect, hasScope, type Admission, type HandshakeResult } from './handshake.js';
import { SlicedQueue } from './slices.js';
import { isLoopbackHost } from '../../sdk/net/index.js';
import { AuthRateLimiter, clientKey } from './rate-limit.js';
import { checkRequest, type Refusal } from './request-guard.js';
import { DedupeCache, idempotencyFile, type Outcome, type Recovery } from './dedupe.js';
import { acquireLock, type GatewayLock } from './lock.js';
import type { PairingStore } from './pairing.js';
import { PresenceTracker } from './presence.js';
import type { GatewaySettings } from './settings.js';
import { startHttpApp, type HttpApp } from './http.js';
import { CloseCodes } from './close-codes.js';
import { helloFeatures } from './features.js';
import { serveControlUi } from './control-ui.js';

export interface GatewayServerOptions {
  kernel: KernelServices;
  logger: Logger;
  settings: GatewaySettings;
  pairing: PairingStore;
  version: string;
}

export class Connection {
  readonly id = randomUUID();
  readonly nonce = randomUUID();
  readonly challengeTs = Date.now();
  readonly abort = new AbortController();
  /** handshake → admitting (connect received, being decided) → open → closed. */
  state: 'handshake' | 'admitting' | 'open' | 'closed' = 'handshake';
  /** Frames that arrived while the connect was being decided; handled once open. */
  held: Array<{ data: RawData; isBinary: boolean }> = [];
  admission?: Admission;
  seq = 0;
  dropped = 0;
  connectedAt = 0;
  handshakeTimer?: NodeJS.Timeout;
  releasePreauth?: () => void;
  stopPreauthCount?: () => void;
  /** Bytes received before connect succeeded (the pre-auth limit is enforced as they arrive). */
  preauthBytes = 0;
  /** Wants `presence` events: a UI client, or one that asked for `system-presence`. */
  wantsPresence = false;

  constructor(
    readonly ws: WebSocket,
    readonly remoteAddress: string | undefined,
    /** On this machine and not forwarded by a proxy. */
    readonly local: boolean,
    /** Identifies the client to the failed-auth limiter; undefined when it is exempt. */
    readonly limiterKey: string | undefined,
  ) {}

  get role(): string | undefined {
    return this.admission?.role;
  }

  get scopes(): readonly string[] {
    return this.admission?.scopes ?? [];
  }

  get instanceId(): string {
    return this.admission?.params.client.instanceId ?? this.id;
  }
}

// CommonJS packages load twice as fast through require() as through the ESM wrapper.
const { WebSocket, WebSocketServer } = createRequire(import.meta.url)('ws') as typeof import('ws');
type WebSocket = WsSocket;

const HEALTH_EVENT_INTERVAL_MS = 60_000;
/** Room for WebSocket frame headers on top of the pre-auth payload limit. */
const PREAUTH_FRAMING_SLACK = 1024;
/** Client modes that display presence (the Control UI and web chat). */
const PRESENCE_MODES = new Set(['ui', 'webchat']);

function forwardedRequest(req: IncomingMessage): boolean {
  return req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
}

function refuseRaw(socket: Duplex, refusal: Refusal, extraHeaders = ''): void {
  const body = `${JSON.stringify({ error: refusal.message })}\n`;
  const reason = { 403: 'Forbidden', 421: 'Misdirected Request', 503: 'Service Unavailable' }[refusal.status] ?? 'Refused';
  socket.end(
    `HTTP/1.1 ${refusal.status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`,
  );
}

function closeReason(text: string): string {
  // The WebSocket protocol allows 123 bytes of close reason.
  const buffer = Buffer.from(text);
  return buffer.length <= 123 ? text : `${buffer.subarray(0, 120).toString('utf8')}...`;
}

export class GatewayServer {
  readonly presence = new PresenceTracker();
  readonly startedAt = Date.now();
  private readonly connections = new Map<string, Connection>();
  private readonly dedupe: DedupeCache;
  private readonly eventLoop = monitorEventLoopDelay({ resolution: 20 });
  private http?: Server;
  private wss?: WsServer;
  private app?: HttpApp;
  private loadHttp?: () => Promise<void>;
  private httpLoading?: Promise<void>;
  private lock?: GatewayLock;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe?: () => void;
  private accepting = false;
  private inflight = 0;
  private idle?: () => void;
  private healthVersion = 0;
  private readonly limiter: AuthRateLimiter;
  /** Sockets that have not completed connect: in total and per client address. */
  private preauthTotal = 0;
  private readonly preauthByAddress = new Map<string, number>();
  private presenceTimer?: NodeJS.Timeout;
  private readonly slices = new SlicedQueue(5, (error) => this.options.logger.error(`handshake failed: ${(error as Error).stack ?? String(error)}`));
  private healthCache?: { at: number; value: ReturnType<GatewayServer['computeHealth']> };
  private presenceSentAt = 0;
  address?: { host: string; port: number };

  constructor(private readonly options: GatewayServerOptions) {
    this.dedupe = new DedupeCache(options.settings.idempotencyWindowMs, { file: idempotencyFile(options.kernel.paths.stateDir) });
    this.limiter = new AuthRateLimiter(options.settings.auth.rateLimit);
  }

  get settings(): GatewaySettings {
    return this.options.settings;
  }

  connectionList(): Connection[] {
    return [...this.connections.values()];
  }

  // ── Lifecycle ──────────────────────────────────────────────────────────────────

  async start(): Promise<{ host: string; port: number }> {
    const { settings, kernel, logger } = this.options;
    // A state dir other users can read exposes the token, credentials and transcripts below it.
    const was = tightenStateDir(kernel.paths.stateDir);
    if (was !== undefined) logger.warn(stateDirTightenedMessage(kernel.paths.stateDir, was));
    this.lock = acquireLock(kernel.paths.stateDir, { host: settings.host, port: settings.port });
    try {
      this.wss = new WebSocketServer({ noServer: true, maxPayload: settings.maxPayloadBytes, perMessageDeflate: false, clientTracking: false });
      this.wss.on('connection', (ws: WebSocket, req: IncomingMessage, release: () => void) => this.onConnection(ws, req, release));
      const pendingHttp: Array<[IncomingMessage, ServerResponse]> = [];
      let handle: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
      // fastify costs ~80 ms and ~15 MB to load; a gateway used only over WebSocket never
      // needs it. It comes up on the first HTTP request, which waits for it.
      this.loadHttp = () =>
        (this.httpLoading ??= startHttpApp({ server: this.http!, kernel, settings, logger, limiter: this.limiter, health: () => this.health() }).then(
          (app) => {
            this.app = app;
            handle = app.handle;
          },
          (error: unknown) => {
            logger.error(`HTTP app failed to start: ${(error as Error).message}`);
            handle = (_req, res) => void res.writeHead(500).end('{"error":"HTTP app failed to start"}');
          },
        ).then(() => {
          for (const [req, res] of pendingHttp.splice(0)) handle!(req, res);
        }));
      this.http = createServer((req, res) => {
        const refused = checkRequest(req, settings);
        if (refused) {
          logger.warn(`refused HTTP ${req.method} ${req.url?.split('?')[0]}: ${refused.message}`, { remote: req.socket.remoteAddress });
          return void res.writeHead(refused.status, { 'content-type': 'application/json', connection: 'close' }).end(`${JSON.stringify({ error: refused.message })}\n`);
        }
        if (serveControlUi(req, res, settings, () => ({ version: this.options.version }))) return;
        if (handle) return handle(req, res);
        if (pendingHttp.length >= 1024) return void res.writeHead(503, { 'retry-after': '1' }).end('{"error":"gateway starting"}');
        pendingHttp.push([req, res]);
        void this.loadHttp!();
      });
      this.http.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
      this.http.on('clientError', (_error, socket) => socket.destroy());
      await new Promise<void>((resolve, reject) => {
        const onError = (error: NodeJS.ErrnoException) =>
          reject(
            error.code === 'EADDRINUSE'
              ? new Error(`port ${settings.port} on ${settings.host} is already in use by another program (set gateway.port or --port)`)
              : error,
          );
        this.http!.once('error', onError);
        this.http!.listen(settings.port, settings.host, () => {
          this.http!.off('error', onError);
          resolve();
        });
      });
      const bound = this.http.address();
      const port = typeof bound === 'object' && bound ? bound.port : settings.port;
      this.address = { host: settings.host, port };
      this.lock.update({ port });
      this.accepting = true;
      this.eventLoop.enable();
      this.unsubscribe = kernel.protocol.onEmit((event) => this.deliver(event));
      this.timers.push(setInterval(() => this.broadcast('tick', { ts: Date.now() }), settings.tickIntervalMs));
      this.timers.push(setInterval(() => this.publishHealth(), HEALTH_EVENT_INTERVAL_MS));
      for (const timer of this.timers) timer.unref();
      trace('gateway: listening');
      logger.info(`gateway listening on ws://${settings.host}:${port} (auth: ${settings.auth.mode})`, { port, host: settings.host });
      const browserHost = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
      const webUi = `http://${browserHost.includes(':') ? `[${browserHost}]` : browserHost}:${port}/`;
      if (settings.auth.mode === 'none') {
        logger.warn(`gateway auth is OFF (gateway.auth.mode "none"): any program on this machine can control the assistant. Web UI: ${webUi}`);
      } else {
        logger.info(`web UI: ${webUi} (run \`claw dashboard\` to open it signed in with the gateway ${settings.auth.mode})`);
      }
      await kernel.hooks.runVoid('gateway_start', { port, host: settings.host });
      // Memory otherwise loads on the first memory_search, which would then wait for the whole
      // first index. Loading it here starts its sync service (it indexes what is missing or
      // changed, in the background); a timer, so start-up does not wait for the load.
      setTimeout(() => void this.startMemory(), 0).unref();
      return this.address;
    } catch (error) {
      this.http?.close();
      this.lock.release();
      throw error;
    }
  }

  /**
   * Stop: refuse new connections, tell clients why, let running requests finish (bounded),
   * run gateway_stop hooks, close every socket, release the lock.
   */
  /** Loads the memory slot holder (its service builds the index); nothing when the slot is "none". */
  private async startMemory(): Promise<void> {
    if (!this.accepting) return;
    try {
      await this.options.kernel.capabilities.slot('memory');
    } catch (error) {
      this.options.logger.warn(`memory index at start-up: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async stop(reason = 'shutdown', restartExpectedMs?: number): Promise<void> {
    if (!this.accepting && !this.http) return;
    const { kernel, logger, settings } = this.options;
    this.accepting = false;
    clearTimeout(this.presenceTimer);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
    this.unsubscribe?.();
    this.eventLoop.disable();
    this.http?.close();
    this.broadcast('shutdown', { reason, ...(restartExpectedMs !== undefined ? { restartExpectedMs } : {}) });
    if (this.inflight > 0) {
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        setTimeout(resolve, settings.shutdownDrainMs).unref();
      });
    }
    await kernel.hooks.runVoid('gateway_stop', { reason });
    const code = restartExpectedMs !== undefined ? CloseCodes.restart : CloseCodes.goingAway;
    await Promise.all(this.connectionList().map((conn) => this.closeConnection(conn, code, `gateway ${reason}`, true)));
    this.http?.closeAllConnections();
    await this.httpLoading;
    await this.app?.close();
    this.http = undefined;
    this.dedupe.close();
    this.lock?.release();
    logger.info(`gateway stopped (${reason})`);
  }

  // ── Connections ────────────────────────────────────────────────────────────────

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!this.accepting || !this.wss) {
      refuseRaw(socket, { status: 503, message: 'the gateway is not accepting connections' });
      return;
    }
    const refused = checkRequest(req, this.settings);
    if (refused) {
      this.options.logger.warn(`refused a WebSocket: ${refused.message}`, { remote: req.socket.remoteAddress });
      refuseRaw(socket, refused);
      return;
    }
    // Admission: sockets that have not authenticated are capped in total and per address,
    // so nobody can hold the gateway's memory or file descriptors without a credential.
    const address = req.socket.remoteAddress ?? 'unknown';
    const directLoopback = isLoopbackHost(address) && !forwardedRequest(req);
    const fromAddress = this.preauthByAddress.get(address) ?? 0;
    const { maxConnections, maxPerAddress } = this.settings.preauth;
    if (this.preauthTotal >= maxConnections || (!directLoopback && fromAddress >= maxPerAddress)) {
      const which = this.preauthTotal >= maxConnections ? `${maxConnections} in total` : `${maxPerAddress} from ${address}`;
      this.options.logger.warn(`refused a WebSocket: too many unauthenticated connections (${which})`, { remote: address });
      refuseRaw(socket, { status: 503, message: 'too many connections are still authenticating; retry shortly' }, 'Retry-After: 1\r\n');
      return;
    }
    this.preauthTotal++;
    this.preauthByAddress.set(address, fromAddress + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.preauthTotal--;
      const left = (this.preauthByAddress.get(address) ?? 1) - 1;
      if (left > 0) this.preauthByAddress.set(address, left);
      else this.preauthByAddress.delete(address);
    };
    // The socket may die before the upgrade completes; the slot must come back either way.
    socket.once('close', release);
    // Accepting a socket costs a hash, a 101 and a challenge: done in slices, so a thousand
    // sockets arriving in one poll do not hold the event loop.
    this.slices.run(() => {
      if (socket.destroyed || !this.accepting) return void socket.destroy();
      this.wss!.handleUpgrade(req, socket, head, (ws) => this.wss!.emit('connection', ws, req, release));
    });
  }

  private onConnection(ws: WebSocket, req: IncomingMessage, releasePreauth: () => void): void {
    const address = req.socket.remoteAddress;
    // A request relayed by a proxy on this machine is treated as coming from elsewhere.
    const forwarded = forwardedRequest(req);
    const limited = clientKey(address, req.headers.origin, forwarded, this.settings.auth.rateLimit);
    const conn = new Connection(ws, address, isLoopbackHost(address ?? '') && !forwarded, limited.exempt ? undefined : limited.key);
    conn.releasePreauth = releasePreauth;
    this.connections.set(conn.id, conn);
    // ws buffers a whole frame before handing it over, so the pre-auth size limit is
    // enforced on the bytes as they arrive: nobody unauthenticated can make it buffer more.
    const socket = req.socket;
    const countPreauth = (chunk: Buffer) => {
      conn.preauthBytes += chunk.length;
      if (conn.state !== 'open' && conn.preauthBytes > MAX_PREAUTH_PAYLOAD_BYTES + PREAUTH_FRAMING_SLACK) {
        this.fail(conn, errorShape(ErrorCodes.INVALID_REQUEST, `more than ${MAX_PREAUTH_PAYLOAD_BYTES} bytes sent before connect: exceeds the ${MAX_PREAUTH_PAYLOAD_BYTES}-byte limit before connect`), CloseCodes.tooBig);
        // Stop reading now (ws would keep buffering the frame): flush the close frame, then drop.
        socket.off('data', countPreauth);
        socket.once('finish', () => socket.destroy());
        socket.end();
      }
    };
    socket.on('data', countPreauth);
    conn.stopPreauthCount = () => socket.off('data', countPreauth);
    conn.handshakeTimer = setTimeout(() => {
      this.fail(conn, errorShape(ErrorCodes.INVALID_REQUEST, `no connect request within ${this.settings.handshakeTimeoutMs} ms`), CloseCodes.policy);
    }, this.settings.handshakeTimeoutMs);
    ws.on('message', (data, isBinary) => this.onMessage(conn, data, isBinary));
    ws.on('close', () => this.onClose(conn));
    ws.on('error', (error) => this.options.logger.debug(`socket error: ${error.message}`, { conn: conn.id }));
    this.send(conn, { type: 'event', event: 'connect.challenge', payload: { nonce: conn.nonce, ts: conn.challengeTs } });
  }

  private onClose(conn: Connection): void {
    // Runs once per socket, whether it closed by itself or was refused (state already "closed").
    if (!this.connections.delete(conn.id)) return;
    conn.state = 'closed';
    clearTimeout(conn.handshakeTimer);
    conn.releasePreauth?.();
    conn.stopPreauthCount?.();
    conn.abort.abort();
    if (conn.admission) {
      this.presence.disconnect(conn.instanceId, conn.id);
      this.presenceChanged();
    }
  }

  /** Close a connection; `terminateAfter` forces it shut if the peer does not answer the close. */
  closeConnection(conn: Connection, code: number, reason: string, wait = false): Promise<void> {
    const ws = conn.ws;
    if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(code, closeReason(reason));
    setTimeout(() => ws.terminate(), 1000).unref();
    return wait ? closed : Promise.resolve();
  }

  /** Send an error (as a response when we know the request id, else as an `error` event) and close. */
  private fail(conn: Connection, error: ErrorShape, code: number, id?: string): void {
    if (conn.state === 'closed') return;
    if (id) this.send(conn, { type: 'res', id, ok: false, error });
    else this.sendEvent(conn, 'error', error);
    void this.closeConnection(conn, code, error.message);
    conn.state = 'closed';
    clearTimeout(conn.handshakeTimer);
  }

  // ── Inbound frames ─────────────────────────────────────────────────────────────

  private onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    try {
      this.handleMessage(conn, data, isBinary);
    } catch (error) {
      // Nothing a client sends may take the gateway down: report, and drop this socket.
      this.options.logger.error(`frame handling failed: ${(error as Error).stack ?? String(error)}`, { conn: conn.id });
      this.fail(conn, errorShape(ErrorCodes.UNAVAILABLE, 'internal error while handling the frame'), CloseCodes.policy);
    }
  }

  private handleMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    if (conn.state === 'closed') return;
    if (conn.state === 'admitting') {
      // A client may pipeline requests behind its connect; they wait for the verdict.
      if (conn.held.length >= 32) this.fail(conn, errorShape(ErrorCodes.INVALID_REQUEST, 'too many frames before hello-ok'), CloseCodes.policy);
      else conn.held.push({ data, isBinary });
      return;
    }
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) {
      this.fail(conn, errorShape(ErrorCodes.INVALID_REQUEST, 'binary frames are not supported: send JSON text frames'), CloseCodes.unsupportedData);
      return;
    }
    if (conn.state === 'handshake' && buffer.length > MAX_PREAUTH_PAYLOAD_BYTES) {
      this.fail(
        conn,
        errorShape(ErrorCodes.INVALID_REQUEST, `frame of ${buffer.length} bytes exceeds the ${MAX_PREAUTH_PAYLOAD_BYTES}-byte limit before connect`),
        CloseCodes.tooBig,
      );
      return;
    }
    const text = buffer.toString('utf8');
    const parsed = parseFrame(text);
    if (!parsed.ok) {
      if (conn.state === 'handshake') this.fail(conn, parsed.error, CloseCodes.policy, idOf(text));
      else this.reply(conn, idOf(text), parsed.error);
      return;
    }
    const frame = parsed.frame;
    if (conn.state === 'handshake') {
      if (frame.type !== 'req' || frame.method !== 'connect') {
        const what = frame.type === 'req' ? `"${frame.method}"` : `a ${frame.type} frame`;
        this.fail(
          conn,
          errorShape(ErrorCodes.INVALID_REQUEST, `the first frame must be a connect request, got ${what}`),
          CloseCodes.policy,
          frame.type === 'req' ? frame.id : undefined,
        );
        return;
      }
      this.handshake(conn, frame);
      return;
    }
    if (frame.type !== 'req') {
      this.reply(conn, undefined, errorShape(ErrorCodes.INVALID_REQUEST, `clients send req frames only, got a ${frame.type} frame`));
      return;
    }
    void this.dispatch(conn, frame);
  }

  /** A connect request: decided, then (once any pairing change is on disk) answered, in slices. */
  private handshake(conn: Connection, frame: RequestFrame): void {
    clearTimeout(conn.handshakeTimer);
    conn.state = 'admitting';
    this.slices.run(() => this.decide(conn, frame));
  }

  private decide(conn: Connection, frame: RequestFrame): void {
    if (conn.state === 'closed') return;
    const { settings, pairing, logger } = this.options;
    const result = admitConnect(
      frame.params,
      { nonce: conn.nonce, local: conn.local, remoteAddress: conn.remoteAddress, now: Date.now(), limiter: this.limiter, clientKey: conn.limiterKey },
      settings,
      pairing,
    );
    if (!pairing.dirty) return this.answerConnect(conn, frame, result);
    // A device token or pairing request is on disk before the client hears of it.
    pairing.flush().then(
      () => this.slices.run(() => this.answerConnect(conn, frame, result)),
      (error: Error) => {
        logger.error(`pairing store write failed: ${error.message}`);
        this.fail(conn, errorShape(ErrorCodes.UNAVAILABLE, 'the gateway could not record this device; try again'), CloseCodes.tryAgainLater, frame.id);
      },
    );
  }

  private answerConnect(conn: Connection, frame: RequestFrame, result: HandshakeResult): void {
    if (conn.state === 'closed') return;
    const { settings, kernel, logger } = this.options;
    if (!result.ok) {
      if (result.pairing?.created) {
        const request = result.pairing.request;
        logger.warn(`pairing requested by device ${request.deviceId.slice(0, 12)}… from ${request.remoteAddress ?? 'unknown'}`, { requestId: request.requestId });
        kernel.protocol.emit('device.pair.requested', request);
      }
      logger.info(`connect refused: ${result.error.message}`, { conn: conn.id, remote: conn.remoteAddress });
      this.fail(conn, result.error.toShape(), CloseCodes.policy, frame.id);
      return;
    }
    const admission = result.admission;
    conn.admission = admission;
    conn.state = 'open';
    conn.connectedAt = Date.now();
    conn.releasePreauth?.();
    conn.stopPreauthCount?.();
    const client = admission.params.client;
    conn.wantsPresence = admission.role === 'operator' && PRESENCE_MODES.has(client.mode ?? '') && hasScope(admission.scopes, 'operator.read');
    this.presence.upsert({
      instanceId: conn.instanceId,
      connId: conn.id,
      deviceId: admission.deviceId,
      clientId: client.id,
      mode: client.mode,
      platform: client.platform,
      version: client.version,
      displayName: client.displayName,
      roles: [admission.role],
      scopes: admission.scopes,
      remoteAddress: conn.remoteAddress,
      connected: true,
      reason: 'connect',
    });
    this.send(conn, {
      type: 'res',
      id: frame.id,
      ok: true,
      payload: {
        type: 'hello-ok',
        protocol: admission.protocol,
        server: { version: this.options.version, connId: conn.id },
        features: helloFeatures(kernel),
        snapshot: {
          // The full list goes to clients that show presence; others ask (system-presence).
          presence: conn.wantsPresence ? this.presence.snapshot() : [],
          health: this.health(),
          stateVersion: this.stateVersion(),
          uptimeMs: Date.now() - this.startedAt,
          sessionDefaults: sessionDefaults(this.options.kernel.config()),
          authMode: settings.auth.mode,
        },
        auth: {
          role: admission.role,
          scopes: admission.scopes,
          ...(admission.deviceToken ? { deviceToken: admission.deviceToken } : {}),
        },
        policy: {
          maxPayload: settings.maxPayloadBytes,
          maxBufferedBytes: settings.maxBufferedBytes,
          tickIntervalMs: settings.tickIntervalMs,
        },
      },
    });
    logger.debug('client connected', { conn: conn.id, client: client.id, role: admission.role, auth: admission.authMethod });
    this.presenceChanged();
    for (const held of conn.held.splice(0)) this.onMessage(conn, held.data, held.isBinary);
  }

  // ── Requests ───────────────────────────────────────────────────────────────────

  private async dispatch(conn: Connection, frame: RequestFrame): Promise<void> {
    this.inflight++;
    try {
      let outcome: Outcome;
      try {
        outcome = await this.invoke(frame.method, frame.params, {
        connId: conn.id,
        role: conn.role,
        scopes: conn.scopes,
        deviceId: conn.admission?.deviceId,
        client: conn.admission?.params.client,
        signal: conn.abort.signal,
          ack: (payload) => this.send(conn, { type: 'res', id: frame.id, ok: true, payload }),
        });
      } catch (error) {
        this.options.logger.error(`request ${frame.method} failed: ${(error as Error).stack ?? String(error)}`);
        outcome = { ok: false, error: errorShape(ErrorCodes.UNAVAILABLE, `${frame.method} failed: ${(error as Error).message}`) };
      }
      if (conn.state !== 'open') return;
      try {
        this.send(conn, outcome.ok ? { type: 'res', id: frame.id, ok: true, payload: outcome.payload } : { type: 'res', id: frame.id, ok: false, error: outcome.error });
      } catch (error) {
        // A result that cannot be serialised (cycles, BigInt) still gets an answer.
        this.send(conn, { type: 'res', id: frame.id, ok: false, error: errorShape(ErrorCodes.UNAVAILABLE, `${frame.method} returned a result that is not JSON: ${(error as Error).message}`) });
      }
    } finally {
      this.inflight--;
      if (this.inflight === 0) this.idle?.();
    }
  }

  /** The single path from a request to a method: authorization, params, idempotency, handler. */
  async invoke(method: string, rawParams: unknown, ctx: GatewayMethodContext): Promise<Outcome> {
    const { kernel, logger } = this.options;
    const failure = (error: ErrorShape): Outcome => ({ ok: false, error });
    if (method === 'connect') return failure(errorShape(ErrorCodes.INVALID_REQUEST, 'already connected'));
    if (!kernel.protocol.method(method)) return failure(errorShape(ErrorCodes.INVALID_REQUEST, `unknown method "${method}"`));
    let definition;
    try {
      definition = await kernel.capabilities.get('gatewayMethod', method);
    } catch (error) {
      return failure({ ...errorShape(ErrorCodes.UNAVAILABLE, `method "${method}" is unavailable: ${(error as Error).message}`), retryable: false });
    }
    const spec = kernel.protocol.method(method)!;
    if (spec.scope) {
      if (ctx.role !== 'operator' || !hasScope(ctx.scopes ?? [], spec.scope)) {
        return failure(
          errorShape(ErrorCodes.FORBIDDEN, `missing scope: ${spec.scope}`, { code: 'MISSING_SCOPE', missingScope: spec.scope, requiredScopes: [spec.scope] }),
        );
      }
    }
    let params = rawParams === undefined ? {} : rawParams;
    let idempotencyKey: string | undefined;
    if (spec.sideEffect) {
      const key = params !== null && typeof params === 'object' ? (params as { idempotencyKey?: unknown }).idempotencyKey : undefined;
      const optional = spec.sideEffect === 'optional' && key === undefined;
      if (!optional && (typeof key !== 'string' || key.length === 0 || key.length > 256)) {
        return failure(
          errorShape(ErrorCodes.INVALID_REQUEST, `${method} changes state, so params.idempotencyKey (a unique string per intended action) is required`, {
            code: 'IDEMPOTENCY_KEY_REQUIRED',
          }),
        );
      }
      idempotencyKey = key as string | undefined;
      if (idempotencyKey !== undefined) {
        const { idempotencyKey: _drop, ...rest } = params as Record<string, unknown>;
        params = rest;
      }
    }
    const checked = kernel.protocol.validateParams(method, params);
    if (!checked.ok) {
      const summary = checked.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
      return failure(errorShape(ErrorCodes.INVALID_REQUEST, `invalid params for ${method}: ${summary}`, { issues: checked.issues }));
    }
    // A method's answer, or its error as the wire carries it.
    const outcomeOf = async (work: () => unknown): Promise<Outcome> => {
      try {
        return { ok: true, payload: await work() };
      } catch (error) {
        if (error instanceof ProtocolError) return failure(error.toShape());
        logger.error(`method ${method} failed: ${(error as Error).stack ?? String(error)}`, { method });
        return failure(errorShape(ErrorCodes.UNAVAILABLE, `${method} failed: ${(error as Error).message}`));
      }
    };
    if (!idempotencyKey) return outcomeOf(() => definition.handler(checked.value, ctx));
    const keyed = { ...ctx, idempotencyKey };
    // After a restart the method says what became of a request the restart cut short.
    const recover = definition.recover
      ? async (acks: unknown[]): Promise<Recovery> => {
          const recovered = await definition.recover!(checked.value, { ...keyed, acks });
          if (recovered.state === 'not-accepted') return recovered;
          if (recovered.state === 'done') return { state: 'done', outcome: { ok: true, payload: recovered.payload } };
          return { state: 'pending', ...(recovered.acks ? { acks: recovered.acks } : {}), outcome: outcomeOf(() => recovered.result) };
        }
      : undefined;
    // A retried two-phase request (agent) gets the same ack and the same final result.
    const result = await this.dedupe.run(
      `${method}\u0000${idempotencyKey}`,
      checked.value,
      (recordAck) =>
        outcomeOf(() =>
          definition.handler(checked.value, {
            ...keyed,
            ack: (payload) => {
              recordAck(payload);
              ctx.ack?.(payload);
            },
          }),
        ),
      ctx.ack,
      recover,
    );
    if ('conflict' in result) {
      return failure(
        errorShape(ErrorCodes.INVALID_REQUEST, `idempotencyKey "${idempotencyKey}" was already used for a ${method} request with different params; send a new key for a new request, or the same params to get the first result`, {
          code: 'IDEMPOTENCY_KEY_REUSED',
          idempotencyKey,
        }),
      );
    }
    return result.outcome;
  }

  private reply(conn: Connection, id: string | undefined, error: ErrorShape): void {
    if (id) this.send(conn, { type: 'res', id, ok: false, error });
    else this.sendEvent(conn, 'error', error);
  }

  // ── Outbound frames ────────────────────────────────────────────────────────────

  /** Every frame is masked on its way out: no secret leaves through a result, event or error. */
  private send(conn: Connection, frame: object, droppable = false): boolean {
    if (conn.ws.readyState !== WebSocket.OPEN) return false;
    return this.sendText(conn, JSON.stringify(this.options.kernel.redact.value(frame)), droppable);
  }

  /**
   * The one place frames leave. A droppable event is skipped while the socket's buffer is
   * above `dropEventsAboveBytes`; anything that would push it past `maxBufferedBytes`
   * closes the connection instead of buffering without bound.
   */
  private sendText(conn: Connection, text: string, droppable: boolean): boolean {
    const ws = conn.ws;
    if (ws.readyState !== WebSocket.OPEN) return false;
    const buffered = ws.bufferedAmount;
    if (droppable && buffered > this.settings.dropEventsAboveBytes) {
      conn.dropped++;
      return false;
    }
    if (buffered + Buffer.byteLength(text) > this.settings.maxBufferedBytes) {
      this.options.logger.warn(`closing slow consumer ${conn.id}: ${buffered} bytes waiting`, { conn: conn.id, dropped: conn.dropped });
      void this.closeConnection(conn, CloseCodes.tryAgainLater, `slow consumer: over ${this.settings.maxBufferedBytes} bytes waiting to be read`);
      return false;
    }
    ws.send(text);
    return true;
  }

  private sendEvent(conn: Connection, event: string, payload: unknown, droppable = false, stateVersion?: object): boolean {
    // seq counts every event meant for the connection, so a dropped one shows as a gap.
    const seq = ++conn.seq;
    return this.send(conn, { type: 'event', event, payload, seq, ...(stateVersion ? { stateVersion } : {}) }, droppable);
  }

  /**
   * One event to many connections: the payload is serialised once and only the
   * per-connection sequence number is spliced in, so fan-out costs a string concat each.
   */
  /** Returns how many connections it was sent to. */
  private fanOut(targets: Iterable<Connection>, event: string, payload: unknown, droppable: boolean, stateVersion?: object): number {
    let head: string | undefined;
    let tail = '';
    let sent = 0;
    for (const conn of targets) {
      if (conn.state !== 'open') continue;
      sent++;
      if (head === undefined) {
        head = `{"type":"event","event":${JSON.stringify(event)},"payload":${JSON.stringify(this.options.kernel.redact.value(payload)) ?? 'null'},"seq":`;
        tail = stateVersion ? `,"stateVersion":${JSON.stringify(stateVersion)}}` : '}';
      }
      this.sendText(conn, `${head}${++conn.seq}${tail}`, droppable);
    }
    return sent;
  }

  /** Events emitted by any plugin through the protocol registry. */
  /** How many clients got it: an approval nobody can see is answered by its fallback at once. */
  private deliver(emitted: EmittedEvent): number {
    const targets = emitted.connIds ? emitted.connIds.map((id) => this.connections.get(id)).filter((c): c is Connection => !!c) : this.connections.values();
    const allowed = emitted.scope ? filter(targets, (conn) => conn.role === 'operator' && hasScope(conn.scopes, emitted.scope!)) : targets;
    return this.fanOut(allowed, emitted.event, emitted.payload, emitted.droppable ?? false);
  }

  broadcast(event: string, payload: unknown, stateVersion?: object): void {
    void this.fanOut(this.connections.values(), event, payload, false, stateVersion);
  }

  private stateVersion() {
    return { presence: this.presence.version, health: this.healthVersion };
  }

  /** A connection asked for presence (system-presence): it gets presence events from now on. */
  wantPresence(connId: string): void {
    const conn = this.connections.get(connId);
    if (conn) conn.wantsPresence = true;
  }

  /**
   * Connects and disconnects are coalesced: at most one presence snapshot per
   * `presenceIntervalMs`, serialised once, sent only to connections that want presence.
   * A burst of a thousand connects costs a handful of snapshots, not a thousand squared.
   */
  private presenceChanged(): void {
    if (this.presenceTimer || !this.accepting) return;
    const wait = Math.max(0, this.presenceSentAt + this.settings.presenceIntervalMs - Date.now());
    this.presenceTimer = setTimeout(() => {
      this.presenceTimer = undefined;
      this.presenceSentAt = Date.now();
      const targets = filter(this.connections.values(), (conn) => conn.wantsPresence);
      // Presence is a snapshot: one that cannot be delivered now is superseded by the next.
      this.fanOut(targets, 'presence', { presence: this.presence.snapshot() }, true, this.stateVersion());
    }, wait);
    this.presenceTimer.unref();
  }

  private publishHealth(): void {
    this.healthVersion++;
    this.broadcast('health', this.health(), this.stateVersion());
  }

  // ── Snapshots ──────────────────────────────────────────────────────────────────

  /** Health changes slowly and is costly to read (memoryUsage walks the heap): cached for a second. */
  health() {
    const now = Date.now();
    if (!this.healthCache || now - this.healthCache.at >= 1000) this.healthCache = { at: now, value: this.computeHealth() };
    let connections = 0;
    for (const conn of this.connections.values()) if (conn.state === 'open') connections++;
    return { ...this.healthCache.value, ts: now, uptimeMs: now - this.startedAt, connections };
  }

  private computeHealth() {
    const records = this.options.kernel.plugins();
    const failed = records.filter((record) => record.status === 'failed');
    const memory = process.memoryUsage();
    const delay = this.eventLoop.percentile(99);
    return {
      ok: true,
      status: failed.length > 0 ? 'degraded' : 'ok',
      ts: Date.now(),
      uptimeMs: Date.now() - this.startedAt,
      version: this.options.version,
      connections: [...this.connections.values()].filter((conn) => conn.state === 'open').length,
      plugins: {
        total: records.length,
        enabled: records.filter((record) => record.enabled).length,
        loaded: records.filter((record) => record.status === 'active').length,
        failed: failed.map((record) => ({ id: record.id, error: record.error ?? '' })),
      },
      memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
      eventLoopDelayMs: Number.isFinite(delay) ? Math.round(delay / 1e4) / 100 : 0,
    };
  }
}

function* filter<T>(items: Iterable<T>, keep: (item: T) => boolean): Iterable<T> {
  for (const item of items) if (keep(item)) yield item;
}

/** The `id` of a frame we could not accept, if it has one, so the error can be correlated. */
function idOf(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as { id?: unknown };
    return typeof value?.id === 'string' && value.id.length > 0 && value.id.length <= 128 ? value.id : undefined;
  } catch {
    return undefined;
  }
}

/** What clients should assume about sessions: the default agent and its main session key. */
function sessionDefaults(config: Readonly<Record<string, unknown>>) {
  const list = ((config.agents as { list?: Array<{ id?: string; default?: boolean }> } | undefined)?.list ?? []);
  const defaultAgentId = normalizeAgentId(list.find((agent) => agent.default)?.id ?? list[0]?.id ?? 'main');
  const session = (config.session ?? {}) as { mainKey?: string; scope?: string };
  const mainKey = normalizeMainKey(session.mainKey);
  return { defaultAgentId, mainKey, mainSessionKey: buildAgentMainSessionKey(defaultAgentId, mainKey), scope: session.scope === 'global' ? 'global' : 'per-sender' };
}
