/** The agent loop's pure parts: reply shaping, block chunking, prompt, context budget, failover maths. */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BlockChunker, findFences, type ChatMessage } from '../sdk/index.js';
import { AuthProfiles, BILLING_STEPS_MS, COOLDOWN_STEPS_MS } from '../plugins/models/auth-profiles.js';
import { estimateTokens, modelChain } from '../sdk/agent/index.js';
import { compactionCut, compactionThreshold, pruneToolResults } from '../plugins/agent-loop/context.js';
import { toolPolicyService } from '../host/tool-policy.js';
import { resolveModelInput } from '../plugins/models/models.js';
import { buildSystemPrompt, IDENTITY_LINE } from '../plugins/agent-loop/prompt.js';
import { ensureWorkspace, parseReply, unknownAgentProblem } from '../sdk/agent/index.js';
import { SilentReplyFilter } from '../plugins/agent/silent-reply.js';
import { agentSettings } from '../plugins/models/settings.js';
import { loadBootstrapFiles, truncationMarker } from '../plugins/agent-loop/workspace.js';
import { parseModelRef } from '../sdk/models.js';
import { REPO, tempDir } from './helpers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('reply shaping', () => {
  it('NO_REPLY is silent, alone or trailing', () => {
    expect(parseReply('NO_REPLY')).toMatchObject({ silent: true, text: '' });
    expect(parseReply('  NO_REPLY \n')).toMatchObject({ silent: true });
    expect(parseReply('Nothing to add. NO_REPLY')).toMatchObject({ silent: false });
    expect(parseReply('Hello')).toMatchObject({ silent: false, text: 'Hello' });
  });

  it('the silent token matches in any case', () => {
    expect(parseReply('no_reply')).toMatchObject({ silent: true, text: '' });
    expect(parseReply('No_Reply\n')).toMatchObject({ silent: true, text: '' });
  });

  it('streamed text holds back what could still become NO_REPLY, and drops it when it does', () => {
    const stream = (filter: SilentReplyFilter, events: Array<Record<string, unknown>>) =>
      events.flatMap((event) => filter.filter(event));
    const deltas = (out: Array<Record<string, unknown>>) =>
      out.filter((event) => typeof event.delta === 'string').map((event) => event.delta);
    const filter = new SilentReplyFilter();
    // The token in pieces: nothing of it ever comes out, the message end still does.
    const silent = stream(filter, [
      { delta: '\nN' },
      { delta: 'O_' },
      { delta: 'REP' },
      { delta: 'LY' },
      { delta: ' \n' },
      { messageEnd: true, toolCalls: 0 },
    ]);
    expect(deltas(silent)).toEqual([]);
    expect(silent).toEqual([{ messageEnd: true, toolCalls: 0 }]);
    expect(deltas(stream(filter, [{ delta: 'no_r' }, { delta: 'eply' }, { messageEnd: true }]))).toEqual([]);
    // "No" could start the token; " thanks" rules it out and both go out together, then live.
    expect(deltas(stream(filter, [{ delta: 'No' }]))).toEqual([]);
    expect(deltas(stream(filter, [{ delta: ' thanks' }, { delta: '!' }]))).toEqual(['No thanks', '!']);
    expect(stream(filter, [{ messageEnd: true }])).toEqual([{ messageEnd: true }]);
    // A whole answer that is a prefix of the token comes out when its message ends.
    expect(deltas(stream(filter, [{ delta: 'NO' }, { messageEnd: true }]))).toEqual(['NO']);
    // More text after the whole token: not silent (the delivered reply keeps it too).
    expect(
      deltas(stream(filter, [{ delta: 'NO_REPLY' }, { delta: ' needed, all good' }, { messageEnd: true }])),
    ).toEqual(['NO_REPLY needed, all good']);
    // A retry (reset) forgets what was held; thinking passes untouched.
    expect(stream(filter, [{ delta: 'NO_' }, { reset: true }, { thinkingDelta: 'hm' }, { delta: 'Hi' }])).toEqual([
      { reset: true },
      { thinkingDelta: 'hm' },
      { delta: 'Hi' },
    ]);
  });

  it('an agent exists when it is the default agent or listed in agents.list', () => {
    expect(unknownAgentProblem({}, 'main')).toBeUndefined();
    expect(unknownAgentProblem({}, 'Main')).toBeUndefined();
    expect(unknownAgentProblem({}, 'work')).toBe(
      'unknown agent "work": the configured agent is main (agents.list in the config)',
    );
    const config = { agents: { list: [{ id: 'home', default: true }, { id: 'work' }] } } as never;
    expect(unknownAgentProblem(config, 'work')).toBeUndefined();
    expect(unknownAgentProblem(config, 'main')).toBe(
      'unknown agent "main": the configured agents are home, work (agents.list in the config)',
    );
  });

  it('parses [[reply:id]] and [[media:url]] and strips them', () => {
    expect(parseReply('[[reply:123]] Sure! [[media:https://x.test/a.png]] [[media:/tmp/b.jpg]]')).toEqual({
      text: 'Sure!',
      replyTo: '123',
      media: ['https://x.test/a.png', '/tmp/b.jpg'],
      silent: false,
    });
    expect(parseReply('[[ reply_to : m-9 ]]ok').replyTo).toBe('m-9');
  });
});

describe('block chunker', () => {
  const paragraph = (n: number, size: number) => `${String(n).repeat(size - 1)}.`;

  it('emits blocks of 800–1200 characters, preferring paragraph breaks', () => {
    const chunker = new BlockChunker(800, 1200);
    const text = [paragraph(1, 500), paragraph(2, 500), paragraph(3, 500), paragraph(4, 500)].join('\n\n');
    const blocks = [...chunker.push(text), ...chunker.flush()];
    expect(blocks.join('\n\n')).toBe(text);
    expect(blocks[0]).toBe([paragraph(1, 500), paragraph(2, 500)].join('\n\n'));
    for (const block of blocks.slice(0, -1)) {
      expect(block.length).toBeGreaterThanOrEqual(800);
      expect(block.length).toBeLessThanOrEqual(1200);
    }
  });

  it('falls back to a newline, then a sentence end', () => {
    const lines = new BlockChunker(800, 1200);
    const byLine = `${'a'.repeat(900)}\n${'b'.repeat(900)}`;
    expect(lines.push(byLine)[0]).toBe('a'.repeat(900));
    const sentences = new BlockChunker(800, 1200);
    const bySentence = `${'word '.repeat(180)}end. ${'more '.repeat(100)}`;
    expect(sentences.push(bySentence)[0]!.endsWith('end.')).toBe(true);
  });

  it('holds text under the minimum until the message ends', () => {
    const chunker = new BlockChunker(800, 1200);
    expect(chunker.push('short answer')).toEqual([]);
    expect(chunker.flush()).toEqual(['short answer']);
  });

  it('never cuts inside a code fence; an oversized fence is closed and reopened', () => {
    const code = '```ts\n' + Array.from({ length: 60 }, (_, i) => `const line${i} = ${i};`).join('\n') + '\n```';
    const text = `${'Intro paragraph. '.repeat(30)}\n\n${code}\n\nAfter.`;
    const chunker = new BlockChunker(800, 1200);
    const blocks = [...chunker.push(text), ...chunker.flush()];
    for (const block of blocks) {
      const fences = findFences(block);
      expect(
        fences.every((fence) => fence.end !== Infinity),
        block,
      ).toBe(true);
      expect(block.length).toBeLessThanOrEqual(1200);
    }
    // Reassembled, the code is all there.
    const joined = blocks.join('\n');
    for (let i = 0; i < 60; i++) expect(joined).toContain(`const line${i} = ${i};`);
  });
});

describe('model refs and the chain', () => {
  it('splits provider/model at the first slash', () => {
    expect(parseModelRef('openai/gpt-4.1')).toEqual({ provider: 'openai', model: 'gpt-4.1' });
    expect(parseModelRef('openrouter/anthropic/claude-sonnet-4')).toEqual({
      provider: 'openrouter',
      model: 'anthropic/claude-sonnet-4',
    });
    expect(parseModelRef('gpt-4.1')).toBeUndefined();
  });

  it('builds primary + fallbacks and resolves aliases', () => {
    expect(modelChain({ primary: 'a/b', fallbacks: ['c/d', 'e/f'] })).toEqual(['a/b', 'c/d', 'e/f']);
    expect(modelChain('a/b')).toEqual(['a/b']);
    const settings = agentSettings(
      { agents: { defaults: { models: { 'anthropic/claude-opus-4-1': { alias: 'Opus' } } } } } as never,
      'main',
      '/s',
      '/w',
    );
    const catalog = [{ id: 'gpt-4.1', provider: 'openai', ref: 'openai/gpt-4.1', name: 'GPT-4.1' }];
    expect(resolveModelInput('opus', settings, catalog)).toBe('anthropic/claude-opus-4-1');
    expect(resolveModelInput('openai', settings, catalog)).toBe('openai/gpt-4.1');
    expect(resolveModelInput('gpt-4.1', settings, catalog)).toBe('openai/gpt-4.1');
    expect(resolveModelInput('x/y', settings, catalog)).toBe('x/y');
  });

  it('uses the documented defaults', () => {
    const settings = agentSettings({} as never, 'main', '/s', '/w');
    expect(settings).toMatchObject({
      timeoutSeconds: 600,
      bootstrapMaxChars: 20_000,
      compaction: { reserveTokensFloor: 20_000, memoryFlush: { softThresholdTokens: 4000 } },
    });
  });
});

describe('auth profile cooldowns', () => {
  it('1 → 5 → 25 → 60 minutes for repeated failures; billing 5 h doubling to 24 h; success resets', () => {
    expect(COOLDOWN_STEPS_MS).toEqual([1 * MINUTE, 5 * MINUTE, 25 * MINUTE, 60 * MINUTE]);
    expect(BILLING_STEPS_MS).toEqual([5 * HOUR, 10 * HOUR, 20 * HOUR, 24 * HOUR]);
    let now = 1_000_000;
    const file = join(tempDir(), 'agents', 'main', 'agent', 'auth-profiles.json');
    const profiles = new AuthProfiles(file, () => now);
    const waits = [1, 2, 3, 4, 5].map(() => profiles.markFailure('openai:a', 'rate_limit').cooldownUntil! - now);
    expect(waits).toEqual([1 * MINUTE, 5 * MINUTE, 25 * MINUTE, 60 * MINUTE, 60 * MINUTE]);
    expect(profiles.available('openai:a')).toBe(false);
    now += 60 * MINUTE + 1;
    expect(profiles.available('openai:a')).toBe(true);
    profiles.markSuccess('openai:a');
    expect(profiles.markFailure('openai:a', 'timeout').cooldownUntil! - now).toBe(MINUTE);
    const billing = [1, 2, 3, 4, 5].map(() => profiles.markFailure('openai:b', 'billing').cooldownUntil! - now);
    expect(billing).toEqual([5 * HOUR, 10 * HOUR, 20 * HOUR, 24 * HOUR, 24 * HOUR]);
    // Persisted for the next process.
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.usageStats['openai:b']).toMatchObject({ billingErrorCount: 5, lastFailureKind: 'billing' });
  });

  it('rate limits and overload cool one model of a key; auth cools the key; 24 h without failures start the steps over', () => {
    let now = 1_000_000;
    const profiles = new AuthProfiles(join(tempDir(), 'auth-profiles.json'), () => now);
    expect(profiles.markFailure('openai:a', 'rate_limit', undefined, 'gpt-4.1').cooldownUntil! - now).toBe(MINUTE);
    expect(profiles.markFailure('openai:a', 'overloaded', undefined, 'gpt-4.1').cooldownUntil! - now).toBe(5 * MINUTE);
    expect(profiles.cooldown('openai:a', 'gpt-4.1')).toEqual({
      scope: 'model',
      kind: 'overloaded',
      until: now + 5 * MINUTE,
    });
    expect(profiles.available('openai:a', 'gpt-4.1-mini')).toBe(true);
    expect(profiles.available('openai:a')).toBe(true);
    // A day later the streak is forgotten: the next failure is a first one again.
    now += 25 * HOUR;
    expect(profiles.recovering('openai:a', 'gpt-4.1')).toBe(true);
    expect(profiles.markFailure('openai:a', 'rate_limit', undefined, 'gpt-4.1').cooldownUntil! - now).toBe(MINUTE);
    // Auth is about the key: every model of it waits.
    profiles.markFailure('openai:a', 'auth', undefined, 'gpt-4.1-mini');
    expect(profiles.cooldown('openai:a', 'o3')).toEqual({ scope: 'profile', kind: 'auth', until: now + MINUTE });
    // A success clears the profile and that model's streak.
    now += 2 * MINUTE;
    profiles.markSuccess('openai:a', 'gpt-4.1');
    expect(profiles.usage('openai:a')).toMatchObject({ errorCount: 0 });
    expect(profiles.usage('openai:a').models).toBeUndefined();
    expect(profiles.recovering('openai:a', 'gpt-4.1')).toBe(false);
  });

  it('orders profiles: file order, then config key, then environment', () => {
    const dir = tempDir();
    const file = join(dir, 'auth-profiles.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        profiles: { 'openai:b': { provider: 'openai', key: 'kb' }, 'openai:a': { provider: 'openai', key: 'ka' } },
        order: { openai: ['openai:a'] },
      }),
    );
    const list = new AuthProfiles(file).profilesFor('openai', {
      configKey: 'kc',
      envKeys: ['OPENAI_API_KEY'],
      env: { OPENAI_API_KEY: 'ke' },
    });
    expect(list.map((profile) => [profile.id, profile.source])).toEqual([
      ['openai:a', 'file'],
      ['openai:b', 'file'],
      ['openai:config', 'config'],
      ['openai:env:OPENAI_API_KEY', 'env'],
    ]);
  });
});

describe('system prompt', () => {
  const base = {
    tools: [{ name: 'read', description: 'Read a file' }],
    workspaceDir: '/w',
    skills: [{ name: 'weather', description: 'Weather lookups', location: '/s/weather/SKILL.md' }],
    runtime: { host: 'h', os: 'linux', node: 'v20', model: 'openai/gpt-4.1', thinking: 'off', agentId: 'main' },
    userTimezone: 'Europe/Berlin',
  };

  it('full has every section; minimal drops skills and reply rules; none is the identity line', () => {
    const bootstrap = [
      {
        name: 'AGENTS.md',
        path: '/w/AGENTS.md',
        status: 'ok' as const,
        rawChars: 5,
        injectedChars: 5,
        content: 'Rules',
      },
    ];
    const full = buildSystemPrompt({ ...base, mode: 'full', bootstrap }).prompt;
    for (const heading of [
      '## Tooling',
      '## Safety',
      '## Skills',
      '## Workspace',
      '## Current Date & Time',
      '## Replies',
      '# Project Context',
      '## Runtime',
    ])
      expect(full).toContain(heading);
    expect(full).toContain('Europe/Berlin');
    expect(full).toContain('<name>weather</name>');
    const minimal = buildSystemPrompt({ ...base, mode: 'minimal', bootstrap }).prompt;
    expect(minimal).toContain('## Tooling');
    expect(minimal).toContain('# Project Context');
    expect(minimal).not.toContain('## Skills');
    expect(minimal).not.toContain('## Replies');
    expect(buildSystemPrompt({ ...base, mode: 'none', bootstrap }).prompt).toBe(IDENTITY_LINE);
    // No skills: no skills section.
    expect(buildSystemPrompt({ ...base, skills: [], mode: 'full', bootstrap }).prompt).not.toContain('## Skills');
  });

  it('bootstrap files: empty skipped, capped with a marker, missing marked, MEMORY.md in the main session only', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'AGENTS.md'), 'Be kind.');
    writeFileSync(join(dir, 'SOUL.md'), '   \n');
    writeFileSync(join(dir, 'TOOLS.md'), 'x'.repeat(300));
    writeFileSync(join(dir, 'MEMORY.md'), 'remember');
    const main = loadBootstrapFiles(dir, { mainSession: true, maxChars: 100 });
    expect(main.map((file) => [file.name, file.status])).toEqual([
      ['AGENTS.md', 'ok'],
      ['SOUL.md', 'empty'],
      ['TOOLS.md', 'truncated'],
      ['IDENTITY.md', 'missing'],
      ['USER.md', 'missing'],
      ['BOOTSTRAP.md', 'missing'],
      ['MEMORY.md', 'ok'],
    ]);
    expect(main[2]!.content).toBe('x'.repeat(100) + truncationMarker('TOOLS.md', 300, 100));
    expect(loadBootstrapFiles(dir, { mainSession: false, maxChars: 100 }).map((file) => file.name)).not.toContain(
      'MEMORY.md',
    );
    const prompt = buildSystemPrompt({ ...base, mode: 'full', bootstrap: main }).prompt;
    expect(prompt).toContain('## IDENTITY.md\n[MISSING] Expected at:');
    expect(prompt).not.toContain('## SOUL.md');
    expect(prompt).toContain('TOOLS.md truncated: showing 100 of 300 characters');
  });

  it("daily memory: yesterday's and today's memory/YYYY-MM-DD.md are injected in every session", () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'memory'));
    writeFileSync(join(dir, 'memory', '2026-11-20.md'), '- yesterday: booked the flight');
    writeFileSync(join(dir, 'memory', '2026-11-21.md'), '- today: packed');
    writeFileSync(join(dir, 'memory', '2026-11-19.md'), '- two days ago: not injected');
    const now = new Date(2026, 10, 21, 12, 0, 0);
    for (const mainSession of [true, false]) {
      const files = loadBootstrapFiles(dir, { mainSession, maxChars: 1000, now });
      expect(files.filter((file) => file.name.startsWith('memory/')).map((file) => [file.name, file.content])).toEqual([
        ['memory/2026-11-20.md', '- yesterday: booked the flight'],
        ['memory/2026-11-21.md', '- today: packed'],
      ]);
    }
    // In a zone where it is already the 22nd, the pair moves on.
    const names = loadBootstrapFiles(dir, {
      mainSession: true,
      maxChars: 1000,
      now: new Date(Date.UTC(2026, 10, 21, 23, 30)),
      timeZone: 'Asia/Tokyo',
    }).map((file) => file.name);
    expect(names.filter((name) => name.startsWith('memory/'))).toEqual(['memory/2026-11-21.md']);
  });

  it('claw setup templates: created once, never overwritten', () => {
    const dir = join(tempDir(), 'workspace');
    const first = ensureWorkspace(dir, join(REPO, 'plugins', 'agent', 'templates'));
    expect(first.created).toEqual(
      expect.arrayContaining(['AGENTS.md', 'SOUL.md', 'TOOLS.md', 'IDENTITY.md', 'USER.md', 'BOOTSTRAP.md']),
    );
    writeFileSync(join(dir, 'SOUL.md'), 'mine');
    const second = ensureWorkspace(dir, join(REPO, 'plugins', 'agent', 'templates'));
    expect(second.created).toEqual([]);
    expect(readFileSync(join(dir, 'SOUL.md'), 'utf8')).toBe('mine');
    mkdirSync(join(dir, 'memory'), { recursive: true });
  });

  it('BOOTSTRAP.md is seeded into a brand-new workspace only', () => {
    const templates = join(REPO, 'plugins', 'agent', 'templates');
    // The ritual ran and deleted it: setup again does not bring it back.
    const done = join(tempDir(), 'workspace');
    expect(ensureWorkspace(done, templates).created).toContain('BOOTSTRAP.md');
    rmSync(join(done, 'BOOTSTRAP.md'));
    expect(ensureWorkspace(done, templates).created).toEqual([]);
    expect(existsSync(join(done, 'BOOTSTRAP.md'))).toBe(false);
    // A workspace the user already has (any workspace file, or only MEMORY.md): no ritual.
    for (const existing of ['AGENTS.md', 'MEMORY.md']) {
      const dir = join(tempDir(), 'workspace');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, existing), 'mine');
      const result = ensureWorkspace(dir, templates);
      expect(result.created, existing).not.toContain('BOOTSTRAP.md');
      expect(result.created, existing).toContain('SOUL.md');
      expect(existsSync(join(dir, 'BOOTSTRAP.md')), existing).toBe(false);
    }
  });
});

describe('context budget', () => {
  const user = (text: string): ChatMessage => ({ role: 'user', content: text, timestamp: 0 });
  const assistant = (text: string): ChatMessage => ({
    role: 'assistant',
    content: [{ type: 'text', text }],
    timestamp: 0,
  });
  const toolResult = (text: string, name = 'exec'): ChatMessage => ({
    role: 'toolResult',
    toolCallId: 't',
    toolName: name,
    content: [{ type: 'text', text }],
    timestamp: 0,
  });

  it('threshold = window − reserveTokensFloor − softThreshold', () => {
    const settings = agentSettings({} as never, 'main', '/s', '/w');
    expect(compactionThreshold(200_000, settings.compaction)).toBe(176_000);
    expect(estimateTokens(4001)).toBe(1001);
  });

  it('the cut lands on a user message and keeps the recent tail', () => {
    const messages = [
      user('a'.repeat(400)),
      assistant('b'.repeat(400)),
      user('c'.repeat(400)),
      assistant('d'),
      user('e'),
      assistant('f'),
    ];
    expect(compactionCut(messages, 150)).toBe(2);
    expect(compactionCut(messages, 10)).toBe(4);
    expect(compactionCut([user('only')], 10)).toBe(0);
  });

  it('cache-ttl pruning: soft-trims then hard-clears old tool results only, never images or recent ones', () => {
    const settings = agentSettings(
      {
        agents: { defaults: { contextPruning: { mode: 'cache-ttl', keepLastAssistants: 1, minPrunableToolChars: 0 } } },
      } as never,
      'main',
      '/s',
      '/w',
    ).pruning;
    const big = 'z'.repeat(10_000);
    const image: ChatMessage = {
      role: 'toolResult',
      toolCallId: 'i',
      toolName: 'read',
      content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
      timestamp: 0,
    };
    const messages = [
      user('q'),
      assistant('calling'),
      toolResult(big),
      image,
      assistant('calling again'),
      toolResult(big),
      assistant('done'),
    ];
    const pruned = pruneToolResults(messages, settings, 5_000, toolPolicyService); // 20k chars of window
    expect(pruned[0]).toBe(messages[0]);
    expect(pruned[3]).toBe(image);
    const old = (pruned[2] as any).content[0].text as string;
    expect(
      old === '[Old tool result content cleared]' || old.includes('[Tool result trimmed: 10000 characters originally]'),
    ).toBe(true);
    // The transcript copy is untouched.
    expect((messages[2] as any).content[0].text).toBe(big);
    // Too few assistants to find the cutoff: nothing is pruned.
    const strict = { ...settings, keepLastAssistants: 10 };
    expect(pruneToolResults(messages, strict, 5_000, toolPolicyService)).toEqual(messages);
  });
});
