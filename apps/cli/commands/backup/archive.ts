/**
 * claw's backup archive: a gzipped tar of `<root>/payload/<asset>/…` (the state dir, the
 * config when it lives elsewhere, workspaces and agent folders outside the state dir) with
 * `<root>/manifest.json` last, listing every entry's path, type, mode, size and SHA-256.
 *
 * Verify reads the whole archive and checks it against the manifest; restore verifies
 * first, then extracts each asset into a temporary sibling of its destination, checks every
 * hash again as it writes, and only then renames it into place — a failure leaves what
 * was there untouched. Entries other than files and folders (links, devices) and paths
 * that are absolute or climb out with ".." are refused.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { isInside } from '../../../../kernel/util/paths.js';
import { clawVersion } from '../../../../sdk/version.js';
import { ensurePrivateDir } from '../../../../sdk/fs.js';
import { runningGateway, type Locations } from '../maintenance/locations.js';
import { readTar, TarFormatError, TarWriter, type TarEntry } from './tar.js';

export const MANIFEST_FORMAT = 'claw-backup';

export interface BackupAsset {
  id: string;
  kind: 'state' | 'config' | 'workspace' | 'agent';
  type: 'dir' | 'file';
  sourcePath: string;
  /** Below the archive root: payload/<id> (a file asset: payload/<id>/<file name>). */
  archivePath: string;
}

export interface ManifestEntry {
  /** Below the archive root. */
  path: string;
  type: 'file' | 'dir';
  /** Permission bits, octal ("0600"). */
  mode: string;
  size?: number;
  sha256?: string;
}

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  schemaVersion: 1;
  createdAt: string;
  clawVersion: string;
  archiveRoot: string;
  assets: BackupAsset[];
  entries: ManifestEntry[];
  /** What was left out on purpose (caches, logs), relative to the state dir. */
  excluded: string[];
  /** What could not be archived (symlinks, sockets, files that vanished), with why. */
  skipped: Array<{ path: string; reason: string }>;
}

export interface CreateOptions {
  output?: string;
  includeWorkspace: boolean;
  onlyConfig: boolean;
  includeLogs: boolean;
  dryRun: boolean;
  cwd: string;
  home: string;
  now?: Date;
}

export class BackupError extends Error {}

const mode = (stats: Stats) => stats.mode & 0o777;
const octal = (bits: number) => bits.toString(8).padStart(4, '0');
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Caches and runtime files under the state dir that a restore does not need (relative paths). */
function stateExclusions(locs: Locations, options: CreateOptions): { dirs: Set<string>; excluded: string[] } {
  const dirs = new Set(['runtime-deps', 'cache', ...(options.includeLogs ? [] : ['logs'])]);
  if (!options.includeWorkspace) {
    for (const workspace of locs.workspaces)
      if (isInside(locs.stateDir, workspace) && workspace !== locs.stateDir)
        dirs.add(relative(locs.stateDir, workspace));
  }
  const excluded = [...dirs].map((dir) => `${dir}/`);
  excluded.push(
    'gateway.lock and other *.lock files',
    'extensions/*/node_modules/',
    'temporary files of interrupted writes',
  );
  return { dirs, excluded };
}

function skipInState(rel: string, isDir: boolean, dirs: Set<string>): boolean {
  const parts = rel.split(sep);
  const name = parts.at(-1)!;
  if (isDir) return dirs.has(rel) || (parts.length === 3 && parts[0] === 'extensions' && name === 'node_modules');
  return (parts.length === 1 && name.endsWith('.lock')) || /^\..+\.tmp$/.test(name);
}

export function planAssets(
  locs: Locations,
  options: Pick<CreateOptions, 'onlyConfig' | 'includeWorkspace'>,
): BackupAsset[] {
  const configAsset: BackupAsset = {
    id: 'config',
    kind: 'config',
    type: 'file',
    sourcePath: locs.configPath,
    archivePath: `payload/config/${basename(locs.configPath)}`,
  };
  if (options.onlyConfig) {
    if (!existsSync(locs.configPath)) throw new BackupError(`there is no config file at ${locs.configPath}`);
    return [configAsset];
  }
  if (!existsSync(locs.stateDir))
    throw new BackupError(`there is no state dir at ${locs.stateDir}: nothing to back up`);
  const assets: BackupAsset[] = [
    { id: 'state', kind: 'state', type: 'dir', sourcePath: locs.stateDir, archivePath: 'payload/state' },
  ];
  if (!isInside(locs.stateDir, locs.configPath) && existsSync(locs.configPath)) assets.push(configAsset);
  const outside = (dirs: string[]) =>
    dirs.filter((dir) => !isInside(locs.stateDir, dir) && existsSync(dir) && statSync(dir).isDirectory());
  let n = 0;
  if (options.includeWorkspace)
    for (const dir of outside(locs.workspaces)) {
      const id = `workspace-${++n}`;
      assets.push({ id, kind: 'workspace', type: 'dir', sourcePath: dir, archivePath: `payload/${id}` });
    }
  n = 0;
  for (const dir of outside(locs.agentDirs)) {
    const id = `agent-${++n}`;
    assets.push({ id, kind: 'agent', type: 'dir', sourcePath: dir, archivePath: `payload/${id}` });
  }
  return assets;
}

interface Walked {
  abs: string;
  /** Below the asset root ('' for the root itself). */
  rel: string;
  stats: Stats;
}

/** Folders before their contents; symlinks and special files are reported, not followed. */
function* walk(
  root: string,
  skip: (rel: string, isDir: boolean) => boolean,
  skipped: BackupManifest['skipped'],
  rel = '',
): Generator<Walked> {
  const abs = rel ? join(root, rel) : root;
  let stats: Stats;
  try {
    stats = lstatSync(abs);
  } catch {
    skipped.push({ path: abs, reason: 'vanished while the backup ran' });
    return;
  }
  if (stats.isSymbolicLink()) {
    skipped.push({ path: abs, reason: 'a symbolic link (links are not archived)' });
    return;
  }
  if (!stats.isDirectory() && !stats.isFile()) {
    skipped.push({ path: abs, reason: 'not a regular file or folder' });
    return;
  }
  if (rel && skip(rel, stats.isDirectory())) return;
  yield { abs, rel, stats };
  if (!stats.isDirectory()) return;
  let names: string[];
  try {
    names = readdirSync(abs).sort();
  } catch (error) {
    skipped.push({ path: abs, reason: `cannot be read: ${(error as Error).message}` });
    return;
  }
  for (const name of names) yield* walk(root, skip, skipped, rel ? join(rel, name) : name);
}

function stamp(now: Date): string {
  return now.toISOString().replace(/:/g, '-');
}

/** Where the archive goes: `--output` (a file, or a folder to put it in), else the cwd (the home folder when the cwd is backed up). */
function outputPath(assets: BackupAsset[], options: CreateOptions, name: string): string {
  const inSources = (path: string) => assets.some((asset) => asset.type === 'dir' && isInside(asset.sourcePath, path));
  let path: string;
  if (options.output) {
    const given = resolve(options.cwd, options.output);
    path =
      options.output.endsWith('/') || (existsSync(given) && statSync(given).isDirectory()) ? join(given, name) : given;
  } else path = join(inSources(options.cwd) ? options.home : options.cwd, name);
  if (inSources(path))
    throw new BackupError(`${path} is inside what is being backed up; choose an --output outside it`);
  if (existsSync(path)) throw new BackupError(`${path} exists; backups never overwrite a file`);
  return path;
}

export interface CreateResult {
  archive: string;
  manifest: BackupManifest;
  bytes?: number;
}

export async function createBackup(locs: Locations, options: CreateOptions): Promise<CreateResult> {
  const now = options.now ?? new Date();
  const root = `${stamp(now)}-openclaw-backup`;
  const assets = planAssets(locs, options);
  const archive = outputPath(assets, options, `${root}.tar.gz`);
  const { dirs, excluded } = stateExclusions(locs, options);
  const manifest: BackupManifest = {
    format: MANIFEST_FORMAT,
    schemaVersion: 1,
    createdAt: now.toISOString(),
    clawVersion: clawVersion(),
    archiveRoot: root,
    assets,
    entries: [],
    excluded: assets.some((asset) => asset.kind === 'state') ? excluded : [],
    skipped: [],
  };
  const items = function* () {
    for (const asset of assets) {
      const skip =
        asset.kind === 'state' ? (rel: string, isDir: boolean) => skipInState(rel, isDir, dirs) : () => false;
      for (const item of walk(asset.sourcePath, skip, manifest.skipped)) {
        const path =
          asset.type === 'file'
            ? asset.archivePath
            : [asset.archivePath, ...item.rel.split(sep)].filter(Boolean).join('/');
        yield { asset, item, path };
      }
    }
  };
  if (options.dryRun) {
    for (const { item, path } of items())
      manifest.entries.push({
        path,
        type: item.stats.isDirectory() ? 'dir' : 'file',
        mode: octal(mode(item.stats)),
        ...(item.stats.isFile() ? { size: item.stats.size } : {}),
      });
    return { archive, manifest };
  }

  ensurePrivateDir(dirname(archive));
  const temp = join(dirname(archive), `.${basename(archive)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const file = createWriteStream(temp, { mode: 0o600, flags: 'wx' });
  const gzip = createGzip();
  gzip.pipe(file);
  const tar = new TarWriter(gzip);
  try {
    for (const { item, path } of items()) {
      const mtime = item.stats.mtimeMs;
      if (item.stats.isDirectory()) {
        await tar.dir(`${root}/${path}`, mode(item.stats), mtime);
        manifest.entries.push({ path, type: 'dir', mode: octal(mode(item.stats)) });
        continue;
      }
      let data: Buffer;
      try {
        data = readFileSync(item.abs);
      } catch (error) {
        manifest.skipped.push({ path: item.abs, reason: `cannot be read: ${(error as Error).message}` });
        continue;
      }
      await tar.file(`${root}/${path}`, data, mode(item.stats), mtime);
      manifest.entries.push({
        path,
        type: 'file',
        mode: octal(mode(item.stats)),
        size: data.length,
        sha256: sha256(data),
      });
    }
    await tar.file(
      `${root}/manifest.json`,
      Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
      0o600,
      now.getTime(),
    );
    await tar.end();
    gzip.end();
    await finished(file);
    renameSync(temp, archive);
  } catch (error) {
    gzip.destroy();
    file.destroy();
    rmSync(temp, { force: true });
    throw error;
  }
  return { archive, manifest, bytes: statSync(archive).size };
}

// ── Reading an archive ──────────────────────────────────────────────────────────────

/** Why an archive path is refused, or undefined when it is a plain relative path. */
function unsafePath(path: string): string | undefined {
  if (path.includes('\0')) return 'has a NUL byte';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'is absolute';
  if (path.includes('\\')) return 'has a backslash';
  const parts = path.replace(/\/$/, '').split('/');
  if (parts.includes('..')) return 'climbs out with ".."';
  if (parts.some((part) => part === '' || part === '.')) return 'has an empty or "." segment';
  return undefined;
}

const TYPE_NAMES: Record<string, string> = {
  '1': 'a hard link',
  '2': 'a symbolic link',
  '3': 'a character device',
  '4': 'a block device',
  '6': 'a FIFO',
  g: 'a global pax header',
  L: 'a GNU long-name entry',
  K: 'a GNU long-link entry',
};

export interface Inspection {
  manifest?: BackupManifest;
  problems: string[];
  files: number;
  bytes: number;
}

/** Read the whole archive: every path safe, every entry a file or folder, and the manifest matching what is there. */
export async function verifyArchive(
  archive: string,
  onEntry?: (entry: TarEntry, path: string) => void,
): Promise<Inspection> {
  const problems: string[] = [];
  const seen = new Map<string, { type: 'file' | 'dir'; mode: number; size: number; sha256?: string }>();
  let root: string | undefined;
  let manifestText: string | undefined;
  let files = 0;
  let bytes = 0;
  if (!existsSync(archive)) throw new BackupError(`${archive} does not exist`);
  try {
    const input = createReadStream(archive).pipe(createGunzip());
    for await (const entry of readTar(input)) {
      const refused = unsafePath(entry.path);
      if (refused) {
        problems.push(`entry "${entry.path}" ${refused}: refused`);
        continue;
      }
      const path = entry.path.replace(/\/$/, '');
      const [top, ...rest] = path.split('/');
      root ??= top;
      if (top !== root) {
        problems.push(`entry "${entry.path}" is outside the archive root "${root}/"`);
        continue;
      }
      const inner = rest.join('/');
      if (entry.type === 'other') {
        problems.push(
          `entry "${entry.path}" is ${TYPE_NAMES[entry.typeflag] ?? `of type "${entry.typeflag}"`}: refused`,
        );
        continue;
      }
      if (inner === 'manifest.json' && entry.type === 'file') {
        if (manifestText !== undefined) problems.push('the archive has more than one manifest.json');
        manifestText = entry.data.toString('utf8');
        continue;
      }
      if (seen.has(inner)) problems.push(`entry "${entry.path}" appears twice`);
      seen.set(inner, {
        type: entry.type,
        mode: entry.mode & 0o777,
        size: entry.size,
        ...(entry.type === 'file' ? { sha256: sha256(entry.data) } : {}),
      });
      if (entry.type === 'file') (files++, (bytes += entry.size));
      onEntry?.(entry, inner);
    }
  } catch (error) {
    if (error instanceof TarFormatError || (error as NodeJS.ErrnoException).code?.startsWith('Z_'))
      return { problems: [...problems, `not a readable claw backup: ${(error as Error).message}`], files, bytes };
    throw error;
  }
  if (manifestText === undefined) return { problems: [...problems, 'the archive has no manifest.json'], files, bytes };
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(manifestText) as BackupManifest;
  } catch (error) {
    return { problems: [...problems, `manifest.json is not JSON: ${(error as Error).message}`], files, bytes };
  }
  if (
    manifest.format !== MANIFEST_FORMAT ||
    manifest.schemaVersion !== 1 ||
    !Array.isArray(manifest.entries) ||
    !Array.isArray(manifest.assets)
  )
    return {
      problems: [...problems, 'manifest.json is not a claw backup manifest (format claw-backup, schemaVersion 1)'],
      files,
      bytes,
    };
  for (const asset of manifest.assets) {
    const refused = unsafePath(asset.archivePath ?? '');
    if (refused || !asset.archivePath.startsWith('payload/'))
      problems.push(`asset "${asset.id}" has an archive path that ${refused ?? 'is not under payload/'}`);
  }
  const listed = new Set<string>();
  for (const expected of manifest.entries) {
    listed.add(expected.path);
    const actual = seen.get(expected.path);
    if (!actual) {
      problems.push(`${expected.path}: listed in the manifest, missing from the archive`);
      continue;
    }
    if (actual.type !== expected.type)
      problems.push(`${expected.path}: a ${actual.type} in the archive, a ${expected.type} in the manifest`);
    if (octal(actual.mode) !== expected.mode)
      problems.push(`${expected.path}: mode ${octal(actual.mode)}, the manifest says ${expected.mode}`);
    if (expected.type === 'file' && (actual.size !== expected.size || actual.sha256 !== expected.sha256))
      problems.push(`${expected.path}: content does not match the manifest (SHA-256 or size differs)`);
    if (
      !manifest.assets.some(
        (asset) => expected.path === asset.archivePath || expected.path.startsWith(`${asset.archivePath}/`),
      )
    )
      problems.push(`${expected.path}: belongs to no asset in the manifest`);
  }
  for (const path of seen.keys()) if (!listed.has(path)) problems.push(`${path}: in the archive, not in the manifest`);
  return { manifest, problems, files, bytes };
}

// ── Restoring ───────────────────────────────────────────────────────────────────────

export interface RestoreOptions {
  /** Restore into this new (or empty) folder, keeping the archive's payload layout, instead of where the files came from. */
  target?: string;
  force: boolean;
  dryRun: boolean;
}

export interface RestorePlan {
  asset: BackupAsset;
  destination: string;
  replaces: boolean;
}

function nonEmpty(path: string): boolean {
  if (!existsSync(path)) return false;
  return !statSync(path).isDirectory() || readdirSync(path).length > 0;
}

export async function restoreBackup(
  archive: string,
  options: RestoreOptions,
): Promise<{ plans: RestorePlan[]; manifest: BackupManifest }> {
  const checked = await verifyArchive(archive);
  if (checked.problems.length > 0 || !checked.manifest)
    throw new BackupError(`${archive} failed verification, nothing was restored:\n  ${checked.problems.join('\n  ')}`);
  const manifest = checked.manifest;
  const target = options.target ? resolve(options.target) : undefined;
  if (target && nonEmpty(target))
    throw new BackupError(`--target ${target} exists and is not empty; restore into a new folder`);
  const plans = manifest.assets.map((asset) => {
    const destination = target ? join(target, ...asset.archivePath.split('/')) : resolve(asset.sourcePath);
    return { asset, destination, replaces: nonEmpty(destination) };
  });
  for (const plan of plans) {
    if (plan.asset.kind !== 'state') continue;
    const gateway = runningGateway(plan.destination);
    if (gateway)
      throw new BackupError(
        `a gateway is running for ${plan.destination} (pid ${gateway.pid}); stop it first (claw gateway stop, or Ctrl-C the foreground one)`,
      );
  }
  const taken = plans.filter((plan) => plan.replaces);
  if (taken.length > 0 && !options.force)
    throw new BackupError(
      `${taken.map((plan) => plan.destination).join(', ')} ${taken.length === 1 ? 'exists' : 'exist'}; pass --force to replace (the current files are removed once the restore is complete), or --target <new folder>`,
    );
  if (options.dryRun) return { plans, manifest };

  // Each asset is written into a temporary sibling of its destination, so the final rename stays on one file system.
  const staged = plans.map((plan) => {
    mkdirSync(dirname(plan.destination), { recursive: true, mode: 0o700 });
    const stage = mkdtempSync(join(dirname(plan.destination), `.${basename(plan.destination)}.restore-`));
    return { ...plan, stage, path: join(stage, basename(plan.destination)) };
  });
  const expected = new Map(manifest.entries.map((entry) => [entry.path, entry]));
  const dirModes: Array<{ path: string; mode: number }> = [];
  const moved: Array<{ destination: string; aside?: string }> = [];
  try {
    const second = await verifyArchive(archive, (entry, inner) => {
      const owner = staged.find(
        (item) => inner === item.asset.archivePath || inner.startsWith(`${item.asset.archivePath}/`),
      );
      const listed = expected.get(inner);
      // The archive changed since the first pass: verifyArchive reports it; nothing is written.
      if (!owner || !listed) return;
      const rest = inner.slice(owner.asset.archivePath.length + 1);
      const path = rest ? join(owner.path, ...rest.split('/')) : owner.path;
      if (!isInside(owner.path, path))
        throw new BackupError(`entry "${entry.path}" would be written outside ${owner.destination}`);
      const bits = parseInt(listed.mode, 8);
      if (entry.type === 'dir') {
        mkdirSync(path, { recursive: true, mode: 0o700 });
        dirModes.push({ path, mode: bits });
        return;
      }
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      if (sha256(entry.data) !== listed.sha256)
        throw new BackupError(`${inner} changed since the archive was verified`);
      writeFileSync(path, entry.data, { mode: 0o600, flag: 'wx' });
      chmodSync(path, bits);
    });
    if (second.problems.length > 0)
      throw new BackupError(`the archive changed during the restore:\n  ${second.problems.join('\n  ')}`);
    // Folder modes last, deepest first: a read-only folder would have refused its own files.
    for (const { path, mode: bits } of dirModes.sort((a, b) => b.path.length - a.path.length)) chmodSync(path, bits);
    for (const item of staged) {
      const aside = existsSync(item.destination)
        ? `${item.destination}.replaced-${randomBytes(4).toString('hex')}`
        : undefined;
      if (aside) renameSync(item.destination, aside);
      moved.push({ destination: item.destination, aside });
      renameSync(item.path, item.destination);
    }
  } catch (error) {
    // Put back what was moved aside; the staged copies go.
    for (const { destination, aside } of moved.reverse()) {
      rmSync(destination, { recursive: true, force: true });
      if (aside) renameSync(aside, destination);
    }
    for (const item of staged) rmSync(item.stage, { recursive: true, force: true });
    throw error;
  }
  for (const item of staged) rmSync(item.stage, { recursive: true, force: true });
  for (const { aside } of moved) if (aside) rmSync(aside, { recursive: true, force: true });
  return { plans, manifest };
}
