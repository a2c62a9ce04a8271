import { spawn } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HookBus } from '../sdk/index.js';
import { buildAgentMainSessionKey, normalizeAgentId, parseSessionKey, sessionTypeOf } from '../sdk/sessions/index.js';
import { deriveSessionKey, type SessionKeyConfig, type SessionRoute } from '../plugins/channels/session-key.js';
import { cronSessionKey } from '../plugins/cron/execute.js';
import { hookSessionKey } from '../plugins/hooks/webhook-actions.js';
import { nodeSessionKey, normalizeLegacyKey } from '../plugins/sessions/keys.js';
import {
  isStale,
  matchResetTrigger,
  mostRecentDailyReset,
  resetTriggersFrom,
  resolveResetPolicy,
  staleReason,
  type SessionResetConfig,
} from '../plugins/sessions/reset.js';
import { resolveSessionsDir, SessionStore, SessionStoreError } from '../plugins/sessions/store.js';
import {
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  isCompactionSummaryMessage,
  isMessageEntry,
  type MessageEntry,
} from '../sdk/sessions/index.js';
import { Transcript } from '../plugins/sessions/transcript.js';
import { createRedactor } from '../host/redact.js';
import { REPO, tempDir } from './helpers.js';

// ── Keys ─────────────────────────────────────────────────────────────────────────

const dm = (id: string, channel = 'telegram', extra: Partial<SessionRoute> = {}): SessionRoute => ({
  agentId: 'main',
  channel,
  peer: { kind: 'direct', id },
  ...extra,
});
const group = (id: string, channel = 'telegram', extra: Partial<SessionRoute> = {}): SessionRoute => ({
  agentId: 'main',
  channel,
  peer: { kind: 'group', id },
  ...extra,
});
const links = { alice: ['telegram:123', 'discord:9'] };

const derivations: Array<[string, SessionRoute, SessionKeyConfig, string]> = [
  ['DM, default scope is main', dm('123'), {}, 'agent:main:main'],
  ['DM, dmScope main', dm('123'), { dmScope: 'main' }, 'agent:main:main'],
  ['DM, per-peer', dm('123'), { dmScope: 'per-peer' }, 'agent:main:dm:123'],
  ['DM, per-channel-peer', dm('123'), { dmScope: 'per-channel-peer' }, 'agent:main:telegram:dm:123'],
  [
    'DM, per-account-channel-peer, account unset',
    dm('123'),
    { dmScope: 'per-account-channel-peer' },
    'agent:main:telegram:default:dm:123',
  ],
  [
    'DM, per-account-channel-peer, account set',
    dm('123', 'telegram', { accountId: 'Biz' }),
    { dmScope: 'per-account-channel-peer' },
    'agent:main:telegram:biz:dm:123',
  ],
  [
    'DM, main scope ignores account and channel',
    dm('123', 'whatsapp', { accountId: 'biz' }),
    { dmScope: 'main' },
    'agent:main:main',
  ],
  ['custom mainKey', dm('123'), { mainKey: 'home' }, 'agent:main:home'],
  ['custom agent id is normalized', dm('1', 'telegram', { agentId: 'Work Bot' }), {}, 'agent:work-bot:main'],
  [
    'empty agent id falls back to main',
    dm('1', 'telegram', { agentId: '' }),
    { dmScope: 'per-peer' },
    'agent:main:dm:1',
  ],
  [
    'identityLinks, per-peer, telegram',
    dm('123'),
    { dmScope: 'per-peer', identityLinks: links },
    'agent:main:dm:alice',
  ],
  [
    'identityLinks, per-peer, discord',
    dm('9', 'discord'),
    { dmScope: 'per-peer', identityLinks: links },
    'agent:main:dm:alice',
  ],
  [
    'identityLinks, per-channel-peer',
    dm('9', 'discord'),
    { dmScope: 'per-channel-peer', identityLinks: links },
    'agent:main:discord:dm:alice',
  ],
  [
    'identityLinks, per-account-channel-peer',
    dm('123'),
    { dmScope: 'per-account-channel-peer', identityLinks: links },
    'agent:main:telegram:default:dm:alice',
  ],
  [
    'identityLinks are provider-prefixed: same id elsewhere is not linked',
    dm('123', 'whatsapp'),
    { dmScope: 'per-channel-peer', identityLinks: links },
    'agent:main:whatsapp:dm:123',
  ],
  ['identityLinks, unlisted peer', dm('555'), { dmScope: 'per-peer', identityLinks: links }, 'agent:main:dm:555'],
  [
    'identityLinks do not split the main scope',
    dm('123'),
    { dmScope: 'main', identityLinks: links },
    'agent:main:main',
  ],
  ['group', group('-100'), {}, 'agent:main:telegram:group:-100'],
  [
    'group ignores dmScope',
    group('-100'),
    { dmScope: 'per-peer', identityLinks: { x: ['telegram:-100'] } },
    'agent:main:telegram:group:-100',
  ],
  ['forum topic', group('-100', 'telegram', { threadId: 7 }), {}, 'agent:main:telegram:group:-100:topic:7'],
  [
    'room/channel, id case kept',
    { agentId: 'main', channel: 'Discord', peer: { kind: 'channel', id: 'C0123' } },
    {},
    'agent:main:discord:channel:C0123',
  ],
  [
    'thread in a channel',
    { agentId: 'ops', channel: 'slack', peer: { kind: 'channel', id: 'C9' }, threadId: '1712.5' },
    {},
    'agent:ops:slack:channel:C9:topic:1712.5',
  ],
  [
    'per-peer DM thread',
    dm('123', 'telegram', { threadId: '9' }),
    { dmScope: 'per-peer' },
    'agent:main:dm:123:topic:9',
  ],
  [
    'peer ids with colons survive',
    { agentId: 'main', channel: 'matrix', peer: { kind: 'group', id: '!room:example.org' } },
    {},
    'agent:main:matrix:group:!room:example.org',
  ],
  [
    'global scope: a group maps to the main key',
    group('-100', 'telegram', { threadId: 7 }),
    { scope: 'global' },
    'agent:main:main',
  ],
  [
    'global scope: DMs under any dmScope map to the main key',
    dm('123', 'telegram', { agentId: 'ops' }),
    { scope: 'global', dmScope: 'per-peer', mainKey: 'home' },
    'agent:ops:home',
  ],
  [
    'per-sender scope is the default behaviour',
    group('g1', 'whatsapp'),
    { scope: 'per-sender' },
    'agent:main:whatsapp:group:g1',
  ],
];

describe('session keys', () => {
  it.each(derivations)('%s', (_name, route, config, expected) => {
    expect(deriveSessionKey(route, config)).toBe(expected);
  });

  it('derives parseable keys: parse(derive(route)) gives back the route', () => {
    for (const [, route, config, key] of derivations) {
      if (config.scope === 'global' || (config.dmScope ?? 'main') === 'main') {
        if (route.peer.kind === 'direct' || config.scope === 'global') {
          expect(parseSessionKey(key)).toMatchObject({ kind: 'main', agentId: normalizeAgentId(route.agentId) });
          continue;
        }
      }
      const parsed = parseSessionKey(key);
      expect(parsed.agentId).toBe(normalizeAgentId(route.agentId));
      expect(parsed.kind).toBe(route.peer.kind);
      if (route.threadId !== undefined) expect(parsed.threadId).toBe(String(route.threadId));
      else expect(parsed.threadId).toBeUndefined();
      if (!config.identityLinks) expect(parsed.peerId).toBe(route.peer.id);
      if (config.dmScope === 'per-account-channel-peer')
        expect(parsed.accountId).toBe((route.accountId ?? 'default').toLowerCase());
    }
  });

  it('builds the main key and normalizes agent ids', () => {
    expect(buildAgentMainSessionKey('main')).toBe('agent:main:main');
    expect(buildAgentMainSessionKey('Ops', 'home')).toBe('agent:ops:home');
    expect(normalizeAgentId(undefined)).toBe('main');
    expect(normalizeAgentId('  My/Agent..v2 ')).toBe('my-agent-v2');
    expect(normalizeAgentId('a'.repeat(80))).toHaveLength(64);
    expect(normalizeAgentId('---')).toBe('main');
  });

  it('refuses an unknown dmScope instead of sharing one session', () => {
    expect(() => deriveSessionKey(dm('1'), { dmScope: 'per-sender' as never })).toThrow(/dmScope/);
  });

  it('makes cron, hook and node keys', () => {
    expect(cronSessionKey('daily-digest')).toBe('cron:daily-digest');
    expect(hookSessionKey('abc')).toBe('hook:abc');
    expect(hookSessionKey()).toMatch(/^hook:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(hookSessionKey()).not.toBe(hookSessionKey());
    expect(nodeSessionKey('mac-mini')).toBe('node-mac-mini');
  });

  it('normalizes legacy group keys', () => {
    expect(normalizeLegacyKey('group:abc', 'main', 'whatsapp')).toBe('agent:main:whatsapp:group:abc');
    expect(normalizeLegacyKey('group:-100:topic:7', 'Ops', 'Telegram')).toBe('agent:ops:telegram:group:-100:topic:7');
    expect(normalizeLegacyKey('whatsapp:group:123@g.us', 'main', 'ignored')).toBe('agent:main:whatsapp:group:123@g.us');
    expect(normalizeLegacyKey('agent:main:whatsapp:group:abc', 'main', 'whatsapp')).toBe(
      'agent:main:whatsapp:group:abc',
    );
    expect(normalizeLegacyKey('cron:group:x', 'main', 'whatsapp')).toBe('cron:group:x');
    expect(normalizeLegacyKey('agent:main:main', 'main', 'whatsapp')).toBe('agent:main:main');
  });

  it('parses every key format', () => {
    expect(parseSessionKey('agent:main:main')).toEqual({
      agentId: 'main',
      kind: 'main',
      mainKey: 'main',
      rest: 'main',
    });
    expect(parseSessionKey('agent:main:home')).toMatchObject({ kind: 'main', mainKey: 'home' });
    expect(parseSessionKey('agent:main:dm:123')).toEqual({
      agentId: 'main',
      kind: 'direct',
      peerId: '123',
      rest: 'dm:123',
    });
    expect(parseSessionKey('agent:main:direct:123')).toMatchObject({ kind: 'direct', peerId: '123' });
    expect(parseSessionKey('agent:main:telegram:dm:123')).toMatchObject({
      kind: 'direct',
      channel: 'telegram',
      peerId: '123',
    });
    expect(parseSessionKey('agent:main:telegram:direct:123')).toMatchObject({
      kind: 'direct',
      channel: 'telegram',
      peerId: '123',
    });
    expect(parseSessionKey('agent:main:telegram:biz:dm:123')).toEqual({
      agentId: 'main',
      kind: 'direct',
      channel: 'telegram',
      accountId: 'biz',
      peerId: '123',
      rest: 'telegram:biz:dm:123',
    });
    expect(parseSessionKey('agent:main:telegram:group:-100:topic:7')).toEqual({
      agentId: 'main',
      kind: 'group',
      channel: 'telegram',
      peerId: '-100',
      threadId: '7',
      rest: 'telegram:group:-100:topic:7',
    });
    expect(parseSessionKey('agent:main:slack:channel:C1:thread:17.5')).toMatchObject({
      kind: 'channel',
      channel: 'slack',
      peerId: 'C1',
      threadId: '17.5',
    });
    expect(parseSessionKey('agent:main:matrix:group:!r:example.org')).toMatchObject({
      kind: 'group',
      peerId: '!r:example.org',
    });
    expect(parseSessionKey('cron:job-1')).toEqual({ kind: 'cron', id: 'job-1', rest: 'cron:job-1' });
    expect(parseSessionKey('hook:u-1')).toEqual({ kind: 'hook', id: 'u-1', rest: 'hook:u-1' });
    expect(parseSessionKey('node-mac')).toEqual({ kind: 'node', id: 'mac', rest: 'node-mac' });
    expect(parseSessionKey('group:abc')).toEqual({ kind: 'group', peerId: 'abc', rest: 'group:abc' });
    expect(parseSessionKey('main')).toMatchObject({ kind: 'main' });
    expect(parseSessionKey('global').kind).toBe('other');
    expect(parseSessionKey('unknown').kind).toBe('other');
    expect(parseSessionKey('agent:main:subagent:x').kind).toBe('other');
    expect(parseSessionKey('agent:main:recovered:abc:topic:7')).toEqual({
      agentId: 'main',
      kind: 'other',
      threadId: '7',
      rest: 'recovered:abc:topic:7',
    });
    expect(parseSessionKey('agent:').kind).toBe('other');
  });

  it('classifies keys for reset policy', () => {
    expect(sessionTypeOf('agent:main:main')).toBe('direct');
    expect(sessionTypeOf('agent:main:telegram:dm:1')).toBe('direct');
    expect(sessionTypeOf('agent:main:telegram:group:-100')).toBe('group');
    expect(sessionTypeOf('agent:main:discord:channel:1')).toBe('group');
    expect(sessionTypeOf('agent:main:telegram:group:-100:topic:7')).toBe('thread');
    expect(sessionTypeOf('agent:main:slack:channel:C1:thread:17.5')).toBe('thread');
    expect(sessionTypeOf('cron:job')).toBe('direct');
  });
});

// ── Store ────────────────────────────────────────────────────────────────────────

describe('session store', () => {
  it('tolerates a missing file and creates entries with defaults', async () => {
    const dir = join(tempDir('claw-sessions-'), 'agents', 'main', 'sessions');
    let now = 1_000;
    const store = new SessionStore(dir, { now: () => now });
    expect(await store.get('agent:main:main')).toBeUndefined();
    expect(await store.list()).toEqual([]);
    expect(await store.delete('nope')).toBe(false);

    const created = await store.upsert('agent:main:main', { model: 'opus', sendPolicy: 'deny' });
    expect(created).toMatchObject({
      createdAt: 1_000,
      updatedAt: 1_000,
      model: 'opus',
      sendPolicy: 'deny',
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      contextTokens: 0,
      compactionCount: 0,
    });
    expect(created.sessionId).toMatch(/^[0-9a-f-]{36}$/);

    now = 2_000;
    const changed = await store.upsert('agent:main:main', (entry) => ({
      inputTokens: (entry?.inputTokens ?? 0) + 10,
      sendPolicy: undefined,
    }));
    expect(changed).toMatchObject({
      sessionId: created.sessionId,
      createdAt: 1_000,
      updatedAt: 2_000,
      inputTokens: 10,
    });
    expect('sendPolicy' in changed).toBe(false);
    expect(await store.upsert('agent:main:main', { updatedAt: 1_500 })).toMatchObject({ updatedAt: 1_500 });

    const onDisk = JSON.parse(readFileSync(join(dir, 'sessions.json'), 'utf8'));
    expect(Object.keys(onDisk)).toEqual(['agent:main:main']);
    expect(onDisk['agent:main:main'].sendPolicy).toBeUndefined();

    await store.upsert('cron:a', { label: 'cron' });
    expect((await store.list()).map((row) => row.key)).toEqual(['cron:a', 'agent:main:main']);
    expect(await store.delete('cron:a')).toBe(true);
    expect(await store.get('cron:a')).toBeUndefined();
  });

  it('returns copies: mutating a result does not change the store', async () => {
    const store = new SessionStore(tempDir('claw-sessions-'));
    await store.upsert('k', { origin: { label: 'x' } });
    const entry = (await store.get('k'))!;
    entry.origin!.label = 'mutated';
    expect((await store.get('k'))!.origin!.label).toBe('x');
  });

  it('lands every one of 50 concurrent updates', async () => {
    const dir = tempDir('claw-sessions-');
    const store = new SessionStore(dir);
    const other = new SessionStore(dir);
    await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        (index % 2 ? store : other).upsert('agent:main:main', async (entry) => {
          // Yield mid-update so unserialized writers would interleave and lose increments.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
          return { inputTokens: (entry?.inputTokens ?? 0) + 1 };
        }),
      ),
    );
    await Promise.all(
      Array.from({ length: 50 }, (_, index) => store.upsert(`cron:job-${index}`, { label: `job ${index}` })),
    );
    const fresh = new SessionStore(dir);
    expect((await fresh.get('agent:main:main'))!.inputTokens).toBe(50);
    expect((await fresh.list()).filter((row) => row.key.startsWith('cron:'))).toHaveLength(50);
  });

  it('keeps working after an updater throws', async () => {
    const store = new SessionStore(tempDir('claw-sessions-'));
    await expect(
      store.upsert('k', () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.upsert('k', { label: 'ok' })).toMatchObject({ label: 'ok' });
  });

  it('writes atomically: each write replaces the file and leaves no temp files', async () => {
    const dir = tempDir('claw-sessions-');
    const store = new SessionStore(dir);
    await store.upsert('a', { label: 'one' });
    const first = statSync(join(dir, 'sessions.json')).ino;
    await store.upsert('b', { label: 'two' });
    expect(statSync(join(dir, 'sessions.json')).ino).not.toBe(first);
    // Beside the store only its lock folder, empty once the writes are done.
    expect(readdirSync(dir)).toEqual(['locks', 'sessions.json']);
    expect(readdirSync(join(dir, 'locks'))).toEqual([]);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'sessions.json'), 'utf8')))).toEqual(['a', 'b']);
  });

  it('reads JSON5 and keeps fields it does not know', async () => {
    const dir = tempDir('claw-sessions-');
    writeFileSync(
      join(dir, 'sessions.json'),
      `// edited by hand
      {
        'agent:main:main': { sessionId: 'abc', updatedAt: 5, futureField: [1, 2,], },
        'agent:main:telegram:group:-100': { sessionId: 'def', updatedAt: 6, displayName: 'Team', inputTokens: 3 },
        broken: { updatedAt: 7 },
      }`,
    );
    const store = new SessionStore(dir);
    expect(await store.get('agent:main:main')).toMatchObject({
      sessionId: 'abc',
      updatedAt: 5,
      createdAt: 5,
      inputTokens: 0,
    });
    expect(await store.get('broken')).toBeUndefined();
    await store.upsert('agent:main:telegram:group:-100', { outputTokens: 4 });
    const onDisk = JSON.parse(readFileSync(join(dir, 'sessions.json'), 'utf8'));
    expect(onDisk['agent:main:main'].futureField).toEqual([1, 2]);
    expect(onDisk['agent:main:telegram:group:-100']).toMatchObject({
      displayName: 'Team',
      inputTokens: 3,
      outputTokens: 4,
    });
  });

  it('treats an empty file as empty; an unparseable one is kept aside and the store rebuilt from the transcripts', async () => {
    const dir = join(tempDir('claw-sessions-'), 'agents', 'ops', 'sessions');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'sessions.json');
    writeFileSync(file, '  \n');
    const warnings: string[] = [];
    const now = 1_700_000_000_000;
    const store = new SessionStore(dir, { now: () => now, logger: { warn: (message) => warnings.push(message) } });
    expect(await store.list()).toEqual([]);

    const created = '2025-01-02T00:00:00.000Z';
    const header = (id: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ type: 'session', version: 1, id, timestamp: created, ...extra });
    const said = { role: 'user', content: 'hi' };
    const message = JSON.stringify({ type: 'message', id: 'm1', parentId: null, timestamp: created, message: said });
    const transcript = (name: string, text: string, mtimeMs: number) => {
      writeFileSync(join(dir, name), text);
      utimesSync(join(dir, name), mtimeMs / 1000, mtimeMs / 1000);
    };
    // Two sessions of one key (a reset in between): the newer one is the key's session.
    transcript('s-old.jsonl', `${header('s-old', { sessionKey: 'agent:ops:main' })}\n${message}\n`, 1_740_000_000_000);
    transcript('s-new.jsonl', `${header('s-new', { sessionKey: 'agent:ops:main' })}\n${message}\n`, 1_760_000_000_000);
    // Written before headers named their key, a topic of one, and one whose header line is torn.
    transcript('s-legacy.jsonl', `${header('s-legacy')}\n${message}\n`, 1_750_000_000_000);
    transcript('s-thread-topic-42.jsonl', `${header('s-thread')}\n`, 1_745_000_000_000);
    transcript('s-torn.jsonl', '{"type":"sess', 1_742_000_000_000);
    writeFileSync(join(dir, 'empty.jsonl'), '');
    writeFileSync(join(dir, 'notes.txt'), 'not a transcript');
    // A copy kept by an earlier recovery is never overwritten.
    const earlier = `${file}.corrupt-${now}`;
    writeFileSync(earlier, 'earlier damage');
    writeFileSync(file, '{ "agent:ops:main": { "sessionId": ', { mode: 0o644 });

    const rows = await store.list();
    expect(rows.map((row) => [row.key, row.entry.sessionId, row.entry.updatedAt])).toEqual([
      ['agent:ops:main', 's-new', 1_760_000_000_000],
      ['agent:ops:recovered:s-legacy', 's-legacy', 1_750_000_000_000],
      ['agent:ops:recovered:s-thread:topic:42', 's-thread', 1_745_000_000_000],
      ['agent:ops:recovered:s-torn', 's-torn', 1_742_000_000_000],
    ]);
    expect(rows[0]!.entry).toMatchObject({
      createdAt: Date.parse(created),
      inputTokens: 0,
      totalTokens: 0,
      compactionCount: 0,
    });
    const kept = `${file}.corrupt-${now}-1`;
    expect(readFileSync(kept, 'utf8')).toBe('{ "agent:ops:main": { "sessionId": ');
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    expect(readFileSync(earlier, 'utf8')).toBe('earlier damage');
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toHaveLength(4);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`${file}: cannot parse the session store`);
    expect(warnings[0]).toContain(`kept it as ${kept}`);
    expect(warnings[0]).toContain(`from the 5 transcript(s) in ${dir}: 4 session(s) listed;`);
    expect(warnings[0]).toContain('; 3 transcript(s) did not name their session key');
    expect(warnings[0]).toContain('listed as agent:ops:recovered:<sessionId>');

    // The rebuilt store is an ordinary one: the key continues its newest session, a recovered topic key names its file.
    expect(await store.resolve('agent:ops:main')).toMatchObject({ isNew: false, entry: { sessionId: 's-new' } });
    const topic = (await store.get('agent:ops:recovered:s-thread:topic:42'))!;
    const { threadId } = parseSessionKey('agent:ops:recovered:s-thread:topic:42');
    expect(store.transcriptPath(topic.sessionId, threadId)).toBe(join(dir, 's-thread-topic-42.jsonl'));
    const copies = readdirSync(dir).filter((name) => name.includes('.corrupt-'));
    expect(copies.sort()).toEqual([`sessions.json.corrupt-${now}`, `sessions.json.corrupt-${now}-1`]);
    expect(warnings).toHaveLength(1);
  });

  it('rebuilds a store that is not an object once, whoever reads or writes it first', async () => {
    const dir = tempDir('claw-sessions-');
    const header = {
      type: 'session',
      version: 1,
      id: 'abc',
      timestamp: '2025-01-02T00:00:00.000Z',
      sessionKey: 'agent:main:main',
    };
    writeFileSync(join(dir, 'abc.jsonl'), `${JSON.stringify(header)}\n`);
    writeFileSync(join(dir, 'sessions.json'), '[1, 2]');
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message) };
    const one = new SessionStore(dir, { logger });
    const other = new SessionStore(dir, { logger });
    const [got, , listed] = await Promise.all([
      one.get('agent:main:main'),
      other.upsert('agent:main:cron', { label: 'new' }),
      other.list(),
      one.resolve('agent:main:main', { touch: false }),
    ]);
    expect(got).toMatchObject({ sessionId: 'abc' });
    expect(listed.map((row) => row.key).sort()).toEqual(['agent:main:cron', 'agent:main:main']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('the session store is not a JSON object');
    // A store outside agents/<id>/sessions is the default agent's.
    expect(one.agentId).toBe('main');
    expect(readdirSync(dir).filter((name) => name.includes('.corrupt-'))).toHaveLength(1);
  });

  it('resolves sessions: reuse, reset with carry-over, and recreation after a manual delete', async () => {
    const dir = tempDir('claw-sessions-');
    let now = 10_000;
    const store = new SessionStore(dir, { now: () => now });
    const key = 'agent:main:main';

    const first = await store.resolve(key, { patch: { lastChannel: 'telegram', lastTo: '123' } });
    expect(first.isNew).toBe(true);
    expect(first.previous).toBeUndefined();
    await store.upsert(key, {
      thinkingLevel: 'high',
      model: 'opus',
      inputTokens: 900,
      totalTokens: 1200,
      compactionCount: 2,
      abortedLastRun: true,
    });

    now = 20_000;
    const again = await store.resolve(key);
    expect(again).toMatchObject({
      isNew: false,
      entry: { sessionId: first.entry.sessionId, updatedAt: 20_000, inputTokens: 900 },
    });

    now = 30_000;
    const reset = await store.resolve(key, { reset: (entry) => entry.updatedAt < 25_000 });
    expect(reset.isNew).toBe(true);
    expect(reset.previous!.sessionId).toBe(first.entry.sessionId);
    expect(reset.entry.sessionId).not.toBe(first.entry.sessionId);
    expect(reset.entry).toMatchObject({
      createdAt: 30_000,
      thinkingLevel: 'high',
      model: 'opus',
      lastChannel: 'telegram',
      inputTokens: 0,
      totalTokens: 0,
      compactionCount: 0,
    });
    expect(reset.entry.abortedLastRun).toBeUndefined();

    const kept = await store.resolve(key, { reset: (entry) => entry.updatedAt < 25_000 });
    expect(kept).toMatchObject({ isNew: false, entry: { sessionId: reset.entry.sessionId } });

    // Cron runs ask for a fresh session every time.
    const cronA = await store.resolve('cron:job', { reset: true });
    const cronB = await store.resolve('cron:job', { reset: true });
    expect(cronA.entry.sessionId).not.toBe(cronB.entry.sessionId);

    // A key deleted by hand from the file (the store is still open) comes back fresh.
    const file = join(dir, 'sessions.json');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    delete data[key];
    writeFileSync(file, JSON.stringify(data));
    const recreated = await store.resolve(key);
    expect(recreated.isNew).toBe(true);
    expect(recreated.entry.sessionId).not.toBe(reset.entry.sessionId);
    expect(recreated.entry.thinkingLevel).toBeUndefined();
  });

  it('names transcripts and finds its folder', () => {
    const store = new SessionStore('/state/agents/main/sessions');
    expect(store.transcriptPath('s1')).toBe('/state/agents/main/sessions/s1.jsonl');
    expect(store.transcriptPath('s1', 7)).toBe('/state/agents/main/sessions/s1-topic-7.jsonl');
    expect(store.transcriptPath('s1', '../x')).toBe('/state/agents/main/sessions/s1-topic-.._x.jsonl');
    expect(() => store.transcriptPath('../etc')).toThrow(SessionStoreError);
    expect(resolveSessionsDir('Ops', { env: { HOME: '/home/u' } })).toBe('/home/u/.openclaw/agents/ops/sessions');
    expect(resolveSessionsDir('main', { env: { HOME: '/home/u', OPENCLAW_STATE_DIR: '/srv/claw' } })).toBe(
      '/srv/claw/agents/main/sessions',
    );
    expect(resolveSessionsDir('ops', { env: { HOME: '/home/u' }, store: '~/s/{agentId}/sessions.json' })).toBe(
      '/home/u/s/ops',
    );
    expect(SessionStore.forAgent('main', { env: { HOME: '/home/u' } }).file).toBe(
      '/home/u/.openclaw/agents/main/sessions/sessions.json',
    );
  });
});

// ── Transcripts ──────────────────────────────────────────────────────────────────

const user = (text: string) => ({ role: 'user' as const, content: text });
const assistant = (text: string) => ({ role: 'assistant' as const, content: [{ type: 'text' as const, text }] });

function expectChained(file: string): void {
  const entries = new Transcript(file).entries().filter((entry) => entry.type !== 'session');
  entries.forEach((entry, index) => {
    expect((entry as MessageEntry).parentId).toBe(index === 0 ? null : entries[index - 1]!.id);
  });
}

describe('transcripts', () => {
  it('writes a header, then chained entries with short random ids', () => {
    const file = join(tempDir('claw-transcript-'), 'sess-1.jsonl');
    const transcript = new Transcript(file, { cwd: '/work', now: () => new Date('2025-01-02T03:04:05.000Z') });
    expect(transcript.entries()).toEqual([]);
    expect(transcript.messages()).toEqual([]);

    const a = transcript.appendMessage(user('hi'))!;
    const b = transcript.append({ type: 'message', message: assistant('hello') })!;
    const custom = transcript.append({ type: 'model_change', provider: 'anthropic', model: 'opus' });
    expect(a).toMatchObject({
      type: 'message',
      parentId: null,
      timestamp: '2025-01-02T03:04:05.000Z',
      message: user('hi'),
    });
    expect(b.parentId).toBe(a.id);
    expect(custom).toMatchObject({ type: 'model_change', parentId: b.id, model: 'opus' });
    expect(a.id).toMatch(/^[0-9a-f]{8}$/);

    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[4]).toBe('');
    expect(JSON.parse(lines[0]!)).toEqual({
      type: 'session',
      version: 1,
      id: 'sess-1',
      timestamp: '2025-01-02T03:04:05.000Z',
      cwd: '/work',
    });
    expect(transcript.header()!.id).toBe('sess-1');
    expect(transcript.entries().map((entry) => entry.type)).toEqual(['session', 'message', 'message', 'model_change']);
    expect(transcript.messages()).toEqual([user('hi'), assistant('hello')]);
    expect(() => transcript.append({ type: 'session' })).toThrow(TypeError);

    // Another writer (a second object on the same file) continues the chain.
    const second = new Transcript(file);
    const c = second.appendMessage(user('again'))!;
    expect(c.parentId).toBe(custom.id);
    const d = transcript.appendMessage(user('and again'))!;
    expect(d.parentId).toBe(c.id);
    expectChained(file);
  });

  it('the tail shared by every Transcript of a file follows what is on disk: appended or replaced behind it', () => {
    const dir = tempDir('claw-transcript-');
    const file = join(dir, 'sess-tail.jsonl');
    const first = new Transcript(file).appendMessage(user('one'))!;
    expect(new Transcript(file).appendMessage(user('two'))!.parentId).toBe(first.id);
    // Another process appends a line: the next writer chains on it, not on the cached tail.
    const line = (id: string, parentId: string | null) =>
      `${JSON.stringify({ type: 'message', id, parentId, timestamp: new Date().toISOString(), message: user(id) })}\n`;
    const last = new Transcript(file).entries().at(-1)!;
    appendFileSync(file, line('ext00001', (last as { id: string }).id));
    expect(new Transcript(file).appendMessage(user('three'))!.parentId).toBe('ext00001');
    // The file is replaced whole (a reset, a trim): same size or not, its own tail counts.
    const other = join(dir, 'replacement.jsonl');
    writeFileSync(other, line('zzz00001', null));
    renameSync(other, file);
    const next = new Transcript(file).appendMessage(user('four'))!;
    expect(next.parentId).toBe('zzz00001');
    expect(new Set(new Transcript(file).entries().map((entry) => (entry as { id: string }).id)).size).toBe(2);
  });

  it('masks secrets in every entry before writing it, when given a redactor', () => {
    const file = join(tempDir('claw-transcript-'), 'sess-2.jsonl');
    const redact = createRedactor({
      config: { models: { providers: { openai: { apiKey: 'cfg-openai-key-1' } } } },
      env: {},
    });
    const transcript = new Transcript(file, { redact });
    const input = user(
      'my key is cfg-openai-key-1, see https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1/getMe',
    );
    expect(transcript.appendMessage(input)!.message).toEqual(
      user('my key is ***, see https://api.telegram.org/bot123456789:***/getMe'),
    );
    transcript.appendCompaction({
      summary: 'the user shared cfg-openai-key-1',
      firstKeptEntryId: null,
      tokensBefore: 10,
    });
    expect(readFileSync(file, 'utf8')).not.toContain('cfg-openai-key-1');
    expect(readFileSync(file, 'utf8')).not.toContain('AAHdqTcvCH1v');
    // The caller's message is not changed.
    expect(JSON.stringify(input)).toContain('cfg-openai-key-1');
  });

  it('runs before_message_write before each message it appends: a handler rewrites or blocks it', () => {
    const file = join(tempDir('claw-transcript-'), 'sess-hooked.jsonl');
    const bus = new HookBus();
    const seen: Array<{ role: string; sessionKey?: string }> = [];
    bus.on('before_message_write', (event, ctx) => {
      seen.push({ role: event.message.role, sessionKey: ctx.sessionKey });
      if (JSON.stringify(event.message.content).includes('secret plan')) return { block: true };
      if (event.message.role === 'assistant')
        return { message: { ...event.message, content: [{ type: 'text', text: 'rewritten' }] } };
      return undefined;
    });
    const transcript = new Transcript(file, { hooks: { runner: bus, context: { sessionKey: 'agent:main:main' } } });
    expect(transcript.appendMessage(user('the secret plan'))).toBeUndefined();
    expect(transcript.appendMessage(assistant('original'))!.message).toEqual(assistant('rewritten'));
    transcript.append({ type: 'model_change', provider: 'openai', model: 'gpt-4.1' });
    expect(seen).toEqual([
      { role: 'user', sessionKey: 'agent:main:main' },
      { role: 'assistant', sessionKey: 'agent:main:main' },
    ]);
    expect(transcript.entries().map((entry) => entry.type)).toEqual(['session', 'message', 'model_change']);
    expect(transcript.messages()).toEqual([assistant('rewritten')]);
  });

  it('uses the topic file name for the sessionId and writes the header once', () => {
    const file = join(tempDir('claw-transcript-'), 'abc-topic-7.jsonl');
    const transcript = new Transcript(file);
    expect(transcript.init()).toMatchObject({ type: 'session', id: 'abc' });
    expect(transcript.init()).toMatchObject({ type: 'session', id: 'abc' });
    transcript.appendMessage(user('x'));
    expect(transcript.entries().filter((entry) => entry.type === 'session')).toHaveLength(1);
    expect(transcript.entries()[1]).toMatchObject({ parentId: null });
  });

  it('gives the model the latest compaction summary and the messages it kept', () => {
    const file = join(tempDir('claw-transcript-'), 's.jsonl');
    const transcript = new Transcript(file, { now: () => new Date('2025-01-02T00:00:00.000Z') });
    transcript.appendMessage(user('one'));
    transcript.appendMessage(assistant('two'));
    transcript.appendCompaction({ summary: 'old summary', firstKeptEntryId: null, tokensBefore: 100 });
    transcript.appendMessage(user('three'));
    const keep = transcript.appendMessage(assistant('four'))!;
    transcript.appendMessage(user('five'));
    const compaction = transcript.appendCompaction({
      summary: 'talked about 1–3',
      firstKeptEntryId: keep.id,
      tokensBefore: 5000,
    });
    expect(compaction).toMatchObject({ type: 'compaction', parentId: expect.any(String), tokensBefore: 5000 });
    transcript.appendMessage(user('six'));

    const summary = {
      role: 'user',
      content: [{ type: 'text', text: `${COMPACTION_SUMMARY_PREFIX}talked about 1–3${COMPACTION_SUMMARY_SUFFIX}` }],
      timestamp: Date.parse('2025-01-02T00:00:00.000Z'),
    };
    const messages = transcript.messages();
    expect(messages).toEqual([summary, assistant('four'), user('five'), user('six')]);
    expect(isCompactionSummaryMessage(messages[0]!)).toBe(true);
    expect(isCompactionSummaryMessage(messages[2]!)).toBe(false);

    // Without a kept entry the summary replaces everything before the compaction.
    transcript.appendCompaction({ summary: 'all of it', firstKeptEntryId: null, tokensBefore: 6000 });
    transcript.appendMessage(user('seven'));
    expect(transcript.messages()).toEqual([
      {
        ...summary,
        content: [{ type: 'text', text: `${COMPACTION_SUMMARY_PREFIX}all of it${COMPACTION_SUMMARY_SUFFIX}` }],
      },
      user('seven'),
    ]);
  });

  it('skips a torn last line and terminates it before the next append', () => {
    const file = join(tempDir('claw-transcript-'), 's.jsonl');
    const transcript = new Transcript(file);
    transcript.appendMessage(user('one'));
    const last = transcript.appendMessage(user('two'))!;
    appendFileSync(file, '{"type":"message","id":"deadbeef","parentId":"x","message":{"role":"us');

    const fresh = new Transcript(file);
    const read = fresh.read();
    expect(read).toMatchObject({ torn: true, skippedLines: 1 });
    expect(fresh.messages()).toEqual([user('one'), user('two')]);

    const next = fresh.appendMessage(user('three'))!;
    expect(next.parentId).toBe(last.id);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.at(-3)).toMatch(/"role":"us$/);
    expect(JSON.parse(lines.at(-2)!)).toEqual(next);
    expect(fresh.read()).toMatchObject({ torn: false, skippedLines: 1 });
    expect(fresh.messages()).toEqual([user('one'), user('two'), user('three')]);
  });

  it('a header-only torn file still gets its header first', () => {
    const file = join(tempDir('claw-transcript-'), 's.jsonl');
    writeFileSync(file, '{"type":"sess');
    const transcript = new Transcript(file);
    const entry = transcript.appendMessage(user('x'))!;
    expect(transcript.entries().map((e) => e.type)).toEqual(['session', 'message']);
    expect(entry.parentId).toBeNull();
  });

  it('survives SIGKILL mid-append: every line is whole except at most a torn last one', async () => {
    const dir = tempDir('claw-transcript-kill-');
    const moduleUrl = pathToFileURL(join(REPO, 'plugins/sessions/transcript.ts')).href;
    const script = join(dir, 'writer.ts');
    writeFileSync(
      script,
      `import { Transcript } from ${JSON.stringify(moduleUrl)};
const transcript = new Transcript(process.argv[2]);
const pause = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; ; i++) {
  // Mixed sizes: large entries take several page writes, so a kill can land inside one.
  const size = i % 3 === 0 ? 2_000_000 : 1_000 + Math.floor(Math.random() * 300_000);
  transcript.appendMessage({ role: 'user', content: String(i) + ':' + 'x'.repeat(size) });
  // Ready once the file exists, so a kill under load never races the first append.
  if (i === 0) process.stdout.write('ready\\n');
  Atomics.wait(pause, 0, 0, 1);
}
`,
    );
    const jiti = join(REPO, 'node_modules/jiti/lib/jiti-cli.mjs');
    // Whether a kill lands inside a write is up to the scheduler; both outcomes are checked.
    for (let run = 0; run < 5; run++) {
      const file = join(dir, `run-${run}.jsonl`);
      const child = spawn(process.execPath, [jiti, script, file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
      });
      await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 250));
      const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const text = readFileSync(file, 'utf8');
      const lines = text.split('\n');
      const tail = lines.pop()!;
      // Every newline-terminated line is a complete entry.
      const parsed = lines.map((line) => JSON.parse(line) as { type: string });
      expect(parsed[0]!.type).toBe('session');

      const transcript = new Transcript(file);
      const read = transcript.read();
      expect(read.entries).toHaveLength(parsed.length + (tail !== '' && isJson(tail) ? 1 : 0));
      expect(read.skippedLines).toBe(tail !== '' && !isJson(tail) ? 1 : 0);

      const before = read.entries.filter(isMessageEntry);
      const next = transcript.appendMessage(user('after the crash'))!;
      expect(next.parentId).toBe(before.at(-1)?.id ?? null);
      const after = readFileSync(file, 'utf8').split('\n');
      expect(after.pop()).toBe('');
      const bad = after.filter((line) => !isJson(line));
      expect(bad.length).toBeLessThanOrEqual(1);
      expect(transcript.messages()).toHaveLength(before.length + 1);
      expectChained(file);
      rmSync(file);
    }
  }, 60_000);
});

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

// ── Reset policy ─────────────────────────────────────────────────────────────────

const at = (hour: number, minute: number, day = 10) => new Date(2025, 5, day, hour, minute, 0, 0);

describe('reset policy', () => {
  it('defaults to a daily reset at 04:00 local time', () => {
    const policy = resolveResetPolicy({}, { type: 'direct' });
    expect(policy).toEqual({ mode: 'daily', atHour: 4, source: 'default' });
    const now = at(4, 1);
    expect(isStale(at(3, 59).getTime(), policy, now)).toBe(true);
    expect(isStale(at(4, 1).getTime(), policy, now)).toBe(false);
    expect(isStale(at(4, 0).getTime(), policy, now)).toBe(false);
    // Before today's boundary, the boundary that counts is yesterday's.
    expect(isStale(at(5, 0, 9).getTime(), policy, at(3, 0))).toBe(false);
    expect(isStale(at(3, 59, 9).getTime(), policy, at(3, 0))).toBe(true);
    expect(mostRecentDailyReset(at(3, 0), 4).getTime()).toBe(at(4, 0, 9).getTime());
  });

  it('finds the boundary by calendar day, so it stays at atHour across DST changes', () => {
    for (let day = 1; day <= 365; day++) {
      const now = new Date(2025, 0, day, 3, 0);
      const boundary = mostRecentDailyReset(now, 4);
      expect(boundary.getHours()).toBe(4);
      const yesterday = new Date(2025, 0, day - 1);
      expect([boundary.getFullYear(), boundary.getMonth(), boundary.getDate()]).toEqual([
        yesterday.getFullYear(),
        yesterday.getMonth(),
        yesterday.getDate(),
      ]);
    }
  });

  it('honours atHour', () => {
    const policy = resolveResetPolicy({ reset: { mode: 'daily', atHour: 6 } }, { type: 'direct' });
    expect(policy).toMatchObject({ mode: 'daily', atHour: 6 });
    expect(isStale(at(5, 0).getTime(), policy, at(5, 30))).toBe(false);
    expect(isStale(at(5, 0).getTime(), policy, at(6, 0))).toBe(true);
  });

  it('with daily and idle configured, whichever expires first wins', () => {
    const policy = resolveResetPolicy({ reset: { mode: 'daily', atHour: 4, idleMinutes: 120 } }, { type: 'direct' });
    expect(policy).toEqual({ mode: 'daily', atHour: 4, idleMinutes: 120, source: 'reset' });
    // Idle first: two hours and a minute of silence in the afternoon.
    expect(staleReason(at(12, 0).getTime(), policy, at(14, 1))).toBe('idle');
    expect(staleReason(at(12, 0).getTime(), policy, at(14, 0))).toBeUndefined();
    // Daily first: a message at 03:30 and the next at 04:10.
    expect(staleReason(at(3, 30).getTime(), policy, at(4, 10))).toBe('daily');
  });

  it('legacy session.idleMinutes alone means idle-only', () => {
    const policy = resolveResetPolicy({ idleMinutes: 30 }, { type: 'direct' });
    expect(policy).toEqual({ mode: 'idle', atHour: 4, idleMinutes: 30, source: 'legacy-idle' });
    // Across 04:00 but within 30 minutes: no daily reset.
    expect(isStale(at(3, 50).getTime(), policy, at(4, 10))).toBe(false);
    expect(isStale(at(3, 50).getTime(), policy, at(4, 21))).toBe(true);
    // Next to `reset`, it supplies the idle window and the daily clock stays.
    expect(resolveResetPolicy({ idleMinutes: 30, reset: { atHour: 5 } }, { type: 'direct' })).toEqual({
      mode: 'daily',
      atHour: 5,
      idleMinutes: 30,
      source: 'reset',
    });
    expect(resolveResetPolicy({ reset: { mode: 'idle' } }, { type: 'direct' })).toMatchObject({
      mode: 'idle',
      idleMinutes: 60,
    });
  });

  const config: SessionResetConfig = {
    reset: { mode: 'daily', atHour: 4, idleMinutes: 120 },
    resetByType: {
      thread: { mode: 'daily', atHour: 4 },
      direct: { mode: 'idle', idleMinutes: 240 },
      group: { mode: 'idle', idleMinutes: 120 },
    },
    resetByChannel: { discord: { mode: 'idle', idleMinutes: 10080 } },
  };

  it('resetByType overrides reset for its type', () => {
    expect(resolveResetPolicy(config, { type: 'direct', channel: 'telegram' })).toEqual({
      mode: 'idle',
      atHour: 4,
      idleMinutes: 240,
      source: 'type',
    });
    expect(resolveResetPolicy(config, { type: 'group', channel: 'telegram' })).toMatchObject({
      mode: 'idle',
      idleMinutes: 120,
      source: 'type',
    });
    const thread = resolveResetPolicy(config, { type: 'thread', channel: 'telegram' });
    expect(thread).toEqual({ mode: 'daily', atHour: 4, source: 'type' });
    expect(isStale(at(3, 59).getTime(), thread, at(4, 1))).toBe(true);
    const direct = resolveResetPolicy(config, { type: 'direct' });
    expect(isStale(at(3, 59).getTime(), direct, at(4, 1))).toBe(false);
    expect(
      resolveResetPolicy({ resetByType: { dm: { mode: 'idle', idleMinutes: 5 } } }, { type: 'direct' }),
    ).toMatchObject({ mode: 'idle', idleMinutes: 5 });
    // Type rules present: a lone legacy idleMinutes no longer means idle-only.
    expect(
      resolveResetPolicy({ idleMinutes: 30, resetByType: { group: { mode: 'idle' } } }, { type: 'direct' }),
    ).toEqual({ mode: 'daily', atHour: 4, idleMinutes: 30, source: 'default' });
  });

  it('resetByChannel takes precedence over resetByType and reset', () => {
    const policy = resolveResetPolicy(config, { type: 'group', channel: 'discord' });
    expect(policy).toEqual({ mode: 'idle', atHour: 4, idleMinutes: 10080, source: 'channel' });
    expect(resolveResetPolicy(config, { type: 'thread', channel: 'Discord' }).source).toBe('channel');
    // A week-long idle window: a group quiet for six days is still the same session.
    expect(isStale(at(12, 0, 1).getTime(), policy, at(12, 0, 7))).toBe(false);
    expect(isStale(at(12, 0, 1).getTime(), policy, at(12, 1, 8))).toBe(true);
  });

  it('matches reset triggers as whole words', () => {
    expect(matchResetTrigger('/new')).toEqual({ trigger: '/new', rest: '' });
    expect(matchResetTrigger('  /reset hello there ')).toEqual({ trigger: '/reset', rest: 'hello there' });
    expect(matchResetTrigger('/new opus')).toEqual({ trigger: '/new', rest: 'opus' });
    expect(matchResetTrigger('/new\nline two')).toEqual({ trigger: '/new', rest: 'line two' });
    expect(matchResetTrigger('/NEW')).toEqual({ trigger: '/new', rest: '' });
    expect(matchResetTrigger('/newfoo')).toBeUndefined();
    expect(matchResetTrigger('/news today')).toBeUndefined();
    expect(matchResetTrigger('please /new')).toBeUndefined();
    expect(matchResetTrigger('')).toBeUndefined();
    expect(matchResetTrigger('/fresh start', ['/fresh'])).toEqual({ trigger: '/fresh', rest: 'start' });
    expect(matchResetTrigger('/new', ['/fresh'])).toBeUndefined();
    const triggers = resetTriggersFrom({ resetTriggers: ['/fresh'] });
    expect(triggers).toEqual(['/new', '/reset', '/fresh']);
    expect(matchResetTrigger('/fresh', triggers)).toEqual({ trigger: '/fresh', rest: '' });
    expect(matchResetTrigger('/reset', triggers)).toEqual({ trigger: '/reset', rest: '' });
  });
});
