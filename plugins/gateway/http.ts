/**
 * The HTTP half of the gateway port, on fastify: every path a plugin declared in its manifest
 * `httpRoutes` (behind gateway auth unless the route opts out; the probes are probes.ts's).
 * Plugin routes live in their own encapsulated fastify scope whose body parser leaves the
 * request stream unread, so handlers get the raw request exactly as it arrived.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  pathUnder,
  type CapabilityLookup,
  type HttpRouteDefinition,
  type KernelServices,
  type Logger,
} from '../../sdk/index.js';
import { safeEqual } from './handshake.js';
import { isLoopbackHost } from '../../sdk/net/index.js';
import { clientKey, type AuthRateLimiter } from './rate-limit.js';
import { checkContentType } from './request-guard.js';
import type { GatewaySettings } from './settings.js';

export interface HttpApp {
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

export interface HttpAppOptions {
  server: Server;
  kernel: KernelServices;
  settings: GatewaySettings;
  logger: Logger;
  limiter: AuthRateLimiter;
}

/** The outcome of checking a request's `Authorization: Bearer <token or password>`. */
export type HttpAuthResult = { ok: true } | { ok: false; status: 401 | 429; message: string; retryAfterMs?: number };

/**
 * Gateway auth for HTTP, with the same failed-attempt lockout as the WebSocket handshake.
 * A locked-out client is answered 429 before its secret is compared.
 */
export function httpAuthorize(
  req: IncomingMessage,
  settings: GatewaySettings,
  limiter: AuthRateLimiter,
): HttpAuthResult {
  const unauthorized = {
    ok: false as const,
    status: 401 as const,
    message: 'unauthorized: send Authorization: Bearer <gateway token>',
  };
  if (settings.auth.mode === 'none')
    return isLoopbackHost(req.socket.remoteAddress ?? '') ? { ok: true } : unauthorized;
  const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  if (!match) return unauthorized;
  const forwarded = req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
  const client = clientKey(req.socket.remoteAddress, req.headers.origin, forwarded, settings.auth.rateLimit);
  const locked = client.exempt ? 0 : limiter.retryAfterMs(client.key, 'shared');
  if (locked > 0)
    return {
      ok: false,
      status: 429,
      message: 'too many failed authentication attempts; retry later',
      retryAfterMs: locked,
    };
  const secret = settings.auth.mode === 'token' ? settings.auth.token! : settings.auth.password!;
  if (safeEqual(match[1]!.trim(), secret)) {
    if (!client.exempt) limiter.succeed(client.key, 'shared');
    return { ok: true };
  }
  const lockout = client.exempt ? 0 : limiter.fail(client.key, 'shared');
  if (lockout > 0)
    return {
      ok: false,
      status: 429,
      message: 'too many failed authentication attempts; retry later',
      retryAfterMs: lockout,
    };
  return unauthorized;
}

/**
 * The route for a request: the plugin whose manifest `httpRoutes` prefix holds the path
 * (longest wins) is loaded, then its registered routes are matched, exact paths before
 * wildcard prefixes and longer prefixes first. Rejects when the owning plugin cannot load.
 */
export async function findRoute(
  capabilities: CapabilityLookup,
  method: string,
  path: string,
): Promise<{ pluginId: string; route: HttpRouteDefinition } | undefined> {
  let owner: { id: string; length: number } | undefined;
  for (const [prefix, id] of capabilities.routePrefixes()) {
    if (pathUnder(path, prefix) && (!owner || prefix.length > owner.length)) owner = { id, length: prefix.length };
  }
  if (!owner) return undefined;
  const upper = method.toUpperCase();
  const matches = (route: HttpRouteDefinition) =>
    (route.method === '*' || route.method === upper || (upper === 'HEAD' && route.method === 'GET')) &&
    (route.path === path || (route.path.endsWith('/*') && pathUnder(path, route.path.slice(0, -2))));
  const wildcard = (route: HttpRouteDefinition) => Number(route.path.endsWith('/*'));
  const routes = (await capabilities.routes(owner.id)).sort(
    (a, b) => wildcard(a) - wildcard(b) || b.path.length - a.path.length,
  );
  const route = routes.find(matches);
  return route ? { pluginId: owner.id, route } : undefined;
}

export async function startHttpApp(options: HttpAppOptions): Promise<HttpApp> {
  const { default: Fastify } = await import('fastify');
  let handler!: (req: IncomingMessage, res: ServerResponse) => void;
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    // fastify routes requests on the server the gateway already listens on.
    serverFactory: (fastifyHandler) => {
      handler = fastifyHandler;
      return options.server;
    },
  });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.all('/*', async (request, reply) => {
      const path = request.url.split('?')[0]!;
      const found = await findRoute(options.kernel.capabilities, request.method, path).catch((error: Error) => {
        options.logger.error(`route ${path} unavailable: ${error.message}`);
        return null;
      });
      if (found === null) return reply.code(503).send({ error: `the plugin serving ${path} failed to load` });
      if (!found) {
        if (path === '/') {
          return reply
            .code(404)
            .type('text/plain')
            .send(
              'claw gateway is running, but no web UI plugin is installed.\nEnable one (for example: claw plugins enable channel-webchat) to serve the Control UI here.\n',
            );
        }
        return reply.code(404).send({ error: `no route for ${request.method} ${path}` });
      }
      if (found.route.auth !== 'none') {
        const auth = httpAuthorize(request.raw, options.settings, options.limiter);
        if (!auth.ok) {
          if (auth.retryAfterMs !== undefined) reply.header('retry-after', String(Math.ceil(auth.retryAfterMs / 1000)));
          else reply.header('www-authenticate', 'Bearer');
          return reply.code(auth.status).send({ error: auth.message });
        }
      }
      // Checked after auth so an unauthenticated caller learns nothing about the route.
      const badType = checkContentType(request.raw, found.route.formBodies === true && found.route.auth === 'none');
      if (badType) return reply.code(badType.status).send({ error: badType.message });
      reply.hijack();
      try {
        await found.route.handler(request.raw, reply.raw);
      } catch (error) {
        options.logger.error(
          `route ${request.method} ${path} (plugin ${found.pluginId}) failed: ${(error as Error).message}`,
        );
        if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
        if (!reply.raw.writableEnded) reply.raw.end('{"error":"internal error"}');
      }
    });
  });

  await app.ready();
  return {
    handle: (req, res) => handler(req, res),
    // The gateway closes the listening server itself; this only releases fastify's hooks.
    close: async () => {
      await app.close().catch(() => {});
    },
  };
}
