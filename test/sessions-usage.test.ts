/**
 * OpenClaw's session maintenance and usage methods against a real gateway and the fake LLM:
 * `sessions.compact {maxLines}` (truncation, not a summary) and `sessions.usage` (token
 * totals read from the transcripts).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Transcript } from '../plugins/sessions/transcript.js';
import { trimTranscript } from '../plugins/sessions/trim.js';
import { runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { tempDir } from './helpers.js';

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function transcript(h: AgentHarness): { file: string; lines: any[] } {
  const dir = join(h.gw.stateDir, 'agents', 'main', 'sessions');
  const entry = JSON.parse(readFileSync(join(dir, 'sessions.json'), 'utf8'))['agent:main:main'];
  const file = join(dir, `${entry.sessionId}.jsonl`);
  return {
    file,
    lines: readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line)),
  };
}

describe('trimTranscript', () => {
  it('relinks what it keeps: a compaction whose first kept entry was cut keeps from the first survivor', () => {
    const file = join(tempDir(), 's1.jsonl');
    const t = new Transcript(file);
    const a = t.appendMessage({ role: 'user', content: 'a' })!;
    t.appendMessage({ role: 'user', content: 'b' });
    const c = t.appendMessage({ role: 'user', content: 'c' })!;
    t.appendCompaction({ summary: 'S', firstKeptEntryId: a.id, tokensBefore: 10 });
    t.appendMessage({ role: 'user', content: 'd' });
    expect(trimTranscript(file, 4)).toEqual({ compacted: true, kept: 4 });
    const kept = new Transcript(file).entries();
    expect(kept.map((entry) => entry.type)).toEqual(['session', 'message', 'compaction', 'message']);
    expect(kept[2]).toMatchObject({ firstKeptEntryId: c.id, summary: 'S' });
    // What the model sees: the summary, then c (kept verbatim) and d.
    expect(new Transcript(file).messages().map((message) => message.content)).toEqual([expect.any(Array), 'c', 'd']);
    expect(trimTranscript(file, 4)).toEqual({ compacted: false, kept: 4 });
    expect(trimTranscript(join(tempDir(), 'none.jsonl'), 4)).toEqual({ compacted: false, reason: 'no transcript' });
  });
});

describe('sessions.compact {maxLines}', () => {
  it('keeps the header and the newest lines, written owner-only; the session carries on', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'r1' }, { text: 'r2' }, { text: 'r3' }, { text: 'r4' });
    for (const message of ['m1', 'm2', 'm3']) await runAgent(h.client, { message });
    const before = transcript(h).lines;
    expect(before[0].type).toBe('session');
    expect(before.length).toBeGreaterThan(5);

    // Nothing to do when the transcript is already short enough.
    expect(await h.client.request('sessions.compact', { key: 'main', maxLines: before.length })).toEqual({
      ok: true,
      key: 'agent:main:main',
      compacted: false,
      kept: before.length,
    });

    const result = await h.client.request('sessions.compact', { key: 'main', maxLines: 3 });
    expect(result).toEqual({ ok: true, key: 'agent:main:main', compacted: true, kept: 3 });
    const { file, lines } = transcript(h);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toEqual(before[0]);
    expect(lines.slice(1).map((line) => line.id)).toEqual(before.slice(-2).map((line) => line.id));
    // The chain starts afresh at the first kept entry; the rest still point at their parents.
    expect(lines[1].parentId).toBeNull();
    expect(lines[2].parentId).toBe(lines[1].id);
    expect(lines.map((line) => line.message?.content?.[0]?.text ?? line.message?.content)).toContain('r3');

    // The next turn sends only what was kept (plus the new message) and appends to the chain.
    await runAgent(h.client, { message: 'm4' });
    const sent = JSON.stringify(h.fake.requests.at(-1)!.body);
    expect(sent).toContain('r3');
    expect(sent).not.toContain('r1');
    const after = transcript(h).lines;
    expect(after).toHaveLength(5);
    expect(after[3].parentId).toBe(after[2].id);

    // maxLines 1 leaves only the header.
    expect(await h.client.request('sessions.compact', { key: 'main', maxLines: 1 })).toMatchObject({
      compacted: true,
      kept: 1,
    });
    expect(transcript(h).lines).toHaveLength(1);
  });

  it('answers for a session without a transcript, refuses bad params and a run in progress', async () => {
    harness = await startAgent();
    const h = harness;
    expect(await h.client.request('sessions.compact', { key: 'nobody-here', maxLines: 5 })).toEqual({
      ok: true,
      key: 'nobody-here',
      compacted: false,
      reason: 'no sessionId',
    });
    await expect(h.client.request('sessions.compact', { key: 'main', maxLines: 0 })).rejects.toThrow(/maxLines/);
    await expect(h.client.request('sessions.compact', { key: 'main', maxLines: 5, instructions: 'x' })).rejects.toThrow(
      /instructions do not apply/,
    );
    await expect(
      h.client.request('sessions.compact', { key: 'agent:main:main', agentId: 'other', maxLines: 5 }),
    ).rejects.toThrow(/belongs to agent "main"/);

    h.fake.script({ toolCalls: [{ name: 'wait_gate', arguments: {} }] }, { text: 'done' });
    const run = runAgent(h.client, { message: 'wait' });
    await h.gate.entered;
    await expect(h.client.request('sessions.compact', { key: 'main', maxLines: 1 })).rejects.toThrow(
      /has an active run; retry after it finishes/,
    );
    h.gate.open();
    await run;
    expect(transcript(h).lines.length).toBeGreaterThan(1);
  });
});

describe('sessions.usage', () => {
  it('sums the usage each model call reported, per session and in aggregates, in OpenClaw shape', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script(
      { toolCalls: [{ name: 'wait_gate', arguments: {} }], usage: { input: 100, output: 10, cacheRead: 40 } },
      { text: 'first', usage: { input: 120, output: 20 } },
      { text: 'second', usage: { input: 200, output: 30 } },
    );
    h.gate.open();
    await runAgent(h.client, { message: 'one' });
    await runAgent(h.client, { message: 'two', sessionKey: 'side' });

    const all: any = await h.client.request('sessions.usage', {});
    expect(all.sessions.map((row: any) => row.key).sort()).toEqual(['agent:main:main', 'side']);
    const main = all.sessions.find((row: any) => row.key === 'agent:main:main');
    expect(main).toMatchObject({
      agentId: 'main',
      sessionId: expect.any(String),
      scope: 'instance',
      modelProvider: 'openai',
      model: 'gpt-4.1',
    });
    expect(main.usage).toMatchObject({
      // OpenAI counts cached tokens inside prompt_tokens; claw's input is the uncached part.
      input: 180,
      output: 30,
      cacheRead: 40,
      cacheWrite: 0,
      totalTokens: 250,
      // gpt-4.1 at the built-in price ($2 in, $8 out, $0.50 cached per million):
      // 60×2 + 10×8 + 40×0.5 = 220 µ$, then 120×2 + 20×8 = 400 µ$.
      totalCost: 0.00062,
      cacheReadCost: 0.00002,
      missingCostEntries: 0,
      messageCounts: { total: 4, user: 1, assistant: 2, toolCalls: 1, toolResults: 1, errors: 0 },
      toolUsage: { totalCalls: 1, uniqueTools: 1, tools: [{ name: 'wait_gate', count: 1 }] },
      modelUsage: [
        { provider: 'openai', model: 'gpt-4.1', count: 2, totals: expect.objectContaining({ totalTokens: 250 }) },
      ],
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(main.usage.dailyBreakdown).toEqual([{ date: today, tokens: 250, cost: 0.00062 }]);
    expect(all.totals).toMatchObject({
      input: 380,
      output: 60,
      totalTokens: 480,
      totalCost: 0.00126,
      missingCostEntries: 0,
    });
    expect(all.endDate).toBe(today);
    expect(all.aggregates).toMatchObject({
      sessionCount: 2,
      messages: { total: 6, user: 2, assistant: 3 },
      byModel: [{ provider: 'openai', model: 'gpt-4.1', count: 3 }],
      byProvider: [{ provider: 'openai', count: 3 }],
      byAgent: [{ agentId: 'main', totals: expect.objectContaining({ totalTokens: 480 }) }],
      daily: [{ date: today, tokens: 480, messages: 6, toolCalls: 1 }],
    });

    // One session, as the Control UI asks for it; a range without today's activity is empty.
    const one: any = await h.client.request('sessions.usage', {
      key: 'side',
      limit: 1,
      mode: 'specific',
      timeZone: 'Asia/Tokyo',
      includeContextWeight: false,
    });
    expect(one.sessions).toHaveLength(1);
    expect(one.totals.totalTokens).toBe(230);
    const past: any = await h.client.request('sessions.usage', {
      startDate: '2001-01-01',
      endDate: '2001-01-31',
      mode: 'utc',
    });
    expect(past).toMatchObject({
      startDate: '2001-01-01',
      endDate: '2001-01-31',
      sessions: [],
      totals: { totalTokens: 0 },
    });

    await expect(h.client.request('sessions.usage', { startDate: '2001-01-01' })).rejects.toThrow(
      /startDate and endDate must be provided together/,
    );
    await expect(
      h.client.request('sessions.usage', { startDate: '2001-02-30', endDate: '2001-03-01' }),
    ).rejects.toThrow(/invalid startDate/);
    await expect(h.client.request('sessions.usage', { mode: 'specific', timeZone: 'Mars/Olympus' })).rejects.toThrow(
      /unknown timeZone/,
    );
    await expect(h.client.request('sessions.usage', { agentScope: 'all', key: 'main' })).rejects.toThrow(
      /agentScope=all cannot be combined/,
    );
  });
});
