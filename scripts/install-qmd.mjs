#!/usr/bin/env node
// Installs the QMD search sidecar (npm @tobilu/qmd) for the memory-qmd plugin, inside the
// repository so nothing global changes:
//
//   .cache/qmd-node/   a private Node 24 (npm package node-<platform>-<arch>@24)
//   .cache/qmd/        @tobilu/qmd, installed by npm running under that Node 24
//   .cache/qmd/bin/qmd a wrapper: exec <node 24> <qmd's CLI> "$@"
//
// Why Node 24: QMD 2.8 needs Node >= 22 (its better-sqlite3 13 crashes under Node 20), and
// npm resolves dependency versions against the `engines` of the Node that runs npm, so
// installing under Node 20 would pick versions for the wrong runtime.
//
// Idempotent: when the wrapper already answers --version this exits at once.
//   node scripts/install-qmd.mjs [--force] [--quiet]
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const QMD_SPEC = '@tobilu/qmd@~2.8.3';
const NODE_MAJOR = 24;
const LOCK_STALE_MS = 15 * 60_000;

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(repo, '.cache');
const nodePrefix = join(cacheDir, 'qmd-node');
const nodePackage = `node-${process.platform}-${process.arch}`;
const nodeDir = join(nodePrefix, 'node_modules', nodePackage);
const node24 = join(nodeDir, 'bin', 'node');
const qmdPrefix = join(cacheDir, 'qmd');
const qmdPackageDir = join(qmdPrefix, 'node_modules', '@tobilu', 'qmd');
const wrapper = join(qmdPrefix, 'bin', 'qmd');
const lockDir = join(cacheDir, 'install-qmd.lock');

const args = new Set(process.argv.slice(2));
const force = args.has('--force');
const quiet = args.has('--quiet');

class InstallError extends Error {}

function say(message) {
  if (!quiet) console.log(`install-qmd: ${message}`);
}

function run(command, argv, options = {}) {
  const result = spawnSync(command, argv, { encoding: 'utf8', ...options });
  if (result.error) throw new InstallError(`could not run ${command}: ${result.error.message}`);
  return result;
}

/** The installed version line when `bin/qmd --version` works, else undefined. */
function wrapperVersion() {
  if (!existsSync(wrapper)) return undefined;
  try {
    // Some invocations create QMD's cache folder on start-up; none may land in the user's home.
    const probe = join(cacheDir, 'qmd-probe');
    const env = { ...process.env, XDG_CONFIG_HOME: probe, XDG_CACHE_HOME: probe };
    const result = spawnSync(wrapper, ['--version'], { encoding: 'utf8', timeout: 15_000, env });
    const line = result.stdout?.trim() ?? '';
    return result.status === 0 && /^qmd \d/.test(line) ? line : undefined;
  } catch {
    return undefined;
  }
}

function nodeVersion(binary) {
  if (!existsSync(binary)) return undefined;
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 15_000 });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/**
 * npm's own CLI script, so it can be run under another Node. Under `npm run` npm says where
 * it is; otherwise the `npm` on PATH is followed to its script.
 */
function findNpmCli() {
  const candidates = [];
  if (process.env.npm_execpath) candidates.push(process.env.npm_execpath);
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const npm = join(dir, 'npm');
    if (existsSync(npm)) {
      try {
        candidates.push(realpathSync(npm));
      } catch {
        // A dangling link: try the next one.
      }
    }
  }
  candidates.push(join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'));
  const found = candidates.find((path) => /npm-cli\.js$/.test(path) && existsSync(path));
  if (!found)
    throw new InstallError('could not find npm\'s CLI script (npm-cli.js); install npm, or run this through "npm run"');
  return found;
}

/**
 * `npm run` exports the repository's package and prefix (and the machine Node's toolchain) as
 * npm_* variables; passed on, they would send the child's install, or its native builds,
 * somewhere else. Everything else (registry, proxy, cache, certificates) is kept.
 */
const INHERITED_NPM =
  /^(npm_(package|lifecycle)_.*|npm_config_(prefix|local_prefix|global|global_prefix|location|nodedir|node_gyp|npm_version|user_agent)|npm_execpath|npm_node_execpath|npm_command|INIT_CWD)$/i;

function childEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !INHERITED_NPM.test(key)) env[key] = value;
  }
  return { ...env, ...extra };
}

function ensurePackageJson(dir, name) {
  mkdirSync(dir, { recursive: true });
  // npm walks up to the nearest package.json; one here keeps it out of the repository's.
  const path = join(dir, 'package.json');
  if (!existsSync(path))
    writeFileSync(
      path,
      `${JSON.stringify({ name, private: true, description: 'Installed by scripts/install-qmd.mjs' }, null, 2)}\n`,
    );
}

function npmInstall(nodeBinary, npmCli, prefix, spec, extraEnv = {}) {
  const argv = [
    npmCli,
    'install',
    '--prefix',
    prefix,
    '--no-audit',
    '--no-fund',
    '--no-update-notifier',
    '--loglevel=error',
    spec,
  ];
  say(`npm install ${spec} (node ${nodeVersion(nodeBinary) ?? nodeBinary}) into ${prefix}`);
  const started = Date.now();
  const result = run(nodeBinary, argv, {
    cwd: prefix,
    env: childEnv(extraEnv),
    stdio: quiet ? 'pipe' : 'inherit',
    timeout: 20 * 60_000,
  });
  if (result.status !== 0) {
    const detail = quiet ? `\n${(result.stderr ?? '').trim().split('\n').slice(-15).join('\n')}` : '';
    throw new InstallError(
      `npm install ${spec} failed (exit ${result.status ?? result.signal}); it needs the npm registry to be reachable${detail}`,
    );
  }
  say(`installed ${spec} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function ensureNode(npmCli) {
  const current = nodeVersion(node24);
  if (current && Number(current.replace(/^v/, '').split('.')[0]) >= NODE_MAJOR && !force) {
    say(`Node ${current} already at ${node24}`);
    return;
  }
  ensurePackageJson(nodePrefix, 'claw-qmd-node');
  // The machine's Node runs npm here: it only has to fetch a binary package.
  npmInstall(process.execPath, npmCli, nodePrefix, `${nodePackage}@${NODE_MAJOR}`);
  const installed = nodeVersion(node24);
  if (!installed) throw new InstallError(`${nodePackage}@${NODE_MAJOR} installed, but ${node24} does not run`);
  say(`Node ${installed} at ${node24}`);
}

function cliEntry() {
  const manifestPath = join(qmdPackageDir, 'package.json');
  if (!existsSync(manifestPath)) throw new InstallError(`${manifestPath} is missing after npm install`);
  // Run the CLI module directly: QMD's own bin launcher would spawn a second process per call.
  const direct = join(qmdPackageDir, 'dist', 'cli', 'qmd.js');
  if (existsSync(direct)) return direct;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.qmd;
  if (!bin) throw new InstallError(`${manifestPath} names no qmd executable`);
  return join(qmdPackageDir, bin);
}

function shellQuote(value) {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function writeWrapper(entry) {
  mkdirSync(dirname(wrapper), { recursive: true });
  const text = [
    '#!/bin/sh',
    "# Written by scripts/install-qmd.mjs: QMD needs Node >= 22, so it runs under the project's own Node.",
    `exec ${shellQuote(node24)} ${shellQuote(entry)} "$@"`,
    '',
  ].join('\n');
  writeFileSync(wrapper, text);
  chmodSync(wrapper, 0o755);
}

/** Index and search a scratch collection, so a broken native module shows up here, not later. */
function smokeTest() {
  const scratch = join(cacheDir, `qmd-smoke-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  try {
    mkdirSync(join(scratch, 'notes'), { recursive: true });
    writeFileSync(join(scratch, 'notes', 'a.md'), '# Smoke\n\nThe quick brown fox.\n');
    const env = childEnv({
      XDG_CONFIG_HOME: join(scratch, 'config'),
      XDG_CACHE_HOME: join(scratch, 'cache'),
      HOME: scratch,
      NO_COLOR: '1',
    });
    delete env.QMD_CONFIG_DIR;
    delete env.INDEX_PATH;
    const options = { cwd: scratch, env, encoding: 'utf8', timeout: 60_000 };
    const add = spawnSync(
      wrapper,
      ['--index', 'index', 'collection', 'add', join(scratch, 'notes'), '--name', 'smoke'],
      options,
    );
    if (add.status !== 0)
      throw new InstallError(
        `"qmd collection add" failed in the smoke test (exit ${add.status ?? add.signal}):\n${add.stderr || add.stdout}`,
      );
    const search = spawnSync(wrapper, ['--index', 'index', 'search', '--json', '-c', 'smoke', '--', 'fox'], options);
    let hits;
    try {
      hits = JSON.parse(search.stdout);
    } catch {
      hits = undefined;
    }
    if (search.status !== 0 || !Array.isArray(hits) || hits.length !== 1) {
      throw new InstallError(
        `"qmd search --json" did not find the smoke-test note (exit ${search.status ?? search.signal}):\n${search.stderr || search.stdout}`,
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One installer at a time (tests and a user may start it together); a stale lock is taken over. */
function withLock(action) {
  mkdirSync(cacheDir, { recursive: true });
  const deadline = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let age = 0;
      try {
        age = Date.now() - statSync(lockDir).mtimeMs;
      } catch {
        continue;
      }
      if (age > LOCK_STALE_MS || Date.now() > deadline) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      // Another installer is at work; when it finishes there may be nothing left to do.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    return action();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

function main() {
  if (process.platform === 'win32')
    throw new InstallError(
      'Windows is not supported (the wrapper is a POSIX shell script); install QMD yourself and set plugins.entries.memory-qmd.config.command',
    );
  if (!force) {
    const version = wrapperVersion();
    if (version) {
      say(`${version} is already installed (${wrapper})`);
      return;
    }
  }
  withLock(() => {
    if (!force) {
      const version = wrapperVersion();
      if (version) {
        say(`${version} was installed meanwhile (${wrapper})`);
        return;
      }
    }
    const started = Date.now();
    const npmCli = findNpmCli();
    say(`npm CLI: ${npmCli}`);
    ensureNode(npmCli);
    ensurePackageJson(qmdPrefix, 'claw-qmd');
    // node-gyp must build any native module against Node 24's headers (shipped in the node
    // package), never those of the machine's Node that a user npmrc may point at.
    npmInstall(node24, npmCli, qmdPrefix, QMD_SPEC, {
      PATH: `${dirname(node24)}${delimiter}${process.env.PATH ?? ''}`,
      npm_config_nodedir: nodeDir,
    });
    writeWrapper(cliEntry());
    const version = wrapperVersion();
    if (!version) throw new InstallError(`the wrapper ${wrapper} was written but "qmd --version" fails`);
    smokeTest();
    say(`${version} ready at ${wrapper} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  });
}

try {
  main();
} catch (error) {
  console.error(`install-qmd: ${error instanceof InstallError ? error.message : (error?.stack ?? String(error))}`);
  process.exit(1);
}
