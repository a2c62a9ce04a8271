/**
 * Query processing in the SQLite keyword index (issue 34): stemming, typo tolerance, heading
 * and path weight, proximity; and a quality floor on the held-out question set over
 * OpenClaw's documentation (test/bench/heldout-docs.ts), which `npm test` installs. The
 * floors sit a little under the figures BENCHMARKS.md reports, so a change that loses answers
 * fails here, while the benchmark keeps the exact numbers.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../sdk/index.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { SqliteMemoryIndex } from '../plugins/memory-sqlite-engine/engine.js';
import { chunkContexts, pathWords } from '../plugins/memory-sqlite-engine/context.js';
import { correctedQuestion, corrections, editDistance } from '../plugins/memory-sqlite-engine/spelling.js';
import { memoryRanking } from '../plugins/memory-core/ranking.js';
import { memoryFiles } from '../plugins/memory-core/files.js';
import { memoryText } from '../plugins/memory-core/text.js';
import { REPO, tempDir } from './helpers.js';
import { retrievalBench } from './bench/retrieval.js';

const QUERY = { maxResults: 6, minScore: 0.35 };

async function indexOf(files: Record<string, string>): Promise<SqliteMemoryIndex> {
  const root = tempDir('claw-retrieval-');
  const workspace = join(root, 'workspace');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), text);
  }
  const settings = resolveMemorySettings(
    {
      agents: { defaults: { memorySearch: { provider: 'none', store: { path: join(root, 'index.sqlite') } } } },
    } as never,
    { agentId: 'main', workspaceDir: workspace, stateDir: root },
  );
  const index = await SqliteMemoryIndex.open(settings, {
    embeddings: { reason: 'keyword only' },
    logger: createLogger({ level: 'error' }),
    ranking: memoryRanking,
    files: memoryFiles,
    text: memoryText,
  });
  await index.sync({ force: true });
  return index;
}

const paths = async (index: SqliteMemoryIndex, query: string) =>
  (await index.search(query, QUERY)).results.map((hit) => hit.path);

describe('keyword query processing', () => {
  it('matches other forms of a word through the Porter stemmer', async () => {
    const index = await indexOf({
      'memory/2026-02-01.md': '- We deployed the billing fix after the outage.\n',
      'memory/2026-02-02.md': '- Lunch with Dana.\n',
    });
    expect(await paths(index, 'deploying billing fixes')).toEqual(['memory/2026-02-01.md']);
    expect(await paths(index, 'outages')).toEqual(['memory/2026-02-01.md']);
    await index.close();
  });

  it('finds a misspelt word through the index vocabulary, and leaves known words alone', async () => {
    const index = await indexOf({
      'memory/telegram.md': '# Telegram\n\nThe webhook path defaults to /telegram-webhook.\n',
      'memory/discord.md': '# Discord\n\nThe gateway intents need the message content flag.\n',
    });
    expect((await paths(index, 'telegram webhok path'))[0]).toBe('memory/telegram.md');
    expect(await paths(index, 'defualt webhok')).toEqual(['memory/telegram.md']);
    expect((await paths(index, 'mesage contnet intents'))[0]).toBe('memory/discord.md');
    await index.close();
  });

  it('ranks the page whose path or heading names the subject above a page that mentions it in passing', async () => {
    const index = await indexOf({
      'memory/channels/telegram-webhooks.md':
        '# Webhooks for Telegram\n\nSet the public URL and a secret. The listener answers on its own port.\n',
      'memory/notes/misc.md':
        '# Misc\n\nTelegram came up today; someone asked about webhooks but we talked about lunch instead, and the weather, and the train.\n',
      'memory/guide.md':
        '# Guide\n\n## Chat apps\n\n### Signal pairing\n\nScan the code with the phone. Telegram and webhooks are covered elsewhere.\n',
    });
    expect((await paths(index, 'telegram webhooks'))[0]).toBe('memory/channels/telegram-webhooks.md');
    expect((await paths(index, 'signal pairing'))[0]).toBe('memory/guide.md');
    await index.close();
  });

  it('ranks a chunk where the question words stand together above one where they lie far apart', async () => {
    const filler = 'The rest of the note is about other things entirely, errands and calls and plans. '.repeat(3);
    const index = await indexOf({
      'memory/far.md': `- Checked the certificate on the router. ${filler} Later the renewal of the lease came up.\n`,
      'memory/near.md': `- Certificate renewal is due on the 14th. ${filler}\n`,
    });
    expect((await paths(index, 'certificate renewal'))[0]).toBe('memory/near.md');
    await index.close();
  });

  it('path words drop the memory folder, extensions and dates; headings follow the open sections and skip code', () => {
    expect(pathWords('memory/channels/telegram/transports.md')).toBe('channels telegram transports');
    expect(pathWords('memory/2026-01-31.md')).toBe('');
    expect(pathWords('memory/2026-01-31-launch_plan.md')).toBe('launch plan');
    const text = [
      '---',
      'title: "Telegram"',
      '---',
      '# Setup',
      'intro',
      '## Webhooks',
      '```sh',
      '# not a heading',
      '```',
      'body',
      '# Troubleshooting',
      'end',
    ].join('\n');
    expect(chunkContexts('memory/telegram.md', text, [{ startLine: 1 }, { startLine: 10 }, { startLine: 12 }])).toEqual(
      ['telegram Telegram', 'telegram Telegram Setup Webhooks', 'telegram Telegram Troubleshooting'],
    );
  });

  it('gives the embedding side the corrected question, in the words the notes use', () => {
    const fixes = new Map([['configuraton', ['configur']]]);
    expect(correctedQuestion('Where is the Configuraton file?', fixes, () => 'configuration')).toBe(
      'Where is the configuration file?',
    );
    expect(correctedQuestion('nothing to fix', new Map(), () => 'x')).toBe('nothing to fix');
  });

  it('edit distance counts swaps as one edit and gives up past the limit', () => {
    expect(editDistance('webhok', 'webhook', 2)).toBe(1);
    expect(editDistance('defualt', 'default', 2)).toBe(1);
    expect(editDistance('gateway', 'gateway', 1)).toBe(0);
    expect(editDistance('cat', 'elephant', 2)).toBe(3);
    const vocabulary = {
      stems: (words: readonly string[]) => words.map((word) => word.toLowerCase()),
      termCounts: (terms: readonly string[]) => new Map(terms.map((term) => [term, term === 'known' ? 3 : 0])),
      termsBetween: (from: string) =>
        [
          { term: 'webhook', doc: 5 },
          { term: 'webhooks', doc: 1 },
          { term: 'known', doc: 3 },
        ].filter((entry) => entry.term.startsWith(from)),
    };
    expect(corrections(['webhok', 'known', 'abc', 'ops-1'], vocabulary)).toEqual(new Map([['webhok', ['webhook']]]));
  });
});

describe('retrieval quality floors (held-out sets, sqlite keyword)', () => {
  it('answers the held-out questions over OpenClaw’s docs and the typo’d and independent personal questions', async () => {
    const docsDir = join(REPO, '.cache', 'openclaw', 'node_modules', 'openclaw', 'docs');
    const result = await retrievalBench({ docsDir, only: 'sqlite' });
    const overall = (set: string, backend: string) =>
      result.runs.find((run) => run.set === set && run.name.startsWith(backend))!.overall;
    expect(result.corpora.map((corpus) => corpus.sets.map((set) => set.name)).flat()).toEqual([
      'personal, tuning set',
      "personal, typo'd (held-out)",
      'personal, independent (held-out)',
      'OpenClaw docs (held-out)',
    ]);
    expect(overall('OpenClaw docs (held-out)', 'sqlite keyword').hit5).toBeGreaterThanOrEqual(0.7);
    expect(overall("personal, typo'd (held-out)", 'sqlite keyword').hit5).toBeGreaterThanOrEqual(0.75);
    expect(overall('personal, independent (held-out)', 'sqlite keyword').hit5).toBeGreaterThanOrEqual(0.65);
    expect(overall('personal, tuning set', 'sqlite keyword').hit6).toBeGreaterThanOrEqual(0.8);
    // Hybrid (OpenClaw's 0.7 · vector + 0.3 · text, here with the hash embedder, which knows no
    // languages or synonyms) against keyword-only: the target is "never below"; on the typo'd
    // set it is one question below (cross-lingual questions the hash vectors pull away), so
    // this floor allows one question and BENCHMARKS.md reports the miss. The independent set
    // (written by someone who never saw the ranking) is four questions below, reported as a
    // miss too; its multi-hop questions name people by role, which bag-of-words vectors cannot
    // follow. The floor there guards against it getting worse.
    for (const set of ['personal, tuning set', "personal, typo'd (held-out)", 'OpenClaw docs (held-out)']) {
      const { n } = overall(set, 'sqlite keyword');
      expect(overall(set, 'sqlite hybrid').hit5, set).toBeGreaterThanOrEqual(
        overall(set, 'sqlite keyword').hit5 - 1 / n - 1e-9,
      );
    }
    const independent = overall('personal, independent (held-out)', 'sqlite keyword');
    expect(overall('personal, independent (held-out)', 'sqlite hybrid').hit5).toBeGreaterThanOrEqual(
      independent.hit5 - 4 / independent.n - 1e-9,
    );
  }, 300_000);
});
