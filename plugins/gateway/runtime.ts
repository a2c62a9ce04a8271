/**
 * State the gateway's methods share with its server: the pairing store, the running
 * server (when there is one), and the restart hook the `claw gateway` runner installs.
 */
import { join } from 'node:path';
import { arch, platform } from 'node:os';
import { base64UrlEncode, loadOrCreateDeviceIdentity, rawPublicKey, type PluginApi } from '../../sdk/index.js';
import { NodeDirectory } from './node-service.js';
import { NodeRegistry } from './node-registry.js';
import type { PairingStore } from './pairing.js';
import type { GatewayServer } from './server.js';
import { CloseCodes } from './close-codes.js';
import { ConfigReloader } from './reload.js';
import { SetupCodes, setupCodesFile } from './setup-codes.js';
import type { GatewayOverrides } from './settings.js';

export class GatewayRuntime {
  server?: GatewayServer;
  /** Installed by `claw gateway`: restart the whole kernel after `delayMs`. Returns false if it cannot. */
  requestRestart?: (reason: string, delayMs: number) => boolean;
  /** Installed by `claw gateway`: its command-line flags, applied over the config section at every start. */
  overrides: GatewayOverrides = {};
  readonly reloader: ConfigReloader;
  /** Paired and connected nodes, and the commands sent to them (the "nodes" service). */
  readonly nodes: NodeDirectory;
  /** Setup codes' bootstrap tokens: device.pair.setupCode mints them, a node's connect redeems one. */
  readonly setupCodes: SetupCodes;
  private readonly bootedAt = Date.now();

  constructor(
    readonly api: PluginApi,
    readonly pairing: PairingStore,
    readonly version: string,
    readonly logFile: string,
    idempotencyWindowMs = 300_000,
  ) {
    this.nodes = new NodeDirectory(api.kernel, pairing, new NodeRegistry(idempotencyWindowMs));
    this.setupCodes = new SetupCodes(setupCodesFile(api.kernel.paths.stateDir), api.kernel.redact);
    this.reloader = new ConfigReloader(api, (reason, delayMs) => this.requestRestart?.(reason, delayMs) ?? false);
  }

  identity() {
    const identity = loadOrCreateDeviceIdentity(join(this.api.kernel.paths.stateDir, 'identity', 'gateway.json'));
    return { deviceId: identity.deviceId, publicKey: base64UrlEncode(rawPublicKey(identity.publicKeyPem)) };
  }

  health() {
    if (this.server) return this.server.health();
    const records = this.api.kernel.plugins();
    const failed = records.filter((record) => record.status === 'failed');
    return {
      ok: true,
      status: failed.length > 0 ? 'degraded' : 'ok',
      ts: Date.now(),
      uptimeMs: Date.now() - this.bootedAt,
      version: this.version,
      connections: 0,
      plugins: {
        total: records.length,
        enabled: records.filter((record) => record.enabled).length,
        loaded: records.filter((record) => record.status === 'active').length,
        failed: failed.map((record) => ({ id: record.id, error: record.error ?? '' })),
      },
      memory: { rssBytes: process.memoryUsage().rss, heapUsedBytes: process.memoryUsage().heapUsed },
      eventLoopDelayMs: 0,
    };
  }

  status(admin: boolean) {
    const kernel = this.api.kernel;
    const server = this.server;
    const records = kernel.plugins();
    const connections = server?.connectionList().filter((conn) => conn.state === 'open') ?? [];
    return {
      version: this.version,
      pid: process.pid,
      node: process.version,
      platform: `${platform()}-${arch()}`,
      uptimeMs: Date.now() - (server?.startedAt ?? this.bootedAt),
      listening: server?.address
        ? {
            host: server.address.host,
            port: server.address.port,
            bind: server.settings.bind,
            url: `ws://${server.address.host}:${server.address.port}`,
          }
        : null,
      auth: { mode: server?.settings.auth.mode ?? null },
      connections: {
        total: connections.length,
        operators: connections.filter((conn) => conn.role === 'operator').length,
        nodes: connections.filter((conn) => conn.role === 'node').length,
      },
      plugins: {
        total: records.length,
        enabled: records.filter((record) => record.enabled).length,
        loaded: records.filter((record) => record.status === 'active').length,
        failed: records.filter((record) => record.status === 'failed').map((record) => record.id),
      },
      lanes: kernel.lanes.allStats(),
      // Where things live on disk is for admins only.
      ...(admin ? { stateDir: kernel.paths.stateDir, configPath: kernel.paths.configPath, logFile: this.logFile } : {}),
    };
  }

  /** Whether the device has an open connection now. */
  isConnected(deviceId: string): boolean {
    return (this.server?.connectionList() ?? []).some(
      (conn) => conn.state === 'open' && conn.admission?.deviceId === deviceId,
    );
  }

  /** Close a device's connections (all, or those of one role / auth method). Returns how many. */
  disconnectDevice(deviceId: string, role: string | undefined, reason: string, authMethod?: string): number {
    let count = 0;
    for (const conn of this.server?.connectionList() ?? []) {
      const admission = conn.admission;
      if (!admission || admission.deviceId !== deviceId) continue;
      if (role && admission.role !== role) continue;
      if (authMethod && admission.authMethod !== authMethod) continue;
      void this.server!.closeConnection(conn, CloseCodes.policy, reason);
      count++;
    }
    return count;
  }
}
