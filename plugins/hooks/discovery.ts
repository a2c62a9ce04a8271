/**
 * Finding internal hooks: folders holding `HOOK.md` (YAML frontmatter) and a handler
 * (`handler.ts`, `handler.js`, `index.ts`, `index.js`, first found), in OpenClaw's
 * sources — bundled (shipped here), managed (`<stateDir>/hooks`), `hooks.internal.load.extraDirs`
 * and the workspace's `hooks/` — and judging each: enabled by config, requirements met,
 * events declared. Nothing here loads handler code.
 *
 * Precedence: a managed hook replaces a bundled one of the same name, an extra directory's
 * replaces both (the managed folder still wins over extra directories, later extra
 * directories over earlier ones). Workspace hooks may add names but never replace another
 * source's hook, and run only when enabled by name: the workspace is writable by the agent,
 * and a hook is code that runs inside the gateway.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join, resolve, sep } from 'node:path';
import { expandHome } from '../../sdk/index.js';

/** The YAML parser, loaded on the first HOOK.md read (not when the gateway starts). */
let yamlParse: ((text: string) => unknown) | undefined;
function parseYaml(text: string): unknown {
  yamlParse ??= (createRequire(import.meta.url)('yaml') as { parse: (text: string) => unknown }).parse;
  return yamlParse(text);
}

export type HookSource = 'bundled' | 'managed' | 'extra' | 'workspace';

export const KNOWN_EVENTS = [
  'command',
  'command:new',
  'command:reset',
  'command:stop',
  'agent',
  'agent:bootstrap',
  'gateway',
  'gateway:startup',
  'message',
  'message:received',
  'message:sent',
] as const;

const HANDLER_FILES = ['handler.ts', 'handler.js', 'index.ts', 'index.js'];

export interface HookRequirements {
  bins: string[];
  anyBins: string[];
  env: string[];
  config: string[];
  os: string[];
}

export interface DiscoveredHook {
  name: string;
  hookKey: string;
  description: string;
  source: HookSource;
  emoji?: string;
  homepage?: string;
  events: string[];
  unknownEvents: string[];
  export: string;
  always: boolean;
  requires: HookRequirements;
  /** The HOOK.md file and its folder. */
  filePath: string;
  baseDir: string;
  handlerPath?: string;
  /** A problem reading HOOK.md or finding the handler. */
  error?: string;
}

export interface HookStatus extends DiscoveredHook {
  enabledByConfig: boolean;
  requirementsSatisfied: boolean;
  missing: HookRequirements;
  loadable: boolean;
  blockedReason?: string;
  /** A hook of another source that this one replaced, or that replaced it. */
  shadowed?: string[];
}

export interface HookEntryConfig {
  enabled?: boolean;
  env?: Record<string, string>;
  [option: string]: unknown;
}

export interface InternalSection {
  enabled?: boolean;
  entries?: Record<string, HookEntryConfig>;
  load?: { extraDirs?: string[] };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.trim() !== '') : [];

/** The frontmatter of a HOOK.md as an object (throws with the reason when it is not one). */
export function parseFrontmatter(text: string): Record<string, unknown> {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text.replace(/^\uFEFF/, ''));
  if (!match) throw new Error('HOOK.md has no YAML frontmatter (--- … ---) at the top');
  const value = parseYaml(match[1]!) as unknown;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error('HOOK.md frontmatter is not a mapping');
  return value as Record<string, unknown>;
}

/** Reads one hook folder; undefined when it holds no HOOK.md. */
export function readHookDir(dir: string, source: HookSource): DiscoveredHook | undefined {
  const filePath = join(dir, 'HOOK.md');
  if (!existsSync(filePath)) return undefined;
  const folderName = dir.split(sep).filter(Boolean).pop() ?? dir;
  const base: DiscoveredHook = {
    name: folderName,
    hookKey: folderName,
    description: '',
    source,
    events: [],
    unknownEvents: [],
    export: 'default',
    always: false,
    requires: { bins: [], anyBins: [], env: [], config: [], os: [] },
    filePath,
    baseDir: dir,
  };
  let front: Record<string, unknown>;
  try {
    front = parseFrontmatter(readFileSync(filePath, 'utf8'));
  } catch (error) {
    return { ...base, error: (error as Error).message };
  }
  const openclaw = ((front.metadata as { openclaw?: unknown } | undefined)?.openclaw ?? {}) as Record<string, unknown>;
  const requires = (openclaw.requires ?? {}) as Record<string, unknown>;
  const name = typeof front.name === 'string' && front.name.trim() ? front.name.trim() : folderName;
  const events = strings(openclaw.events);
  const hook: DiscoveredHook = {
    ...base,
    name,
    hookKey: typeof openclaw.hookKey === 'string' && openclaw.hookKey.trim() ? openclaw.hookKey.trim() : name,
    description: typeof front.description === 'string' ? front.description : '',
    emoji: typeof openclaw.emoji === 'string' ? openclaw.emoji : undefined,
    homepage: [openclaw.homepage, front.homepage, front.website, front.url].find(
      (value): value is string => typeof value === 'string',
    ),
    events,
    unknownEvents: events.filter((event) => !(KNOWN_EVENTS as readonly string[]).includes(event)),
    export: typeof openclaw.export === 'string' && openclaw.export.trim() ? openclaw.export.trim() : 'default',
    always: openclaw.always === true,
    requires: {
      bins: strings(requires.bins),
      anyBins: strings(requires.anyBins),
      env: strings(requires.env),
      config: strings(requires.config),
      os: strings(openclaw.os),
    },
  };
  const handler = HANDLER_FILES.map((file) => join(dir, file)).find((file) => existsSync(file));
  if (!handler) return { ...hook, error: `no handler file (${HANDLER_FILES.join(', ')})` };
  // A handler must stay inside its folder, symlinks included.
  try {
    const real = realpathSync(handler);
    const root = realpathSync(dir);
    if (!real.startsWith(root + sep)) return { ...hook, error: `handler ${handler} resolves outside its hook folder` };
  } catch (error) {
    return { ...hook, error: (error as Error).message };
  }
  return { ...hook, handlerPath: handler };
}

function childDirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter(
        (entry) => entry.isDirectory() || (entry.isSymbolicLink() && statSync(join(dir, entry.name)).isDirectory()),
      )
      .map((entry) => join(dir, entry.name))
      .sort();
  } catch {
    return [];
  }
}

/** A collection folder's hooks; an extra directory may also be one hook itself. */
function scan(dir: string, source: HookSource, selfToo: boolean): DiscoveredHook[] {
  if (selfToo) {
    const own = readHookDir(dir, source);
    if (own) return [own];
  }
  return childDirs(dir).flatMap((child) => readHookDir(child, source) ?? []);
}

export interface DiscoveryRoots {
  bundledDir: string;
  managedDir: string;
  workspaceDir: string;
  extraDirs: readonly string[];
}

export interface Discovery {
  /** The hooks that won their name, in name order. */
  hooks: DiscoveredHook[];
  /** name → the hooks that lost it. */
  shadowed: Map<string, DiscoveredHook[]>;
}

export function discoverHooks(roots: DiscoveryRoots): Discovery {
  const byName = new Map<string, DiscoveredHook>();
  const shadowed = new Map<string, DiscoveredHook[]>();
  const lose = (hook: DiscoveredHook) => shadowed.set(hook.name, [...(shadowed.get(hook.name) ?? []), hook]);
  const put = (hook: DiscoveredHook) => {
    const previous = byName.get(hook.name);
    if (previous) lose(previous);
    byName.set(hook.name, hook);
  };
  // Lowest precedence first; each later source replaces earlier names.
  scan(roots.bundledDir, 'bundled', false).forEach(put);
  for (const dir of roots.extraDirs) scan(resolve(expandHome(dir)), 'extra', true).forEach(put);
  scan(roots.managedDir, 'managed', false).forEach(put);
  for (const hook of scan(join(roots.workspaceDir, 'hooks'), 'workspace', false)) {
    if (byName.has(hook.name)) lose(hook);
    else byName.set(hook.name, hook);
  }
  return { hooks: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), shadowed };
}

// ── Eligibility ─────────────────────────────────────────────────────────────────

const binCache = new Map<string, boolean>();

export function hasBinary(name: string, env: Readonly<Record<string, string | undefined>>): boolean {
  const key = `${name}\u0000${env.PATH ?? ''}`;
  const cached = binCache.get(key);
  if (cached !== undefined) return cached;
  let found = false;
  if (name.includes('/')) found = existsSync(name);
  else {
    for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
      if (existsSync(join(dir, name))) {
        found = true;
        break;
      }
    }
    if (!found && process.platform === 'win32') {
      try {
        execFileSync('where', [name], { stdio: 'ignore' });
        found = true;
      } catch {
        found = false;
      }
    }
  }
  binCache.set(key, found);
  return found;
}

function configTruthy(config: Record<string, unknown>, path: string): boolean {
  // OpenClaw's historical requirement paths that default to on.
  const defaultsOn = ['workspace.dir', 'browser.enabled', 'browser.evaluateEnabled'];
  let value: unknown = config;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') {
      value = undefined;
      break;
    }
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined && defaultsOn.includes(path)) return true;
  return Boolean(value);
}

export function entryFor(
  internal: InternalSection,
  hook: Pick<DiscoveredHook, 'name' | 'hookKey'>,
): HookEntryConfig | undefined {
  return internal.entries?.[hook.hookKey] ?? internal.entries?.[hook.name];
}

/** Per-hook judgement as `claw hooks list` shows it (not the gateway's global selection). */
export function hookStatus(
  hook: DiscoveredHook,
  internal: InternalSection,
  config: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): HookStatus {
  const entry = entryFor(internal, hook);
  const missing: HookRequirements = { bins: [], anyBins: [], env: [], config: [], os: [] };
  if (hook.requires.os.length > 0 && !hook.requires.os.includes(process.platform)) missing.os = hook.requires.os;
  if (!hook.always) {
    missing.bins = hook.requires.bins.filter((bin) => !hasBinary(bin, env));
    if (hook.requires.anyBins.length > 0 && !hook.requires.anyBins.some((bin) => hasBinary(bin, env)))
      missing.anyBins = hook.requires.anyBins;
    missing.env = hook.requires.env.filter((name) => !env[name]?.trim() && !entry?.env?.[name]?.trim());
    missing.config = hook.requires.config.filter((path) => !configTruthy(config, path));
  }
  const requirementsSatisfied = Object.values(missing).every((list) => list.length === 0);
  const enabledByConfig =
    entry?.enabled === false ? false : hook.source === 'workspace' ? entry?.enabled === true : true;
  let blockedReason: string | undefined;
  if (hook.error) blockedReason = hook.error;
  else if (!enabledByConfig)
    blockedReason =
      hook.source === 'workspace' && entry?.enabled !== false
        ? 'workspace hook (disabled by default)'
        : 'disabled in config';
  else if (!requirementsSatisfied) blockedReason = `missing requirements: ${describeMissing(missing)}`;
  else if (hook.events.length === 0) blockedReason = 'no events defined';
  return {
    ...hook,
    enabledByConfig,
    requirementsSatisfied,
    missing,
    loadable: blockedReason === undefined,
    ...(blockedReason ? { blockedReason } : {}),
  };
}

export function describeMissing(missing: HookRequirements): string {
  const parts: string[] = [];
  if (missing.bins.length) parts.push(`bins ${missing.bins.join(', ')}`);
  if (missing.anyBins.length) parts.push(`one of ${missing.anyBins.join(', ')}`);
  if (missing.env.length) parts.push(`env ${missing.env.join(', ')}`);
  if (missing.config.length) parts.push(`config ${missing.config.join(', ')}`);
  if (missing.os.length) parts.push(`os ${missing.os.join('/')} (this is ${process.platform})`);
  return parts.join('; ');
}

/**
 * The gateway's selection (OpenClaw's table): the master switch off, or nothing asking for
 * hooks, loads none; named entries form an allowlist; `enabled: true` alone, or extra
 * directories, open discovery to every loadable hook.
 */
export function selectHooks(statuses: readonly HookStatus[], internal: InternalSection): HookStatus[] {
  const selection = selectionOf(internal);
  if (selection === 'none') return [];
  return statuses.filter(
    (hook) =>
      hook.loadable && (selection === 'open' || selection.includes(hook.name) || selection.includes(hook.hookKey)),
  );
}

/** Which hooks the config asks for: none, every loadable one ("open"), or these names and keys. */
export function selectionOf(internal: InternalSection): 'none' | 'open' | string[] {
  if (internal.enabled === false) return 'none';
  const named = Object.entries(internal.entries ?? {})
    .filter(([, entry]) => entry?.enabled !== false)
    .map(([key]) => key);
  if ((internal.enabled === true && named.length === 0) || (internal.load?.extraDirs ?? []).length > 0) return 'open';
  return named.length === 0 ? 'none' : named;
}
