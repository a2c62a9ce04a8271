/**
 * The HTTP half of the gateway port, on fastify: `GET /health`, then every path a plugin
 * declared in its manifest `httpRoutes` (behind gateway auth unless the route opts out).
 * Plugin routes live in their own encapsulated fastify scope whose body parser leaves the
 * request stream unread, so handlers get the raw request exactly as it arrived.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { KernelServices, Logger } from '../../kernel/index.js';
import { safeEqual } from './handshake.js';
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
  health(): { ok: boolean; status: string; uptimeMs: number; version: string };
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Gateway auth for HTTP: `Authorization: Bearer <token or password>`. */
export function httpAuthorized(req: IncomingMessage, settings: GatewaySettings): boolean {
  if (settings.auth.mode === 'none') return LOOPBACK.has(req.socket.remoteAddress ?? '');
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) return false;
  const secret = settings.auth.mode === 'token' ? settings.auth.token! : settings.auth.password!;
  return safeEqual(match[1]!.trim(), secret);
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

  app.get('/health', async () => {
    const health = options.health();
    return { ok: health.ok, status: health.status, uptimeMs: health.uptimeMs, version: health.version };
  });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.all('/*', async (request, reply) => {
      const path = request.url.split('?')[0]!;
      const found = await options.kernel.capabilities.route(request.method, path).catch((error: Error) => {
        options.logger.error(`route ${path} unavailable: ${error.message}`);
        return null;
      });
      if (found === null) return reply.code(503).send({ error: `the plugin serving ${path} failed to load` });
      if (!found) {
        if (path === '/') {
          return reply
            .code(404)
            .type('text/plain')
            .send('claw gateway is running, but no web UI plugin is installed.\nEnable one (for example: claw plugins enable channel-webchat) to serve the Control UI here.\n');
        }
        return reply.code(404).send({ error: `no route for ${request.method} ${path}` });
      }
      if (found.route.auth !== 'none' && !httpAuthorized(request.raw, options.settings)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'unauthorized: send Authorization: Bearer <gateway token>' });
      }
      reply.hijack();
      try {
        await found.route.handler(request.raw, reply.raw);
      } catch (error) {
        options.logger.error(`route ${request.method} ${path} (plugin ${found.pluginId}) failed: ${(error as Error).message}`);
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
