/**
 * Deciding a `connect`: protocol version, shared-secret or device-token auth, the device
 * signature over this connection's challenge, and whether the device is paired. Returns
 * the granted role and scopes, or the error to send before closing.
 */
import {
  deviceAuthPayload,
  deviceIdFor,
  ErrorCodes,
  MIN_PROTOCOL_VERSION,
  OPERATOR_SCOPES,
  PROTOCOL_VERSION,
  ProtocolError,
  type ConnectParams,
} from '../../sdk/index.js';
import { safeEqual } from '../../sdk/net/index.js';
import { parsePublicKey, verifySignature } from './device-verify.js';
import { validateConnectParams } from './frames.js';
import type { PairingRequest, PairingStore, SurfaceRequest } from './pairing.js';
import type { AuthRateLimiter } from './rate-limit.js';
import type { GatewaySettings } from './settings.js';
import type { SetupCodes, SetupCompletion } from './setup-codes.js';

/** How far a device's signedAt may be from the gateway clock. */
export const SIGNATURE_SKEW_MS = 10 * 60_000;

export interface ConnectContext {
  nonce: string;
  /** The client is on this machine (loopback, not forwarded by a proxy). */
  local: boolean;
  remoteAddress?: string;
  now: number;
  /** Failed-auth lockout, and this client's key in it (undefined key: not counted). */
  limiter?: AuthRateLimiter;
  clientKey?: string;
  /** gateway.nodes.pairing.autoApproveCidrs as a matcher: first-time nodes from there are paired without asking. */
  autoApproveNode?: (address: string | undefined) => boolean;
  /** Setup codes' bootstrap tokens (auth.bootstrapToken); without them a bootstrap token admits nobody. */
  setupCodes?: Pick<SetupCodes, 'valid' | 'redeem'>;
}

export interface Admission {
  protocol: number;
  role: 'operator' | 'node';
  scopes: string[];
  authMethod: 'none' | 'token' | 'password' | 'device-token' | 'bootstrap-token' | 'local';
  params: ConnectParams;
  deviceId?: string;
  /** A freshly issued device token to hand back in hello-ok. */
  deviceToken?: string;
  /** A node declared more than its approved command surface: the pending request for it. */
  surfaceRequest?: { request: SurfaceRequest; created: boolean };
  /** The setup code this node paired with (device.pair.setup.completed). */
  setup?: SetupCompletion;
}

export type HandshakeResult =
  | { ok: true; admission: Admission }
  | { ok: false; error: ProtocolError; pairing?: { request: PairingRequest; created: boolean } };

/** Constant-time string comparison (hashing first makes the lengths equal). */
export { safeEqual };

function reject(code: string, message: string, details: Record<string, unknown> = {}): HandshakeResult {
  return { ok: false, error: new ProtocolError(code, message, details) };
}

function rateLimited(retryAfterMs: number): HandshakeResult {
  return {
    ok: false,
    error: new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      'unauthorized: too many failed authentication attempts (retry later)',
      { code: 'AUTH_RATE_LIMITED', authReason: 'rate_limited', recommendedNextStep: 'wait_then_retry' },
      true,
      retryAfterMs,
    ),
  };
}

function isKnownScope(scope: string): boolean {
  return (OPERATOR_SCOPES as readonly string[]).includes(scope);
}

/** A node's declared commands or caps: trimmed, unique, sorted. */
export function declared(values: unknown): string[] {
  if (!Array.isArray(values)) return [];
  const names = values.filter((v): v is string => typeof v === 'string').map((v) => v.trim());
  return [...new Set(names.filter(Boolean))].sort();
}

export function hasScope(scopes: readonly string[], needed: string): boolean {
  if (scopes.includes(needed) || scopes.includes('operator.admin')) return true;
  return needed === 'operator.read' && scopes.includes('operator.write');
}

export function admitConnect(
  raw: unknown,
  ctx: ConnectContext,
  settings: GatewaySettings,
  pairing: PairingStore,
): HandshakeResult {
  const checked = validateConnectParams(raw ?? {});
  if (!checked.ok) {
    const summary = checked.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
    return reject(ErrorCodes.INVALID_REQUEST, `invalid connect params: ${summary}`, { issues: checked.issues });
  }
  const params = checked.value;

  // A locked-out client is refused before anything about it is checked.
  const presented = params.auth?.token ?? params.auth?.password;
  const deviceToken = params.auth?.deviceToken ?? params.auth?.token;
  const bootstrapToken =
    typeof params.auth?.bootstrapToken === 'string' ? params.auth.bootstrapToken.trim() || undefined : undefined;
  const { limiter, clientKey } = ctx;
  const counted = limiter !== undefined && clientKey !== undefined && settings.auth.mode !== 'none';
  if (counted) {
    const locked = Math.max(
      presented || bootstrapToken ? limiter.retryAfterMs(clientKey, 'shared') : 0,
      params.auth?.deviceToken ? limiter.retryAfterMs(clientKey, 'device') : 0,
    );
    if (locked > 0) return rateLimited(locked);
  }

  // Protocol: the highest version both sides speak.
  const protocol = Math.min(params.maxProtocol, PROTOCOL_VERSION);
  if (params.minProtocol > params.maxProtocol || protocol < Math.max(params.minProtocol, MIN_PROTOCOL_VERSION)) {
    return reject(
      ErrorCodes.INVALID_REQUEST,
      `protocol mismatch: client speaks ${params.minProtocol}–${params.maxProtocol}, gateway speaks ${MIN_PROTOCOL_VERSION}–${PROTOCOL_VERSION}`,
      { code: 'PROTOCOL_MISMATCH', minProtocol: MIN_PROTOCOL_VERSION, maxProtocol: PROTOCOL_VERSION },
    );
  }

  const role = params.role ?? 'operator';
  const signedScopes = (params.scopes ?? []).map((scope) => scope.trim()).filter(Boolean);
  // As OpenClaw's gateway: scopes it does not know (newer clients ask for more, e.g.
  // operator.questions) are left out of the grant instead of refusing the connection.
  const requested =
    role === 'node' ? [] : params.scopes === undefined ? ['operator.read'] : signedScopes.filter(isKnownScope);

  // Device identity: the signature must cover this connection's nonce.
  const device = params.device;
  let deviceId: string | undefined;
  if (device) {
    const fail = (code: string, message: string) => reject(ErrorCodes.INVALID_REQUEST, message, { code });
    if (!device.nonce.trim()) return fail('DEVICE_AUTH_NONCE_REQUIRED', 'device nonce required');
    if (device.nonce !== ctx.nonce)
      return fail('DEVICE_AUTH_NONCE_MISMATCH', 'device nonce mismatch: sign the nonce from connect.challenge');
    const key = parsePublicKey(device.publicKey);
    if (!key)
      return fail(
        'DEVICE_AUTH_PUBLIC_KEY_INVALID',
        'device public key invalid (expected base64url of a raw ed25519 key)',
      );
    if (deviceIdFor(key.raw) !== device.id)
      return fail(
        'DEVICE_AUTH_DEVICE_ID_MISMATCH',
        'device identity mismatch: id is not the SHA-256 of the public key',
      );
    if (Math.abs(ctx.now - device.signedAt) > SIGNATURE_SKEW_MS)
      return fail('DEVICE_AUTH_SIGNATURE_EXPIRED', 'device signature expired');
    const tokens = [...new Set([params.auth?.token, params.auth?.deviceToken, bootstrapToken, undefined])];
    const client = params.client as ConnectParams['client'] & { deviceFamily?: string };
    const signed = (['v3', 'v2'] as const).some((version) =>
      tokens.some((token) =>
        verifySignature(
          key.key,
          deviceAuthPayload(
            {
              deviceId: device.id,
              clientId: client.id,
              clientMode: client.mode ?? '',
              role,
              scopes: signedScopes,
              signedAtMs: device.signedAt,
              token,
              nonce: device.nonce,
              platform: client.platform,
              deviceFamily: client.deviceFamily,
            },
            version,
          ),
          device.signature,
        ),
      ),
    );
    if (!signed) return fail('DEVICE_AUTH_SIGNATURE_INVALID', 'device signature invalid');
    deviceId = device.id;
  }

  // Gateway auth applies to every connection, local or not.
  let authMethod: Admission['authMethod'] | undefined;
  if (settings.auth.mode === 'none') authMethod = 'none';
  else if (settings.auth.mode === 'token' && presented && safeEqual(presented, settings.auth.token!))
    authMethod = 'token';
  else if (settings.auth.mode === 'password' && presented && safeEqual(presented, settings.auth.password!))
    authMethod = 'password';
  if (!authMethod && deviceId && deviceToken && pairing.verifyToken(deviceId, role, deviceToken))
    authMethod = 'device-token';
  if (!authMethod && bootstrapToken && deviceId && role === 'node' && ctx.setupCodes?.valid(bootstrapToken))
    authMethod = 'bootstrap-token';
  if (counted) {
    if (authMethod === 'token' || authMethod === 'password') limiter.succeed(clientKey, 'shared');
    else if (authMethod === 'device-token') limiter.succeed(clientKey, 'device');
    else {
      // Only wrong credentials count: a client that sent none is not guessing.
      const lockouts = [
        presented ? limiter.fail(clientKey, 'shared') : 0,
        params.auth?.deviceToken ? limiter.fail(clientKey, 'device') : 0,
        bootstrapToken && !authMethod ? limiter.fail(clientKey, 'shared') : 0,
      ];
      const lockout = Math.max(...lockouts);
      if (lockout > 0) return rateLimited(lockout);
    }
  }
  if (!authMethod && bootstrapToken) return setupCodeRefused(role, deviceId);
  if (!authMethod) {
    const secret = settings.auth.mode === 'password' ? 'password' : 'token';
    const detail = presented ? `AUTH_${secret.toUpperCase()}_MISMATCH` : `AUTH_${secret.toUpperCase()}_MISSING`;
    return reject(ErrorCodes.INVALID_REQUEST, `unauthorized: gateway ${secret} ${presented ? 'mismatch' : 'missing'}`, {
      code: detail,
      canRetryWithDeviceToken: false,
      recommendedNextStep: 'update_auth_credentials',
    });
  }

  if (!deviceId && role === 'node') {
    // A node is paired, and its command surface approved, by its device identity.
    return reject(
      ErrorCodes.NOT_PAIRED,
      'device identity required for role "node": a node must sign the connect challenge with its device key',
      { code: 'DEVICE_IDENTITY_REQUIRED' },
    );
  }

  if (!deviceId) {
    // Without a device identity only this machine may connect: pairing is how remote
    // devices are admitted, and pairing needs an identity.
    if (!ctx.local) {
      return reject(
        ErrorCodes.NOT_PAIRED,
        'device identity required: connections from other machines must sign the connect challenge',
        {
          code: 'DEVICE_IDENTITY_REQUIRED',
        },
      );
    }
    return {
      ok: true,
      admission: {
        protocol,
        role,
        scopes: requested,
        authMethod: authMethod === 'none' ? 'local' : authMethod,
        params,
      },
    };
  }

  if (authMethod === 'bootstrap-token')
    return admitWithSetupCode(params, ctx, pairing, { protocol, deviceId, bootstrapToken: bootstrapToken! });

  const paired = pairing.device(deviceId);
  const grant = paired?.roles[role];
  const covered = grant !== undefined && requested.every((scope) => hasScope(grant.scopes, scope));
  if (!covered) {
    const fields = {
      deviceId,
      publicKey: device!.publicKey,
      role,
      scopes: requested,
      displayName: params.client.displayName,
      platform: params.client.platform,
      clientId: params.client.id,
      remoteAddress: ctx.remoteAddress,
    };
    // A trusted network pairs a first-time node device; its command surface still waits for an operator.
    const trustedNode =
      role === 'node' && !paired?.roles.node && requested.length === 0 && ctx.autoApproveNode?.(ctx.remoteAddress);
    if (ctx.local && settings.pairing.autoApproveLoopback) {
      pairing.approveDirect(fields, 'loopback');
    } else if (trustedNode) {
      pairing.approveDirect(fields, 'cidr');
    } else {
      const pending = pairing.request(fields);
      return {
        ok: false,
        pairing: pending,
        error: new ProtocolError(
          ErrorCodes.NOT_PAIRED,
          'pairing required: an operator must approve this device (claw devices approve)',
          {
            code: 'PAIRING_REQUIRED',
            requestId: pending.request.requestId,
            expiresAt: pending.request.expiresAt,
            recommendedNextStep: 'wait_then_retry',
          },
          true,
        ),
      };
    }
  }
  pairing.touch(deviceId, ctx.remoteAddress);
  // The first admission of a device for a role issues its token; later ones leave it be
  // (a device that lost its token can still connect with the shared secret).
  const hasToken = Boolean(pairing.device(deviceId)?.roles[role]?.tokenHash);
  const issued = authMethod === 'device-token' || hasToken ? undefined : pairing.issueToken(deviceId, role);
  const surfaceRequest =
    role === 'node' ? pairing.requestSurface(deviceId, declared(params.commands), declared(params.caps)) : undefined;
  return {
    ok: true,
    admission: { protocol, role, scopes: requested, authMethod, params, deviceId, deviceToken: issued, surfaceRequest },
  };
}

const SETUP_CODE_REFUSED =
  'unauthorized: setup code invalid, expired or already used (make a new one with `claw qr`; see `claw devices list`)';

function setupCodeRefused(role: string, deviceId: string | undefined): HandshakeResult {
  const details = { code: 'AUTH_BOOTSTRAP_TOKEN_INVALID', recommendedNextStep: 'update_auth_credentials' };
  if (role !== 'node')
    return reject(
      ErrorCodes.INVALID_REQUEST,
      'unauthorized: setup codes pair nodes only (connect with role "node")',
      details,
    );
  if (!deviceId)
    return reject(
      ErrorCodes.NOT_PAIRED,
      'device identity required: a setup code pairs a signed device identity, and this connect has none',
      { code: 'DEVICE_IDENTITY_REQUIRED' },
    );
  return reject(ErrorCodes.INVALID_REQUEST, SETUP_CODE_REFUSED, details);
}

/**
 * A node presenting a valid setup code: its bootstrap token is taken (single use), the device is
 * paired for role node with the surface it first declares approved, and it gets a device token to
 * use from now on.
 */
function admitWithSetupCode(
  params: ConnectParams,
  ctx: ConnectContext,
  pairing: PairingStore,
  admit: { protocol: number; deviceId: string; bootstrapToken: string },
): HandshakeResult {
  const { deviceId, bootstrapToken } = admit;
  const setup = ctx.setupCodes!.redeem(bootstrapToken, deviceId, params.client.displayName);
  if (!setup) return setupCodeRefused('node', deviceId);
  pairing.approveDirect(
    {
      deviceId,
      publicKey: params.device!.publicKey,
      role: 'node',
      scopes: [],
      displayName: params.client.displayName,
      platform: params.client.platform,
      clientId: params.client.id,
      remoteAddress: ctx.remoteAddress,
    },
    'setup-code',
  );
  pairing.touch(deviceId, ctx.remoteAddress);
  // Whoever minted the code was an admin: the surface a node first declares needs no second
  // approval. A node already holding a surface asks for more the ordinary way.
  const commands = declared(params.commands);
  const caps = declared(params.caps);
  const first = !pairing.device(deviceId)!.surface;
  if (first) pairing.setSurface(deviceId, commands, caps, 'setup-code');
  const surfaceRequest = first ? undefined : pairing.requestSurface(deviceId, commands, caps);
  return {
    ok: true,
    admission: {
      protocol: admit.protocol,
      role: 'node',
      scopes: [],
      authMethod: 'bootstrap-token',
      params,
      deviceId,
      deviceToken: pairing.issueToken(deviceId, 'node'),
      setup,
      surfaceRequest,
    },
  };
}
