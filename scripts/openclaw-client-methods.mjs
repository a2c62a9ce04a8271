#!/usr/bin/env node
/**
 * Lists every gateway method and event OpenClaw's shipped clients use, read from the installed
 * package (.cache/openclaw, see scripts/install-openclaw.mjs): the CLI and TUI chunks in dist/
 * and the Control UI bundle in dist/control-ui/assets.
 *
 *   node scripts/openclaw-client-methods.mjs           write test/fixtures/openclaw-client-methods.json
 *   node scripts/openclaw-client-methods.mjs --stdout  print the list instead (the test compares it)
 *
 * Minified code is matched at its call sites (a string handed to `request(`/`callGateway…(`, a
 * `method:` property, a `.event ===` comparison), and every candidate is kept only if OpenClaw's
 * own gateway declares it (its core method table and GATEWAY_EVENTS), so an unrelated `method:`
 * or `request("inspect")` never lands in the list.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = join(REPO, '.cache', 'openclaw', 'node_modules', 'openclaw');
const DIST = join(PACKAGE, 'dist');
const OUTPUT = join(REPO, 'test', 'fixtures', 'openclaw-client-methods.json');

const NAME = String.raw`[a-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*`;
const LITERAL = String.raw`(["'\x60])(${NAME})\1`;
const CALL = String.raw`(?:\brequest|\bcall\w*Gateway\w*|\brequestGateway\w*)`;
const CALL_LITERAL = new RegExp(String.raw`${CALL}\s*\(\s*${LITERAL}`, 'g');
const CALL_TERNARY = new RegExp(String.raw`${CALL}\s*\(\s*[\w$.!]+\s*\?\s*${LITERAL}\s*:\s*(["'\x60])(${NAME})\3`, 'g');
const CALL_CONSTANT = new RegExp(String.raw`\.request\(\s*([A-Za-z_$][\w$]*)\s*[,)]`, 'g');
// The Control UI picks some methods first (`let o = startup ? "chat.startup" : "chat.history"`).
const ASSIGNED_TERNARY = new RegExp(
  String.raw`(?<![\w$])[\w$]+\s*=\s*[\w$.!]+\s*\?\s*${LITERAL}\s*:\s*(["'\x60])(${NAME})\3`,
  'g',
);
const ASSIGNED_LITERAL = new RegExp(String.raw`(?<![\w$])([A-Za-z_$][\w$]*)\s*=\s*(["'\x60])(${NAME})\2`, 'g');
const METHOD_PROPERTY = new RegExp(String.raw`\bmethod\s*:\s*${LITERAL}`, 'g');
const EVENT_COMPARE = new RegExp(String.raw`\bevent\s*===?\s*${LITERAL}`, 'g');
// The bundler marks each source module with `//#region <path>`: the TUI's modules, the CLI's
// commands and the node host (`openclaw node`) are the clients; the rest of dist/ is the gateway,
// its agents and plugins, whose `method:` strings describe requests they receive.
const CLIENT_REGIONS = [
  [/^src\/tui\//, 'tui'],
  [/^src\/(cli|commands|node-host|wizard)\/|^src\/infra\/outbound\/message|^src\/plugins\/cli-gateway/, 'cli'],
];

function walk(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...walk(path));
    else if (/\.(m?js)$/.test(entry.name)) files.push(path);
  }
  return files;
}

/** The chunk named like `pattern` that holds `marker` (bundlers leave same-named chunks). */
function findFile(pattern, marker) {
  for (const name of readdirSync(DIST).filter((file) => pattern.test(file))) {
    const text = readFileSync(join(DIST, name), 'utf8');
    if (text.includes(marker)) return text;
  }
  throw new Error(`OpenClaw's dist has no ${pattern} holding ${marker}: is .cache/openclaw installed?`);
}

/** The method names OpenClaw's gateway declares (its core method table) and its event names. */
function gatewayCatalogue() {
  const table = findFile(/^method-scopes-.*\.mjs$/, 'CORE_GATEWAY_METHOD_SPECS = [');
  const methods = new Set();
  for (const match of table.matchAll(/\[\s*"([^"]+)",\s*(?:"[^"]*"|null),\s*(?:"[^"]*"|null|[A-Z_]+),/g))
    methods.add(match[1]);
  const list = findFile(/^server-methods-list-.*\.mjs$/, 'GATEWAY_EVENTS = [');
  const constants = findFile(/^events-.*\.mjs$/, 'const GATEWAY_EVENT_');
  const block = /GATEWAY_EVENTS = \[([\s\S]*?)\];/.exec(list)?.[1] ?? '';
  const events = new Set([...block.matchAll(/"([^"]+)"/g)].map((match) => match[1]));
  for (const match of block.matchAll(/\b(GATEWAY_EVENT_[A-Z_]+)\b/g)) {
    const value = new RegExp(`const ${match[1]} = "([^"]+)"`).exec(constants)?.[1];
    if (value) events.add(value);
  }
  if (methods.size < 100 || events.size < 20) throw new Error('could not read OpenClaw’s method and event tables');
  return { methods, events };
}

/** The parts of one file that belong to a client, each with that client's name. */
function clientParts(path, text) {
  if (relative(DIST, path).startsWith('control-ui/')) return [{ client: 'control-ui', text }];
  const parts = [];
  for (const region of text.split(/^\/\/#region /m).slice(1)) {
    const source = region.slice(0, region.indexOf('\n'));
    const client = CLIENT_REGIONS.find(([pattern]) => pattern.test(source))?.[1];
    if (client) parts.push({ client, text: region });
  }
  return parts;
}

export function extract() {
  const { methods, events } = gatewayCatalogue();
  const found = { methods: new Map(), events: new Map() };
  const add = (kind, name, client) => {
    if (!(kind === 'methods' ? methods : events).has(name)) return;
    const clients = found[kind].get(name) ?? new Set();
    clients.add(client);
    found[kind].set(name, clients);
  };
  for (const path of walk(DIST)) {
    for (const { client, text } of clientParts(path, readFileSync(path, 'utf8'))) {
      for (const match of text.matchAll(CALL_LITERAL)) add('methods', match[2], client);
      for (const match of text.matchAll(CALL_TERNARY)) {
        add('methods', match[2], client);
        add('methods', match[4], client);
      }
      for (const match of text.matchAll(ASSIGNED_TERNARY)) {
        if (!methods.has(match[2]) || !methods.has(match[4])) continue;
        add('methods', match[2], client);
        add('methods', match[4], client);
      }
      for (const match of text.matchAll(METHOD_PROPERTY)) add('methods', match[2], client);
      // Minified names are reused across scopes: a call takes the nearest assignment before it.
      const constants = new Map();
      for (const match of text.matchAll(ASSIGNED_LITERAL)) {
        if (!methods.has(match[3])) continue;
        constants.set(match[1], [...(constants.get(match[1]) ?? []), [match.index, match[3]]]);
      }
      for (const match of text.matchAll(CALL_CONSTANT)) {
        const candidates = constants.get(match[1]) ?? [];
        const value = candidates.filter(([at]) => at < match.index).at(-1) ?? candidates[0];
        if (value) add('methods', value[1], client);
      }
      for (const match of text.matchAll(EVENT_COMPARE)) add('events', match[2], client);
    }
  }
  const version = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')).version;
  const listed = (map) => Object.fromEntries([...map.keys()].sort().map((name) => [name, [...map.get(name)].sort()]));
  return { openclaw: version, methods: listed(found.methods), events: listed(found.events) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = `${JSON.stringify(extract(), null, 2)}\n`;
  if (process.argv.includes('--stdout')) process.stdout.write(text);
  else {
    writeFileSync(OUTPUT, text);
    console.log(`wrote ${relative(REPO, OUTPUT)}`);
  }
}
