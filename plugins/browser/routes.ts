/**
 * OpenClaw's browser control routes (GET /, POST /start, GET /tabs, POST /act, …), served
 * through the `browser.request` gateway method ({method, path, query, body}) rather than a
 * separate HTTP port: one authenticated entrance, the gateway's.
 */
import { BrowserInputError, type ActRequest } from './actions.js';
import type { BrowserService, Caller, ScreenshotRequest } from './service.js';

export interface BrowserRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

/** `?interactive=true&depth=3` as typed values (the CLI and URLs send strings). */
function flag(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1' || value === '') return true;
  if (value === 'false' || value === '0') return false;
  throw new BrowserInputError(`expected true or false, got "${String(value)}"`);
}

function int(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(number) || number < 0)
    throw new BrowserInputError(`${name} must be a whole number >= 0, got "${String(value)}"`);
  return number;
}

function text(value: unknown, name: string, required = false): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (required) throw new BrowserInputError(`${name} is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw new BrowserInputError(`${name} must be a string`);
  return value;
}

export const ROUTES = [
  'GET /',
  'POST /start',
  'POST /stop',
  'GET /profiles',
  'GET /tabs',
  'POST /tabs/open',
  'POST /tabs/focus',
  'DELETE /tabs[/:targetId]',
  'GET /snapshot',
  'POST /screenshot',
  'POST /navigate',
  'POST /act',
  'POST /pdf',
];

export async function handleBrowserRequest(
  service: BrowserService,
  request: BrowserRequest,
  caller: Caller = {},
): Promise<Record<string, unknown>> {
  const query = request.query ?? {};
  const body = request.body ?? {};
  const who: Caller = {
    ...caller,
    profile: text(query.profile, 'profile') ?? text(body.profile, 'profile') ?? caller.profile,
  };
  const targetId = text(body.targetId, 'targetId') ?? text(query.targetId, 'targetId');
  const path = request.path.replace(/\/+$/, '') || '/';
  const route = `${request.method} ${path}`;
  switch (route) {
    case 'GET /':
      return service.status(who);
    case 'GET /profiles':
      return { profiles: service.profiles() };
    case 'POST /stop':
      return { ok: true, stopped: await service.runtime(who).stop() };
  }
  // Everything else uses the browser: counted as a call, so the idle timer waits for it.
  const runtime = service.runtime(who);
  return runtime.using(async () => {
    switch (route) {
      case 'POST /start':
        await runtime.start();
        return { ok: true, ...service.status(who) };
      case 'GET /tabs':
        return { tabs: await runtime.listTabs() };
      case 'POST /tabs/open':
        return { ok: true, tab: await runtime.open(text(body.url, 'url', true)!, text(body.label, 'label')) };
      case 'POST /tabs/focus':
        return { ok: true, tab: await runtime.focus(text(targetId, 'targetId', true)!) };
      case 'DELETE /tabs':
        return { ok: true, closed: await runtime.close() };
      case 'GET /snapshot':
        return service.snapshot(who, {
          targetId,
          interactive: flag(query.interactive),
          compact: flag(query.compact),
          depth: int(query.depth, 'depth'),
          labels: flag(query.labels),
          selector: text(query.selector, 'selector'),
          maxChars: int(query.maxChars, 'maxChars'),
        });
      case 'POST /screenshot':
        return {
          ok: true,
          ...(await service.screenshot(who, {
            targetId,
            fullPage: flag(body.fullPage),
            ref: text(body.ref, 'ref'),
            element: text(body.element, 'element'),
            type: text(body.type, 'type') as ScreenshotRequest['type'],
          })),
        };
      case 'POST /navigate':
        return { ok: true, ...(await service.navigate(who, text(body.url, 'url', true)!, targetId)) };
      case 'POST /act':
        if (typeof body.kind !== 'string')
          throw new BrowserInputError('act needs kind (click, type, fill, press, hover, select, wait)');
        return service.act(who, { ...(body as unknown as ActRequest), targetId });
      case 'POST /pdf':
        return { ok: true, ...(await service.pdf(who, targetId)) };
    }
    if (request.method === 'DELETE' && path.startsWith('/tabs/')) {
      return { ok: true, closed: await runtime.close(decodeURIComponent(path.slice('/tabs/'.length))) };
    }
    throw new BrowserInputError(`no browser route ${route} (routes: ${ROUTES.join(', ')})`);
  });
}
