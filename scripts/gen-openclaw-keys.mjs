#!/usr/bin/env node
/**
 * Derives the config key paths OpenClaw documents (its configuration reference pages,
 * gateway/config*.md, and the JSON5 config examples across its docs) and writes them to
 * sdk/generated/openclaw-keys.ts. claw uses the list to tell an OpenClaw setting it does
 * not implement (accepted, warned about, listed by `claw doctor`) from a key nobody knows
 * (an error, as in OpenClaw). Map keys and array items become `*`.
 *
 *   node scripts/gen-openclaw-keys.mjs [path/to/openclaw-docs]
 *
 * The committed file comes from the docs/ folder of the `openclaw` npm package (complete;
 * the shared reference copy, the default path, has a subset):
 *   npm pack openclaw@2026.9.6 && tar xzf openclaw-2026.9.6.tgz
 *   node scripts/gen-openclaw-keys.mjs package/docs
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The docs shipped in the `openclaw` npm package (docs/) are complete; the shared copy has a subset.
const docs = process.argv[2] ?? join(root, '..', 'shared', 'reference', 'openclaw-docs');
const JSON5 = createRequire(import.meta.url)('json5');

function markdownFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** Config blocks: fenced json5/json whose text parses once `...` placeholders are dropped. */
function configBlocks(text) {
  const out = [];
  for (const match of text.matchAll(/```(?:json5|json)[^\n]*\n([\s\S]*?)```/g)) {
    const body = match[1]
      .split('\n')
      .filter((line) => !/^\s*(\/\/\s*)?\.\.\.\s*,?\s*$/.test(line))
      .join('\n');
    try {
      const value = JSON5.parse(body);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) out.push(value);
    } catch {
      // Fragments (a single field, a shell transcript) are not whole configs.
    }
  }
  return out;
}

/** A map of user-chosen names (ids, emails, patterns) rather than schema keys. */
const isMapKey = (key) => !/^[A-Za-z$][A-Za-z0-9_]*$/.test(key) || /^(default|main|work|home|personal)$/.test(key);

function flatten(value, prefix, into) {
  if (Array.isArray(value)) {
    for (const item of value) flatten(item, [...prefix, '*'], into);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    const path = [...prefix, isMapKey(key) ? '*' : key];
    into.add(path.join('.'));
    flatten(child, path, into);
  }
}

const files = markdownFiles(docs);
const reference = files.filter((file) =>
  /gateway\/config(uration-reference|-[a-z-]+)\.md$/.test(relative(docs, file).replace(/\\/g, '/')),
);
const PROSE_PATH = /`([a-z][A-Za-z0-9]*(?:\.(?:[A-Za-z][A-Za-z0-9_]*|\*|<[^>`]+>))+)`/g;

// Top-level sections are the ones the main reference page names: its section headings
// (`## Models`, `## Tools and custom providers`, `## Automations (\`cron\`)`), the sections
// it describes as `session.*` or `agents.defaults.*`, and the keys its page list names (`cloudWorkers`). An example
// elsewhere counts as a config only when each of its top-level keys is one (the docs also
// show payloads, manifests and replies).
const topLevel = new Set();
const sections = new Set();
const lowerFirst = (word) => (/^[A-Z]+$/.test(word) ? word.toLowerCase() : word[0].toLowerCase() + word.slice(1));
for (const file of reference.filter((path) => path.endsWith('configuration-reference.md'))) {
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(/^## (.+)$/gm)) {
    // A navigation heading; and the environment section, whose key is `env`.
    if (match[1].trim() === 'Related') continue;
    if (match[1].trim() === 'Environment') match[1] = '`env`';
    const quoted = [...match[1].matchAll(/`([A-Za-z][A-Za-z0-9]*)`/g)].map((found) => found[1]);
    const first = /^([A-Za-z][A-Za-z0-9]*)/.exec(match[1]);
    for (const key of match[1].includes('`') ? quoted : first ? [lowerFirst(first[1])] : []) topLevel.add(key);
    // A heading that is one word or one key (`## Logging`, `## \`worktreeRoot\``) is a section of its own.
    if (/^`?[A-Za-z][A-Za-z0-9]*`?$/.test(match[1].trim()) && first) sections.add(lowerFirst(first[1]));
    if (/^`[A-Za-z][A-Za-z0-9]*`$/.test(match[1].trim())) sections.add(quoted[0]);
  }
  for (const match of text.matchAll(/`([a-z][A-Za-z0-9]*)(?:\.[A-Za-z]+)*\.\*`/g)) topLevel.add(match[1]);
  for (const match of text.matchAll(/^- \[Configuration .*$/gm))
    for (const quoted of match[0].matchAll(/`([a-z][A-Za-z0-9]*)`/g)) topLevel.add(quoted[1]);
}
const fromBlocks = new Set();
for (const file of files) {
  for (const block of configBlocks(readFileSync(file, 'utf8'))) {
    if (Object.keys(block).every((key) => topLevel.has(key))) flatten(block, [], fromBlocks);
  }
}

// The reference pages also name keys in prose: `talk.speechLocale`, `agents.defaults.*`.
const fromProse = new Set();
for (const file of reference) {
  for (const match of readFileSync(file, 'utf8').matchAll(PROSE_PATH)) {
    const segments = match[1].split('.').map((segment) => (segment.startsWith('<') ? '*' : segment));
    if (!topLevel.has(segments[0])) continue;
    if (segments.at(-1) === '*') segments.pop();
    for (let i = 1; i <= segments.length; i++) fromProse.add(segments.slice(0, i).join('.'));
  }
}

const keys = [...new Set([...sections, ...fromBlocks, ...fromProse])].filter((key) => key !== '$schema').sort();
let source = 'OpenClaw';
try {
  source = `openclaw ${JSON.parse(readFileSync(join(docs, '..', 'package.json'), 'utf8')).version}`;
} catch {
  // A docs folder outside the npm package: no version to name.
}
// A tree of nested objects, `{ gateway: { mode: {}, … } }`, kept as JSON text: parsed only
// when a config has an unknown key, not at every boot.
const tree = {};
for (const key of keys) {
  let node = tree;
  for (const segment of key.split('.')) node = node[segment] ??= {};
}
const out = `// Generated by scripts/gen-openclaw-keys.mjs from the configuration docs of ${source}. Do not edit.
/** The config keys OpenClaw documents (${keys.length} paths) as a JSON tree; \`*\` stands for a map key or an array item. */
export const OPENCLAW_CONFIG_TREE = ${JSON.stringify(JSON.stringify(tree))};
`;
writeFileSync(join(root, 'sdk', 'generated', 'openclaw-keys.ts'), out);
console.log(`${keys.length} OpenClaw config keys from ${files.length} pages (${reference.length} reference pages)`);
