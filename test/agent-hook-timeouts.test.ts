/**
 * Hook failure policy on a real kernel with the agent loop and the fake LLM on 127.0.0.1:
 * a hung hook is cut off by its timeout (the plugin's own or the operator's
 * plugins.entries.<id>.hooks) and the session stays usable; chat.abort and /stop free the
 * session lane even while a run waits on a hook that never settles; `claw agent --local
 * --json` never exits 0 without output when a run fails, hangs or stalls.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '../sdk/index.js';
import { idem, runAgent, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { claw, EMPTY_SCHEMA, tempDir, writePlugin } from './helpers.js';

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** A plugin whose message_sending never settles for replies containing `trigger`. */
function hungHook(trigger: string, timeoutMs?: number) {
  const state = { calls: 0, entered: undefined as undefined | (() => void) };
  const entered = new Promise<void>((resolve) => (state.entered = resolve));
  const plugin = definePlugin({
    id: 'hung-hook',
    register(api) {
      api.on(
        'message_sending',
        (event) => {
          state.calls++;
          if (!event.content.includes(trigger)) return undefined;
          state.entered?.();
          return new Promise<never>(() => {});
        },
        timeoutMs === undefined ? {} : { timeoutMs },
      );
    },
  });
  return { plugin, state, entered };
}

const timeouts = (h: AgentHarness) => h.gw.kernel.hookErrors().filter((report) => report.kind === 'timeout');

describe('hook timeouts', () => {
  it('a never-resolving message_sending with timeoutMs is cut off and reported; the reply goes out and the session goes on', async () => {
    const hung = hungHook('answer', 200);
    harness = await startAgent({ plugins: [hung.plugin] });
    const h = harness;
    h.fake.script({ text: 'first answer' }, { text: 'second answer' });
    const first = await runAgent(h.client, { message: 'one' });
    expect(first.final).toMatchObject({ status: 'ok', summary: 'first answer' });
    expect(timeouts(h)).toEqual([
      expect.objectContaining({
        pluginId: 'hung-hook',
        hook: 'message_sending',
        message: 'hook "message_sending" handler from plugin "hung-hook" timed out after 200 ms',
      }),
    ]);
    // The recorder (a later handler in the chain) still saw the send.
    expect(h.hooks.filter((record) => record.hook === 'message_sending')).toHaveLength(1);
    const second = await runAgent(h.client, { message: 'two' });
    expect(second.final).toMatchObject({ status: 'ok', summary: 'second answer' });
    expect(timeouts(h)).toHaveLength(2);
  });

  it("plugins.entries.<id>.hooks.timeouts / timeoutMs (the operator) win over the plugin's own timeoutMs", async () => {
    const hung = hungHook('answer', 600_000);
    harness = await startAgent({
      plugins: [hung.plugin],
      config: {
        plugins: { entries: { 'hung-hook': { hooks: { timeoutMs: 900_000, timeouts: { message_sending: 150 } } } } },
      },
    });
    const h = harness;
    expect(h.gw.kernel.hooks.list('message_sending').find((info) => info.pluginId === 'hung-hook')?.timeoutMs).toBe(
      150,
    );
    h.fake.script({ text: 'an answer' });
    const run = await runAgent(h.client, { message: 'hi' });
    expect(run.final).toMatchObject({ status: 'ok', summary: 'an answer' });
    expect(timeouts(h).map((report) => report.message)).toEqual([
      'hook "message_sending" handler from plugin "hung-hook" timed out after 150 ms',
    ]);
  });

  it('rejects a hook timeout that is not a whole number of ms', async () => {
    const { createTestKernel } = await import('../sdk/testing.js');
    await expect(
      createTestKernel({ config: { plugins: { entries: { x: { hooks: { timeouts: { message_sending: -1 } } } } } } }),
    ).rejects.toThrow(/timeouts/);
    await expect(
      createTestKernel({ config: { plugins: { entries: { x: { hooks: { timeouts: { not_a_hook: 5 } } } } } } }),
    ).rejects.toThrow(/timeouts/);
  });
});

describe('abort frees the session lane while a hook hangs', () => {
  it('chat.abort during a hung message_sending ends the run; the next message runs', async () => {
    const hung = hungHook('first', 0);
    harness = await startAgent({ plugins: [hung.plugin] });
    const h = harness;
    h.fake.script({ text: 'first answer' }, { text: 'second answer' });
    const sent: any = await h.client.request('chat.send', {
      sessionKey: 'main',
      message: 'one',
      idempotencyKey: idem(),
    });
    await hung.entered;
    const aborted: any = await h.client.request('chat.abort', { sessionKey: 'main', runId: sent.runId });
    expect(aborted).toMatchObject({ ok: true, aborted: true });
    const waited: any = await h.client.request('agent.wait', { runId: sent.runId, timeoutMs: 5000 });
    expect(waited.status).toBe('aborted');
    await until(
      () =>
        h.events.some(
          (frame) =>
            frame.event === 'chat' &&
            (frame.payload as any).runId === sent.runId &&
            (frame.payload as any).state === 'aborted',
        ),
      3000,
      'aborted chat event',
    );
    const next = await runAgent(h.client, { message: 'two', sessionKey: 'main' });
    expect(next.final).toMatchObject({ status: 'ok', summary: 'second answer' });
    // An abort is not the plugin's failure.
    expect(h.gw.kernel.hookErrors()).toEqual([]);
  });

  it('/stop during a hung message_sending answers "Stopped 1 run" and the next message runs', async () => {
    const hung = hungHook('first', 0);
    harness = await startAgent({ plugins: [hung.plugin] });
    const h = harness;
    h.fake.script({ text: 'first answer' }, { text: 'second answer' });
    const first = runAgent(h.client, { message: 'one' });
    await hung.entered;
    const stop = await runAgent(h.client, { message: '/stop' });
    expect(stop.final.summary).toBe('⏹️ Stopped 1 run.');
    expect((await first).final.status).toBe('aborted');
    const next = await runAgent(h.client, { message: 'two' });
    expect(next.final).toMatchObject({ status: 'ok', summary: 'second answer' });
  });
});

describe('claw agent --local --json: a failed run says so and exits non-zero', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(() => fake.close());

  /** A state dir with the fake model and a plugin whose message_sending never settles. */
  function state(hooks?: Record<string, unknown>, pluginTimeoutMs?: number) {
    const stateDir = tempDir('claw-hookcli-');
    const pluginDir = writePlugin(join(stateDir, 'hung-hook'), {
      manifest: { id: 'hung-hook', hooks: ['message_sending'], configSchema: EMPTY_SCHEMA },
      code: `export default { register(api) { api.on('message_sending', () => new Promise(() => {}), ${JSON.stringify(pluginTimeoutMs === undefined ? {} : { timeoutMs: pluginTimeoutMs })}); } };`,
    });
    const config = {
      agents: { defaults: { model: 'openai/gpt-4.1' } },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-cli' } } },
      plugins: { load: { paths: [pluginDir] }, ...(hooks ? { entries: { 'hung-hook': { hooks } } } : {}) },
    };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config));
    return { OPENCLAW_STATE_DIR: stateDir };
  }

  it('a hook cut off by its timeout: the reply still arrives, exit 0, the timeout is logged with the plugin id', async () => {
    fake.script({ text: 'Still here.' });
    const result = await claw(['agent', '--local', '--json', '-m', 'hi'], state(undefined, 200));
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'ok', summary: 'Still here.' });
    expect(result.stderr).toContain('hook "message_sending" handler from plugin "hung-hook" timed out after 200 ms');
  });

  it('a hook the operator lets wait forever, with nothing left to settle it: a JSON error and exit 1, not a silent 0', async () => {
    fake.script({ text: 'Never delivered.' });
    const result = await claw(['agent', '--local', '--json', '-m', 'hi'], state({ timeouts: { message_sending: 0 } }));
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({
      status: 'error',
      error: 'the run stalled: nothing left to wait for',
    });
  });

  it('a failing model: a JSON error and exit 1', async () => {
    fake.script({ error: { status: 400, message: 'bad request from the fake' } });
    const result = await claw(['agent', '--local', '--json', '-m', 'hi'], state(undefined, 200));
    expect(result.code).toBe(1);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ status: 'error', error: expect.stringContaining('bad request from the fake') });
  });

  it('a hung model past --timeout: a JSON timeout and exit 1', async () => {
    fake.script({ hang: true });
    const result = await claw(['agent', '--local', '--json', '--timeout', '1', '-m', 'hi'], state(undefined, 200));
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'timeout', error: expect.stringMatching(/timed out/) });
  });
});
