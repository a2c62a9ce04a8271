/**
 * "install size (--omit=dev)": what `npm install --omit=dev` would leave in node_modules,
 * computed offline from package-lock.json and the packages already on disk.
 *
 * Every lockfile `packages` entry that is not dev/devOptional and that npm would install on
 * this machine (its `os`/`cpu`/`libc` fit) counts with the disk usage (like `du`) of its
 * folder in the project's node_modules, nested node_modules excluded (they are entries of
 * their own). A dev install holds every production package, so this needs no network; an
 * entry missing on disk is reported, not guessed.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface LockEntry {
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  link?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}

export interface InstallSize {
  /** Disk usage in MiB (what `du -sm node_modules` reports). */
  mb: number;
  packages: number;
  /** Production entries for this platform not found on disk. */
  missing: string[];
  /** The largest packages, MiB. */
  largest: Array<{ name: string; mb: number }>;
}

/** npm's rule for `os`/`cpu`: a list of allowed values, or `!value` exclusions. */
function fits(list: string[] | undefined, value: string): boolean {
  if (!list || list.length === 0) return true;
  const denied = list.filter((item) => item.startsWith('!')).map((item) => item.slice(1));
  const allowed = list.filter((item) => !item.startsWith('!'));
  if (denied.includes(value)) return false;
  return allowed.length === 0 || allowed.includes(value);
}

function libcOf(): string {
  if (process.platform !== 'linux') return '';
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ? 'glibc' : 'musl';
}

function diskUsage(dir: string): number {
  let bytes = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules') continue;
    const full = join(dir, entry.name);
    const stat = lstatSync(full);
    bytes += stat.blocks * 512;
    if (entry.isDirectory()) bytes += diskUsage(full);
  }
  return bytes;
}

export function installSize(root: string): InstallSize {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const libc = libcOf();
  let bytes = 0;
  let packages = 0;
  const missing: string[] = [];
  const sizes: Array<{ name: string; mb: number }> = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || entry.devOptional) continue;
    // Links are the overrides' stand-ins for node-llama-cpp's GPU builds (scripts/no-gpu-build),
    // under a dev package: `npm install --omit=dev` does not create them.
    if (entry.link) continue;
    if (!fits(entry.os, process.platform) || !fits(entry.cpu, process.arch)) continue;
    if (entry.libc && libc && !entry.libc.includes(libc)) continue;
    let stat;
    try {
      stat = lstatSync(join(root, path));
    } catch {
      // Optional entries that did not install (a failed optional build) are npm's business.
      if (!entry.optional) missing.push(path);
      continue;
    }
    const size = stat.blocks * 512 + (stat.isDirectory() ? diskUsage(join(root, path)) : 0);
    bytes += size;
    packages++;
    sizes.push({ name: path.replace(/^.*node_modules\//, ''), mb: size / 2 ** 20 });
  }
  sizes.sort((a, b) => b.mb - a.mb);
  return { mb: bytes / 2 ** 20, packages, missing, largest: sizes.slice(0, 5) };
}
