#!/usr/bin/env node
/**
 * The `claw` executable. CommonJS on purpose: on Node 20, starting the ESM loader costs
 * ~13 ms, so `claw --help` and `claw --version` are answered from here (with the help
 * module compiled to CommonJS); every other command loads the ESM `main.js`.
 */
import fs = require('node:fs');
import path = require('node:path');
import type * as HelpModule from './help.js';

const argv = process.argv.slice(2);

/** The first arguments once global flags (which may appear anywhere) are set aside. */
function words(): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') continue;
    if (arg === '--profile') {
      process.env.OPENCLAW_PROFILE = argv[++i];
      continue;
    }
    if (arg.startsWith('--profile=')) {
      process.env.OPENCLAW_PROFILE = arg.slice('--profile='.length);
      continue;
    }
    out.push(arg);
  }
  return out;
}

// The reader went away (`claw agent … | head`): like any Unix filter, stop quietly and
// successfully rather than die on an unhandled EPIPE. The gateway server keeps running (its
// log file still has everything); a closed stderr only loses notes.
const command = words();
const serving = command[0] === 'gateway' && command[1] !== 'call';
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  if (!serving) process.exit(0);
});
process.stderr.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

function fastPath(): boolean {
  const rest = words();
  if (rest[0] === '--version' || rest[0] === '-V') {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    process.stdout.write(`claw ${pkg.version}\n`);
    return true;
  }
  const overview = rest.length === 0 || (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h'));
  const topic = rest[0] === 'help' && rest.length <= 2;
  if (!overview && !topic) return false;
  const help = require('../../cjs/apps/cli/help.js') as typeof HelpModule;
  help.printHelp(
    { stdout: process.stdout, env: process.env },
    topic ? rest[1] : undefined,
    path.join(__dirname, '..', '..', 'plugins'),
  );
  return true;
}

/**
 * Node 22.1+ can keep the code it compiles for our modules on disk, which spares most of the
 * ~200 ESM files' compile time on every later start. The cache lives in the user's own cache
 * folder, created owner-only: a shared one (Node's default is under /tmp) would let another
 * local user plant compiled code. CLAW_COMPILE_CACHE=0 turns it off.
 */
function enableCompileCache(): void {
  const mod = require('node:module') as { enableCompileCache?: (dir: string) => unknown };
  if (typeof mod.enableCompileCache !== 'function' || process.env.CLAW_COMPILE_CACHE === '0') return;
  const os = require('node:os') as typeof import('node:os');
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dir = path.join(base, 'claw', `node-compile-${process.version}`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.statSync(dir);
    // Only a folder this user owns and nobody else can write is used.
    if (stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return;
    mod.enableCompileCache(dir);
  } catch {
    // No writable home: start without the cache.
  }
}

if (!fastPath()) {
  enableCompileCache();
  import('./main.js').then(
    ({ main }) =>
      main(argv, { stdout: process.stdout, stderr: process.stderr, env: process.env }).then((code) => {
        process.exitCode = code;
      }),
    (error: unknown) => {
      process.stderr.write(`claw: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
