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

if (!fastPath()) {
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
