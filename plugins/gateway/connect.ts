/**
 * A connection's connect request: decided (handshake.ts admits or refuses it), then, once
 * any pairing change is on disk, answered with hello-ok or an error. Both steps run in
 * slices, so a burst of handshakes cannot hold the event loop.
 */
import {
  buildAgentMainSessionKey,
  ErrorCodes,
  normalizeAgentId,
  normalizeMainKey,
  type KernelServices,
  type Logger,
  type RequestFrame,
} from '../../sdk/index.js';
import { cidrMatcher } from './cidr.js';
import { CloseCodes } from './close-codes.js';
import type { Connection } from './connection.js';
import type { GatewayEvents } from './events.js';
import { helloFeatures } from './features.js';
import { errorShape, protocolErrorShape } from './frames.js';
import { admitConnect, hasScope, type Admission, type HandshakeResult } from './handshake.js';
import type { NodeRegistry } from './node-registry.js';
import { nodePairRequest, nodeSurfaceRequest } from './node-shapes.js';
import type { PairingStore } from './pairing.js';
import type { AuthRateLimiter } from './rate-limit.js';
import type { GatewayRpc } from './rpc.js';
import { publishConnectModelCatalog } from './model-catalog-snapshot.js';
import type { GatewaySettings } from './settings.js';
import type { SlicedQueue } from './slices.js';
import type { SetupCodes } from './setup-codes.js';

/** Client modes that display presence (the Control UI and web chat). */
const PRESENCE_MODES = new Set(['ui', 'webchat']);

export interface ConnectsOptions {
  kernel: KernelServices;
  logger: Logger;
  settings: GatewaySettings;
  pairing: PairingStore;
  setupCodes?: SetupCodes;
  limiter: AuthRateLimiter;
  version: string;
  startedAt: number;
  events: GatewayEvents;
  rpc: GatewayRpc;
  /** Shared with the transport's socket accepts, so a burst of both shares one budget. */
  slices: SlicedQueue;
  health(): unknown;
  nodes?: NodeRegistry;
}

export class Connects {
  constructor(private readonly options: ConnectsOptions) {}

  start(conn: Connection, frame: RequestFrame): void {
    clearTimeout(conn.handshakeTimer);
    conn.state = 'admitting';
    this.options.slices.run(() => this.decide(conn, frame));
  }

  private decide(conn: Connection, frame: RequestFrame): void {
    if (conn.state === 'closed') return;
    const { settings, pairing, setupCodes, logger, limiter, rpc } = this.options;
    const result = admitConnect(
      frame.params,
      {
        nonce: conn.nonce,
        local: conn.local,
        remoteAddress: conn.remoteAddress,
        now: Date.now(),
        limiter,
        clientKey: conn.limiterKey,
        autoApproveNode: this.nodeCidrs(),
        setupCodes,
      },
      settings,
      pairing,
    );
    const stores = [pairing, setupCodes].filter((store) => store?.dirty);
    if (stores.length === 0) return this.answer(conn, frame, result);
    // A device token, pairing request or used setup code is on disk before the client hears of it.
    Promise.all(stores.map((store) => store!.flush())).then(
      () => this.options.slices.run(() => this.answer(conn, frame, result)),
      (error: Error) => {
        logger.error(`pairing store write failed: ${error.message}`);
        rpc.fail(
          conn,
          errorShape(ErrorCodes.UNAVAILABLE, 'the gateway could not record this device; try again'),
          CloseCodes.tryAgainLater,
          frame.id,
        );
      },
    );
  }

  /** gateway.nodes.pairing.autoApproveCidrs as configured now (a config change applies to the next connect). */
  private nodeCidrs(): ((address: string | undefined) => boolean) | undefined {
    const gateway = this.options.kernel.config().gateway as
      { nodes?: { pairing?: { autoApproveCidrs?: string[] } } } | undefined;
    const cidrs = gateway?.nodes?.pairing?.autoApproveCidrs ?? [];
    if (cidrs.length === 0) return undefined;
    try {
      return cidrMatcher(cidrs);
    } catch (error) {
      this.options.logger.warn(
        `gateway.nodes.pairing.autoApproveCidrs: ${(error as Error).message}; no node is auto-approved`,
      );
      return undefined;
    }
  }

  private answer(conn: Connection, frame: RequestFrame, result: HandshakeResult): void {
    if (conn.state === 'closed') return;
    const { settings, kernel, logger, events, rpc } = this.options;
    if (!result.ok) {
      if (result.pairing?.created) {
        const request = result.pairing.request;
        logger.warn(
          `pairing requested by device ${request.deviceId.slice(0, 12)}… from ${request.remoteAddress ?? 'unknown'}`,
          { requestId: request.requestId },
        );
        kernel.protocol.emit('device.pair.requested', request);
        if (request.role === 'node') kernel.protocol.emit('node.pair.requested', nodePairRequest(request));
      }
      logger.info(`connect refused: ${result.error.message}`, { conn: conn.id, remote: conn.remoteAddress });
      rpc.fail(conn, protocolErrorShape(result.error), CloseCodes.policy, frame.id);
      return;
    }
    const admission = result.admission;
    conn.admission = admission;
    conn.state = 'open';
    conn.connectedAt = Date.now();
    conn.releasePreauth?.();
    conn.stopPreauthCount?.();
    const client = admission.params.client;
    conn.wantsPresence =
      admission.role === 'operator' &&
      PRESENCE_MODES.has(client.mode ?? '') &&
      hasScope(admission.scopes, 'operator.read');
    events.presence.upsert({
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
    events.send(conn, {
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
          presence: conn.wantsPresence ? events.presence.snapshot() : [],
          health: this.options.health(),
          stateVersion: events.stateVersion(),
          uptimeMs: Date.now() - this.options.startedAt,
          sessionDefaults: sessionDefaults(kernel.config()),
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
    logger.debug('client connected', {
      conn: conn.id,
      client: client.id,
      role: admission.role,
      auth: admission.authMethod,
    });
    events.presenceChanged();
    if (admission.role === 'node' && admission.deviceId) this.nodeConnected(conn, admission.deviceId, admission);
    if (admission.setup) {
      const { completedAtMs, ...setup } = admission.setup;
      logger.info(`setup code ${setup.setupId} paired node ${setup.deviceId.slice(0, 12)}…`);
      kernel.protocol.emit('device.pair.setup.completed', { ...setup, ts: completedAtMs });
    }
    for (const held of conn.held.splice(0)) rpc.onMessage(conn, held.data, held.isBinary);
    void publishConnectModelCatalog(kernel, rpc, events, conn).catch((error: Error) =>
      logger.warn(`models.snapshot for ${conn.id} failed: ${error.message}`),
    );
  }

  /** A node is reachable from now on; a surface wider than approved waits for an operator. */
  private nodeConnected(conn: Connection, nodeId: string, admission: Admission): void {
    const { kernel, logger, pairing } = this.options;
    this.options.nodes?.add(nodeId, conn);
    const pending = admission.surfaceRequest;
    const device = pairing.device(nodeId);
    if (!pending?.created || !device) return;
    logger.info(`node ${nodeId.slice(0, 12)}… declares commands waiting for approval`, {
      requestId: pending.request.requestId,
    });
    kernel.protocol.emit('node.pair.requested', nodeSurfaceRequest(device, pending.request));
  }
}

/** What clients should assume about sessions: the default agent and its main session key. */
function sessionDefaults(config: Readonly<Record<string, unknown>>) {
  const list = (config.agents as { list?: Array<{ id?: string; default?: boolean }> } | undefined)?.list ?? [];
  const defaultAgentId = normalizeAgentId(list.find((agent) => agent.default)?.id ?? list[0]?.id ?? 'main');
  const session = (config.session ?? {}) as { mainKey?: string; scope?: string };
  const mainKey = normalizeMainKey(session.mainKey);
  return {
    defaultAgentId,
    mainKey,
    mainSessionKey: buildAgentMainSessionKey(defaultAgentId, mainKey),
    scope: session.scope === 'global' ? 'global' : 'per-sender',
  };
}
