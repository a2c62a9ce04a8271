/**
 * Usage and cost end to end: scripted turns with known token counts against a configured
 * price, read back through `usage.cost`, `sessions.usage`, the per-run usage ledger and
 * `claw usage --json`; the `/usage` footer modes in chat; a ledger that a crash left with a
 * torn last line.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEntries, readLedger, type LedgerEntry } from '../plugins/agent/usage-ledger.js';
import { effectiveMode, usageFooter } from '../plugins/agent/usage-footer.js';
import { runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { claw, REPO, tempDir, waitFor } from './helpers.js';

// USD per million tokens, configured for gpt-4.1 (the built-in price is overridden).
const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

let h: AgentHarness;
const ledger = () => join(h.gw.stateDir, 'agents', 'main', 'usage', 'ledger.jsonl');
const clawUsage = (...args: string[]) => claw(['usage', '--json', ...args], { OPENCLAW_STATE_DIR: h.gw.stateDir });

beforeAll(async () => {
  h = await startAgent({
    config: { models: { providers: { openai: { models: [{ id: 'gpt-4.1', cost: PRICE }] } } } },
  });
});
afterAll(async () => {
  await h?.stop();
});

describe('costs at the configured price', () => {
  it('usage.cost, sessions.usage, the ledger and claw usage --json agree on the exact cost', async () => {
    h.fake.script(
      // 1000 in, 200 out: 1000×3 + 200×15 = 6000 µ$.
      { text: 'first answer', usage: { input: 1000, output: 200 } },
      // OpenAI counts cached tokens inside the prompt: 1500 uncached + 500 cached, 100 out:
      // 1500×3 + 500×0.3 + 100×15 = 6150 µ$; then 400 in, 40 out: 1200 + 600 = 1800 µ$.
      { toolCalls: [{ name: 'wait_gate', arguments: {} }], usage: { input: 2000, output: 100, cacheRead: 500 } },
      { text: 'second answer', usage: { input: 400, output: 40 } },
    );
    h.gate.open();
    await runAgent(h.client, { message: 'one' });
    await runAgent(h.client, { message: 'two', sessionKey: 'agent:main:side' });

    const today = new Date().toISOString().slice(0, 10);
    const cost: any = await h.client.request('usage.cost', { startDate: today, endDate: today });
    expect(cost.totals).toMatchObject({
      input: 2900,
      output: 340,
      cacheRead: 500,
      totalTokens: 3740,
      inputCost: 0.0087,
      outputCost: 0.0051,
      cacheReadCost: 0.00015,
      cacheWriteCost: 0,
      totalCost: 0.01395,
      missingCostEntries: 0,
    });
    expect(cost.daily).toEqual([{ date: today, ...cost.totals }]);

    const sessions: any = await h.client.request('sessions.usage', {});
    const byKey = Object.fromEntries(sessions.sessions.map((row: any) => [row.key, row.usage]));
    expect(byKey['agent:main:main']).toMatchObject({ totalCost: 0.006, inputCost: 0.003, outputCost: 0.003 });
    expect(byKey['agent:main:side']).toMatchObject({ totalCost: 0.00795, missingCostEntries: 0 });
    expect(byKey['agent:main:side'].dailyBreakdown).toEqual([{ date: today, tokens: 2540, cost: 0.00795 }]);
    expect(sessions.totals.totalCost).toBe(0.01395);
    expect(sessions.aggregates.byModel).toEqual([
      expect.objectContaining({ provider: 'openai', model: 'gpt-4.1', count: 3 }),
    ]);

    // The transcript's assistant messages carry OpenClaw's cost object.
    const side = sessions.sessions.find((row: any) => row.key === 'agent:main:side');
    const transcript = readFileSync(
      join(h.gw.stateDir, 'agents', 'main', 'sessions', `${side.sessionId}.jsonl`),
      'utf8',
    );
    const usages = transcript
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((line) => line.message?.role === 'assistant')
      .map((line) => line.message.usage);
    expect(usages[0].cost).toEqual({
      input: 0.0045,
      output: 0.0015,
      cacheRead: 0.00015,
      cacheWrite: 0,
      total: 0.00615,
    });

    // One ledger line per run and model, owner-only.
    expect(statSync(ledger()).mode & 0o777).toBe(0o600);
    const entries = readLedger(ledger());
    expect(entries).toEqual([
      expect.objectContaining({
        agentId: 'main',
        sessionKey: 'agent:main:main',
        provider: 'openai',
        model: 'gpt-4.1',
        calls: 1,
        input: 1000,
        output: 200,
        cost: { input: 0.003, output: 0.003, cacheRead: 0, cacheWrite: 0, total: 0.006 },
        missingCostEntries: 0,
      }),
      expect.objectContaining({
        sessionKey: 'agent:main:side',
        sessionId: side.sessionId,
        runId: expect.any(String),
        calls: 2,
        input: 1900,
        output: 140,
        cacheRead: 500,
        totalTokens: 2540,
        cost: { input: 0.0057, output: 0.0021, cacheRead: 0.00015, cacheWrite: 0, total: 0.00795 },
      }),
    ]);

    const bySession = await clawUsage('--by', 'session');
    expect(bySession.stderr).toBe('');
    expect(bySession.code).toBe(0);
    const report = JSON.parse(bySession.stdout);
    expect(report.totals).toMatchObject({ runs: 2, calls: 3, totalTokens: 3740, totalCost: 0.01395 });
    expect(report.rows).toEqual([
      expect.objectContaining({ agentId: 'main', sessionKey: 'agent:main:side', totalCost: 0.00795, runs: 1 }),
      expect.objectContaining({ agentId: 'main', sessionKey: 'agent:main:main', totalCost: 0.006, runs: 1 }),
    ]);
    const byModel = JSON.parse((await clawUsage('--by', 'model', '--since', '7d')).stdout);
    expect(byModel.rows).toEqual([
      expect.objectContaining({ provider: 'openai', model: 'gpt-4.1', calls: 3, totalCost: 0.01395 }),
    ]);
    const past = JSON.parse((await clawUsage('--since', '2001-01-01', '--agent', 'nobody')).stdout);
    expect(past).toMatchObject({ since: '2001-01-01', agentId: 'nobody', totals: { runs: 0, totalCost: 0 }, rows: [] });

    const text = await claw(['usage', '--by', 'model'], { OPENCLAW_STATE_DIR: h.gw.stateDir });
    expect(text.stdout).toMatch(/openai\/gpt-4\.1\s+\$0\.01\s+3\.7k tokens/);
    expect(text.stdout).toContain('Total: $0.01 · 3.7k tokens · 2 runs');
    const bad = await claw(['usage', '--by', 'colour'], { OPENCLAW_STATE_DIR: h.gw.stateDir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--by "colour": expected one of model, agent, day, session, channel');
    const badSince = await claw(['usage', '--since', '2026-02-30'], { OPENCLAW_STATE_DIR: h.gw.stateDir });
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toContain('--since "2026-02-30"');
  });

  it('a model without a price counts its tokens and is reported unpriced, never as free', async () => {
    h.fake.script({ text: 'from an unlisted model', usage: { input: 70, output: 7 } });
    await runAgent(h.client, { message: 'three', model: 'openai/unlisted-model', sessionKey: 'agent:main:unpriced' });
    const sessions: any = await h.client.request('sessions.usage', { key: 'agent:main:unpriced' });
    expect(sessions.totals).toMatchObject({ totalTokens: 77, totalCost: 0, missingCostEntries: 1 });
    const entry = readLedger(ledger()).at(-1)!;
    expect(entry).toMatchObject({ model: 'unlisted-model', missingCostEntries: 1, cost: { total: 0 } });
    const report = JSON.parse((await clawUsage('--by', 'model')).stdout);
    expect(report.totals).toMatchObject({ totalCost: 0.01395, missingCostEntries: 1 });
  });
});

describe('/usage in chat', () => {
  const say = async (message: string, sessionKey = 'agent:main:chat') =>
    (await runAgent(h.client, { message, sessionKey })).final.summary as string;

  it('off | tokens | full footers, persisted per session; bare /usage cycles; reset inherits messages.responseUsage', async () => {
    expect(await say('/usage tokens')).toBe('📊 Usage footer: tokens');
    h.fake.script({ text: 'counted', usage: { input: 1200, output: 34 } });
    expect(await say('hello')).toBe('counted\n\nUsage: 1.2k in / 34 out');

    expect(await say('/usage full')).toBe('📊 Usage footer: full');
    h.fake.script({ text: 'priced', usage: { input: 1000, output: 200 } });
    expect(await say('again')).toBe('priced\n\nUsage: 1k in / 200 out · est $0.0060 · openai/gpt-4.1');

    // Bare /usage: full → off.
    expect(await say('/usage')).toBe('📊 Usage footer: off');
    h.fake.script({ text: 'quiet', usage: { input: 100, output: 10 } });
    expect(await say('and again')).toBe('quiet');
    expect(await say('/usage')).toBe('📊 Usage footer: tokens');

    expect(await say('/usage sideways')).toBe(
      '⚠️ /usage: unknown mode "sideways" (off | tokens | full | cost | reset)',
    );
    expect(await say('/usage reset')).toBe('📊 Usage footer: off (inherited from messages.responseUsage)');
    const store = () =>
      JSON.parse(readFileSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'))[
        'agent:main:chat'
      ];
    expect(store()).not.toHaveProperty('responseUsage');
    expect(await say('/usage off')).toBe('📊 Usage footer: off');
    expect(store().responseUsage).toBe('off');
    // The Control UI's way: sessions.patch, and the rows' effectiveResponseUsage.
    const row = async () =>
      ((await h.client.request('sessions.list', {})) as any).sessions.find((one: any) => one.key === 'agent:main:chat');
    expect(await row()).toMatchObject({ responseUsage: 'off', effectiveResponseUsage: 'off' });
    await h.client.request('sessions.patch', { key: 'agent:main:chat', responseUsage: 'on' });
    expect(await row()).toMatchObject({ responseUsage: 'tokens', effectiveResponseUsage: 'tokens' });
    await h.client.request('sessions.patch', { key: 'agent:main:chat', responseUsage: null });
    expect(store()).not.toHaveProperty('responseUsage');
    expect((await row()).effectiveResponseUsage).toBe('off');

    const summary = await say('/usage cost');
    expect(summary.split('\n')).toEqual([
      '💸 Usage cost',
      // 1200×3 + 34×15 + 1000×3 + 200×15 + 100×3 + 10×15 = 10560 µ$ over 2544 tokens.
      'Session: $0.01 · 2.5k tokens',
      // With the first test's 13950 µ$ (3740 tokens) and the unpriced call's 77 tokens.
      'Today: $0.02 · 6.4k tokens (1 unpriced call)',
      'Last 30d: $0.02 · 6.4k tokens (1 unpriced call)',
    ]);

    // A new session keeps the choice.
    expect(await say('/usage full')).toBe('📊 Usage footer: full');
    const before = store().sessionId;
    h.fake.script({ text: 'Hello again!', usage: { input: 10, output: 2 } });
    expect(await say('/new')).toBe('Hello again!\n\nUsage: 10 in / 2 out · est $0.0001 · openai/gpt-4.1');
    expect(store()).toMatchObject({ responseUsage: 'full', sessionId: expect.not.stringMatching(before) });
  });

  it('the footer follows the per-channel default until the session chooses, and an explicit off stays off', () => {
    const turn = {
      provider: 'openai',
      model: 'gpt-4.1',
      messages: [
        {
          role: 'assistant' as const,
          content: [],
          usage: { input: 5, output: 2, cacheRead: 1500, cacheWrite: 0 },
        },
      ],
    };
    expect(usageFooter('tokens', turn)).toBe('Usage: 5 in / 2 out · cache 1.5k cached / 0 new');
    expect(usageFooter('full', turn)).toBe(
      'Usage: 5 in / 2 out · cache 1.5k cached / 0 new · cost unknown · openai/gpt-4.1',
    );
    expect(usageFooter('off', turn)).toBeUndefined();

    const kernel = (responseUsage: unknown) => ({ config: () => ({ messages: { responseUsage } }) }) as never;
    const perChannel = kernel({ default: 'off', telegram: 'full', discord: 'on' });
    expect(effectiveMode(perChannel, undefined, 'telegram')).toBe('full');
    expect(effectiveMode(perChannel, undefined, 'discord')).toBe('tokens');
    expect(effectiveMode(perChannel, undefined, 'webchat')).toBe('off');
    expect(effectiveMode(kernel('tokens'), undefined)).toBe('tokens');
    expect(effectiveMode(kernel(undefined), undefined)).toBe('off');
    const chosen = (responseUsage: 'off' | 'full') => ({ responseUsage }) as never;
    expect(effectiveMode(kernel('tokens'), chosen('off'))).toBe('off');
    expect(effectiveMode(perChannel, chosen('full'), 'webchat')).toBe('full');
  });
});

describe('the ledger after a crash', () => {
  it('a torn last line is skipped and the next run starts on a line of its own', async () => {
    const before = readLedger(ledger()).length;
    // What a kill mid-write leaves: half a line, no newline.
    appendFileSync(ledger(), '{"ts":1,"runId":"torn","agentId":"main","sessionKey":"agent:main:ma');
    expect(readLedger(ledger())).toHaveLength(before);
    h.fake.script({ text: 'after the crash', usage: { input: 10, output: 5 } });
    await runAgent(h.client, { message: 'still counting', sessionKey: 'agent:main:after' });
    const lines = readFileSync(ledger(), 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.filter((line) => line.includes('"torn"'))).toEqual([
      '{"ts":1,"runId":"torn","agentId":"main","sessionKey":"agent:main:ma',
    ]);
    const entries = readLedger(ledger());
    expect(entries).toHaveLength(before + 1);
    expect(entries.at(-1)).toMatchObject({ sessionKey: 'agent:main:after', input: 10, output: 5 });
    const report = JSON.parse((await clawUsage('--by', 'session')).stdout);
    expect(report.rows.find((row: any) => row.sessionKey === 'agent:main:after')).toMatchObject({ totalTokens: 15 });
  });

  it('a writer killed mid-stream (SIGKILL) leaves only whole entries, and appends after it stay whole', async () => {
    const file = join(tempDir(), 'agents', 'k', 'usage', 'ledger.jsonl');
    const module = pathToFileURL(join(REPO, 'dist', 'plugins', 'agent', 'usage-ledger.js')).href;
    const entry = { ...sampleEntry(), sessionKey: `agent:k:${'x'.repeat(3000)}` };
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(module)}); const e = JSON.parse(process.argv[1]); for (let i = 0; ; i++) m.appendEntries(${JSON.stringify(file)}, [{ ...e, runId: 'r' + i }]);`,
        JSON.stringify(entry),
      ],
      { stdio: 'ignore' },
    );
    await waitFor(() => existsSync(file) && statSync(file).size > 600_000, { what: 'the writer to fill the ledger' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n').filter(Boolean);
    const whole = readLedger(file);
    // Every line is a whole entry; at most the very last could have been cut (one write each).
    expect(whole.length).toBeGreaterThanOrEqual(lines.length - 1);
    expect(whole.map((row) => row.runId)).toEqual(whole.map((_, index) => `r${index}`));
    appendEntries(file, [{ ...sampleEntry(), runId: 'after' }]);
    expect(readLedger(file).at(-1)?.runId).toBe('after');
    expect(readLedger(file)).toHaveLength(whole.length + 1);
  });

  it('appendEntries writes whole lines to an owner-only file', () => {
    const file = join(tempDir(), 'agents', 'a', 'usage', 'ledger.jsonl');
    const entry = sampleEntry();
    appendEntries(file, [entry, { ...entry, runId: 'r2' }]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readLedger(file).map((row) => row.runId)).toEqual(['r', 'r2']);
  });
});

function sampleEntry(): LedgerEntry {
  return {
    ts: 5,
    runId: 'r',
    agentId: 'a',
    sessionKey: 'agent:a:main',
    sessionId: 's',
    provider: 'p',
    model: 'm',
    calls: 1,
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    missingCostEntries: 1,
  };
}
