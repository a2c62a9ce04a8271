/**
 * Reading one plugin directory's `openclaw.plugin.json` without running any plugin code:
 * parse (JSON5), check it (the kernel's checkManifest: manifest schema, usable config
 * schemas), and find the entry module while refusing paths that leave the plugin root.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { checkManifest, parseJson5, SLOT_NAMES, type ManifestResult, type PluginManifest } from '../kernel/index.js';
import { manifestSlots } from '../kernel/plugin-host/manifest.js';
import { isInside } from '../kernel/util/paths.js';

export const MANIFEST_FILE = 'openclaw.plugin.json';
/** Manifests (and the package.json read for an entry) are small: a bigger file is refused unread (60 MB took 11.6 s to parse). */
export const MAX_MANIFEST_BYTES = 256 * 1024;

const DEFAULT_ENTRIES = ['index.js', 'index.mjs', 'index.ts', 'index.mts'];

/**
 * The build's record of every bundled plugin's checked manifest (scripts/postbuild.mjs writes
 * it beside them): a bundled plugin whose manifest and package.json are byte for byte what
 * the build checked is not parsed and checked again at every start. Keyed by content, not
 * mtime, because npm rewrites mtimes on install; files whose identity (inode, size, mtime,
 * ctime) is still the one the build saw are taken as unchanged without reading them.
 */
export const MANIFEST_REGISTRY = 'manifests.json';

export interface RegistryEntry {
  /** manifestKey() of the files the result was read from. */
  key: string;
  /** fileIdentity() of those files when the build read them. */
  identity?: string;
  /** The result, its entry path relative to the plugin directory. */
  result: ManifestResult;
}

/**
 * A bundled folder's registry as read from disk. A boot takes its results as they are; a
 * later boot in the same process (a restart, a config check) that asks for a result already
 * handed out parses the text again, so no boot sees what another changed.
 */
interface LoadedRegistry {
  text: string;
  plugins: Record<string, RegistryEntry>;
  given: Set<string>;
}
const registries = new Map<string, LoadedRegistry | null>();
/** manifestKey's answers in this process, by the files' identity. */
const keys = new Map<string, { identity: string; key: string | undefined }>();

const manifestFiles = (dir: string) => [join(dir, MANIFEST_FILE), join(dir, 'package.json')];

/** Inode, size, mtime and ctime of the files readManifest reads: any write changes it. */
export function fileIdentity(dir: string): string {
  return manifestFiles(dir)
    .map((file) => {
      const stat = statSync(file, { throwIfNoEntry: false });
      return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}` : '-';
    })
    .join('|');
}

/** Hash of the files readManifest reads (the manifest, and package.json when there is one). */
export function manifestKey(dir: string, identity = fileIdentity(dir)): string | undefined {
  const files = manifestFiles(dir);
  const known = keys.get(dir);
  if (known?.identity === identity) return known.key;
  let key: string | undefined;
  try {
    const hash = createHash('sha256').update(readFileSync(files[0]!));
    if (existsSync(files[1]!)) hash.update('\0package.json\0').update(readFileSync(files[1]!));
    key = hash.digest('hex');
  } catch {
    key = undefined;
  }
  keys.set(dir, { identity, key });
  return key;
}

function loadRegistry(root: string, text?: string): LoadedRegistry | null {
  try {
    text ??= readFileSync(join(root, MANIFEST_REGISTRY), 'utf8');
    const { plugins } = JSON.parse(text) as { plugins: Record<string, RegistryEntry> };
    return { text, plugins, given: new Set() };
  } catch {
    return null; // running from source, or a damaged file: read every manifest
  }
}

function fromRegistry(dir: string): ManifestResult | undefined {
  const root = dirname(dir);
  const name = basename(dir);
  let registry = registries.has(root) ? registries.get(root)! : loadRegistry(root);
  if (registry?.given.has(name)) registry = loadRegistry(root, registry.text);
  registries.set(root, registry);
  const entry = registry?.plugins[name];
  if (!entry) return undefined;
  const identity = fileIdentity(dir);
  if (entry.identity !== identity && entry.key !== manifestKey(dir, identity)) return undefined;
  registry!.given.add(name);
  const result = entry.result;
  if (!result.ok) return result;
  // Written by the build from a checked manifest; refused anyway if it would leave the plugin.
  const entryPath = resolve(dir, result.entryPath);
  if (isAbsolute(result.entryPath) || !isInside(dir, entryPath)) return undefined;
  return { ...result, entryPath };
}

/**
 * Read and check a plugin directory's manifest. `bundled`: the directory is one of the
 * install's own plugins, whose build-time record may stand in for the check.
 */
export function readManifest(dir: string, options: { bundled?: boolean } = {}): ManifestResult {
  if (options.bundled) {
    const known = fromRegistry(dir);
    if (known) return known;
  }
  const file = join(dir, MANIFEST_FILE);
  let data: unknown;
  try {
    if (statSync(file).size > MAX_MANIFEST_BYTES)
      throw new RangeError(`${file} is over the ${MAX_MANIFEST_BYTES >> 10} KiB manifest cap`);
    data = parseJson5(readFileSync(file, 'utf8'), MANIFEST_FILE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, error: `${MANIFEST_FILE} not found` };
    return { ok: false, error: code ? `cannot read ${MANIFEST_FILE}: ${String(error)}` : (error as Error).message };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    return { ok: false, error: `${MANIFEST_FILE} must contain a JSON object` };
  const raw = data as Record<string, unknown>;
  const id = typeof raw.id === 'string' ? raw.id : undefined;
  const fail = (error: string): ManifestResult => ({ ok: false, error: `${MANIFEST_FILE}: ${error}`, id });
  const checked = checkManifest(raw);
  if (typeof checked === 'string') return fail(checked);
  const pkg = readPackageJson(dir);
  // Many plugins (OpenClaw's among them) keep their version only in package.json.
  const version = checked.manifest.version ?? (typeof pkg?.version === 'string' ? pkg.version : undefined);
  const manifest = version === checked.manifest.version ? checked.manifest : { ...checked.manifest, version };
  const entry = resolveEntry(manifest, dir, pkg);
  if (!entry.ok) return fail(entry.error);
  return {
    ok: true,
    ...checked,
    manifest,
    warnings: [...checked.warnings, ...kindNotes(manifest)],
    entryPath: entry.path,
  };
}

/** OpenClaw kinds (its plugins.slots.contextEngine, …) that claw has no slot for: named, not refused. */
function kindNotes(manifest: PluginManifest): string[] {
  const kinds: string[] = manifest.kind === undefined ? [] : [manifest.kind].flat();
  const slots = manifestSlots(manifest);
  return kinds
    .filter((kind) => !(slots as string[]).includes(kind))
    .map(
      (kind) =>
        `kind "${kind}" is an OpenClaw plugin kind claw does not implement (claw's slots: ${SLOT_NAMES.join(', ')}); the plugin loads, but nothing uses it as a ${kind}`,
    );
}

function resolveEntry(
  manifest: PluginManifest,
  dir: string,
  pkg: PackageJson | undefined,
): { ok: true; path: string } | { ok: false; error: string } {
  const first = Array.isArray(pkg?.openclaw?.extensions) ? pkg.openclaw.extensions[0] : undefined;
  const declared = manifest.entry ?? (typeof first === 'string' ? first : undefined);
  if (declared === undefined) {
    const found = DEFAULT_ENTRIES.find((name) => existsSync(join(dir, name)));
    if (!found) return { ok: false, error: `no entry module: set "entry" or add one of ${DEFAULT_ENTRIES.join(', ')}` };
    return { ok: true, path: join(dir, found) };
  }
  if (isAbsolute(declared))
    return { ok: false, error: `entry "${declared}" must be a path relative to the plugin directory` };
  const path = resolve(dir, declared);
  if (!isInside(dir, path)) return { ok: false, error: `entry "${declared}" points outside the plugin directory` };
  if (!existsSync(path)) return { ok: false, error: `entry file "${declared}" not found` };
  const real = realpathSync.native; // nor may a symlink lead out: Node's own realpath folds "a/link/.." before following "link"
  if (!isInside(real(dir), real(path)))
    return { ok: false, error: `entry "${declared}" resolves outside the plugin directory` };
  return { ok: true, path };
}

/** OpenClaw packages name their entry in package.json `openclaw.extensions`. */
interface PackageJson {
  version?: unknown;
  openclaw?: { extensions?: unknown };
}

function readPackageJson(dir: string): PackageJson | undefined {
  const file = join(dir, 'package.json');
  try {
    if (statSync(file).size > MAX_MANIFEST_BYTES) return undefined;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return pkg !== null && typeof pkg === 'object' ? (pkg as PackageJson) : undefined;
  } catch {
    return undefined;
  }
}
