/**
 * The gateway's port: one node:http server for WebSocket and HTTP. The socket accepts as
 * soon as the port is bound; the HTTP app (fastify) is brought up by the first HTTP request.
 * Here sockets are admitted (pre-auth caps, byte limits, the handshake deadline), become
 * Connections, and are forgotten when they close; their frames go to the RPC layer.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { ErrorCodes, type KernelServices, type Logger } from '../../sdk/index.js';
import { isLoopbackHost, nodeHttp } from '../../sdk/net/index.js';
import { CloseCodes } from './close-codes.js';
import { Connection } from './connection.js';
import { errorShape, MAX_PREAUTH_PAYLOAD_BYTES } from './frames.js';
import { serveControlUi } from './control-ui.js';
import type { GatewayEvents } from './events.js';
import { startHttpApp, type HttpApp } from './http.js';
import { clientKey, type AuthRateLimiter } from './rate-limit.js';
import { serveProbe, type ProbeSources } from './probes.js';
import { checkRequest, type Refusal } from './request-guard.js';
import type { GatewayRpc } from './rpc.js';
import type { GatewaySettings } from './settings.js';
import type { SlicedQueue } from './slices.js';

// ws is bundled into this plugin's build (scripts/bundle-plugins.mjs): one file to load, not ten.
// It loads right after the port is bound, not before: it is ≈ 200 KB of code and brings
// node:https, node:tls and node:zlib with it, and a WebSocket that arrives first waits for it.
type WsServer = WebSocketServer;

/** Room for WebSocket frame headers on top of the pre-auth payload limit. */
const PREAUTH_FRAMING_SLACK = 1024;

export interface GatewayTransportOptions {
  kernel: KernelServices;
  logger: Logger;
  settings: GatewaySettings;
  version: string;
  limiter: AuthRateLimiter;
  /** Every connection, open or still in its handshake; the transport adds and removes them. */
  connections: Map<string, Connection>;
  events: GatewayEvents;
  rpc: GatewayRpc;
  /** Shared with handshakes, so a burst of both shares one budget. */
  slices: SlicedQueue;
  /** What `/healthz`, `/startupz` and `/readyz` report (probes.ts). */
  probes: Omit<ProbeSources, 'settings' | 'limiter' | 'accepting'>;
}

export class GatewayTransport {
  private http?: Server;
  private wss?: Promise<WsServer>;
  private app?: HttpApp;
  private httpLoading?: Promise<void>;
  private accepting = false;
  /** Sockets that have not completed connect: in total and per client address. */
  private preauthTotal = 0;
  private readonly preauthByAddress = new Map<string, number>();

  constructor(private readonly options: GatewayTransportOptions) {}

  /** Taking new connections (between listen and stopAccepting). */
  get isAccepting(): boolean {
    return this.accepting;
  }

  /** Listening, or stopped but not yet closed. */
  get isOpen(): boolean {
    return this.accepting || this.http !== undefined;
  }

  /** Binds the port; resolves with the port bound (settings.port may be 0). */
  async listen(): Promise<number> {
    const { settings, logger } = this.options;
    const pendingHttp: Array<[IncomingMessage, ServerResponse]> = [];
    let handle: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
    // fastify costs ~80 ms and ~15 MB to load; a gateway used only over WebSocket never
    // needs it. It comes up on the first HTTP request, which waits for it.
    const loadHttp = () =>
      (this.httpLoading ??= startHttpApp({
        server: this.http!,
        kernel: this.options.kernel,
        settings,
        logger,
        limiter: this.options.limiter,
      })
        .then(
          (app) => {
            this.app = app;
            handle = app.handle;
          },
          (error: unknown) => {
            logger.error(`HTTP app failed to start: ${(error as Error).message}`);
            handle = (_req, res) => void res.writeHead(500).end('{"error":"HTTP app failed to start"}');
          },
        )
        .then(() => {
          for (const [req, res] of pendingHttp.splice(0)) handle!(req, res);
        }));
    this.http = nodeHttp().createServer((req, res) => {
      const refused = checkRequest(req, settings);
      if (refused) {
        logger.warn(`refused HTTP ${req.method} ${req.url?.split('?')[0]}: ${refused.message}`, {
          remote: req.socket.remoteAddress,
        });
        return void res
          .writeHead(refused.status, { 'content-type': 'application/json', connection: 'close' })
          .end(`${JSON.stringify({ error: refused.message })}\n`);
      }
      const probes = {
        ...this.options.probes,
        settings,
        limiter: this.options.limiter,
        accepting: () => this.accepting,
      };
      if (serveProbe(req, res, probes)) return;
      if (serveControlUi(req, res, settings, () => ({ version: this.options.version }))) return;
      if (handle) return handle(req, res);
      if (pendingHttp.length >= 1024)
        return void res.writeHead(503, { 'retry-after': '1' }).end('{"error":"gateway starting"}');
      pendingHttp.push([req, res]);
      void loadHttp();
    });
    this.http.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
    this.http.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new Error(
                `port ${settings.port} on ${settings.host} is already in use by another program (set gateway.port or --port)`,
              )
            : error,
        );
      this.http!.once('error', onError);
      this.http!.listen(settings.port, settings.host, () => {
        this.http!.off('error', onError);
        resolve();
      });
    });
    this.accepting = true;
    this.wss = import('ws').then(({ WebSocketServer }) => {
      const wss = new WebSocketServer({
        noServer: true,
        maxPayload: settings.maxPayloadBytes,
        perMessageDeflate: false,
        clientTracking: false,
      });
      wss.on('connection', (ws: WebSocket, req: IncomingMessage, release: () => void) =>
        this.onConnection(ws, req, release),
      );
      return wss;
    });
    const bound = this.http.address();
    return typeof bound === 'object' && bound ? bound.port : settings.port;
  }

  /** Refuse new connections and requests; open connections stay until close(). */
  stopAccepting(): void {
    this.accepting = false;
    this.http?.close();
  }

  /** After the connections were closed: drop the remaining HTTP sockets and the HTTP app. */
  async close(): Promise<void> {
    this.http?.closeAllConnections();
    await this.httpLoading;
    await this.app?.close();
    this.http = undefined;
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { settings, logger } = this.options;
    if (!this.accepting || !this.wss) {
      refuseRaw(socket, { status: 503, message: 'the gateway is not accepting connections' });
      return;
    }
    const refused = checkRequest(req, settings);
    if (refused) {
      logger.warn(`refused a WebSocket: ${refused.message}`, { remote: req.socket.remoteAddress });
      refuseRaw(socket, refused);
      return;
    }
    // Admission: sockets that have not authenticated are capped in total and per address,
    // so nobody can hold the gateway's memory or file descriptors without a credential.
    const address = req.socket.remoteAddress ?? 'unknown';
    const directLoopback = isLoopbackHost(address) && !forwardedRequest(req);
    const fromAddress = this.preauthByAddress.get(address) ?? 0;
    const { maxConnections, maxPerAddress } = settings.preauth;
    if (this.preauthTotal >= maxConnections || (!directLoopback && fromAddress >= maxPerAddress)) {
      const which =
        this.preauthTotal >= maxConnections ? `${maxConnections} in total` : `${maxPerAddress} from ${address}`;
      logger.warn(`refused a WebSocket: too many unauthenticated connections (${which})`, { remote: address });
      refuseRaw(
        socket,
        { status: 503, message: 'too many connections are still authenticating; retry shortly' },
        'Retry-After: 1\r\n',
      );
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
    this.wss.then(
      (wss) =>
        this.options.slices.run(() => {
          if (socket.destroyed || !this.accepting) return void socket.destroy();
          wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req, release));
        }),
      (error: Error) => {
        logger.error(`WebSocket support failed to load: ${error.message}`);
        socket.destroy();
      },
    );
  }

  private onConnection(ws: WebSocket, req: IncomingMessage, releasePreauth: () => void): void {
    const { settings, logger, connections, events, rpc } = this.options;
    const address = req.socket.remoteAddress;
    // A request relayed by a proxy on this machine is treated as coming from elsewhere.
    const forwarded = forwardedRequest(req);
    const limited = clientKey(address, req.headers.origin, forwarded, settings.auth.rateLimit);
    const conn = new Connection(
      ws,
      address,
      isLoopbackHost(address ?? '') && !forwarded,
      limited.exempt ? undefined : limited.key,
    );
    conn.releasePreauth = releasePreauth;
    connections.set(conn.id, conn);
    // ws buffers a whole frame before handing it over, so the pre-auth size limit is
    // enforced on the bytes as they arrive: nobody unauthenticated can make it buffer more.
    const socket = req.socket;
    const countPreauth = (chunk: Buffer) => {
      conn.preauthBytes += chunk.length;
      if (conn.state !== 'open' && conn.preauthBytes > MAX_PREAUTH_PAYLOAD_BYTES + PREAUTH_FRAMING_SLACK) {
        rpc.fail(
          conn,
          errorShape(
            ErrorCodes.INVALID_REQUEST,
            `more than ${MAX_PREAUTH_PAYLOAD_BYTES} bytes sent before connect: exceeds the ${MAX_PREAUTH_PAYLOAD_BYTES}-byte limit before connect`,
          ),
          CloseCodes.tooBig,
        );
        // Stop reading now (ws would keep buffering the frame): flush the close frame, then drop.
        socket.off('data', countPreauth);
        socket.once('finish', () => socket.destroy());
        socket.end();
      }
    };
    socket.on('data', countPreauth);
    conn.stopPreauthCount = () => socket.off('data', countPreauth);
    conn.handshakeTimer = setTimeout(() => {
      rpc.fail(
        conn,
        errorShape(ErrorCodes.INVALID_REQUEST, `no connect request within ${settings.handshakeTimeoutMs} ms`),
        CloseCodes.policy,
      );
    }, settings.handshakeTimeoutMs);
    ws.on('message', (data, isBinary) => rpc.onMessage(conn, data, isBinary));
    ws.on('close', () => this.onClose(conn));
    ws.on('error', (error) => logger.debug(`socket error: ${error.message}`, { conn: conn.id }));
    events.send(conn, {
      type: 'event',
      event: 'connect.challenge',
      payload: { nonce: conn.nonce, ts: conn.challengeTs },
    });
  }

  private onClose(conn: Connection): void {
    // Runs once per socket, whether it closed by itself or was refused (state already "closed").
    if (!this.options.connections.delete(conn.id)) return;
    conn.state = 'closed';
    clearTimeout(conn.handshakeTimer);
    conn.releasePreauth?.();
    conn.stopPreauthCount?.();
    conn.abort.abort();
    if (conn.admission) {
      this.options.events.presence.disconnect(conn.instanceId, conn.id);
      this.options.events.presenceChanged();
    }
  }
}

function forwardedRequest(req: IncomingMessage): boolean {
  return req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
}

function refuseRaw(socket: Duplex, refusal: Refusal, extraHeaders = ''): void {
  const body = `${JSON.stringify({ error: refusal.message })}\n`;
  const reason =
    { 403: 'Forbidden', 421: 'Misdirected Request', 503: 'Service Unavailable' }[refusal.status] ?? 'Refused';
  socket.end(
    `HTTP/1.1 ${refusal.status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`,
  );
}
