/**
 * Model failover as OpenClaw does it, through the real openai provider plugin against the
 * fake LLM server on 127.0.0.1: same-model retries with backoff (Retry-After honoured),
 * cooldowns per (auth profile, model), probes, explicit models and same-provider fallbacks.
 * The clock and the waits between retries are the test's, so minutes pass in microseconds.
 */
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../sdk/agent/index.js';
import { routeProvider } from '../plugins/models/provider-routing.js';
import { ModelService } from '../plugins/models/service.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { startFakeLlm, type FakeLlm, type RecordedRequest, type ScriptStep } from './fakes/llm-server.js';
import { freePort, REPO } from './helpers.js';

const MINUTE = 60_000;
const PRIMARY = 'openai/gpt-4.1';
const SIBLING = 'openai/gpt-4.1-mini';

let fake: FakeLlm;
let kernel: TestKernel;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

interface Rig {
  service: ModelService;
  settings: AgentSettings;
  waits: number[];
  clock: { now: number };
  ask(
    chain: string[],
    options?: { explicit?: string },
  ): Promise<{
    text: string;
    ref: string;
    resets: Reset[];
  }>;
}

interface Reset {
  reason: string;
  retry?: { attempt: number; of: number; waitMs: number };
  failover?: { from: string; to: string; cause: string };
}

async function rig(config: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Rig> {
  await kernel?.dispose();
  kernel = await createTestKernel({
    env,
    plugins: [join(REPO, 'plugins', 'openai'), join(REPO, 'plugins', 'models')],
    config: { models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-one' } } }, ...config },
  });
  const clock = { now: 1_000_000_000 };
  const waits: number[] = [];
  // random 0.5 = no jitter, so the waits are exact.
  const service = new ModelService(kernel.plugins.kernelServices, {
    now: () => clock.now,
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.5,
  });
  const settings = service.settings('main');
  return {
    service,
    settings,
    waits,
    clock,
    async ask(chain, options = {}) {
      const resets: Reset[] = [];
      const outcome = await service.models.stream(
        settings,
        chain,
        { messages: [{ role: 'user', content: 'hi' }] },
        {
          signal: new AbortController().signal,
          explicit: options.explicit,
          onEvent: (event) => {
            if (event.type === 'reset')
              resets.push({
                reason: event.reason,
                ...(event.retry ? { retry: event.retry } : {}),
                ...(event.failover ? { failover: event.failover } : {}),
              });
          },
        },
      );
      return { text: outcome.text, ref: outcome.ref, resets };
    },
  };
}

/** Answer by model id: a step per model, `ok` otherwise. */
function byModel(steps: Record<string, () => ScriptStep>): void {
  fake.respond((request: RecordedRequest) =>
    (steps[request.body.model] ?? (() => ({ text: `ok from ${request.body.model}` })))(),
  );
}

const models = () => fake.requests.map((request) => request.body.model);
const SERVER_ERROR: ScriptStep = {
  error: { status: 500, message: 'The server had an error while processing your request.' },
};

beforeEach(() => fake.reset());
afterAll(async () => {
  await kernel?.dispose();
});

describe('same-model recovery', () => {
  it('a 429 is retried on the same model and key after the Retry-After wait, then answers; nothing cools down', async () => {
    const r = await rig();
    fake.script(
      { error: { status: 429, message: 'Rate limit reached', type: 'rate_limit_error', retryAfterSeconds: 3 } },
      { text: 'second time lucky' },
    );
    const { text, resets } = await r.ask([PRIMARY, SIBLING]);
    expect(text).toBe('second time lucky');
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1']);
    expect(fake.requests.map((request) => request.apiKey)).toEqual(['sk-one', 'sk-one']);
    // Backoff would be 1 s; the server asked for 3 s, which is the floor.
    expect(r.waits).toEqual([3000]);
    // With a fallback in the chain, one retry is all a rate limit gets (agents.defaults.retry.provider.fallbackRetries).
    expect(resets).toEqual([
      { reason: expect.stringMatching(/openai 429: Rate limit reached/), retry: { attempt: 2, of: 2, waitMs: 3000 } },
    ]);
    expect(r.service.authProfiles('main').usage('openai:config')).not.toHaveProperty('models');
  });

  it('backoff doubles from 1 s and caps at 30 s; a rate limit gets 10 attempts in all', async () => {
    const r = await rig();
    fake.respond(() => ({ error: { status: 429, message: 'Rate limit reached', type: 'rate_limit_error' } }));
    await expect(r.ask([PRIMARY])).rejects.toThrow(
      /no model could answer: openai\/gpt-4\.1 \(openai:config\): openai 429/,
    );
    expect(fake.requests).toHaveLength(10);
    expect(r.waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it('a connection the server drops is retried like a 5xx', async () => {
    const dropper = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
    const port = (dropper.address() as AddressInfo).port;
    try {
      const r = await rig({
        models: { providers: { openai: { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-one' } } },
      });
      await expect(r.ask([PRIMARY])).rejects.toThrow(/no model could answer: .*openai request failed/);
      expect(r.waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    } finally {
      await new Promise((resolve) => dropper.close(resolve));
    }
  });

  it('nothing listening is not retried: the error names the URL and the fallback answers at once', async () => {
    const port = await freePort();
    const r = await rig({
      models: {
        providers: {
          openai: { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-one' },
          local: { baseUrl: fake.openaiBaseUrl },
        },
      },
    });
    byModel({});
    await expect(r.ask([PRIMARY])).rejects.toThrow(
      `no model could answer: openai/gpt-4.1 (openai:config): openai cannot connect to http://127.0.0.1:${port}/v1/chat/completions (ECONNREFUSED)`,
    );
    const { text, ref } = await r.ask([PRIMARY, 'local/m']);
    expect({ text, ref }).toEqual({ text: 'ok from m', ref: 'local/m' });
    expect(r.waits).toEqual([]);
    // Not the key's fault: nothing cools down.
    expect(r.service.authProfiles('main').usage('openai:config').cooldownUntil).toBeUndefined();
  });

  it('a Retry-After beyond 60 s goes straight to the fallback instead of waiting', async () => {
    const r = await rig();
    byModel({
      'gpt-4.1': () => ({
        error: { status: 429, message: 'Rate limit reached', type: 'rate_limit_error', retryAfterSeconds: 600 },
      }),
    });
    const { text, ref } = await r.ask([PRIMARY, SIBLING]);
    expect({ text, ref }).toEqual({ text: 'ok from gpt-4.1-mini', ref: SIBLING });
    expect(r.waits).toEqual([]);
    // The server's 10 minutes are the cooldown's floor.
    const cooled = r.service.authProfiles('main').usage('openai:config').models!['gpt-4.1']!;
    expect(cooled.cooldownUntil! - r.clock.now).toBe(10 * MINUTE);
  });
});

describe('cooldowns per (auth profile, model)', () => {
  it('with a fallback, a 500 gets one retry, then the fallback answers on the same key; the cooldown is the model’s, not the key’s', async () => {
    const r = await rig();
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    const { text, ref, resets } = await r.ask([PRIMARY, SIBLING]);
    expect({ text, ref }).toEqual({ text: 'ok from gpt-4.1-mini', ref: SIBLING });
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1', 'gpt-4.1-mini']);
    expect(new Set(fake.requests.map((request) => request.apiKey))).toEqual(new Set(['sk-one']));
    expect(r.waits).toEqual([1000]);
    expect(resets).toEqual([
      { reason: expect.stringContaining('500'), retry: { attempt: 2, of: 2, waitMs: 1000 } },
      { reason: expect.stringContaining('500') },
      { reason: expect.stringContaining('500'), failover: { from: PRIMARY, to: SIBLING, cause: '500' } },
    ]);
    const profiles = r.service.authProfiles('main');
    expect(profiles.available('openai:config')).toBe(true);
    expect(profiles.available('openai:config', 'gpt-4.1-mini')).toBe(true);
    expect(profiles.cooldown('openai:config', 'gpt-4.1')).toEqual({
      scope: 'model',
      kind: 'overloaded',
      until: r.clock.now + MINUTE,
    });

    // The next run skips the cooling primary and goes straight to the sibling.
    fake.reset();
    byModel({});
    expect((await r.ask([PRIMARY, SIBLING])).ref).toBe(SIBLING);
    expect(models()).toEqual(['gpt-4.1-mini']);
  });

  it('with no fallback, 500s get OpenClaw’s full recovery: 8 retries, backoff doubling to 30 s', async () => {
    const r = await rig();
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    await expect(r.ask([PRIMARY])).rejects.toThrow(/no model could answer/);
    expect(models()).toEqual(Array(9).fill('gpt-4.1'));
    expect(r.waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('agents.defaults.retry.provider sets the budgets: maxRetries alone, fallbackRetries with a fallback', async () => {
    const r = await rig({ agents: { defaults: { retry: { provider: { maxRetries: 2, fallbackRetries: 0 } } } } });
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    await expect(r.ask([PRIMARY])).rejects.toThrow(/no model could answer/);
    expect(models()).toEqual(Array(3).fill('gpt-4.1'));
    fake.reset();
    r.clock.now += 2 * MINUTE;
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    expect((await r.ask([PRIMARY, SIBLING])).ref).toBe(SIBLING);
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
  });

  it('a fallback’s retry budget is spent within 5 s: a Retry-After of 8 s goes to the fallback at once', async () => {
    const r = await rig();
    byModel({
      'gpt-4.1': () => ({
        error: { status: 429, message: 'Rate limit reached', type: 'rate_limit_error', retryAfterSeconds: 8 },
      }),
    });
    expect((await r.ask([PRIMARY, SIBLING])).ref).toBe(SIBLING);
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
    expect(r.waits).toEqual([]);
  });

  it('a stream cut part-way is not retried when a fallback exists; the fallback answers', async () => {
    const r = await rig();
    byModel({ 'gpt-4.1': () => ({ text: 'PARTIAL-', cut: true }) });
    const { text, resets } = await r.ask([PRIMARY, SIBLING]);
    expect(text).toBe('ok from gpt-4.1-mini');
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
    expect(resets.at(-1)).toEqual({
      reason: expect.stringContaining('stream ended before the model finished'),
      failover: { from: PRIMARY, to: SIBLING, cause: 'timeout' },
    });
  });

  it('a model with no key (a local server) cools down in memory: the next turn skips it at once', async () => {
    const r = await rig({
      models: {
        providers: {
          openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-one' },
          ollama: { baseUrl: fake.openaiBaseUrl, api: 'openai-completions' },
        },
      },
    });
    byModel({ llama3: () => SERVER_ERROR });
    const { ref, resets } = await r.ask(['ollama/llama3', PRIMARY]);
    expect(ref).toBe(PRIMARY);
    expect(models()).toEqual(['llama3', 'llama3', 'gpt-4.1']);
    expect(resets.at(-1)?.failover).toEqual({ from: 'ollama/llama3', to: PRIMARY, cause: '500' });
    fake.reset();
    byModel({});
    expect((await r.ask(['ollama/llama3', PRIMARY])).ref).toBe(PRIMARY);
    expect(models()).toEqual(['gpt-4.1']);
    // After the cooldown (1 min) it is tried again, once (a probe), and answers.
    fake.reset();
    r.clock.now += MINUTE + 1;
    byModel({});
    expect((await r.ask(['ollama/llama3', PRIMARY])).ref).toBe('ollama/llama3');
    expect(models()).toEqual(['llama3']);
  });

  it('a hung primary fails at its timeoutSeconds and is not asked again: the fallback answers', async () => {
    const r = await rig({
      models: {
        providers: {
          openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-one' },
          slow: { baseUrl: fake.openaiBaseUrl, api: 'openai-completions', timeoutSeconds: 1 },
        },
      },
    });
    byModel({ hung: () => ({ hang: true }) });
    const { ref, resets } = await r.ask(['slow/hung', PRIMARY]);
    expect(ref).toBe(PRIMARY);
    expect(models()).toEqual(['hung', 'gpt-4.1']);
    expect(r.waits).toEqual([]);
    expect(resets.at(-1)?.failover).toEqual({ from: 'slow/hung', to: PRIMARY, cause: 'timeout' });
  });

  it('the 90 s outage window ends retries of a 5xx early', async () => {
    const r = await rig();
    // Each request takes the clock 40 s forward: after the third failure (120 s in) the window is spent.
    fake.respond(() => {
      r.clock.now += 40_000;
      return SERVER_ERROR;
    });
    await expect(r.ask([PRIMARY])).rejects.toThrow(/no model could answer/);
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1', 'gpt-4.1']);
    expect(r.waits).toEqual([1000, 2000]);
  });

  it('auth failures cool the whole profile: every model on that key is skipped, another key answers', async () => {
    const r = await rig(
      { models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-revoked' } } } },
      { OPENAI_API_KEY: 'sk-env' },
    );
    fake.scriptForKey('sk-revoked', {
      error: {
        status: 401,
        message: 'Incorrect API key provided',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      },
    });
    byModel({});
    expect((await r.ask([PRIMARY, SIBLING])).ref).toBe(PRIMARY);
    expect(fake.requests.map((request) => request.apiKey)).toEqual(['sk-revoked', 'sk-env']);
    const profiles = r.service.authProfiles('main');
    expect(profiles.cooldown('openai:config', 'gpt-4.1-mini')).toMatchObject({ scope: 'profile', kind: 'auth' });
    fake.reset();
    byModel({});
    await r.ask([SIBLING]);
    expect(fake.requests.map((request) => request.apiKey)).toEqual(['sk-env']);
  });
});

describe('probes and explicit models', () => {
  async function cooledPrimary(): Promise<Rig> {
    const r = await rig();
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    await r.ask([PRIMARY, SIBLING]);
    fake.reset();
    r.waits.length = 0;
    return r;
  }

  it('once the cooldown is over, the next request is a probe: one attempt, and a failure cools down for the next step (5 min)', async () => {
    const r = await cooledPrimary();
    r.clock.now += MINUTE + 1;
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    expect((await r.ask([PRIMARY, SIBLING])).ref).toBe(SIBLING);
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
    expect(r.waits).toEqual([]);
    const profiles = r.service.authProfiles('main');
    expect(profiles.cooldown('openai:config', 'gpt-4.1')).toMatchObject({ until: r.clock.now + 5 * MINUTE });

    // The server is back: the probe after this cooldown answers and clears the streak.
    r.clock.now += 5 * MINUTE + 1;
    fake.reset();
    byModel({});
    expect((await r.ask([PRIMARY, SIBLING])).ref).toBe(PRIMARY);
    expect(profiles.usage('openai:config').models).toBeUndefined();
    expect(profiles.recovering('openai:config', 'gpt-4.1')).toBe(false);
  });

  it('the primary is probed when its cooldown is nearly over (once per 30 s)', async () => {
    const r = await cooledPrimary();
    r.clock.now += MINUTE - 10_000;
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    await r.ask([PRIMARY, SIBLING]);
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
    fake.reset();
    byModel({});
    // The failed probe started a 5 min cooldown; nothing is probed again right away.
    await r.ask([PRIMARY, SIBLING]);
    expect(models()).toEqual(['gpt-4.1-mini']);
  });

  it('when nothing else can answer, a cooling model is probed (once per 30 s) instead of failing outright', async () => {
    const r = await cooledPrimary();
    byModel({ 'gpt-4.1': () => SERVER_ERROR });
    // No fallback: one probe, no retries.
    await expect(r.ask([PRIMARY])).rejects.toThrow(
      /no model could answer: openai\/gpt-4\.1 \(openai:config\): openai 500/,
    );
    expect(models()).toEqual(['gpt-4.1']);
    expect(r.waits).toEqual([]);
    // Within 30 s no second probe: the error says why, and no request goes out.
    fake.reset();
    await expect(r.ask([PRIMARY])).rejects.toThrow(
      /openai\/gpt-4\.1 \(openai:config\) is cooling down for \d+ s after overloaded/,
    );
    expect(fake.requests).toHaveLength(0);
    // 30 s later the server is back: the next probe answers, long before the 5 min are up.
    r.clock.now += 30_001;
    byModel({});
    expect((await r.ask([PRIMARY])).text).toBe('ok from gpt-4.1');
    expect(r.service.authProfiles('main').available('openai:config', 'gpt-4.1')).toBe(true);
  });

  it('a model the user chose explicitly is tried even while it cools down', async () => {
    const r = await cooledPrimary();
    byModel({});
    // Without the choice, the cooling primary is skipped …
    expect((await r.ask([PRIMARY, SIBLING])).ref).toBe(SIBLING);
    // … with it (`--model openai/gpt-4.1`), it is asked first.
    fake.reset();
    byModel({});
    expect((await r.ask([PRIMARY, SIBLING], { explicit: PRIMARY })).ref).toBe(PRIMARY);
    expect(models()).toEqual(['gpt-4.1']);
  });
});

describe('provider routing', () => {
  it('a provider id no plugin registers is served by the plugin that speaks its api; well-known local servers need no entry', async () => {
    await rig({
      models: {
        providers: {
          openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-one' },
          gateway: { baseUrl: 'http://127.0.0.1:4000/v1', api: 'openai-responses' },
          nourl: { api: 'openai-completions' },
          claude: { baseUrl: 'http://127.0.0.1:4001', api: 'anthropic-messages' },
        },
      },
    });
    const services = kernel.plugins.kernelServices;
    expect(await routeProvider(services, 'gateway')).toMatchObject({
      id: 'gateway',
      custom: true,
      provider: { id: 'openai' },
      config: { api: 'openai-responses' },
    });
    expect(await routeProvider(services, 'ollama')).toMatchObject({
      custom: true,
      provider: { id: 'openai' },
      config: { baseUrl: 'http://127.0.0.1:11434/v1', api: 'openai-completions' },
    });
    expect(await routeProvider(services, 'openrouter')).toMatchObject({ envKeys: ['OPENROUTER_API_KEY'] });
    expect(await routeProvider(services, 'openai')).toMatchObject({ custom: false });
    expect(await routeProvider(services, 'nourl')).toMatch(/models\.providers\.nourl needs a baseUrl/);
    expect(await routeProvider(services, 'mystery')).toMatch(
      /no provider plugin "mystery" is enabled; for a custom provider set models\.providers\.mystery\.baseUrl and api/,
    );
    // Only the openai plugin is loaded here: nothing speaks anthropic-messages.
    expect(await routeProvider(services, 'claude')).toMatch(
      /no enabled provider plugin speaks api "anthropic-messages"/,
    );
  });
});
