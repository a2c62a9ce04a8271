/**
 * The webhook endpoints on the gateway port: `POST <hooks.path>/wake`, `/agent` and
 * `/<mapping>`. They sit outside gateway auth (callers hold only the hook token) and do
 * their own: the token in `Authorization: Bearer` or `x-openclaw-token` (never the query
 * string), compared in constant time, with failed attempts locked out per client by the
 * gateway's own limiter (the `gateway-auth` service), counted apart from gateway auth.
 * Bodies are JSON (the gateway refuses other types), size-limited and read within a deadline.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { safeEqual } from '../../sdk/index.js';
import type {
  AuthRateLimiter,
  GatewayAuthService,
  KernelServices,
  Logger,
  RateLimitSettings,
} from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { HttpBodyError, readRequestBody } from '../../sdk/net/index.js';
import { findMapping, isTemplated, renderTemplate, type TemplateScope } from './mappings.js';
import { webhookProblem, webhookSettings } from './settings.js';
import {
  HookRequestError,
  parseAgentBody,
  parseWakeBody,
  runAgentAction,
  runWake,
  type ActionDeps,
  type ActionReply,
  type AgentAction,
  type WakeAction,
} from './webhook-actions.js';

/** OpenClaw's hook throttle: 20 failures a minute, loopback included (a proxy on loopback is still the internet). */
export const HOOK_RATE_LIMIT: RateLimitSettings = {
  maxAttempts: 20,
  windowMs: 60_000,
  lockoutMs: 60_000,
  exemptLoopback: false,
};
export const BODY_TIMEOUT_MS = 30_000;

function send(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** The body, with the kit's size and time refusals as this route's errors. */
async function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  try {
    return await readRequestBody(req, { limit, timeoutMs, limitName: 'hooks.maxBodyBytes' });
  } catch (error) {
    if (error instanceof HttpBodyError) throw new HookRequestError(error.status, error.message);
    throw error;
  }
}

function parseJsonObject(body: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8') || 'null');
  } catch (error) {
    throw new HookRequestError(400, `body is not valid JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new HookRequestError(400, 'body must be a JSON object');
  return value as Record<string, unknown>;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
}

/** A non-empty Bearer token wins over x-openclaw-token. */
function presentedToken(req: IncomingMessage): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headerValue(req, 'authorization') ?? '')?.[1]?.trim();
  return bearer || headerValue(req, 'x-openclaw-token');
}

export interface WebhookHandlerDeps {
  kernel: KernelServices;
  logger: Logger;
  limiter?: AuthRateLimiter;
}

export function createWebhookHandler(deps: WebhookHandlerDeps) {
  // Looked up at the first request, not at register: these routes are served on the
  // gateway's port, so the plugin offering the service has loaded by then.
  let lockout: Promise<{ auth: GatewayAuthService; limiter: AuthRateLimiter }> | undefined;
  const lockoutGuard = () =>
    (lockout ??= requireService<GatewayAuthService>(deps.kernel, 'gateway-auth', 'webhook authentication').then(
      (auth) => ({
        auth,
        limiter: deps.limiter ?? auth.createRateLimiter(HOOK_RATE_LIMIT),
      }),
    ));
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const config = deps.kernel.config();
    const settings = webhookSettings(config);
    const url = new URL(req.url ?? '/', 'http://hooks.invalid');
    const path = url.pathname.replace(/\/+$/, '');
    if (!settings.enabled || (path !== settings.path && !path.startsWith(`${settings.path}/`))) {
      req.resume();
      send(res, 404, {
        ok: false,
        error: settings.enabled
          ? `no webhook at ${url.pathname} (hooks.path is ${settings.path})`
          : 'webhooks are off: set hooks.enabled to true and hooks.token to a long random token',
      });
      return;
    }
    let guard: Awaited<ReturnType<typeof lockoutGuard>>;
    try {
      guard = await lockoutGuard();
    } catch (error) {
      lockout = undefined;
      req.resume();
      send(res, 503, { ok: false, error: (error as Error).message });
      return;
    }
    const { auth, limiter } = guard;
    const problem = webhookProblem(settings, config, deps.kernel.env, auth.flagSecrets());
    if (problem) {
      req.resume();
      send(res, 503, { ok: false, error: problem });
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      send(res, 405, { ok: false, error: 'webhook endpoints accept POST only' }, { allow: 'POST' });
      return;
    }
    if (url.searchParams.has('token')) {
      req.resume();
      send(res, 400, {
        ok: false,
        error:
          'the hook token is not accepted in the query string: send it as Authorization: Bearer <token> or x-openclaw-token',
      });
      return;
    }

    const forwarded = req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
    const client = auth.clientKey(req.socket.remoteAddress, headerValue(req, 'origin'), forwarded, HOOK_RATE_LIMIT);
    const locked = limiter.retryAfterMs(client.key, 'shared');
    const refuse = (ms: number) => {
      req.resume();
      send(
        res,
        429,
        { ok: false, error: 'too many failed hook authentication attempts; retry later' },
        { 'retry-after': String(Math.ceil(ms / 1000)) },
      );
    };
    if (locked > 0) return refuse(locked);
    const token = presentedToken(req);
    if (!token || !safeEqual(token, settings.token!)) {
      const lockout = token ? limiter.fail(client.key, 'shared') : 0;
      if (lockout > 0) return refuse(lockout);
      req.resume();
      send(
        res,
        401,
        {
          ok: false,
          error: 'unauthorized: send the hook token (hooks.token) as Authorization: Bearer <token> or x-openclaw-token',
        },
        { 'www-authenticate': 'Bearer' },
      );
      return;
    }
    limiter.succeed(client.key, 'shared');

    const subpath = path.slice(settings.path.length).replace(/^\/+|\/+$/g, '');
    try {
      if (!subpath)
        throw new HookRequestError(
          404,
          `${settings.path} itself has no action: POST ${settings.path}/wake, ${settings.path}/agent or a mapped path`,
        );
      const body = parseJsonObject(await readBody(req, settings.maxBodyBytes, BODY_TIMEOUT_MS));
      const actionDeps: ActionDeps = { kernel: deps.kernel, logger: deps.logger, settings, config };
      let reply: ActionReply;
      if (subpath === 'wake') reply = await runWake(actionDeps, parseWakeBody(body));
      else if (subpath === 'agent') reply = await runAgentAction(actionDeps, parseAgentBody(body));
      else reply = await runMapped(actionDeps, req, url, subpath, body);
      send(res, reply.status, reply.body);
    } catch (error) {
      if (error instanceof HookRequestError) {
        send(res, error.status, { ok: false, error: error.message });
        return;
      }
      deps.logger.error(`webhook ${subpath || '/'} failed: ${(error as Error).message}`);
      send(res, 500, { ok: false, error: 'hook request failed; see the gateway log' });
    }
  };
}

async function runMapped(
  deps: ActionDeps,
  req: IncomingMessage,
  url: URL,
  subpath: string,
  payload: Record<string, unknown>,
): Promise<ActionReply> {
  const found = findMapping(deps.settings.mappings, subpath, payload);
  if (!found) throw new HookRequestError(404, `no hooks.mappings entry matches ${deps.settings.path}/${subpath}`);
  const { mapping, index } = found;
  const headers = Object.fromEntries(
    Object.entries(req.headers).flatMap(([name, value]) =>
      name === 'authorization' || name === 'x-openclaw-token' || value === undefined
        ? []
        : [[name, Array.isArray(value) ? value.join(', ') : value]],
    ),
  );
  const scope: TemplateScope = {
    payload,
    headers,
    query: Object.fromEntries(url.searchParams),
    path: subpath,
    now: new Date().toISOString(),
  };
  const render = (value: string | undefined) =>
    value === undefined ? undefined : renderTemplate(value, scope).trim() || undefined;
  const source = `hook:${mapping.id ?? `mapping-${index}`}`;
  const keyTemplated = isTemplated(mapping.sessionKey);
  const sessionKey = render(mapping.sessionKey);
  if (mapping.sessionKey !== undefined && sessionKey === undefined)
    throw new HookRequestError(400, `mapping ${source}: its sessionKey template rendered empty`);

  if ((mapping.action ?? 'agent') === 'wake') {
    const text = render(mapping.textTemplate);
    if (!text) throw new HookRequestError(400, `mapping ${source}: textTemplate rendered no text`);
    const action: WakeAction = {
      text,
      mode: mapping.wakeMode ?? 'now',
      agentId: mapping.agentId,
      sessionKey,
      callerKey: keyTemplated,
      source,
    };
    return runWake(deps, action);
  }
  const message = render(mapping.messageTemplate);
  if (!message) throw new HookRequestError(400, `mapping ${source}: messageTemplate rendered no message`);
  const action: AgentAction = {
    message,
    name: render(mapping.name) ?? 'Hook',
    agentId: mapping.agentId,
    sessionKey,
    callerKey: keyTemplated,
    wakeMode: mapping.wakeMode ?? 'now',
    deliver: mapping.deliver !== false,
    channel: render(mapping.channel),
    to: render(mapping.to),
    model: render(mapping.model),
    thinking: render(mapping.thinking),
    timeoutSeconds: mapping.timeoutSeconds,
    unsafe: mapping.allowUnsafeExternalContent === true,
    source,
  };
  return runAgentAction(deps, action);
}
