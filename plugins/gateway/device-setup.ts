/**
 * More of OpenClaw's device pairing: renaming a paired device, a connected device asking for more
 * operator scopes (a pairing request an operator approves, then a fresh device token carrying
 * them), and OpenClaw's setup codes (setup-codes.ts) — claw's pair nodes only: the code's holder
 * connects as a node, is paired and has its first declared surface approved in one step.
 */
import {
  ErrorCodes,
  OPERATOR_SCOPES,
  ProtocolError,
  type EmittedEvent,
  type GatewayMethodContext,
  type PluginApi,
  registerMethodTable,
  requiredMethodString,
  type MethodParams,
} from '../../sdk/index.js';
import { hasScope } from './handshake.js';
import { PairingError } from './pairing.js';
import type { GatewayRuntime } from './runtime.js';
import { encodeSetupCode, SetupCodeError, setupGatewayUrl } from './setup-codes.js';

interface Upgrade {
  deviceId: string;
  scopes: string[];
  expiresAtMs: number;
}

type UpgradeResult =
  | { status: 'approved'; requestId: string; deviceToken: string; scopes: string[] }
  | { status: 'rejected' | 'expired'; requestId: string };

function requireDevice(ctx: GatewayMethodContext): string {
  if (!ctx.deviceId) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'a paired device identity is required');
  return ctx.deviceId;
}

function requestedScopes(params: MethodParams): string[] {
  const scopes = params.scopes;
  if (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((s) => typeof s === 'string'))
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'device.scopes.requestUpgrade requires scopes: string[]');
  const unknown = scopes.filter((scope) => !(OPERATOR_SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0)
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `requested scopes contain an unknown operator scope: ${unknown.join(', ')} (known: ${OPERATOR_SCOPES.join(', ')})`,
    );
  return [...new Set(scopes as string[])].sort();
}

/** OpenClaw's setupCode params, checked: the public URL to put in the code, if one is given. */
function setupParams(params: MethodParams): string | undefined {
  const known = new Set(['publicUrl', 'preferRemoteUrl', 'includeQr', 'bootstrapProfile', 'joinUrl']);
  const unknown = Object.keys(params).filter((key) => !known.has(key));
  if (unknown.length > 0)
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `device.pair.setupCode: unknown params ${unknown.join(', ')}`);
  if (params.bootstrapProfile !== undefined && params.bootstrapProfile !== 'node')
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `bootstrapProfile "${String(params.bootstrapProfile)}" is not offered: claw's setup codes pair nodes only (bootstrapProfile "node")`,
    );
  if (params.joinUrl !== undefined)
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'joinUrl is not offered: give the node the setup code itself');
  // claw keeps no gateway.remote.url: a remote URL must be given as publicUrl.
  if (params.preferRemoteUrl === true)
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      'preferRemoteUrl: claw has no gateway.remote.url; pass the URL nodes should use as publicUrl',
    );
  if (params.includeQr !== undefined && typeof params.includeQr !== 'boolean')
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'includeQr must be a boolean');
  if (params.publicUrl === undefined) return undefined;
  if (typeof params.publicUrl !== 'string' || !params.publicUrl.trim())
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'publicUrl must be a non-empty string');
  return params.publicUrl;
}

/** OpenClaw's qrDataUrl: a PNG, left out when it would be larger than its 16 KiB limit. */
async function qrPngDataUrl(text: string): Promise<string | undefined> {
  const loaded = await import('qrcode');
  // A CommonJS module: Node hands it over as the default export, bundlers as named ones.
  const { toDataURL } = loaded.default ?? loaded;
  const url = await toDataURL(text, { type: 'image/png', margin: 2, errorCorrectionLevel: 'L' });
  return url.length <= 16_384 ? url : undefined;
}

export function registerDeviceSetupMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;
  const pairing = runtime.pairing;
  /** Scope upgrades asked for since the gateway started, so their askers can wait on them. */
  const upgrades = new Map<string, Upgrade>();

  const pairingError = (error: unknown): never => {
    if (error instanceof PairingError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
    throw error;
  };

  /** The outcome once the request has left the pending list: approved if the grant now covers it. */
  const outcome = async (requestId: string, upgrade: Upgrade): Promise<UpgradeResult | undefined> => {
    await pairing.reload();
    if (pairing.listPending().some((request) => request.requestId === requestId)) return undefined;
    upgrades.delete(requestId);
    const grant = pairing.device(upgrade.deviceId)?.roles.operator;
    if (!grant || !upgrade.scopes.every((scope) => hasScope(grant.scopes, scope)))
      return { status: Date.now() >= upgrade.expiresAtMs ? 'expired' : 'rejected', requestId };
    const deviceToken = pairing.issueToken(upgrade.deviceId, 'operator');
    await pairing.flush();
    return { status: 'approved', requestId, deviceToken, scopes: grant.scopes };
  };

  registerMethodTable(api, {
    'device.pair.rename': {
      scope: 'operator.pairing',
      description: "Change a paired device's display name.",
      handler: async (params, _ctx, method) => {
        const deviceId = requiredMethodString(method, params, 'deviceId');
        if (typeof params.label !== 'string' || !params.label.trim())
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'label required');
        const label = params.label.trim();
        try {
          await pairing.reload();
          pairing.rename(deviceId, label);
          await pairing.flush();
        } catch (error) {
          pairingError(error);
        }
        kernel.protocol.emit('device.pair.changed', {});
        return { deviceId, label };
      },
    },
    'device.pair.setupCode': {
      scope: 'operator.admin',
      description:
        'A setup code (and QR) pairing one node: a single-use bootstrap token valid 10 minutes plus the URL nodes reach the gateway at.',
      handler: async (params) => {
        const server = runtime.server;
        if (!server?.address) throw new ProtocolError(ErrorCodes.UNAVAILABLE, 'the gateway is not listening yet');
        const publicUrl = setupParams(params);
        const settings = server.settings;
        if (settings.auth.mode === 'none')
          throw new ProtocolError(
            ErrorCodes.INVALID_REQUEST,
            'setup codes need gateway.auth.mode "token" or "password" (it is "none")',
          );
        let gateway: { url: string; source: string };
        try {
          gateway = setupGatewayUrl({ bind: settings.bind, host: settings.host, port: server.address.port, publicUrl });
        } catch (error) {
          if (error instanceof SetupCodeError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
          throw error;
        }
        const issued = runtime.setupCodes.issue();
        await runtime.setupCodes.flush();
        const setupCode = encodeSetupCode({
          url: gateway.url,
          bootstrapToken: issued.token,
          expiresAtMs: issued.expiresAtMs,
        });
        api.logger.info(`setup code ${issued.setupId} issued for ${gateway.url}`);
        const qrDataUrl = params.includeQr === false ? undefined : await qrPngDataUrl(setupCode);
        return {
          setupId: issued.setupId,
          expiresAtMs: issued.expiresAtMs,
          setupCode,
          ...(qrDataUrl ? { qrDataUrl } : {}),
          gatewayUrl: gateway.url,
          auth: settings.auth.mode,
          urlSource: gateway.source,
          access: 'node',
        };
      },
    },
    'device.pair.setupStatus': {
      scope: 'operator.admin',
      description: 'Whether the node a setup code was made for has paired with it (by setupId).',
      handler: (params, _ctx, method) => {
        const setupId = requiredMethodString(method, params, 'setupId');
        const completion = runtime.setupCodes.completion(setupId);
        if (!completion) return {};
        const { completedAtMs, ...rest } = completion;
        return { completion: { ...rest, ts: completedAtMs } };
      },
    },
    'device.scopes.requestUpgrade': {
      scope: 'operator.read',
      description:
        'Ask for more operator scopes for the calling device: a pairing request an operator approves (device.pair.approve).',
      handler: async (params, ctx) => {
        const deviceId = requireDevice(ctx);
        const scopes = requestedScopes(params);
        const current = ctx.scopes ?? [];
        if (!current.every((scope) => scopes.includes(scope)))
          throw new ProtocolError(
            ErrorCodes.INVALID_REQUEST,
            "requested scopes must include the connection's current scopes",
          );
        try {
          await pairing.reload();
          const device = pairing.device(deviceId);
          if (!device) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'a paired device identity is required');
          const { request, created } = pairing.request({
            deviceId,
            publicKey: device.publicKey,
            role: 'operator',
            scopes,
            displayName: device.displayName,
            platform: ctx.client?.platform ?? device.platform,
            clientId: ctx.client?.id ?? device.clientId,
          });
          await pairing.flush();
          upgrades.set(request.requestId, { deviceId, scopes, expiresAtMs: Date.parse(request.expiresAt) });
          if (created) kernel.protocol.emit('device.pair.requested', request);
          api.logger.warn(`device ${deviceId.slice(0, 12)}… asks for scopes ${scopes.join(',')}`, {
            requestId: request.requestId,
          });
          return { requestId: request.requestId };
        } catch (error) {
          return pairingError(error);
        }
      },
    },
    'device.scopes.waitUpgrade': {
      scope: 'operator.read',
      description: 'Wait until an operator decides a scope upgrade; approved answers carry a new device token.',
      handler: async (params, ctx, method) => {
        const deviceId = requireDevice(ctx);
        const requestId = requiredMethodString(method, params, 'requestId');
        const upgrade = upgrades.get(requestId);
        if (!upgrade || upgrade.deviceId !== deviceId)
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'scope upgrade expired or not found');
        const decided = await outcome(requestId, upgrade);
        if (decided) return decided;
        // Woken by the operator's decision, the request's expiry, or the caller going away.
        await new Promise<void>((resolve) => {
          const done = () => {
            stop();
            clearTimeout(timer);
            ctx.signal?.removeEventListener('abort', done);
            resolve();
          };
          const stop = kernel.protocol.onEmit((emitted: EmittedEvent) => {
            const payload = emitted.payload as { requestId?: unknown } | undefined;
            if (emitted.event === 'device.pair.resolved' && payload?.requestId === requestId) queueMicrotask(done);
            return 0;
          });
          const timer = setTimeout(done, Math.max(0, upgrade.expiresAtMs - Date.now()));
          timer.unref();
          ctx.signal?.addEventListener('abort', done, { once: true });
        });
        return (await outcome(requestId, upgrade)) ?? { status: 'expired', requestId };
      },
    },
  });
}
