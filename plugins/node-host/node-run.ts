/**
 * `claw node run`: connect to a gateway as a node and serve its invokes until stopped.
 *
 * Where: flags, else the setup code's URL, else what the last run saved, else this state
 * dir's gateway port on 127.0.0.1. Signed in with: a setup code's bootstrap token; else
 * OPENCLAW_GATEWAY_TOKEN / OPENCLAW_GATEWAY_PASSWORD, else config gateway.auth.token /
 * password; else the device token the gateway issued this node before.
 *
 * The connection is retried for as long as the node host runs (1 s doubling to 30 s,
 * jittered) — also while the gateway says pairing is required, since an operator approving
 * the device is exactly what is awaited. A refusal no retry can fix (a wrong or revoked
 * token, an expired setup code, a certificate that is not the pinned one) ends the run with
 * exit code 1 and says what to do.
 */
import { platform as osPlatform } from 'node:os';
import type { CliContext, KernelServices } from '../../sdk/index.js';
import { EXEC_ENV_SERVICE, type ExecEnvService } from '../../sdk/exec/index.js';
import { clawVersion, loadOrCreateDeviceIdentity } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { Dispatcher, invokeRequest } from './dispatcher.js';
import { GroupWatchdog } from './group-watchdog.js';
import { HOST_STATS_EVENT, HOST_STATS_INTERVAL_MS, sampleHostStats } from './host-stats.js';
import { InvokeJournal } from './journal.js';
import { NodeApprovals } from './node-approvals.js';
import { gatewayUrl, NodeState, type GatewayEndpoint } from './node-state.js';
import { decodeSetupCode } from './setup-code.js';
import { nodeCommands } from './command-maps.js';

/** OpenClaw's client id for node hosts (GATEWAY_CLIENT_NAMES.NODE_HOST). */
export const NODE_HOST_CLIENT_ID = 'node-host';
const DEFAULT_PORT = 18789;

/** Refusals a retry cannot fix: the run ends (OpenClaw's node host exits on the same ones). */
const TERMINAL = new Set([
  'AUTH_TOKEN_MISSING',
  'AUTH_TOKEN_MISMATCH',
  'AUTH_PASSWORD_MISSING',
  'AUTH_PASSWORD_MISMATCH',
  'AUTH_DEVICE_TOKEN_MISMATCH',
  'AUTH_BOOTSTRAP_TOKEN_INVALID',
  'AUTH_IDENTITY_HEADER_REQUIRED',
  'CLIENT_VERSION_MISMATCH',
  'DEVICE_AUTH_INVALID',
  'DEVICE_AUTH_SIGNATURE_INVALID',
  'DEVICE_AUTH_PUBLIC_KEY_INVALID',
  'DEVICE_AUTH_DEVICE_ID_MISMATCH',
  'TLS_FINGERPRINT_MISMATCH',
]);

export interface NodeRunFlags {
  host?: string;
  port?: number;
  tls?: boolean;
  tlsFingerprint?: string;
  contextPath?: string;
  pair?: string;
  displayName?: string;
  nodeId?: string;
  /** Only these commands are offered (`--commands a,b`). */
  commands?: string[];
}

interface GatewaySection {
  port?: number;
  tls?: { enabled?: boolean };
  auth?: { token?: string; password?: string };
}

function detailCode(error: { details?: unknown }): string | undefined {
  const details = error.details as { code?: unknown } | undefined;
  return typeof details?.code === 'string' ? details.code : undefined;
}

function endpointFromUrl(url: string): GatewayEndpoint {
  const parsed = new URL(url);
  const tls = parsed.protocol === 'wss:';
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : tls ? 443 : 80,
    tls,
    ...(parsed.pathname && parsed.pathname !== '/' ? { contextPath: parsed.pathname } : {}),
  };
}

export async function runNodeHost(kernel: KernelServices, ctx: CliContext, flags: NodeRunFlags): Promise<number> {
  const say = (line: string) => ctx.stderr.write(`${line}\n`);
  const state = new NodeState(kernel.paths.stateDir);
  const gatewayConfig = ((kernel.config() as { gateway?: GatewaySection }).gateway ?? {}) as GatewaySection;
  const pair = flags.pair !== undefined ? decodeSetupCode(flags.pair) : undefined;
  const saved = state.load()?.gateway;
  const explicit = flags.host !== undefined || flags.port !== undefined;
  const base: GatewayEndpoint = explicit
    ? { host: flags.host ?? '127.0.0.1', port: flags.port ?? DEFAULT_PORT, tls: false }
    : pair
      ? { ...endpointFromUrl(pair.url), ...(pair.tlsFingerprint ? { tlsFingerprint: pair.tlsFingerprint } : {}) }
      : (saved ?? { host: '127.0.0.1', port: gatewayConfig.port ?? DEFAULT_PORT, tls: false });
  const endpoint: GatewayEndpoint = {
    ...base,
    tls: flags.tls ?? (explicit ? (gatewayConfig.tls?.enabled ?? false) : base.tls),
    ...(flags.tlsFingerprint ? { tlsFingerprint: flags.tlsFingerprint } : {}),
    ...(flags.contextPath ? { contextPath: flags.contextPath } : {}),
  };
  if (endpoint.tlsFingerprint && !endpoint.tls) throw new Error('--tls-fingerprint needs a wss:// gateway (--tls)');
  const config = state.configure({ nodeId: flags.nodeId, displayName: flags.displayName, gateway: endpoint });
  const url = gatewayUrl(endpoint);
  const identity = loadOrCreateDeviceIdentity(state.identityFile);

  const token = ctx.env.OPENCLAW_GATEWAY_TOKEN?.trim() || gatewayConfig.auth?.token;
  const password = ctx.env.OPENCLAW_GATEWAY_PASSWORD?.trim() || gatewayConfig.auth?.password;
  const savedToken = state.deviceToken(url);
  const auth = pair
    ? { bootstrapToken: pair.bootstrapToken }
    : token || password
      ? { token, password }
      : { deviceToken: savedToken };

  const journal = new InvokeJournal(state.dir);
  const watchdog = new GroupWatchdog();
  const approvals = new NodeApprovals(kernel);
  const execEnv = () => requireService<ExecEnvService>(kernel, EXEC_ENV_SERVICE, 'the node host');
  const everything = nodeCommands({ kernel, stateDir: kernel.paths.stateDir, approvals, execEnv, watchdog });
  if (flags.commands) {
    const unknown = flags.commands.filter((name) => !everything[name]);
    if (unknown.length > 0)
      throw new Error(
        `--commands: this node host has no ${unknown.join(', ')} (it has ${Object.keys(everything).sort().join(', ')})`,
      );
  }
  const offered = flags.commands
    ? Object.fromEntries(flags.commands.map((name) => [name, everything[name]!]))
    : everything;
  let session: ReturnType<CliContext['gateway']['session']> | undefined;
  const dispatcher = new Dispatcher(
    offered,
    journal,
    { request: (method, params) => session!.request(method, params) },
    say,
  );
  const { caps, commands } = dispatcher.manifest();
  const pathEnv = (await execEnv()).hostEnv(undefined).PATH;

  let statsTimer: NodeJS.Timeout | undefined;
  const publishStats = () =>
    session
      ?.request('node.event', { event: HOST_STATS_EVENT, payloadJSON: JSON.stringify(sampleHostStats()) })
      .catch(() => undefined);
  const pairingShown = new Set<string>();
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));

  say(`node host ${config.displayName} (device ${identity.deviceId}) → ${url}`);
  say(`offering: ${commands.join(', ')}`);
  session = ctx.gateway.session({
    url,
    auth,
    identityFile: state.identityFile,
    role: 'node',
    client: {
      id: NODE_HOST_CLIENT_ID,
      mode: 'node',
      version: clawVersion(),
      platform: osPlatform() === 'darwin' ? 'macos' : osPlatform() === 'win32' ? 'windows' : osPlatform(),
      deviceFamily: osPlatform() === 'darwin' ? 'Mac' : osPlatform() === 'win32' ? 'Windows' : 'Linux',
      displayName: config.displayName,
      instanceId: config.nodeId,
    },
    caps,
    commands,
    ...(pathEnv ? { pathEnv } : {}),
    ...(endpoint.tlsFingerprint ? { tlsFingerprint: endpoint.tlsFingerprint } : {}),
    onHello(hello) {
      if (hello.deviceToken)
        state.saveDeviceToken(url, { deviceToken: hello.deviceToken, role: hello.role, scopes: hello.scopes });
      say(`connected to ${url} as node ${identity.deviceId}`);
      say(
        'if the gateway has not approved these commands yet: `claw nodes pending`, then `claw nodes approve <requestId>` there (OpenClaw: `openclaw nodes approve <requestId>`)',
      );
      clearInterval(statsTimer);
      void publishStats();
      statsTimer = setInterval(() => void publishStats(), HOST_STATS_INTERVAL_MS);
    },
    onEvent(event) {
      if (event.event === 'node.invoke.request') {
        const request = invokeRequest(event.payload);
        if (request) void dispatcher.invoke(request);
      } else if (event.event === 'node.invoke.cancel') {
        const invokeId = (event.payload as { invokeId?: unknown } | undefined)?.invokeId;
        if (typeof invokeId === 'string') dispatcher.cancel(invokeId);
      } else if (event.event === 'node.pair.resolved') {
        const payload = event.payload as { nodeId?: string; decision?: string } | undefined;
        if (payload?.nodeId === identity.deviceId)
          say(`the gateway ${payload.decision ?? 'resolved'} this node's commands`);
      }
    },
    onConnectError(error, retryInMs) {
      const code = detailCode(error);
      if (code === 'PAIRING_REQUIRED') {
        const requestId = (error.details as { requestId?: string }).requestId ?? '<requestId>';
        if (!pairingShown.has(requestId)) {
          pairingShown.add(requestId);
          say(
            `pairing required: on the gateway, run \`claw devices approve ${requestId}\` ` +
              `(OpenClaw: \`openclaw devices approve ${requestId}\`); waiting for it…`,
          );
        }
        return true;
      }
      if (code && TERMINAL.has(code)) {
        if (code === 'AUTH_DEVICE_TOKEN_MISMATCH') state.forgetDeviceToken(url);
        say(`the gateway refused this node: ${error.message} (${code}). ${remedy(code)}`);
        finish(1);
        return false;
      }
      say(`gateway ${url} not reachable (${error.message}); retrying in ${Math.round(retryInMs / 1000)} s`);
      return true;
    },
    onClose({ code, reason }) {
      clearInterval(statsTimer);
      say(`connection closed (${code}${reason ? `: ${reason}` : ''}); reconnecting`);
    },
  });

  const stop = () => finish(0);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const code = await done;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  clearInterval(statsTimer);
  dispatcher.stop();
  await session.close();
  watchdog.close();
  journal.close();
  return code;
}

function remedy(code: string): string {
  if (code === 'AUTH_DEVICE_TOKEN_MISMATCH')
    return 'Its device token was revoked or replaced: pair again (a shared token in OPENCLAW_GATEWAY_TOKEN, or --pair with a new setup code).';
  if (code === 'AUTH_BOOTSTRAP_TOKEN_INVALID')
    return 'The setup code was used already or expired: ask for a new one (claw qr on the gateway).';
  if (code === 'TLS_FINGERPRINT_MISMATCH') return 'Check --tls-fingerprint against the gateway certificate.';
  if (code.startsWith('AUTH_')) return "Set OPENCLAW_GATEWAY_TOKEN (or _PASSWORD) to the gateway's.";
  return 'See the message above.';
}
