/**
 * `--deep`: ask the running gateway itself. One connection with the configured secret (or
 * --token / --password, or this device's token) calls `health`; a second presents no
 * credential at all, the way a stranger on the same port would, and must be turned away.
 */
import { GatewayClient } from '../../gateway-client.js';
import { operatorClientOptions, withGatewayClient } from '../../operator.js';
import { section, type AuditContext, type Finding } from './types.js';

const PROBE_TIMEOUT_MS = 5000;

export interface ProbeReport {
  url: string;
  /** `health` answered over the authenticated connection. */
  healthy: boolean;
  error?: string;
  /** What happened to the connection that presented no credential. */
  unauthenticated: 'accepted' | 'refused';
}

export interface ProbeOptions {
  token?: string;
  password?: string;
  version: string;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export async function probeGateway(
  ctx: AuditContext,
  options: ProbeOptions,
): Promise<{ findings: Finding[]; report: ProbeReport }> {
  const client = { id: 'claw-security-audit', version: options.version, mode: 'cli' };
  const authed = operatorClientOptions({
    stateDir: ctx.stateDir,
    env: ctx.env,
    gateway: section(ctx.config.gateway),
    token: options.token,
    password: options.password,
    timeoutMs: PROBE_TIMEOUT_MS,
    client,
  });
  const report: ProbeReport = { url: authed.url, healthy: false, unauthenticated: 'refused' };
  const findings: Finding[] = [];
  try {
    await withGatewayClient(authed, (connection) => connection.request('health'));
    report.healthy = true;
  } catch (error) {
    report.error = message(error);
    findings.push({
      checkId: 'gateway.probe_failed',
      severity: 'warn',
      title: 'Live gateway probe failed',
      detail: `Could not reach the gateway at ${authed.url} and call health: ${report.error}.`,
      fix: 'Start the gateway (`claw gateway`), or pass the credential it uses with --token / --password.',
      fixable: false,
    });
  }
  // No token, no password, no device token, no device identity: a bare stranger.
  const stranger = new GatewayClient({
    url: authed.url,
    client,
    connectTimeoutMs: PROBE_TIMEOUT_MS,
    requestTimeoutMs: PROBE_TIMEOUT_MS,
  });
  try {
    await stranger.connect();
    report.unauthenticated = 'accepted';
  } catch {
    // Refused (or unreachable, which the probe above has reported).
  } finally {
    await stranger.close();
  }
  if (report.unauthenticated === 'accepted') {
    findings.push({
      checkId: 'gateway.probe_unauthenticated_accepted',
      severity: 'critical',
      title: 'The running gateway admits clients without credentials',
      detail: `A client presenting no token, password or device token was admitted by the gateway at ${authed.url}.`,
      fix: 'Set gateway.auth.mode to "token" with gateway.auth.token (or OPENCLAW_GATEWAY_TOKEN) and restart the gateway.',
      fixable: false,
    });
  }
  return { findings, report };
}
