/**
 * The gateway server: its lifecycle, and the parts it joins. The transport owns the port and
 * the sockets, the RPC layer turns frames into method calls, connects answer the handshake,
 * and events carry every frame out (fan-out, slow consumers, presence).
 */
import { stateDirTightenedMessage, tightenStateDir, trace, type KernelServices, type Logger } from '../../sdk/index.js';
import { CloseCodes } from './close-codes.js';
import { Connects } from './connect.js';
import type { Connection } from './connection.js';
import { GatewayEvents } from './events.js';
import { GatewayHealth } from './health.js';
import { acquireLock, type GatewayLock } from './lock.js';
import { noModelWarning, readModelStatus, type ModelStatus } from './model-status.js';
import type { NodeRegistry } from './node-registry.js';
import type { PairingStore } from './pairing.js';
import { AuthRateLimiter } from './rate-limit.js';
import { GatewayRpc } from './rpc.js';
import type { GatewaySettings } from './settings.js';
import type { SetupCodes } from './setup-codes.js';
import { SlicedQueue } from './slices.js';
import { GatewayTransport } from './transport.js';

export interface GatewayServerOptions {
  kernel: KernelServices;
  logger: Logger;
  settings: GatewaySettings;
  pairing: PairingStore;
  /** Without them no setup code admits a node. */
  setupCodes?: SetupCodes;
  version: string;
  /** Node connections and the commands waiting on them. */
  nodes?: NodeRegistry;
}

const HEALTH_EVENT_INTERVAL_MS = 60_000;

export class GatewayServer {
  readonly startedAt = Date.now();
  address?: { host: string; port: number };
  private readonly connections = new Map<string, Connection>();
  private readonly healthSnapshot: GatewayHealth;
  private readonly events: GatewayEvents;
  private readonly rpc: GatewayRpc;
  private readonly transport: GatewayTransport;
  private lock?: GatewayLock;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe?: () => void;
  /** For /startupz and /readyz (probes.ts): the gateway_start hooks have run; the model was read once. */
  private startWorkDone = false;
  private modelRead = false;

  constructor(private readonly options: GatewayServerOptions) {
    const { kernel, logger, settings, pairing, setupCodes, version } = options;
    const connections = this.connections;
    const health = () => this.health();
    const limiter = new AuthRateLimiter(settings.auth.rateLimit);
    const slices = new SlicedQueue(5, (error) =>
      logger.error(`handshake failed: ${(error as Error).stack ?? String(error)}`),
    );
    this.healthSnapshot = new GatewayHealth(kernel, version, this.startedAt, connections);
    this.events = new GatewayEvents({ connections, settings, redact: kernel.redact, logger, health });
    const rpc = new GatewayRpc({
      kernel,
      logger,
      settings,
      events: this.events,
      onConnect: (conn, frame) => connects.start(conn, frame),
    });
    const connects = new Connects({
      kernel,
      logger,
      settings,
      pairing,
      setupCodes,
      limiter,
      version,
      startedAt: this.startedAt,
      events: this.events,
      rpc,
      slices,
      health,
      nodes: options.nodes,
    });
    options.nodes?.attach((conn, event, payload) => this.events.sendEvent(conn, event, payload));
    this.rpc = rpc;
    this.transport = new GatewayTransport({
      kernel,
      logger,
      settings,
      version,
      limiter,
      connections,
      events: this.events,
      rpc,
      slices,
      probes: {
        version,
        startedAt: this.startedAt,
        plugins: () => kernel.plugins(),
        startWorkDone: () => this.startWorkDone,
        model: () => (this.modelRead ? this.healthSnapshot.model : 'unread'),
      },
    });
  }

  get settings(): GatewaySettings {
    return this.options.settings;
  }

  get presence() {
    return this.events.presence;
  }

  connectionList(): Connection[] {
    return [...this.connections.values()];
  }

  async start(): Promise<{ host: string; port: number }> {
    const { settings, kernel, logger } = this.options;
    // A state dir other users can read exposes the token, credentials and transcripts below it.
    const was = tightenStateDir(kernel.paths.stateDir);
    if (was !== undefined) logger.warn(stateDirTightenedMessage(kernel.paths.stateDir, was));
    this.lock = acquireLock(kernel.paths.stateDir, { host: settings.host, port: settings.port });
    try {
      const port = await this.transport.listen();
      this.address = { host: settings.host, port };
      this.lock.update({ port });
      this.healthSnapshot.enable();
      this.unsubscribe = kernel.protocol.onEmit((event) => {
        // A config change may add (or take away) the model: clients see it in the next health event.
        if (event.event === 'config.changed') void this.refreshModel().then(() => this.events.publishHealth());
        return this.events.deliver(event);
      });
      this.timers.push(setInterval(() => this.events.broadcast('tick', { ts: Date.now() }), settings.tickIntervalMs));
      this.timers.push(setInterval(() => this.events.publishHealth(), HEALTH_EVENT_INTERVAL_MS));
      for (const timer of this.timers) timer.unref();
      trace('gateway: listening');
      logger.info(`gateway listening on ws://${settings.host}:${port} (auth: ${settings.auth.mode})`, {
        port,
        host: settings.host,
      });
      const browserHost = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
      const webUi = `http://${browserHost.includes(':') ? `[${browserHost}]` : browserHost}:${port}/`;
      if (settings.auth.mode === 'none') {
        logger.warn(
          `gateway auth is OFF (gateway.auth.mode "none"): any program on this machine can control the assistant. Web UI: ${webUi}`,
        );
      } else {
        logger.info(
          `web UI: ${webUi} (run \`claw dashboard\` to open it signed in with the gateway ${settings.auth.mode})`,
        );
      }
      await kernel.hooks.runVoid('gateway_start', { port, host: settings.host });
      this.startWorkDone = true;
      // Memory otherwise loads on the first memory_search, which would then wait for the whole
      // first index. Loading it here starts its sync service (it indexes what is missing or
      // changed, in the background); a timer, so start-up does not wait for the load.
      setTimeout(() => void this.startMemory(), 0).unref();
      // Said once at start, after listening, so a new user learns why the first message would fail.
      setTimeout(
        () =>
          void this.refreshModel().then((status) => {
            if (!status || !this.transport.isAccepting) return;
            if (status.ok) logger.info(`model: ${status.primary} (default agent)`);
            else logger.warn(noModelWarning(status));
          }),
        0,
      ).unref();
      return this.address;
    } catch (error) {
      this.transport.stopAccepting();
      this.lock.release();
      throw error;
    }
  }

  /**
   * Stop: refuse new connections, tell clients why, let running requests finish (bounded),
   * run gateway_stop hooks, close every socket, release the lock.
   */
  async stop(reason = 'shutdown', restartExpectedMs?: number): Promise<void> {
    if (!this.transport.isOpen) return;
    const { kernel, logger, settings } = this.options;
    this.transport.stopAccepting();
    this.events.close();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
    this.unsubscribe?.();
    this.healthSnapshot.disable();
    this.events.broadcast('shutdown', { reason, ...(restartExpectedMs !== undefined ? { restartExpectedMs } : {}) });
    await this.rpc.drain(settings.shutdownDrainMs);
    await kernel.hooks.runVoid('gateway_stop', { reason });
    const code = restartExpectedMs !== undefined ? CloseCodes.restart : CloseCodes.goingAway;
    await Promise.all(this.connectionList().map((conn) => conn.close(code, `gateway ${reason}`, true)));
    await this.transport.close();
    this.rpc.close();
    this.options.nodes?.attach(undefined);
    this.lock?.release();
    logger.info(`gateway stopped (${reason})`);
  }

  /** Close a connection; it is forced shut if the peer does not answer the close. */
  closeConnection(conn: Connection, code: number, reason: string, wait = false): Promise<void> {
    return conn.close(code, reason, wait);
  }

  /** A connection asked for presence (system-presence): it gets presence events from now on. */
  wantPresence(connId: string): void {
    this.events.wantPresence(connId);
  }

  health() {
    return this.healthSnapshot.snapshot();
  }

  /** Reads the model readiness again and keeps it for the health snapshots. */
  async refreshModel(): Promise<ModelStatus | undefined> {
    this.healthSnapshot.model = await readModelStatus(this.options.kernel);
    this.modelRead = true;
    return this.healthSnapshot.model;
  }

  /** Loads the memory slot holder (its service builds the index); nothing when the slot is "none". */
  private async startMemory(): Promise<void> {
    if (!this.transport.isAccepting) return;
    try {
      await this.options.kernel.capabilities.slot('memory');
    } catch (error) {
      this.options.logger.warn(`memory index at start-up: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
