/**
 * OpenClaw's unauthenticated HTTP probes, for supervisors and container health checks:
 *
 * - `/health`, `/healthz`: the HTTP server is live.
 * - `/startup`, `/startupz`: start-up has settled (every `onStartup` plugin loaded or failed,
 *   the gateway_start hooks run) and the gateway is not draining.
 * - `/ready`, `/readyz`: started, not draining, the default agent has a usable model and no
 *   enabled plugin failed.
 *
 * They are answered by node:http before the HTTP app (fastify, ~80 ms to load) is brought up,
 * so a probe sent the moment the port opens is answered at once and loads nothing. A remote
 * caller without the gateway secret learns only `ok` and `status`; a local one (loopback, not
 * forwarded) or one sending the secret also gets the version, the uptime and what is failing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PluginRecord } from '../../sdk/index.js';
import { isLoopbackHost } from '../../sdk/net/index.js';
import { httpAuthorize } from './http.js';
import type { AuthRateLimiter } from './rate-limit.js';
import type { GatewaySettings } from './settings.js';

const PROBES: Record<string, 'live' | 'startup' | 'ready'> = {
  '/health': 'live',
  '/healthz': 'live',
  '/startup': 'startup',
  '/startupz': 'startup',
  '/ready': 'ready',
  '/readyz': 'ready',
};

export interface ProbeSources {
  settings: GatewaySettings;
  limiter: AuthRateLimiter;
  version: string;
  startedAt: number;
  plugins(): readonly PluginRecord[];
  /** False once the gateway stops accepting (a stop or restart is draining it). */
  accepting(): boolean;
  /** The gateway's own start-up work after listening (gateway_start hooks) is done. */
  startWorkDone(): boolean;
  /** The default agent's model readiness as last read: undefined without a models plugin, 'unread' before the first read. */
  model(): { ok: boolean } | 'unread' | undefined;
}

/** Answers a probe path and returns true; any other request returns false untouched. */
export function serveProbe(req: IncomingMessage, res: ServerResponse, sources: ProbeSources): boolean {
  const kind = PROBES[(req.url ?? '').split('?')[0]!];
  if (!kind || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const verdict = judge(kind, sources);
  const body: Record<string, unknown> = { ok: verdict.ok, status: verdict.status };
  if (mayKnowMore(req, sources)) {
    body.version = sources.version;
    body.uptimeMs = Date.now() - sources.startedAt;
    if (verdict.pending.length > 0) body.pendingReason = verdict.pending.join(', ');
    if (kind === 'ready' && verdict.failing.length > 0) body.failing = verdict.failing;
  }
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(verdict.ok ? 200 : 503, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  });
  res.end(req.method === 'HEAD' ? undefined : text);
  return true;
}

interface Verdict {
  ok: boolean;
  status: string;
  /** Why start-up has not settled (plugins still loading, hooks running). */
  pending: string[];
  /** Why the gateway is not ready (`model`, `plugin:<id>`). */
  failing: string[];
}

function judge(kind: 'live' | 'startup' | 'ready', sources: ProbeSources): Verdict {
  if (kind === 'live') return { ok: true, status: 'live', pending: [], failing: [] };
  const records = sources.plugins();
  const loading = records.filter(
    (record) => record.manifest?.activation?.onStartup === true && record.status === 'ready',
  );
  const pending = [
    ...loading.map((record) => `plugin:${record.id}`),
    ...(sources.startWorkDone() ? [] : ['gateway_start hooks']),
  ];
  const draining = !sources.accepting();
  const startup = draining ? 'draining' : pending.length > 0 ? 'starting' : 'started';
  if (kind === 'startup') return { ok: startup === 'started', status: startup, pending, failing: [] };
  const model = sources.model();
  if (model === 'unread' && startup === 'started') pending.push('model check');
  const failing = [
    ...(model && model !== 'unread' && !model.ok ? ['model'] : []),
    ...records.filter((record) => record.status === 'failed').map((record) => `plugin:${record.id}`),
  ];
  if (startup !== 'started' || pending.length > 0)
    return { ok: false, status: startup === 'started' ? 'starting' : startup, pending, failing };
  return { ok: failing.length === 0, status: failing.length === 0 ? 'ready' : 'not-ready', pending, failing };
}

/** Loopback and not forwarded by a proxy, or carrying the gateway secret. */
function mayKnowMore(req: IncomingMessage, sources: ProbeSources): boolean {
  const forwarded = req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
  if (!forwarded && isLoopbackHost(req.socket.remoteAddress ?? '')) return true;
  if (req.headers.authorization === undefined) return false;
  return httpAuthorize(req, sources.settings, sources.limiter).ok;
}
