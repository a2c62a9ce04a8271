/**
 * How a plugin's `claw` command reaches the running gateway (`ctx.gateway`): the CLI app
 * finds it, connects and signs in for the command, so every command connects the same way
 * and no plugin carries a gateway client of its own.
 */

/** The flags every gateway-backed command takes: `--url`, `--token`, `--password`, `--timeout <ms>`. */
export interface GatewayFlags {
  url?: string;
  token?: string;
  password?: string;
  timeout?: string;
}

/** What `<stateDir>/gateway.lock` holds while a gateway runs (the gateway plugin writes it, the CLI reads it). */
export interface GatewayLockInfo {
  pid: number;
  hostname: string;
  port?: number;
  host?: string;
  startedAt: string;
  /** The gateway process's start time (sdk/file-lock.ts processStartTime), so a recycled pid is not taken for it. */
  pidStartTime?: number;
}

/** An open connection to the gateway, for the length of `connect`'s `work`. */
export interface GatewayConnection {
  /**
   * Call a gateway method. `expectFinal`: for two-phase methods (`agent`), wait past the
   * `{status:"accepted"}` response (handed to `onAck`) for the final one. Fails with a GatewayRequestError.
   */
  request<T = unknown>(
    method: string,
    params?: unknown,
    options?: { timeoutMs?: number; expectFinal?: boolean; onAck?: (payload: unknown) => void },
  ): Promise<T>;
}

/** What happened to a config change, as the running gateway reports it (`config.patch`, `config.set`). */
export interface ReloadResult {
  mode: 'off' | 'hot' | 'restart' | 'hybrid';
  changedPaths: string[];
  /** Applied to the running gateway in place. */
  hotPaths: string[];
  /** Need a restart to take effect. */
  restartPaths: string[];
  restartRequired: boolean;
  restartScheduled: boolean;
  message: string;
}

export interface ConfigChange {
  /** Where the change was made. */
  via: 'gateway' | 'file';
  changed: boolean;
  /** The running gateway's account of it (when it went through the gateway). */
  reload?: ReloadResult;
}

/**
 * A connection that stays open until closed (`claw node run`): it signs in with its own
 * identity and role, re-connects after a drop with backoff (1 s doubling to 30 s, jittered)
 * and after a refused connect unless `onConnectError` returns false.
 */
export interface GatewaySessionOptions {
  url: string;
  auth: { token?: string; password?: string; bootstrapToken?: string; deviceToken?: string };
  /** The Ed25519 device identity file (sdk/device-auth.ts format; created 0600 on first use). */
  identityFile: string;
  role: 'node';
  client: { id: string; mode: string; version: string; platform: string } & Record<string, string | undefined>;
  caps: string[];
  commands: string[];
  /** The PATH commands run with, shown to the gateway (OpenClaw's `pathEnv`). */
  pathEnv?: string;
  /** Expected sha256 fingerprint of a wss:// gateway's certificate (then only that certificate is trusted). */
  tlsFingerprint?: string;
  onHello?(auth: { role: string; scopes: string[]; deviceToken?: string }): void;
  onEvent?(event: { event: string; payload?: unknown }): void;
  /** `error` is a GatewayRequestError (sdk/cli.ts): the gateway's code, and its `details.code` for a refusal. */
  onConnectError?(error: Error & { code: string; details?: unknown }, retryInMs: number): boolean | void;
  onClose?(info: { code: number; reason: string }): void;
}

export interface GatewaySession extends GatewayConnection {
  readonly connected: boolean;
  close(): Promise<void>;
}

export interface CliGateway {
  /** The lock of the gateway running for this state dir, if one is. */
  running(): GatewayLockInfo | undefined;
  /**
   * Where a connection with these flags goes and the shared secret it presents: flags, then
   * env (OPENCLAW_GATEWAY_URL, _TOKEN, _PASSWORD, _PORT), the running gateway's lock, `gateway.*` config.
   */
  target(flags?: GatewayFlags): { url: string; token?: string; password?: string };
  /**
   * Connect with these flags (without a shared secret, with the device token this machine was
   * issued before), run `work`, close. A bad `--timeout` is a UsageError; an unreachable
   * gateway a GatewayRequestError (UNAVAILABLE) saying to start it.
   */
  connect<T>(
    flags: GatewayFlags,
    work: (gateway: GatewayConnection) => Promise<T>,
    options?: { onEvent?: (event: { event: string; payload?: unknown }) => void },
  ): Promise<T>;
  /**
   * Change openclaw.json: through the running gateway (or the one `flags.url` names), which
   * validates, writes and applies it, redoing `edit` when another writer got in first; with
   * no gateway, in the file under the config lock. A change the gateway refuses or that
   * would make the config invalid is a UsageError.
   */
  changeConfig(
    purpose: string,
    edit: (raw: Record<string, unknown>) => void,
    flags?: GatewayFlags,
  ): Promise<ConfigChange>;
  /** Open a long-lived connection (see GatewaySessionOptions); it connects in the background. */
  session(options: GatewaySessionOptions): GatewaySession;
}

/** `done: false` when no service is installed; `message` says what happened. */
export type GatewayDaemonResult = { done: boolean; message: string };
/** The gateway plugin's `gateway-daemon` service (its systemd user unit / launchd agent) for onboard, reset, uninstall, update. */
export interface GatewayDaemon {
  /** As `claw gateway install` (gateway.port by default); `done: false` with why (a different unit there). */
  install(options: { port?: number; force?: boolean }): Promise<GatewayDaemonResult>;
  unavailable(): Promise<string | undefined>; // why no service manager answers here (no user bus, …)
  stop(): Promise<GatewayDaemonResult>;
  restart(): Promise<GatewayDaemonResult>;
  uninstall(): Promise<GatewayDaemonResult>;
}
