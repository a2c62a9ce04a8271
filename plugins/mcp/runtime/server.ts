/**
 * One configured MCP server kept alive in the gateway: connected on first use, its tools
 * registered as `<server>__<tool>`, restarted after a crash with backoff (1 s doubling to
 * 30 s), and retired (tools removed, process ended) when its config changes or goes.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig, ResolvedServer } from '../config.js';
import { connectServer, listAllTools, type ConnectOptions, type McpConnection } from '../connect.js';

export type ServerState = 'idle' | 'starting' | 'connected' | 'crashed' | 'retired';

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** A connection that lived this long was healthy: the next crash starts the backoff over. */
const STABLE_MS = 60_000;

/** A connection and, once it ended on its own, why. */
export interface Live {
  connection: McpConnection;
  lost?: string;
}

export interface ServerHooks {
  connectOptions: Omit<ConnectOptions, 'onToolsChanged' | 'onLost'>;
  /** The server's tools changed (connected, restarted, list_changed): register these. */
  onTools(server: ServerRuntime, tools: Tool[]): void;
  log(level: 'info' | 'warn', message: string): void;
}

export class ServerRuntime {
  state: ServerState = 'idle';
  live?: Live;
  restarts = 0;
  lastError?: string;
  connectedAt?: number;
  private starting?: Promise<Live>;
  private backoffMs = FIRST_BACKOFF_MS;
  private restartAt = 0;
  private timer?: NodeJS.Timeout;
  /** Calls waiting their turn on a server that does not take parallel calls. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    readonly resolved: ResolvedServer,
    /** The config it was started from, to notice a change. */
    readonly fingerprint: string,
    private readonly hooks: ServerHooks,
  ) {}

  /** The live connection, connecting (after any backoff still running) when there is none. */
  connected(): Promise<Live> {
    if (this.state === 'retired') return Promise.reject(new Error(`MCP server "${this.name}" was retired`));
    if (this.live && !this.live.lost) return Promise.resolve(this.live);
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(): Promise<Live> {
    const wait = this.restartAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    clearTimeout(this.timer);
    if (this.state === 'crashed') this.restarts++;
    this.state = 'starting';
    const live = {} as Live;
    try {
      live.connection = await connectServer(this.resolved, {
        ...this.hooks.connectOptions,
        onToolsChanged: () => void this.refreshTools(live),
        onLost: (reason) => this.lost(live, reason),
      });
    } catch (error) {
      this.lastError = (error as Error).message;
      this.state = 'crashed';
      this.restartAt = Date.now() + this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
      throw error;
    }
    if (this.state !== 'starting') {
      // Retired while connecting.
      await live.connection.close();
      throw new Error(`MCP server "${this.name}" was retired`);
    }
    this.live = live;
    this.state = 'connected';
    this.connectedAt = Date.now();
    this.hooks.onTools(this, live.connection.tools);
    return live;
  }

  private lost(live: Live, reason: string): void {
    live.lost = reason;
    if (this.live !== live || this.state === 'retired') return;
    this.live = undefined;
    this.state = 'crashed';
    this.lastError = reason;
    if (this.connectedAt && Date.now() - this.connectedAt >= STABLE_MS) this.backoffMs = FIRST_BACKOFF_MS;
    this.restartAt = Date.now() + this.backoffMs;
    this.hooks.log('warn', `MCP server "${this.name}" stopped (${reason}); restarting in ${this.backoffMs} ms`);
    this.timer = setTimeout(() => void this.connected().catch(() => {}), this.backoffMs);
    this.timer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
  }

  private async refreshTools(live: Live): Promise<void> {
    if (this.live !== live) return;
    try {
      const tools = await listAllTools(live.connection.client, this.resolved.requestTimeoutMs);
      live.connection.tools = tools;
      if (this.live === live) this.hooks.onTools(this, tools);
    } catch (error) {
      this.hooks.log('warn', `MCP server "${this.name}": could not refresh its tools: ${(error as Error).message}`);
    }
  }

  /** Runs `call` now, or after the calls before it when the server does not take parallel calls. */
  serialize<T>(call: () => Promise<T>): Promise<T> {
    if (this.config.supportsParallelToolCalls) return call();
    const next = this.queue.then(call, call);
    this.queue = next.catch(() => {});
    return next;
  }

  async retire(): Promise<void> {
    this.state = 'retired';
    clearTimeout(this.timer);
    const live = this.live;
    this.live = undefined;
    await live?.connection.close();
  }
}
