/**
 * memory-qmd against the real qmd CLI (installed into .cache/ by scripts/install-qmd.mjs when
 * missing; that is the only network use): the shared memory contract, then what is QMD's own:
 * per-agent private homes, one long-lived `qmd mcp` process (reused, restarted when killed),
 * natural and Chinese questions, extra roots named qmd/<collection>/…, the periodic update,
 * never downloading a model, and the SQLite fallback for a missing binary, a timeout, a
 * failing exit, output that is not JSON-RPC and an empty answer.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryBackend, MemorySearchResult } from '../sdk/index.js';
import { CONTRACT_CORPUS, memoryContractSuite } from '../sdk/memory/contract.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { projectQmdPath, resolveQmdCommand, runQmd } from '../plugins/memory-qmd/qmd-cli.js';
import { writeTinyLlamaGguf } from './fixtures/gguf.js';
import { REPO, tempDir } from './helpers.js';

const PLUGIN = join(REPO, 'plugins', 'memory-qmd');
/** The SQLite fallback: the engine and its embeddings are services of these plugins. */
const FALLBACK = ['memory-sqlite-engine', 'embeddings'].map((id) => join(REPO, 'plugins', id));
const INSTALLER = join(REPO, 'scripts', 'install-qmd.mjs');
const QMD = join(REPO, '.cache', 'qmd', 'bin', 'qmd');

/** QMD's folders in the real home: nothing in this file may create or touch them. */
const realHomeQmd = () =>
  ['.config/qmd', '.cache/qmd'].map((dir) => {
    const path = join(homedir(), dir);
    return existsSync(path) ? `${dir}@${statSync(path).mtimeMs}` : `${dir}:absent`;
  });
let realHomeBefore: string[];

beforeAll(() => {
  realHomeBefore = realHomeQmd();
  // Installing touches the npm registry; with the wrapper in place this returns at once.
  const result = spawnSync(process.execPath, [INSTALLER, '--quiet'], { encoding: 'utf8', timeout: 10 * 60_000 });
  if (result.status !== 0)
    throw new Error(`scripts/install-qmd.mjs failed (exit ${result.status}):\n${result.stderr}${result.stdout}`);
}, 10 * 60_000);

afterAll(() => {
  expect(realHomeQmd()).toEqual(realHomeBefore);
});

memoryContractSuite({ name: 'memory-qmd', plugin: PLUGIN, plugins: FALLBACK, backend: 'qmd' });

// ── helpers ───────────────────────────────────────────────────────────────────────

interface Booted {
  kernel: TestKernel;
  memory: MemoryBackend;
  workspace: string;
}

const kernels: TestKernel[] = [];
afterAll(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose();
});

async function boot(
  options: {
    qmd?: Record<string, unknown>;
    memorySearch?: Record<string, unknown>;
    agents?: Array<Record<string, unknown>>;
    env?: Record<string, string>;
  } = {},
): Promise<Booted> {
  const kernel = await createTestKernel({
    plugins: [PLUGIN, join(REPO, 'plugins', 'memory-core'), ...FALLBACK],
    env: options.env,
    config: {
      plugins: { slots: { memory: 'memory-qmd' }, entries: { 'memory-qmd': { config: { ...options.qmd } } } },
      agents: {
        defaults: { memorySearch: { ...options.memorySearch } },
        ...(options.agents ? { list: options.agents } : {}),
      },
    },
  });
  kernels.push(kernel);
  const workspace = kernel.paths.workspaceDir;
  for (const [name, text] of Object.entries(CONTRACT_CORPUS)) {
    mkdirSync(join(workspace, name, '..'), { recursive: true });
    writeFileSync(join(workspace, name), `${text}\n`);
  }
  const memory = await kernel.capabilities.slot('memory');
  if (!memory) throw new Error('memory-qmd did not register a memory backend');
  return { kernel, memory, workspace };
}

function script(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

/**
 * A stand-in qmd whose search server (`qmd mcp`, read when it starts) misbehaves as the mode file says (garbage, fail, sleep) and
 * that runs the real qmd for everything else, so sync keeps working.
 */
function flakyQmd(dir: string): {
  command: string;
  setMode(mode: '' | 'garbage' | 'fail' | 'sleep'): void;
  pidFile: string;
} {
  const modeFile = join(dir, 'mode');
  const pidFile = join(dir, 'pid');
  writeFileSync(modeFile, '');
  const command = script(
    dir,
    'flaky-qmd',
    [
      '#!/bin/sh',
      `mode=$(cat '${modeFile}')`,
      // argv is: --index index <subcommand> …; searches go to the `mcp` server process.
      'if [ "$3" = mcp ]; then',
      '  case "$mode" in',
      `    garbage) echo 'Searching… {"oops": [1, 2'; exec sleep 30;;`,
      `    fail) echo 'qmd: database disk image is malformed' >&2; exit 3;;`,
      `    sleep) echo $$ > '${pidFile}'; exec sleep 30;;`,
      '  esac',
      'fi',
      `exec '${QMD}' "$@"`,
      '',
    ].join('\n'),
  );
  return { command, pidFile, setMode: (mode) => writeFileSync(modeFile, mode) };
}

const paths = (result: MemorySearchResult) => result.results.map((hit) => hit.path);
const warnings = (kernel: TestKernel, pattern: RegExp) =>
  kernel.logs.filter((record) => record.level === 'warn' && pattern.test(record.message));

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// ── QMD specifics ─────────────────────────────────────────────────────────────────

describe('memory-qmd: installation and command resolution', () => {
  it('the installer is idempotent and fast once qmd is installed', () => {
    const started = Date.now();
    const result = spawnSync(process.execPath, [INSTALLER], { encoding: 'utf8', timeout: 60_000 });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/qmd 2\.8\.\d+.*already installed/);
    expect(Date.now() - started).toBeLessThan(3000);
    const wrapper = readFileSync(QMD, 'utf8');
    expect(wrapper).toMatch(/^#!\/bin\/sh\n/);
    expect(wrapper).toMatch(
      /exec '.*\/\.cache\/qmd-node\/node_modules\/node-[a-z0-9]+-[a-z0-9]+\/bin\/node' '.*@tobilu\/qmd\/dist\/cli\/qmd\.js' "\$@"/,
    );
    const scratch = tempDir('claw-qmd-version-');
    expect(
      spawnSync(QMD, ['--version'], {
        encoding: 'utf8',
        env: { ...process.env, XDG_CONFIG_HOME: scratch, XDG_CACHE_HOME: scratch },
      }).stdout,
    ).toMatch(/^qmd 2\.8\./);
  });

  it('finds the project copy from the source tree and from dist/, after qmd on PATH', async () => {
    expect(projectQmdPath(PLUGIN)).toBe(QMD);
    expect(projectQmdPath(join(REPO, 'dist', 'plugins', 'memory-qmd'))).toBe(QMD);
    expect(resolveQmdCommand(undefined, { PATH: '/nonexistent' }, PLUGIN)).toEqual({ path: QMD, source: 'project' });
    const bin = tempDir('claw-qmd-path-');
    const onPath = script(bin, 'qmd', '#!/bin/sh\nexit 0\n');
    expect(resolveQmdCommand(undefined, { PATH: bin }, PLUGIN)).toEqual({ path: onPath, source: 'PATH' });
    expect(resolveQmdCommand('qmd', { PATH: bin }, PLUGIN)).toEqual({ path: onPath, source: 'config' });
    expect(resolveQmdCommand('/opt/qmd/bin/qmd', { PATH: bin }, PLUGIN)).toEqual({
      path: '/opt/qmd/bin/qmd',
      source: 'config',
    });
    // Neither on PATH nor installed: the bare name, which fails as "not found" with the way to install it.
    const nowhere = resolveQmdCommand(undefined, { PATH: '/nonexistent' }, tempDir('claw-qmd-elsewhere-'));
    expect(nowhere).toEqual({ path: 'qmd', source: 'PATH' });
    await expect(
      runQmd(nowhere, ['search', '--json', '--', 'x'], { env: {}, cwd: bin, timeoutMs: 1000 }),
    ).rejects.toMatchObject({
      kind: 'missing',
      reason:
        'the qmd command "qmd" was not found on PATH, and the project copy is not installed (run "npm run setup:qmd")',
    });
  });
});

describe('memory-qmd: private QMD homes', () => {
  it('runs qmd with XDG dirs (and HOME) under <stateDir>/agents/<agentId>/qmd, one per agent, never the real home', async () => {
    const before = realHomeQmd();
    const dir = tempDir('claw-qmd-spy-');
    const log = join(dir, 'calls.jsonl');
    const spy = script(
      dir,
      'spy-qmd',
      [
        `#!${process.execPath}`,
        `const { appendFileSync } = require('node:fs');`,
        `appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, HOME: process.env.HOME }) + '\\n');`,
        `const result = require('node:child_process').spawnSync(${JSON.stringify(QMD)}, process.argv.slice(2), { stdio: 'inherit' });`,
        `process.exit(result.status ?? 1);`,
        '',
      ].join('\n'),
    );
    const workDir = tempDir('claw-qmd-work-');
    mkdirSync(join(workDir, 'memory'), { recursive: true });
    writeFileSync(
      join(workDir, 'memory', '2026-12-01.md'),
      '# Work\n\nThe espresso machine in the lab needs descaling.\n',
    );
    const { kernel, memory } = await boot({
      qmd: { command: spy },
      agents: [
        { id: 'main', default: true },
        { id: 'work', workspace: workDir },
      ],
    });

    const main = await memory.search('websocket reconnect bug', { agentId: 'main' });
    expect(main.backend, JSON.stringify(main)).toBe('qmd');
    expect(paths(main)).toContain('memory/2026-11-02.md');
    const work = await memory.search('espresso descaling', { agentId: 'work' });
    expect(work.backend, JSON.stringify(work)).toBe('qmd');
    expect(paths(work), JSON.stringify(work)).toEqual(['memory/2026-12-01.md']);
    // Each agent only sees its own files.
    expect(paths(await memory.search('espresso descaling', { agentId: 'main' }))).toEqual([]);

    const calls = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
    const homeOf = (agent: string) => join(kernel.stateDir, 'agents', agent, 'qmd');
    for (const agent of ['main', 'work']) {
      const mine = calls.filter((call) => call.XDG_CONFIG_HOME === join(homeOf(agent), 'xdg-config'));
      expect(mine.length, agent).toBeGreaterThan(0);
      for (const call of mine)
        expect(call).toMatchObject({
          XDG_CACHE_HOME: join(homeOf(agent), 'xdg-cache'),
          HOME: homeOf(agent),
          cwd: homeOf(agent),
        });
      expect(existsSync(join(homeOf(agent), 'xdg-config', 'qmd', 'index.yml')), agent).toBe(true);
      expect(existsSync(join(homeOf(agent), 'xdg-cache', 'qmd', 'index.sqlite')), agent).toBe(true);
    }
    expect(calls.every((call) => [homeOf('main'), homeOf('work')].includes(call.HOME))).toBe(true);
    // One collection: MEMORY.md from the workspace root and memory/ recursively.
    const adds = calls.filter((call) => call.argv.includes('add') && call.XDG_CONFIG_HOME.startsWith(homeOf('main')));
    expect(adds.map((call) => call.argv.slice(2))).toEqual([
      [
        'collection',
        'add',
        kernel.paths.workspaceDir,
        '--name',
        'memory',
        '--mask',
        'MEMORY.md,memory.md,memory/**/*.md',
      ],
    ]);
    expect(realHomeQmd()).toEqual(before);

    // Questions travel inside JSON-RPC messages on the server's stdin: never in argv, never through a shell.
    const marker = join(dir, 'pwned');
    const query = `-n 1 "Alice" $(touch ${marker}); budget \`touch ${marker}\``;
    const answered = await memory.search(query, { agentId: 'main' });
    expect(answered.backend, JSON.stringify(answered)).toBe('qmd');
    expect(paths(answered)).toContain('MEMORY.md');
    const all = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { argv: string[] });
    expect(all.filter((call) => call.argv[2] === 'mcp').map((call) => call.argv)).toEqual([
      ['--index', 'index', 'mcp'],
      ['--index', 'index', 'mcp'],
    ]);
    expect(all.some((call) => call.argv.some((arg) => arg.includes('budget')))).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it('manages collections idempotently: a repeated sync adds none, a wiped QMD config is rebuilt', async () => {
    const { kernel, memory } = await boot();
    const adds = () => kernel.logs.filter((record) => /qmd collection add took/.test(record.message)).length;
    await memory.sync!({ agentId: 'main' });
    expect(adds()).toBe(1);
    const home = join(kernel.stateDir, 'agents', 'main', 'qmd');
    const state = JSON.parse(readFileSync(join(home, 'claw-state.json'), 'utf8')) as {
      collections: Record<string, unknown>;
    };
    expect(Object.keys(state.collections)).toEqual(['memory']);
    const again = await memory.sync!({ agentId: 'main' });
    expect(again).toMatchObject({ indexed: 0, skipped: Object.keys(CONTRACT_CORPUS).length });
    expect(adds()).toBe(1);
    // Somebody removed QMD's config: the next sync notices and creates the collections again.
    rmSync(join(home, 'xdg-config'), { recursive: true, force: true });
    expect(await memory.sync!({ agentId: 'main' })).toMatchObject({
      indexed: Object.keys(CONTRACT_CORPUS).length,
      skipped: 0,
      rebuilt: true,
    });
    expect(adds()).toBe(2);
    const result = await memory.search('tomatoes basil balcony', { agentId: 'main' });
    expect(result.backend, JSON.stringify(result)).toBe('qmd');
    expect(paths(result)).toContain('memory/projects/garden.md');
  });
});

describe('memory-qmd: results', () => {
  it('names extra roots outside the workspace qmd/<collection>/…, reads them with memory_get, and refuses escapes', async () => {
    const outside = tempDir('claw-qmd-extra-');
    mkdirSync(join(outside, 'team-notes', 'infra'), { recursive: true });
    writeFileSync(
      join(outside, 'team-notes', 'infra', 'dns.md'),
      '# DNS\n\nThe resolver cache flushes every ninety seconds.\nRotate the zonefile keys in March.\n',
    );
    writeFileSync(join(outside, 'overview.md'), '# Overview\n\nQuarterly okapi census for the zoo.\n');
    writeFileSync(join(outside, 'secret.md'), 'TOP SECRET lamprey\n');
    const { memory, kernel } = await boot({
      memorySearch: { extraPaths: [join(outside, 'team-notes'), join(outside, 'overview.md'), 'docs'] },
    });
    mkdirSync(join(kernel.paths.workspaceDir, 'docs'), { recursive: true });
    writeFileSync(
      join(kernel.paths.workspaceDir, 'docs', 'runbook.md'),
      '# Runbook\n\nRestart the gateway with a narwhal incantation.\n',
    );

    const dns = await memory.search('resolver cache ninety seconds', { agentId: 'main' });
    expect(dns.backend, JSON.stringify(dns)).toBe('qmd');
    expect(dns.results[0]).toMatchObject({
      path: 'qmd/team-notes/infra/dns.md',
      startLine: 1,
      endLine: 4,
      source: 'extra',
    });
    expect(dns.results[0]!.snippet).toContain('ninety seconds');
    expect(paths(await memory.search('okapi census', { agentId: 'main' }))).toEqual(['qmd/overview/overview.md']);
    // Inside the workspace an extra path keeps its workspace-relative name.
    expect(paths(await memory.search('narwhal incantation', { agentId: 'main' }))).toEqual(['docs/runbook.md']);
    expect(paths(await memory.search('lamprey', { agentId: 'main' }))).toEqual([]);

    const read = await memory.get('qmd/team-notes/infra/dns.md', { agentId: 'main', from: 3, lines: 2 });
    expect(read).toMatchObject({
      path: 'qmd/team-notes/infra/dns.md',
      from: 3,
      lines: 2,
      totalLines: 4,
      text: 'The resolver cache flushes every ninety seconds.\nRotate the zonefile keys in March.',
    });
    expect((await memory.get('qmd/overview/overview.md', { agentId: 'main' })).text).toContain('okapi');
    // The built-in naming of the same files works too (that is what the SQLite fallback returns).
    expect((await memory.get('extra/team-notes/infra/dns.md', { agentId: 'main' })).text).toContain('resolver');
    for (const [path, reason] of [
      ['qmd/team-notes/../secret.md', /"\.\."/],
      ['qmd/overview/secret.md', /not a memory file/],
      ['qmd/nope/x.md', /unknown QMD collection "nope"/],
      ['qmd/team-notes/infra/missing.md', /does not exist/],
      ['qmd/team-notes/infra/dns.txt', /not a Markdown file/],
    ] as const) {
      await expect(memory.get(path, { agentId: 'main' }), path).rejects.toThrow(reason);
    }
  });

  it('gives snippets centred on the match with their line ranges, scores in (0, 1] best first, honours maxResults and minScore', async () => {
    const { memory, workspace } = await boot();
    const result = await memory.search('invoice printing vendor', { agentId: 'main' });
    expect(result).toMatchObject({ backend: 'qmd', mode: 'keyword' });
    expect(result.results[0]).toMatchObject({ path: 'memory/2026-11-01.md', startLine: 1, endLine: 4 });
    expect(result.results[0]!.snippet).toMatch(/- Follow up on the invoice from the printing vendor/);
    // A long note: the snippet is the part around the matching words, and its lines are where that part is.
    const long = [
      ...Array.from({ length: 40 }, (_, i) => `- Line ${i + 1}: ordinary errands and groceries, nothing of note.`),
      '- The kayak rental receipt is in the blue folder.',
      '- More groceries.',
    ];
    writeFileSync(join(workspace, 'memory', '2026-11-07.md'), `${long.join('\n')}\n`);
    await memory.sync!({ agentId: 'main' });
    const kayak = await memory.search('where did I put the kayak rental receipt?', { agentId: 'main' });
    expect(kayak.results[0]).toMatchObject({ path: 'memory/2026-11-07.md' });
    expect(kayak.results[0]!.snippet).toContain('kayak rental receipt');
    expect(kayak.results[0]!.startLine).toBeGreaterThan(20);
    expect(kayak.results[0]!.endLine).toBeGreaterThanOrEqual(41);
    const alice = await memory.search('Alice', { agentId: 'main', maxResults: 10 });
    expect(alice.results.length).toBeGreaterThanOrEqual(2);
    expect(alice.results.map((hit) => hit.score)).toEqual(
      [...alice.results.map((hit) => hit.score)].sort((a, b) => b - a),
    );
    expect((await memory.search('Alice', { agentId: 'main', maxResults: 1 })).results).toHaveLength(1);
    // Keyword scores are relative to the best hit, as in the built-in index.
    expect(alice.results[0]!.score).toBe(1);
    const strict = await memory.search('Alice', { agentId: 'main', maxResults: 10, minScore: 0.99 });
    expect(strict.results.length).toBeGreaterThanOrEqual(1);
    expect(strict.results.length).toBeLessThan(alice.results.length);
    expect(strict.results.every((hit) => hit.score >= 0.99)).toBe(true);
  });

  it('caps results at the configured maxResults', async () => {
    const { memory } = await boot({ qmd: { maxResults: 1 } });
    expect((await memory.search('Alice', { agentId: 'main', maxResults: 10, minScore: 0 })).results).toHaveLength(1);
  });
});

describe('memory-qmd: the sync service', () => {
  it('indexes at start-up and again every updateIntervalMinutes, without the watcher or search-time syncs', async () => {
    const { kernel, memory, workspace } = await boot({
      qmd: { updateIntervalMinutes: 0.01 },
      memorySearch: { sync: { watch: false, onSearch: false } },
    });
    await kernel.start();
    await until(async () => (await memory.status({ agentId: 'main' })).lastSyncAt !== null, 10_000);
    expect(paths(await memory.search('websocket reconnect', { agentId: 'main' }))).toContain('memory/2026-11-02.md');
    writeFileSync(join(workspace, 'memory', '2026-11-09.md'), '# 2026-11-09\n\nAdopted a capybara named Biscuit.\n');
    await until(
      async () => paths(await memory.search('capybara Biscuit', { agentId: 'main' })).includes('memory/2026-11-09.md'),
      10_000,
    );
  });
});

describe('memory-qmd: vector search only with a model on disk', () => {
  it('never downloads a model: without one, hybrid mode searches BM25, skips qmd embed, says so, and QMD never resolves a model', async () => {
    const dir = tempDir('claw-qmd-nomodel-');
    const log = join(dir, 'argv.log');
    const command = script(
      dir,
      'logging-qmd',
      ['#!/bin/sh', `echo "$3" >> '${log}'`, `exec '${QMD}' "$@"`, ''].join('\n'),
    );
    const { kernel, memory } = await boot({ qmd: { command, searchMode: 'query' } });
    await memory.sync!({ agentId: 'main', force: true });
    const result = await memory.search('websocket reconnect bug', { agentId: 'main' });
    expect(result).toMatchObject({ backend: 'qmd', mode: 'keyword' });
    expect(result.notice).toMatch(
      /QMD's embedding model is not on disk \(hf:ggml-org\/embeddinggemma-300M-GGUF\/embeddinggemma-300M-Q8_0\.gguf, looked in .*xdg-cache\/qmd\/models\); keyword \(BM25\) search only/,
    );
    expect(paths(result)[0]).toBe('memory/2026-11-02.md');
    expect(await memory.status({ agentId: 'main' })).toMatchObject({
      searchMode: 'query',
      retrieval: 'keyword (BM25)',
      embedModel: { path: null },
    });
    // QMD creates its model folder before it resolves (and so downloads) any model: it never got that far.
    const cache = join(kernel.stateDir, 'agents', 'main', 'qmd', 'xdg-cache', 'qmd');
    expect(existsSync(join(cache, 'models'))).toBe(false);
    const subcommands = readFileSync(log, 'utf8').trim().split('\n');
    expect(subcommands).toContain('mcp');
    for (const downloader of ['embed', 'pull', 'vsearch', 'query']) expect(subcommands).not.toContain(downloader);
  });

  it('with a real GGUF embedding model (QMD_EMBED_MODEL: a tiny generated one), qmd embed runs offline and searches are hybrid', async () => {
    const model = writeTinyLlamaGguf(join(tempDir('claw-qmd-gguf-'), 'tiny.gguf'), { seed: 5 });
    // CPU only: QMD's node-llama-cpp carries CUDA builds, and probing them on a machine without a GPU only slows the load.
    // CI set, as on a CI runner: QMD would refuse every model operation if the plugin passed it on.
    const { memory } = await boot({
      qmd: { searchMode: 'query' },
      env: { QMD_EMBED_MODEL: model, NODE_LLAMA_CPP_GPU: 'false', CI: 'true' },
    });
    expect(await memory.status({ agentId: 'main' })).toMatchObject({
      retrieval: 'hybrid (BM25 + vectors)',
      embedModel: { uri: model, path: model },
    });
    // A forced sync waits for `qmd embed`.
    const stats = await memory.sync!({ agentId: 'main', force: true });
    expect(stats.embedded).toBe(Object.keys(CONTRACT_CORPUS).length);
    // QMD loads the model in the background after the embed (holding QMD up meanwhile, so a search
    // then is answered from QMD's keywords or, past timeoutMs, by SQLite); then searches are hybrid.
    const ask = () => memory.search('What did we fix in the websocket reconnect?', { agentId: 'main' });
    let last: unknown;
    await until(async () => {
      const answer = await ask();
      last = {
        mode: answer.mode,
        backend: answer.backend,
        notice: answer.notice,
        status: await memory.status({ agentId: 'main' }),
      };
      return answer.mode === 'hybrid';
    }, 90_000).catch((error: Error) => {
      throw new Error(`${error.message}; last search: ${JSON.stringify(last)}`);
    });
    const result = await ask();
    expect(result, JSON.stringify(result)).toMatchObject({ backend: 'qmd', mode: 'hybrid' });
    expect(result.notice).toBeUndefined();
    // The weights are noise, so the vector list is too; the keyword lists still decide the first place.
    expect(paths(result)[0]).toBe('memory/2026-11-02.md');
  }, 150_000);

  it('with the embedding model on disk: status says hybrid, qmd embed runs in the background and is killed on close', async () => {
    const dir = tempDir('claw-qmd-embed-');
    const pidFile = join(dir, 'embed.pid');
    // `qmd embed` stands in for a long embedding run; everything else is real.
    const command = script(
      dir,
      'slow-embed-qmd',
      [
        '#!/bin/sh',
        `if [ "$3" = embed ]; then echo $$ > '${pidFile}'; exec sleep 30; fi`,
        `exec '${QMD}' "$@"`,
        '',
      ].join('\n'),
    );
    const { kernel, memory } = await boot({ qmd: { command, searchMode: 'query' } });
    const models = join(kernel.stateDir, 'agents', 'main', 'qmd', 'xdg-cache', 'qmd', 'models');
    mkdirSync(models, { recursive: true });
    // Named as node-llama-cpp names a pulled file; the stub embed never reads it.
    writeFileSync(join(models, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf'), 'GGUF');
    await kernel.start();
    const started = Date.now();
    const stats = await memory.sync!({ agentId: 'main' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(stats).toMatchObject({ files: Object.keys(CONTRACT_CORPUS).length, embedded: 0 });
    await until(() => existsSync(pidFile), 5000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    expect(await memory.status({ agentId: 'main' })).toMatchObject({
      searchMode: 'query',
      retrieval: 'hybrid (BM25 + vectors)',
      embedding: 'running',
      embedModel: { path: join(models, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf') },
    });
    // No vectors yet: QMD's keyword lists answer (its vector search finds no vector table and loads no model).
    const result = await memory.search('websocket reconnect bug', { agentId: 'main' });
    expect(result).toMatchObject({ backend: 'qmd', mode: 'keyword' });
    expect(paths(result)[0]).toBe('memory/2026-11-02.md');
    await kernel.dispose();
    kernels.splice(kernels.indexOf(kernel), 1);
    await until(() => !alive(pid), 3000);
  });
});

describe('memory-qmd: questions, one long-lived QMD server', () => {
  const serverOf = async (memory: MemoryBackend) =>
    (await memory.status({ agentId: 'main' })).server as { pid: number | null; starts: number };

  it('answers a multi-word natural question and a Chinese question from QMD, through one process', async () => {
    const { memory } = await boot({ qmd: { searchMode: 'search' } });
    await memory.sync!({ agentId: 'main' });
    const english = await memory.search('What did I decide with Alice about cutting conference travel?', {
      agentId: 'main',
    });
    expect(english, JSON.stringify(english)).toMatchObject({ backend: 'qmd', mode: 'keyword' });
    expect(english.notice).toBeUndefined();
    expect(paths(english)[0]).toBe('memory/2026-11-01.md');
    expect(english.results[0]!.snippet).toContain('conference travel');
    const chinese = await memory.search('我和田中先生讨论了什么设计？', { agentId: 'main' });
    expect(chinese, JSON.stringify(chinese)).toMatchObject({ backend: 'qmd' });
    expect(paths(chinese)[0]).toBe('memory/2026-11-03.md');
    expect(chinese.results[0]!.snippet).toContain('记忆系统的设计');
    const { pid, starts } = await serverOf(memory);
    expect(pid).toEqual(expect.any(Number));
    for (const question of ['How do I water the garden?', 'Which ticket got closed?', 'coffee', '東京のプロジェクト']) {
      expect((await memory.search(question, { agentId: 'main' })).backend).toBe('qmd');
    }
    // Every search went to the same process.
    expect(await serverOf(memory)).toEqual({ pid, starts });
    expect(starts).toBe(1);
  });

  it('restarts the server after it is killed, and answers from QMD again', async () => {
    const { kernel, memory } = await boot({ qmd: { searchMode: 'search' } });
    // With the service running, stopping the kernel closes the index.
    await kernel.start();
    // A cold QMD server on a busy machine may miss the first search's deadline (that search is
    // answered by SQLite, as designed): wait until QMD answers before killing it.
    await until(
      async () => (await memory.search('websocket reconnect bug', { agentId: 'main' })).backend === 'qmd',
      60_000,
    );
    const first = await serverOf(memory);
    process.kill(first.pid!, 'SIGKILL');
    await until(() => !alive(first.pid!), 3000);
    const again = await memory.search('websocket reconnect bug', { agentId: 'main' });
    expect(again.backend, JSON.stringify(again)).toBe('qmd');
    expect(paths(again)[0]).toBe('memory/2026-11-02.md');
    const second = await serverOf(memory);
    expect(second.pid).not.toBe(first.pid);
    expect(second.starts).toBe(first.starts + 1);
    expect(
      kernel.logs.some((record) => /the QMD server ended \(qmd mcp was killed by SIGKILL\)/.test(record.message)),
    ).toBe(true);
    // Closing the index ends the server.
    await kernel.dispose();
    kernels.splice(kernels.indexOf(kernel), 1);
    await until(() => !alive(second.pid!), 5000);
  }, 120_000);

  it('an empty QMD answer is answered by the SQLite index, with a notice; nothing anywhere says so too', async () => {
    const { memory, workspace } = await boot({
      qmd: { searchMode: 'search' },
      memorySearch: { sync: { watch: false, onSearch: false } },
    });
    expect((await memory.search('coffee', { agentId: 'main' })).backend).toBe('qmd');
    // Written after QMD's last update: QMD does not have it yet, the fallback syncs before it answers.
    writeFileSync(
      join(workspace, 'memory', '2026-11-08.md'),
      '# 2026-11-08\n\nRenewed the passport at the consulate; pick-up in three weeks.\n',
    );
    const result = await memory.search('when is the passport pick-up?', { agentId: 'main' });
    expect(result.backend, JSON.stringify(result)).toBe('sqlite');
    expect(result.notice).toMatch(/^QMD found nothing; answered by the built-in SQLite index/);
    expect(paths(result)[0]).toBe('memory/2026-11-08.md');
    const none = await memory.search('zeppelin xylophone', { agentId: 'main' });
    expect(none).toMatchObject({
      backend: 'qmd',
      results: [],
      notice: 'QMD found nothing; the built-in SQLite index found nothing either',
    });
  });
});

describe('memory-qmd: falling back to the built-in SQLite index', () => {
  it('answers from SQLite when the qmd binary is missing, says why, logs it once, and reports it in status', async () => {
    const { kernel, memory } = await boot({ qmd: { command: join(tempDir('claw-qmd-none-'), 'qmd') } });
    const first = await memory.search('websocket reconnect bug', { agentId: 'main' });
    expect(first.backend, JSON.stringify(first)).toBe('sqlite');
    expect(first.notice).toMatch(
      /QMD failed \(the qmd command .*\/qmd does not exist\); answered by the built-in SQLite index/,
    );
    expect(paths(first)).toContain('memory/2026-11-02.md');
    const second = await memory.search('tomatoes basil balcony', { agentId: 'main' });
    expect(second.backend, JSON.stringify(second)).toBe('sqlite');
    expect(paths(second)).toContain('memory/projects/garden.md');
    expect(warnings(kernel, /does not exist/)).toHaveLength(1);
    const status = await memory.status({ agentId: 'main' });
    expect(status).toMatchObject({
      backend: 'qmd',
      healthy: false,
      lastFailure: { reason: expect.stringMatching(/does not exist/) },
    });
    // memory_get does not need qmd at all.
    expect((await memory.get('MEMORY.md', { agentId: 'main', from: 4, lines: 1 })).text).toContain('dark roast coffee');
  });

  it('a configured command that is not on PATH is "not found on PATH"', async () => {
    const { memory } = await boot({ qmd: { command: 'qmd-that-is-not-installed' } });
    const result = await memory.search('OPS-4711', { agentId: 'main' });
    expect(result.backend, JSON.stringify(result)).toBe('sqlite');
    expect(result.notice).toMatch(/"qmd-that-is-not-installed" was not found on PATH/);
    expect(paths(result)).toContain('memory/2026-11-02.md');
  });

  it('answers from SQLite when the QMD server does not answer within timeoutMs, and kills it on close', async () => {
    const flaky = flakyQmd(tempDir('claw-qmd-slow-'));
    flaky.setMode('sleep');
    const { kernel, memory } = await boot({ qmd: { command: flaky.command, timeoutMs: 1000 } });
    await kernel.start();
    const started = Date.now();
    const result = await memory.search('websocket reconnect bug', { agentId: 'main' });
    const elapsed = Date.now() - started;
    expect(result.backend, JSON.stringify(result)).toBe('sqlite');
    expect(result.notice).toMatch(
      /QMD failed \(qmd mcp did not answer within 1000 ms \(still starting\)\); answered by the built-in SQLite index/,
    );
    expect(paths(result)).toContain('memory/2026-11-02.md');
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(10_000);
    const pid = Number(readFileSync(flaky.pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    await kernel.dispose();
    kernels.splice(kernels.indexOf(kernel), 1);
    await until(() => !alive(pid), 5000);
  });

  it('falls back on output that is not JSON and on a failing exit, and goes back to QMD once it recovers', async () => {
    const flaky = flakyQmd(tempDir('claw-qmd-flaky-'));
    const { kernel, memory } = await boot({ qmd: { command: flaky.command } });
    expect((await memory.search('Alice budget travel decision', { agentId: 'main' })).backend).toBe('qmd');
    // The mode is read when the server starts: end the running one so the next search starts another.
    const killServer = async () => {
      const pid = ((await memory.status({ agentId: 'main' })).server as { pid: number | null }).pid;
      if (pid) process.kill(pid, 'SIGKILL');
      await until(
        async () => ((await memory.status({ agentId: 'main' })).server as { pid: number | null }).pid === null,
        3000,
      );
    };

    flaky.setMode('garbage');
    await killServer();
    const garbage = await memory.search('Alice budget travel decision', { agentId: 'main' });
    expect(garbage.backend, JSON.stringify(garbage)).toBe('sqlite');
    expect(garbage.notice).toMatch(/QMD failed \(qmd mcp printed output that is not JSON-RPC: Searching… \{"oops"/);
    expect(paths(garbage)).toContain('memory/2026-11-01.md');

    flaky.setMode('fail');
    const failed = await memory.search('Alice budget travel decision', { agentId: 'main' });
    expect(failed.backend, JSON.stringify(failed)).toBe('sqlite');
    expect(failed.notice).toMatch(/qmd mcp exited with code 3: qmd: database disk image is malformed/);
    expect(await memory.status({ agentId: 'main' })).toMatchObject({
      backend: 'qmd',
      healthy: false,
      lastFailure: { reason: expect.stringMatching(/exited with code 3/) },
    });

    flaky.setMode('');
    const recovered = await memory.search('Alice budget travel decision', { agentId: 'main' });
    expect(recovered.backend, JSON.stringify(recovered)).toBe('qmd');
    expect(recovered.notice ?? '').not.toMatch(/QMD failed|answered by the built-in SQLite index/);
    expect(paths(recovered)).toContain('memory/2026-11-01.md');
    expect(await memory.status({ agentId: 'main' })).toMatchObject({ healthy: true });
    expect(kernel.logs.some((record) => record.level === 'info' && /QMD works again/.test(record.message))).toBe(true);
  });
});
