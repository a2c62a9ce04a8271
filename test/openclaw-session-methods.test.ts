/**
 * The session methods of OpenClaw's Control UI and CLI that claw answers with real data,
 * against a spawned gateway with the fake LLM: sessions.create/send/abort, chat.metadata and
 * chat.message.get, sessions.resolve and sessions.search, the usage detail of one session,
 * sessions.patchMany, sessions.cleanup, the branch list and sessions.viewers.set — each in
 * OpenClaw's payload shape and scope.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { client, refusal } from './gateway-helpers.js';

let h: AgentHarness;
let reader: GatewayClient;
let created: { key: string; sessionId: string; runId: string };

beforeAll(async () => {
  h = await startAgent();
  reader = await client(h.gw.url, { scopes: ['operator.read'] });
  // The first calls load the agent and sessions plugins: on a busy machine that is slow.
  await h.client.request('chat.history', { sessionKey: 'main' }, { timeoutMs: 150_000 });
  await reader.request('sessions.list', {}, { timeoutMs: 150_000 });
}, 180_000);

afterAll(async () => {
  await reader?.close();
  await h?.stop();
});

/**
 * The error a request ends with. Under vitest the plugins are loaded apart from the
 * gateway's SDK instance, so a plugin's INVALID_REQUEST reaches the wire wrapped as
 * UNAVAILABLE "<method> failed: …" (the built gateway sends the code as thrown): messages are
 * matched by their text, codes where the gateway itself answers.
 */

async function finished(runId: string): Promise<void> {
  await h.client.request('agent.wait', { runId, timeoutMs: 20_000 });
}

describe('starting and feeding sessions', () => {
  it('sessions.create: a dashboard session with its first turn, in OpenClaw’s shape', async () => {
    h.fake.script({ text: 'the penguin answer', usage: { input: 40, output: 6 } });
    const result: any = await h.client.request('sessions.create', {
      label: 'Penguins',
      message: 'tell me about penguins',
      visibility: 'shared',
      permissionMode: 'workspace',
    });
    expect(result).toMatchObject({
      ok: true,
      key: expect.stringMatching(/^agent:main:dashboard:[0-9a-f-]{36}$/),
      sessionId: expect.any(String),
      entry: { label: 'Penguins', sessionId: expect.any(String) },
      runStarted: true,
      runId: expect.any(String),
      resolved: { modelProvider: 'openai', model: expect.any(String) },
    });
    created = { key: result.key, sessionId: result.sessionId, runId: result.runId };
    await finished(created.runId);
    const history: any = await h.client.request('chat.history', { sessionKey: created.key });
    expect(history.messages.map((message: any) => message.role)).toEqual(['user', 'assistant']);
  });

  it('sessions.create refuses what claw lacks, and a label another session has', async () => {
    expect(await refusal(h.client.request('sessions.create', { worktree: true }))).toEqual({
      code: expect.any(String),
      message: expect.stringContaining('sessions.create: worktree is not available (claw has no managed worktrees)'),
    });
    expect(await refusal(h.client.request('sessions.create', { label: 'Penguins' }))).toEqual({
      code: expect.any(String),
      message: expect.stringContaining(`label "Penguins" is already used by session ${created.key}`),
    });
    expect(await refusal(reader.request('sessions.create', {}))).toMatchObject({ code: 'FORBIDDEN' });
    const empty: any = await h.client.request('sessions.create', { key: 'agent:main:notes', displayName: 'Notes' });
    expect(empty).toMatchObject({
      ok: true,
      key: 'agent:main:notes',
      runStarted: false,
      entry: { displayName: 'Notes' },
    });
    expect(empty.runId).toBeUndefined();
  });

  it('sessions.send: a message into an existing session; an unknown one is refused', async () => {
    h.fake.script({ text: 'emperor penguins are tallest', usage: { input: 60, output: 8 } });
    const sent: any = await h.client.request('sessions.send', { key: created.key, message: 'which is tallest?' });
    expect(sent).toMatchObject({
      runId: expect.any(String),
      status: expect.any(String),
      acceptedAt: expect.any(Number),
    });
    await finished(sent.runId);
    expect(await refusal(h.client.request('sessions.send', { key: 'agent:main:nowhere', message: 'hi' }))).toEqual({
      code: expect.any(String),
      message: expect.stringContaining('session not found: agent:main:nowhere'),
    });
  });

  it('sessions.abort: stops the running turn, then reports no active run', async () => {
    h.fake.script({ toolCalls: [{ name: 'wait_gate', arguments: {} }] }, { text: 'stopped anyway' });
    const sent: any = await h.client.request('sessions.send', { key: 'agent:main:notes', message: 'wait' });
    await h.gate.entered;
    expect(await h.client.request('sessions.abort', { key: 'agent:main:notes' })).toEqual({
      ok: true,
      abortedRunId: sent.runId,
      status: 'aborted',
    });
    await finished(sent.runId);
    expect(await h.client.request('sessions.abort', { key: 'agent:main:notes' })).toEqual({
      ok: true,
      abortedRunId: null,
      status: 'no-active-run',
    });
  });
});

describe('what the chat view reads', () => {
  it('chat.metadata: the agent’s commands and models', async () => {
    const metadata: any = await reader.request('chat.metadata', { sessionKey: created.key });
    expect(metadata).toMatchObject({ swarmEnabled: false, runtimeSelectionLocked: true });
    expect(metadata.commands).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'new', textAliases: expect.arrayContaining(['/new']) })]),
    );
    expect(metadata.models.length).toBeGreaterThan(0);
    expect(metadata.models[0]).toEqual(
      expect.objectContaining({ id: expect.any(String), name: expect.any(String), provider: expect.any(String) }),
    );
  });

  it('chat.message.get: one message by its transcript id; unknown ids are not_found', async () => {
    const search: any = await reader.request('sessions.search', { query: 'tallest', agentId: 'main' });
    const hit = search.results.find((item: any) => item.role === 'assistant');
    const got: any = await reader.request('chat.message.get', { sessionKey: created.key, messageId: hit.messageId });
    expect(got).toMatchObject({ ok: true, message: { role: 'assistant', id: hit.messageId } });
    expect(
      await reader.request('chat.message.get', { sessionKey: created.key, messageId: hit.messageId, maxChars: 5 }),
    ).toEqual({ ok: false, unavailableReason: 'oversized' });
    expect(await reader.request('chat.message.get', { sessionKey: created.key, messageId: 'nope' })).toEqual({
      ok: false,
      unavailableReason: 'not_found',
    });
  });
});

describe('finding sessions', () => {
  it('sessions.resolve: by key, label, sessionId and short id; missing and ambiguous answers', async () => {
    const expected = { ok: true, key: created.key, agentId: 'main', displayName: 'Penguins' };
    expect(await reader.request('sessions.resolve', { key: created.key })).toEqual(expected);
    expect(await reader.request('sessions.resolve', { label: 'Penguins' })).toEqual(expected);
    expect(await reader.request('sessions.resolve', { sessionId: created.sessionId })).toEqual(expected);
    const shortId = created.key.split(':').at(-1)!.replace(/-/g, '').slice(0, 12);
    expect(await reader.request('sessions.resolve', { shortId })).toEqual(expected);
    expect(await reader.request('sessions.resolve', { label: 'nobody', allowMissing: true })).toEqual({ ok: false });
    expect(await refusal(reader.request('sessions.resolve', { label: 'nobody' }))).toEqual({
      code: expect.any(String),
      message: expect.stringContaining('No session found: label nobody'),
    });
    expect(await refusal(reader.request('sessions.resolve', { key: created.key, label: 'Penguins' }))).toEqual({
      code: expect.any(String),
      message: expect.stringContaining('Provide either key, sessionId, label, shortId, or reference (not multiple)'),
    });
  });

  it('sessions.search: hits in user and assistant messages, best first; scope adds the rows', async () => {
    const search: any = await reader.request('sessions.search', { query: 'penguin', agentId: 'main' });
    expect(search.results.length).toBeGreaterThanOrEqual(2);
    for (const hit of search.results)
      expect(hit).toEqual({
        sessionKey: created.key,
        sessionId: created.sessionId,
        messageId: expect.any(String),
        role: expect.stringMatching(/^(user|assistant)$/),
        timestamp: expect.any(Number),
        snippet: expect.stringMatching(/penguin/i),
        score: expect.any(Number),
      });
    const scoped: any = await reader.request('sessions.search', { query: 'tallest', scope: { label: 'Penguins' } });
    expect(scoped.results.length).toBeGreaterThan(0);
    expect(scoped.sessions.map((row: any) => row.key)).toEqual([created.key]);
    expect(await reader.request('sessions.search', { query: 'zebra', agentId: 'main' })).toEqual({ results: [] });
  });
});

describe('one session’s usage', () => {
  it('sessions.usage.timeseries: a point per model call with running sums', async () => {
    const series: any = await reader.request('sessions.usage.timeseries', { key: created.key });
    expect(series.sessionId).toBe(created.sessionId);
    expect(series.points).toHaveLength(2);
    expect(series.points[0]).toEqual({
      timestamp: expect.any(Number),
      input: 40,
      output: 6,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 46,
      // gpt-4.1's built-in price: $2 in, $8 out per million tokens.
      cost: 0.000128,
      cumulativeTokens: 46,
      cumulativeCost: 0.000128,
    });
    expect(series.points[1]).toMatchObject({
      totalTokens: 68,
      cost: 0.000184,
      cumulativeTokens: 114,
      cumulativeCost: 0.000312,
    });
  });

  it('sessions.usage.logs: the conversation as lines, tokens on the answers', async () => {
    const { logs }: any = await reader.request('sessions.usage.logs', { key: created.key, limit: 3 });
    expect(logs).toEqual([
      { timestamp: expect.any(Number), role: 'assistant', content: 'the penguin answer', tokens: 46, cost: 0.000128 },
      { timestamp: expect.any(Number), role: 'user', content: expect.stringContaining('which is tallest?') },
      {
        timestamp: expect.any(Number),
        role: 'assistant',
        content: 'emperor penguins are tallest',
        tokens: 68,
        cost: 0.000184,
      },
    ]);
    expect(await refusal(reader.request('sessions.usage.logs', { key: 'agent:main:nowhere' }))).toEqual({
      code: expect.any(String),
      message: expect.stringContaining('No transcript found for session: agent:main:nowhere'),
    });
  });
});

describe('many sessions at once', () => {
  it('sessions.patchMany: one outcome per target', async () => {
    const result: any = await h.client.request('sessions.patchMany', {
      targets: [{ key: created.key }, { key: 'agent:main:notes', agentId: 'work' }],
      patch: { thinkingLevel: 'low' },
    });
    expect(result.outcomes).toEqual([
      { ok: true, key: created.key },
      {
        ok: false,
        key: 'agent:main:notes',
        agentId: 'work',
        error: { code: expect.any(String), message: expect.stringContaining('belongs to agent "main", not "work"') },
      },
    ]);
    const row: any = await reader.request('sessions.describe', { key: created.key });
    expect(row.session.thinkingLevel).toBe('low');
  });

  it('sessions.cleanup: counts sessions whose transcript is gone, removes them with enforce + fixMissing', async () => {
    const store: any = await reader.request('sessions.describe', { key: 'agent:main:notes' });
    rmSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', `${store.session.sessionId}.jsonl`));
    const warned: any = await h.client.request('sessions.cleanup', { fixMissing: true });
    expect(warned).toEqual({
      agentId: 'main',
      storePath: join(h.gw.stateDir, 'agents', 'main', 'sessions', 'sessions.json'),
      mode: 'warn',
      dryRun: false,
      beforeCount: expect.any(Number),
      afterCount: warned.beforeCount,
      missing: 1,
      dmScopeRetired: 0,
      modelRunPruned: 0,
      pruned: 0,
      capped: 0,
      unreferencedArtifacts: { removedFiles: 0 },
      diskBudget: null,
      wouldMutate: true,
    });
    const applied: any = await h.client.request('sessions.cleanup', { enforce: true, fixMissing: true });
    expect(applied).toMatchObject({ mode: 'enforce', missing: 1, applied: true, appliedCount: 1 });
    expect(applied.afterCount).toBe(applied.beforeCount - 1);
    expect(((await reader.request('sessions.describe', { key: 'agent:main:notes' })) as any).session).toBeNull();
    expect(await refusal(reader.request('sessions.cleanup', {}))).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('branches and viewers', () => {
  it('sessions.branches.list: the active tip of the transcript; switching to it changes nothing', async () => {
    const { branches }: any = await reader.request('sessions.branches.list', { sessionKey: created.key });
    expect(branches).toEqual([
      {
        leafEntryId: expect.any(String),
        headline: expect.stringContaining('which is tallest?'),
        messageCount: 4,
        updatedAt: expect.any(String),
        active: true,
      },
    ]);
    expect(
      await h.client.request('sessions.branches.switch', {
        sessionKey: created.key,
        leafEntryId: branches[0].leafEntryId,
      }),
    ).toEqual({});
    expect(
      await refusal(h.client.request('sessions.branches.switch', { sessionKey: created.key, leafEntryId: 'x' })),
    ).toEqual({ code: expect.any(String), message: expect.stringContaining('no branch ends at entry x') });
    expect(await refusal(h.client.request('sessions.fork', { sessionKey: created.key, entryId: 'x' }))).toEqual({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('claw does not fork sessions from an earlier message'),
    });
  });

  it('sessions.viewers.set: answers the canonical keys', async () => {
    expect(await reader.request('sessions.viewers.set', { sessionKeys: ['main', created.key, 'main'] })).toEqual({
      sessionKeys: ['agent:main:main', created.key],
    });
  });
});

describe('input receipts of the Control UI’s sends', () => {
  it('chat.send runs under its idempotencyKey; chat.history tells pending sends from consumed ones', async () => {
    const sessionKey = 'agent:main:receipts';
    // The abort test above leaves its unanswered step scripted, and its gate entered.
    h.fake.reset();
    h.gate.reset();
    h.fake.script({ toolCalls: [{ name: 'wait_gate', arguments: {} }] }, { text: 'waited' }, { text: 'next one' });
    const first: any = await h.client.request('chat.send', {
      sessionKey,
      message: 'hold on',
      idempotencyKey: 'rcpt-1',
    });
    expect(first.runId).toBe('rcpt-1');
    await h.gate.entered;
    const second: any = await h.client.request('chat.send', {
      sessionKey,
      message: 'then this',
      idempotencyKey: 'rcpt-2',
    });
    expect(second.runId).toBe('rcpt-2');
    const busy: any = await reader.request('chat.history', {
      sessionKey,
      inputRunIds: ['rcpt-1', 'rcpt-2', 'unknown'],
    });
    expect(busy.inputReceipts).toEqual([
      { runId: 'rcpt-1', state: 'consumed', consumedByEventId: expect.any(String) },
      { runId: 'rcpt-2', state: 'pending' },
    ]);
    expect(busy.inputConsumptions).toEqual([
      { runId: 'rcpt-1', consumedByEventId: busy.inputReceipts[0].consumedByEventId },
    ]);
    // The consuming entry is the user message the send wrote.
    const consumed: any = await reader.request('chat.message.get', {
      sessionKey,
      messageId: busy.inputReceipts[0].consumedByEventId,
    });
    expect(consumed).toMatchObject({ ok: true, message: { role: 'user' } });
    expect(JSON.stringify(consumed.message.content)).toContain('hold on');
    h.gate.open();
    await finished('rcpt-1');
    await finished('rcpt-2');
    const idle: any = await reader.request('chat.history', { sessionKey, inputRunIds: ['rcpt-2'] });
    expect(idle.inputReceipts).toEqual([{ runId: 'rcpt-2', state: 'consumed', consumedByEventId: expect.any(String) }]);
    expect(idle.inputConsumptions).toEqual([
      { runId: 'rcpt-2', consumedByEventId: idle.inputReceipts[0].consumedByEventId },
    ]);
    // A reused key names a run claw still remembers: the new run gets an id of its own.
    h.fake.script({ text: 'again' });
    const reused: any = await h.client.request('agent', { sessionKey, message: 'again', idempotencyKey: 'rcpt-1' });
    expect(reused.runId).not.toBe('rcpt-1');
  });
});
