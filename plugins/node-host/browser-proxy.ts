/**
 * OpenClaw's `browser.proxy` node command: a gateway drives the browser on this node with
 * the browser control routes ({method, path, query, body, profile, timeoutMs} → {result,
 * files?}), answered by claw's browser plugin through its "browser" service. Files a route
 * leaves on this machine (a screenshot, a PDF) travel back as base64 with the result, as
 * OpenClaw's node host sends them. `nodeHost.browserProxy.allowProfiles` narrows which
 * profiles a caller may use; `enabled: false` turns the command off.
 */
import { existsSync, promises as fs } from 'node:fs';
import { extname } from 'node:path';
import { expandHome, type KernelServices } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import { CommandRefusal, type NodeCommandContext, type NodeCommandHandler } from './extra-command-types.js';

export const BROWSER_PROXY_COMMAND = 'browser.proxy';

/** What the browser plugin's "browser" service offers the proxy (its own type stays in that plugin). */
export interface BrowserServiceApi {
  service: {
    /** Throws when no Chromium can be found or the config is wrong; launches nothing. */
    status(caller?: { profile?: string }): Record<string, unknown>;
  };
  request(request: {
    method: 'GET' | 'POST' | 'DELETE';
    path: string;
    query?: Record<string, unknown>;
    body?: Record<string, unknown>;
  }): Promise<Record<string, unknown>>;
}

/** OpenClaw's defaults and limits for a proxied call and the files it returns. */
export const BROWSER_PROXY_DEFAULT_TIMEOUT_MS = 20_000;
const MAX_FILE_BYTES = 10 * 1024 * 1024;
const MAX_TOTAL_FILE_BYTES = 16 * 1024 * 1024;

type Service = Pick<KernelServices, 'capabilities'>;

/** Where the browser plugin looks for Chromium when browser.executablePath is not set. */
const CHROMIUM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
];

/**
 * A browser is present: the browser plugin is on, browser.enabled is not false, and a
 * Chromium is on disk. Decided without loading the plugin (nothing is launched, playwright
 * is not imported) because the node declares its commands when it connects.
 */
export function browserPresent(kernel: Pick<KernelServices, 'config' | 'plugins'>): boolean {
  const plugin = kernel.plugins().find((record) => record.id === 'browser');
  if (!plugin?.enabled || plugin.status === 'failed') return false;
  const section = (kernel.config() as { browser?: { enabled?: boolean; executablePath?: string } }).browser ?? {};
  if (section.enabled === false) return false;
  return section.executablePath
    ? existsSync(expandHome(section.executablePath))
    : CHROMIUM_PATHS.some((path) => existsSync(path));
}

function object(value: unknown, what: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new CommandRefusal('INVALID_REQUEST', `browser.proxy ${what} must be an object`);
  return value as Record<string, unknown>;
}

/** OpenClaw's route forms that change persistent profiles, which a remote caller may not do. */
function mutatesProfiles(method: string, path: string): boolean {
  return (method === 'POST' && path === '/profiles/create') || (method === 'DELETE' && path.startsWith('/profiles/'));
}

function filePaths(result: Record<string, unknown>): string[] {
  const paths = new Set<string>();
  const take = (owner: unknown, key: string) => {
    const value = (owner as Record<string, unknown> | undefined)?.[key];
    if (typeof value === 'string' && value.trim()) paths.add(value.trim());
  };
  take(result, 'path');
  take(result, 'imagePath');
  take(result.download, 'path');
  if (Array.isArray(result.downloads)) for (const entry of result.downloads) take(entry, 'path');
  return [...paths];
}

const FILE_MIME: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
};

async function readFiles(paths: string[]): Promise<Array<{ path: string; base64: string; mimeType: string }>> {
  const files = [];
  let total = 0;
  for (const path of paths) {
    const bytes = await fs.readFile(path).catch((error: Error) => {
      throw new CommandRefusal('UNAVAILABLE', `browser proxy could not read ${path}: ${error.message}`);
    });
    total += bytes.length;
    if (bytes.length > MAX_FILE_BYTES || total > MAX_TOTAL_FILE_BYTES)
      throw new CommandRefusal(
        'UNAVAILABLE',
        `browser proxy file ${path} is too large to return (${MAX_FILE_BYTES} bytes per file, ${MAX_TOTAL_FILE_BYTES} in all)`,
      );
    files.push({
      path,
      base64: bytes.toString('base64'),
      mimeType: FILE_MIME[extname(path).toLowerCase()] ?? 'application/octet-stream',
    });
  }
  return files;
}

async function withDeadline<T>(work: Promise<T>, timeoutMs: number, signal: AbortSignal, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new CommandRefusal('TIMEOUT', `browser proxy timed out for ${what} after ${timeoutMs}ms`)),
          timeoutMs,
        );
        onAbort = () => reject(new CommandRefusal('CANCELLED', `browser proxy call ${what} was cancelled`));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

export function browserProxy(kernel: Service): NodeCommandHandler {
  return async (input: unknown, ctx: NodeCommandContext) => {
    const params = object(input, 'params') ?? {};
    const settings = ctx.config.browserProxy ?? {};
    if (settings.enabled === false)
      throw new CommandRefusal(
        'UNAVAILABLE',
        'the browser proxy is off on this node (nodeHost.browserProxy.enabled is false)',
      );
    if (params.upload !== undefined)
      throw new CommandRefusal('INVALID_REQUEST', 'browser.proxy does not take uploads on this node');
    const rawPath = typeof params.path === 'string' ? params.path.trim() : '';
    if (!rawPath)
      throw new CommandRefusal('INVALID_REQUEST', 'browser.proxy needs path (a browser route such as /tabs)');
    const path = `/${rawPath.replace(/^\/+/, '')}`.replace(/(.)\/+$/, '$1');
    const method = typeof params.method === 'string' ? params.method.trim().toUpperCase() : 'GET';
    if (method !== 'GET' && method !== 'POST' && method !== 'DELETE')
      throw new CommandRefusal('INVALID_REQUEST', `browser.proxy method must be GET, POST or DELETE, not "${method}"`);
    if (mutatesProfiles(method, path))
      throw new CommandRefusal('INVALID_REQUEST', 'browser.proxy cannot create or delete persistent browser profiles');
    const query: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(object(params.query, 'query') ?? {}))
      if (value !== undefined && value !== null) query[key] = typeof value === 'string' ? value : String(value);
    const body = object(params.body, 'body');
    const named = [params.profile, query.profile, body?.profile].find(
      (value): value is string => typeof value === 'string' && value.trim() !== '',
    );
    if (named) query.profile = named.trim();

    const browser = await useService<BrowserServiceApi>(kernel, 'browser');
    if (!browser || typeof browser.request !== 'function')
      throw new CommandRefusal('UNAVAILABLE', 'no browser on this node (the browser plugin is off)');
    const allow = (settings.allowProfiles ?? []).map((name) => name.trim()).filter(Boolean);
    if (allow.length > 0 && path !== '/profiles') {
      const profile = named?.trim() ?? String(browser.service.status().profile ?? '');
      if (!allow.includes(profile))
        throw new CommandRefusal(
          'INVALID_REQUEST',
          `browser profile "${profile}" is not allowed through this node's proxy (nodeHost.browserProxy.allowProfiles: ${allow.join(', ')})`,
        );
    }
    const timeoutMs =
      typeof params.timeoutMs === 'number' && Number.isFinite(params.timeoutMs) && params.timeoutMs > 0
        ? Math.floor(params.timeoutMs)
        : BROWSER_PROXY_DEFAULT_TIMEOUT_MS;
    ctx.signal.throwIfAborted();
    let result: Record<string, unknown>;
    try {
      result = await withDeadline(
        browser.request({ method, path, query, ...(body ? { body } : {}) }),
        timeoutMs,
        ctx.signal,
        `${method} ${path}`,
      );
    } catch (error) {
      if (error instanceof CommandRefusal) throw error;
      // The browser plugin's input errors (an unknown route, a bad field) are the caller's to fix.
      const message = (error as Error).message;
      const code =
        (error as Error).constructor?.name === 'BrowserInputError' || message.startsWith('unknown browser profile')
          ? 'INVALID_REQUEST'
          : 'UNAVAILABLE';
      throw new CommandRefusal(code, `browser ${method} ${path}: ${message.split('\n')[0]}`);
    }
    if (allow.length > 0 && path === '/profiles' && Array.isArray(result.profiles))
      result = {
        ...result,
        profiles: result.profiles.filter((entry: { name?: unknown }) => allow.includes(String(entry?.name))),
      };
    const paths = filePaths(result);
    return paths.length > 0 ? { result, files: await readFiles(paths) } : { result };
  };
}
