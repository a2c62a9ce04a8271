/**
 * Installing a third-party plugin into <stateDir>/extensions/<id> from a directory, a
 * .tgz (npm pack format) or an npm spec. Work happens in a staging folder beside the
 * target; the plugin appears under its final name only once it has been validated and
 * its dependencies installed, by a single rename.
 *
 * A plugin with a `kind` (memory, agentLoop, sandbox) is recorded but does not take its
 * slot unless asked (`enable`): swapping a slot holder is a choice, not a side effect.
 *
 * A plugin may declare claw itself (`@claw-assistant/claw`, or the legacy `claw`) as a
 * dependency or peer dependency. npm is never asked for it — the name `claw` belongs to an
 * unrelated package — and the plugin gets a link to this installation's package instead.
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
} from 'node:fs';
import { rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import {
  slotHolder,
  validateWith,
  type InstallRecord,
  type JsonSchema,
  type PluginManifest,
  type PluginRecord,
  type PluginsConfig,
} from '../../../kernel/index.js';
import type { BeforeInstallEvent, BeforeInstallResult } from '../../../sdk/types/hooks.js';
import { ensurePrivateDir } from '../../../sdk/fs.js';
import { restrictTree } from '../../../host/private-tree.js';
import { manifestSlots } from '../../../kernel/plugin-host/manifest.js';
import { clawPackageRoot } from '../../../sdk/version.js';
import { baseRecord } from '../../../kernel/plugin-host/resolve.js';
import { reclaimInstallLeftovers, replacedPath, stagingPrefix } from './leftovers.js';
import { MAX_MANIFEST_BYTES, readManifest } from '../../../host/manifest.js';
import { resolveExtensionsDir } from '../../../host/discovery.js';
import { checkArchive, checkTree } from './contents.js';
import { disablePlugin, enablePlugin, PluginManageError } from './manage.js';

export type InstallSource = InstallRecord['source'];

export interface InstallStep {
  index: number;
  total: number;
  label: string;
}

export interface InstallOptions {
  spec: string;
  stateDir: string;
  /** Replace an installed plugin with the same id. */
  force?: boolean;
  /** Let a plugin with a `kind` take its slot(s); without it the install is recorded and the slot left as it is. */
  enable?: boolean;
  /** This installation's package root, linked into plugins that depend on claw (default: found from this file). */
  hostRoot?: string;
  /** Raw config to record the install in (mutated). */
  raw: Record<string, unknown>;
  /** Plugins currently known, for id clash checks. */
  records: readonly PluginRecord[];
  /** Runs the before_install hook; a block refuses the install. */
  beforeInstall?: (event: BeforeInstallEvent) => Promise<Partial<BeforeInstallResult>>;
  progress?: (step: InstallStep) => void;
  /** Output of child processes (npm, tar), for a live view. */
  output?: (chunk: string) => void;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface InstallOutcome {
  id: string;
  dir: string;
  source: InstallSource;
  version?: string;
  enabled: boolean;
  notes: string[];
  dependenciesInstalled: number;
}

/**
 * A validated install waiting in its staging folder. `commit()` moves it into place (one
 * rename); `discard()` removes whatever is left of the staging folder and is always safe
 * to call. The caller commits only after the config change that records it has validated.
 */
export interface StagedInstall {
  outcome: InstallOutcome;
  /** Where the validated plugin waits until commit(); config checks load it from here. */
  stagedDir: string;
  commit(): void;
  discard(): void;
}

const STEPS = [
  'Fetching',
  'Validating manifest',
  'Checking for conflicts',
  'Installing dependencies',
  'Checking config',
  'Activating install',
];

export function classifySource(spec: string, cwd: string): InstallSource {
  // `file:…`, `npm:…`, `git+https:…` and the like are npm specs, even when they name a .tgz.
  if (/^[a-z][a-z0-9+.-]+:/i.test(spec)) return 'npm';
  const path = resolve(cwd, spec);
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) return 'path';
    if (/\.(tgz|tar\.gz)$/.test(spec)) return 'archive';
    throw new PluginManageError(`"${spec}" is a file but not a .tgz archive`);
  }
  if (/\.(tgz|tar\.gz)$/.test(spec)) throw new PluginManageError(`archive "${spec}" not found`);
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('~'))
    throw new PluginManageError(`directory "${spec}" not found`);
  return 'npm';
}

export async function installPlugin(options: InstallOptions): Promise<StagedInstall> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const step = (index: number) => options.progress?.({ index: index + 1, total: STEPS.length, label: STEPS[index]! });
  const extensions = resolveExtensionsDir(options.stateDir);
  ensurePrivateDir(extensions);
  const source = classifySource(options.spec, cwd);
  // A killed install's folders would otherwise stay forever: this is the next time anyone looks there.
  const reclaimed = reclaimInstallLeftovers(extensions);
  const staging = mkdtempSync(stagingPrefix(extensions));
  const discard = () => rmSync(staging, { recursive: true, force: true });
  try {
    step(0);
    const root = await fetchInto(staging, source, options.spec, cwd, env, options.output);

    step(1);
    const result = readManifest(root);
    // Files are named within the package: the staging folder is gone by the time anyone reads this.
    if (!result.ok)
      throw new PluginManageError(
        `refusing to install "${options.spec}": ${result.error.replaceAll(`${root}${sep}`, '')}`,
      );
    const manifest = result.manifest;
    const target = join(extensions, manifest.id);

    step(2);
    const existing = options.records.find((record) => record.id === manifest.id && record.manifest);
    const replacing = existing?.origin === 'global' && existing.dir === target;
    if (existing && !(replacing && options.force)) {
      throw new PluginManageError(
        replacing
          ? `plugin "${manifest.id}" is already installed at ${target}; pass --force to replace it`
          : `plugin id "${manifest.id}" is already taken by the ${existing.origin} plugin at ${existing.dir ?? '(inline)'}`,
      );
    }
    if (options.beforeInstall) {
      const verdict = await options.beforeInstall({
        pluginId: manifest.id,
        source,
        spec: options.spec,
        dir: root,
        manifest: manifest as Record<string, unknown>,
      });
      if (verdict.block)
        throw new PluginManageError(
          `install of "${manifest.id}" blocked: ${verdict.blockReason ?? 'by a before_install hook'}`,
        );
    }

    step(3);
    const dependencies = await installDependencies(root, env, options.output);
    linkHostPackage(root, options.hostRoot);
    // Copied, unpacked and npm-installed files arrive with their source's or the umask's
    // modes; the plugin lives in the state dir, so it becomes owner-only like the rest.
    restrictTree(root);

    step(4);
    const plugins = (options.raw.plugins ?? {}) as PluginsConfig;
    const given = plugins.entries?.[manifest.id]?.config;
    const problems = validateWith(manifest.configSchema as JsonSchema, structuredClone(given ?? {}), [
      'plugins',
      'entries',
      manifest.id,
      'config',
    ]);
    if (given !== undefined && problems.length > 0) {
      throw new PluginManageError(
        `existing config does not fit "${manifest.id}": ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
      );
    }

    step(5);
    const version = manifest.version ?? packageVersion(root);
    recordInstall(options.raw, manifest, {
      source,
      // Paths are recorded absolute: a relative spec means nothing from another directory.
      spec: source === 'npm' ? options.spec : resolve(cwd, options.spec),
      installPath: target,
      ...(version !== undefined ? { version } : {}),
      installedAt: new Date().toISOString(),
    });
    const notes: string[] = [...reclaimed];
    let enabled = false;
    const slots = manifestSlots(manifest);
    if (slots.length > 0 && !options.enable) {
      // Recorded, not switched on: the slot keeps its current holder until asked.
      const held = slots.filter((slot) => slotHolder(plugins, slot) === manifest.id);
      const explicitlyOff = plugins.entries?.[manifest.id]?.enabled === false;
      enabled = held.length === slots.length && !explicitlyOff && problems.length === 0;
      if (!enabled) {
        const holders = slots.map((slot) => `the ${slot} slot is held by "${slotHolder(plugins, slot)}"`).join(', ');
        notes.push(`not switched on (${holders}); run \`claw plugins enable ${manifest.id}\` to use it`);
      }
      if (problems.length > 0) {
        notes.push(`needs config first: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
      }
    } else if (problems.length > 0) {
      // Installed plugins default to on; this one cannot run yet, so it is switched off explicitly.
      disablePlugin(options.raw, baseRecord(manifest, 'global', target));
      notes.push(
        `left off until configured: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}; then run \`claw plugins enable ${manifest.id}\``,
      );
    } else {
      notes.push(...enablePlugin(options.raw, baseRecord(manifest, 'global', target)));
      enabled = true;
    }
    return {
      outcome: { id: manifest.id, dir: target, source, version, enabled, notes, dependenciesInstalled: dependencies },
      stagedDir: root,
      commit() {
        if (existsSync(target)) {
          const old = replacedPath(extensions, manifest.id);
          renameSync(target, old);
          renameSync(root, target);
          rmSync(old, { recursive: true, force: true });
        } else {
          renameSync(root, target);
        }
        discard();
      },
      discard,
    };
  } catch (error) {
    discard();
    throw error;
  }
}

function recordInstall(raw: Record<string, unknown>, manifest: PluginManifest, record: InstallRecord): void {
  raw.plugins ??= {};
  const plugins = raw.plugins as PluginsConfig & Record<string, any>;
  plugins.installs ??= {};
  plugins.installs[manifest.id] = record;
}

/** Put the plugin's files in `staging` and return the folder that holds its manifest. */
async function fetchInto(
  staging: string,
  source: InstallSource,
  spec: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  output?: (chunk: string) => void,
): Promise<string> {
  const root = join(staging, 'plugin');
  const refused = (error: unknown) =>
    error instanceof PluginManageError
      ? new PluginManageError(`refusing to install "${spec}": ${error.message}`)
      : error;
  if (source === 'path') {
    const from = realpathSync(resolve(cwd, spec));
    try {
      checkTree(from, NOT_COPIED);
    } catch (error) {
      throw refused(error);
    }
    // Links are copied as written: resolved, a relative link would point back into the source folder.
    cpSync(from, root, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (path) => !NOT_COPIED.includes(basename(path)),
    });
    return root;
  }
  let archive = resolve(cwd, spec);
  if (source === 'npm') {
    const packDir = join(staging, 'pack');
    ensurePrivateDir(packDir);
    const out = await run(
      'npm',
      ['pack', spec, '--pack-destination', packDir, '--json', '--loglevel=error'],
      packDir,
      env,
      output,
    );
    const packed = parsePackOutput(out) ?? readdirSync(packDir).find((name) => name.endsWith('.tgz'));
    if (!packed) throw new PluginManageError(`npm pack "${spec}" produced no archive`);
    archive = join(packDir, packed);
  }
  const unpacked = join(staging, 'unpacked');
  ensurePrivateDir(unpacked);
  try {
    // tar would keep links to anywhere, FIFOs and device nodes: the headers are checked before it runs.
    await checkArchive(archive);
  } catch (error) {
    throw refused(error);
  }
  // GNU tar refuses members with ".." and strips leading "/", so an archive cannot write outside `unpacked`.
  await run('tar', ['-xzf', archive, '-C', unpacked, '--no-same-owner'], staging, env, output);
  const top = readdirSync(unpacked);
  const inner =
    top.length === 1 && statSync(join(unpacked, top[0]!)).isDirectory() ? join(unpacked, top[0]!) : unpacked;
  renameSync(inner, root);
  try {
    // What tar made of it, checked again on disk: links are followed for real here, through each other.
    checkTree(root);
  } catch (error) {
    throw refused(error);
  }
  return root;
}

/** Folders a directory install leaves behind (at any depth). */
const NOT_COPIED = ['node_modules', '.git'];

function parsePackOutput(out: string): string | undefined {
  try {
    const parsed = JSON.parse(out) as Array<{ filename?: string }>;
    return parsed[0]?.filename?.replace(/^.*\//, '');
  } catch {
    return undefined;
  }
}

function packageJson(dir: string): Record<string, unknown> | undefined {
  const file = join(dir, 'package.json');
  // Read (and rewritten) at install time: held to the manifest cap, so a huge one is refused unread.
  if (existsSync(file) && statSync(file).size > MAX_MANIFEST_BYTES) {
    throw new PluginManageError(
      `the plugin's package.json is over the ${MAX_MANIFEST_BYTES >> 10} KiB cap for package metadata`,
    );
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Names under which a plugin may depend on claw itself. */
export const HOST_PACKAGE_NAMES = ['@claw-assistant/claw', 'claw'] as const;
const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'] as const;

function declaresHost(pkg: Record<string, unknown> | undefined): boolean {
  return DEPENDENCY_FIELDS.some((field) => {
    const deps = pkg?.[field];
    return deps !== null && typeof deps === 'object' && HOST_PACKAGE_NAMES.some((name) => name in (deps as object));
  });
}

/**
 * `npm install` the plugin's runtime dependencies, never claw itself: the host names are
 * taken out of the package.json npm reads (and put back afterwards), and peer dependencies
 * are not fetched (`--legacy-peer-deps`), so a dependency that peers on `claw` cannot pull
 * the unrelated registry package either. `file:` dependencies are copied, not linked
 * (`--install-links`): the plugin moves after this step, and must not depend on where it
 * came from. Returns how many dependencies were installed.
 */
async function installDependencies(
  root: string,
  env: NodeJS.ProcessEnv,
  output?: (chunk: string) => void,
): Promise<number> {
  const file = join(root, 'package.json');
  const pkg = packageJson(root);
  if (!pkg) return 0;
  const stripped = structuredClone(pkg);
  for (const field of DEPENDENCY_FIELDS) {
    const deps = stripped[field];
    if (deps === null || typeof deps !== 'object') continue;
    for (const name of HOST_PACKAGE_NAMES) delete (deps as Record<string, unknown>)[name];
  }
  const meta = stripped.peerDependenciesMeta as Record<string, unknown> | undefined;
  if (meta && typeof meta === 'object') for (const name of HOST_PACKAGE_NAMES) delete meta[name];
  const deps = stripped.dependencies;
  const count = deps && typeof deps === 'object' ? Object.keys(deps).length : 0;
  if (count === 0) return 0;
  const original = readFileSync(file, 'utf8');
  writeFileSync(file, `${JSON.stringify(stripped, null, 2)}\n`);
  try {
    await run(
      'npm',
      [
        'install',
        '--omit=dev',
        '--omit=peer',
        '--legacy-peer-deps',
        '--install-links',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      root,
      env,
      output,
    );
  } finally {
    writeFileSync(file, original);
  }
  return count;
}

/**
 * A plugin that declares claw gets node_modules/@claw-assistant/claw and node_modules/claw
 * linked to this installation, so plain JavaScript `import … from '@claw-assistant/claw/sdk'`
 * resolves to the host (TypeScript plugins also get jiti aliases for the same specifiers).
 */
function linkHostPackage(root: string, hostRoot = clawPackageRoot()): void {
  if (!hostRoot || !declaresHost(packageJson(root))) return;
  for (const name of HOST_PACKAGE_NAMES) {
    const link = join(root, 'node_modules', ...name.split('/'));
    rmSync(link, { recursive: true, force: true });
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(hostRoot, link, 'dir');
  }
}

function packageVersion(dir: string): string | undefined {
  const version = packageJson(dir)?.version;
  return typeof version === 'string' ? version : undefined;
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  output?: (chunk: string) => void,
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      output?.(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      output?.(chunk);
    });
    child.on('error', (error) => reject(new PluginManageError(`cannot run ${command}: ${error.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolvePromise(stdout);
      else {
        const tail = stderr.trim().split('\n').slice(-3).join(' | ');
        reject(new PluginManageError(`${command} ${args[0]} failed (exit ${code})${tail ? `: ${tail}` : ''}`));
      }
    });
  });
}
