#!/usr/bin/env node
/**
 * The OpenClaw compatibility figures of README.md ("Coming from OpenClaw") and BENCHMARKS.md,
 * computed from what the tests keep current, so the tables can be refreshed after a merge:
 *
 *   methods, events   test/fixtures/openclaw-client-methods.json (what OpenClaw's CLI, TUI and
 *                     Control UI call, read from the installed package) minus
 *                     test/openclaw-methods-pending.ts (what claw does not answer yet;
 *                     test/openclaw-client-methods.test.ts fails when an entry is served)
 *   CLI commands      the WORKING and NOT_WORKING lists of test/openclaw-compat.test.ts
 *
 * Usage: node scripts/compat-figures.mjs [--json]
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path) => readFileSync(join(root, path), 'utf8');

/** The string literals of `export const <name> … = new Set([ … ]);` in the pending list. */
function pendingSet(source, name) {
  const start = source.indexOf(`export const ${name}`);
  if (start < 0) throw new Error(`test/openclaw-methods-pending.ts has no ${name}`);
  const body = source.slice(start, source.indexOf(']);', start));
  return new Set([...body.matchAll(/^\s*'([^']+)',/gm)].map((match) => match[1]));
}

/** Entries of a top-level `const <name>: Array<…> = [ … ];` list: each starts at two spaces' indent. */
function listEntries(source, name) {
  const start = source.indexOf(`const ${name}`);
  if (start < 0) throw new Error(`test/openclaw-compat.test.ts has no ${name} list`);
  const open = source.indexOf('= [', start);
  const body = source.slice(open, source.indexOf('\n];', open));
  return body.split('\n').filter((line) => /^ {2}\[/.test(line)).length;
}

/** Answered/total, overall and for each client that calls the name. */
function coverage(listed, pending) {
  const names = Object.keys(listed);
  const byClient = {};
  for (const [name, clients] of Object.entries(listed))
    for (const client of clients) {
      byClient[client] ??= { answered: 0, total: 0 };
      byClient[client].total++;
      if (!pending.has(name)) byClient[client].answered++;
    }
  const unknown = [...pending].filter((name) => !names.includes(name));
  return {
    answered: names.filter((name) => !pending.has(name)).length,
    total: names.length,
    byClient,
    ...(unknown.length ? { pendingNotInFixture: unknown } : {}),
  };
}

const fixture = JSON.parse(read('test/fixtures/openclaw-client-methods.json'));
const pending = read('test/openclaw-methods-pending.ts');
const compat = read('test/openclaw-compat.test.ts');
const working = listEntries(compat, 'WORKING');
const notWorking = listEntries(compat, 'NOT_WORKING');
const figures = {
  openclaw: fixture.openclaw,
  methods: coverage(fixture.methods, pendingSet(pending, 'PENDING_METHODS')),
  events: coverage(fixture.events, pendingSet(pending, 'PENDING_EVENTS')),
  cliCommands: { working, total: working + notWorking },
};

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(figures, null, 2));
} else {
  const pct = ({ answered, total }) => `${answered} of ${total} (${Math.round((100 * answered) / total)} %)`;
  const clients = (byClient) =>
    Object.entries(byClient)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([client, counts]) => `${client} ${counts.answered}/${counts.total}`)
      .join(', ');
  console.log(`OpenClaw ${figures.openclaw} clients`);
  console.log(`methods answered: ${pct(figures.methods)} — ${clients(figures.methods.byClient)}`);
  console.log(`events sent:      ${pct(figures.events)} — ${clients(figures.events.byClient)}`);
  console.log(
    `openclaw CLI:     ${figures.cliCommands.working} of ${figures.cliCommands.total} gateway-backed commands`,
  );
}
