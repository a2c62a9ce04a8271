/**
 * OpenClaw's API-key variables: `OPENCLAW_LIVE_<PROVIDER>_KEY` pins one key,
 * `<PROVIDER>_API_KEYS` lists several, `<PROVIDER>_API_KEY` and `<PROVIDER>_API_KEY_<suffix>`
 * add more. Each is a key to rotate to on a rate limit, counts for readiness (`claw status`),
 * and is shown by the variable it came from, never by its value. Requests go to a fake
 * OpenAI-compatible server on 127.0.0.1.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isModelError } from '../sdk/index.js';
import type { ModelOutcome } from '../sdk/agent/index.js';
import { createRedactor } from '../host/redact.js';
import { AuthProfiles } from '../plugins/models/auth-profiles.js';
import { envApiKeys } from '../plugins/models/env-keys.js';
import { ModelService } from '../plugins/models/service.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { startFakeLlm, type FakeLlm, type ScriptStep } from './fakes/llm-server.js';
import { claw, REPO, startCliGateway, tempDir, waitFor } from './helpers.js';

const plugin = (id: string) => join(REPO, 'plugins', id);

// Not vendor-shaped on purpose: only the environment says these are secrets.
const LIMITED = 'team-key-limited-0001';
const FREE = 'team-key-free-0002';
const LIVE = 'team-key-live-0003';
const CONFIG = 'team-key-config-0004';

let fake: FakeLlm;
let kernel: TestKernel | undefined;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
});
afterEach(async () => {
  await kernel?.dispose();
  kernel = undefined;
});

const NAMES: Record<string, string> = { [FREE]: 'the free key', [LIVE]: 'the live key' };

/** The fake's answer per key: LIMITED is always rate limited; any other key answers, naming itself. */
function rateLimitOne(request: { apiKey?: string }): ScriptStep {
  if (request.apiKey === LIMITED)
    return { error: { status: 429, message: 'Rate limit reached for requests', type: 'rate_limit_error' } };
  return { text: `answered with ${NAMES[request.apiKey ?? ''] ?? 'another key'}` };
}

async function ask(
  env: Record<string, string>,
  config: Record<string, unknown> = {},
): Promise<{ outcome?: ModelOutcome; error?: Error; waits: number[]; keys: Array<string | undefined> }> {
  kernel = await createTestKernel({
    env: { OPENAI_BASE_URL: fake.openaiBaseUrl, ...env },
    config: { agents: { defaults: { model: 'openai/gpt-test' } }, ...config },
    plugins: [plugin('openai')],
  });
  const waits: number[] = [];
  const service = new ModelService(kernel.plugins.kernelServices, { sleep: async (ms) => void waits.push(ms) });
  const before = fake.requests.length;
  try {
    const outcome = await service.models.stream(
      service.settings('main'),
      ['openai/gpt-test'],
      { messages: [{ role: 'user', content: 'hi' }] },
      { signal: new AbortController().signal, onEvent: () => {} },
    );
    return { outcome, waits, keys: fake.requests.slice(before).map((request) => request.apiKey) };
  } catch (error) {
    if (!isModelError(error)) throw error;
    return { error, waits, keys: fake.requests.slice(before).map((request) => request.apiKey) };
  }
}

describe('which keys the environment gives a provider', () => {
  it('the list, then the single key, then the suffixed ones by name; each key once', () => {
    const env = {
      OPENAI_API_KEY_ZED: 'k-zed',
      OPENAI_API_KEYS: ' k-one, k-two;k-three  k-one ',
      OPENAI_API_KEY: 'k-two',
      OPENAI_API_KEY_ALPHA: 'k-alpha',
      OPENAI_API_KEY_: 'not-a-suffix',
      ANTHROPIC_API_KEY: 'k-other-provider',
    };
    expect(envApiKeys('openai', ['OPENAI_API_KEY'], env)).toEqual({
      pinned: false,
      keys: [
        { source: 'OPENAI_API_KEYS[1]', key: 'k-one' },
        { source: 'OPENAI_API_KEYS[2]', key: 'k-two' },
        { source: 'OPENAI_API_KEYS[3]', key: 'k-three' },
        { source: 'OPENAI_API_KEY_ALPHA', key: 'k-alpha' },
        { source: 'OPENAI_API_KEY_ZED', key: 'k-zed' },
      ],
    });
  });

  it('OPENCLAW_LIVE_<PROVIDER>_KEY pins one key; a provider id becomes its variable prefix', () => {
    expect(
      envApiKeys('openai', [], { OPENCLAW_LIVE_OPENAI_KEY: 'k-live', OPENAI_API_KEYS: 'a,b', OPENAI_API_KEY: 'c' }),
    ).toEqual({ pinned: true, keys: [{ source: 'OPENCLAW_LIVE_OPENAI_KEY', key: 'k-live' }] });
    expect(envApiKeys('my-proxy', [], { MY_PROXY_API_KEYS: 'p1;p2' }).keys.map((entry) => entry.key)).toEqual([
      'p1',
      'p2',
    ]);
    // A plugin's own variable (OpenRouter's) counts after <PROVIDER>_API_KEY.
    expect(
      envApiKeys('openrouter', ['OPENROUTER_KEY'], { OPENROUTER_KEY: 'r2', OPENROUTER_API_KEY: 'r1' }).keys,
    ).toEqual([
      { source: 'OPENROUTER_API_KEY', key: 'r1' },
      { source: 'OPENROUTER_KEY', key: 'r2' },
    ]);
  });

  it('auth profiles: file, config, then the environment — and a live key replaces them all', () => {
    const profiles = new AuthProfiles(join(tempDir('claw-env-keys-'), 'auth-profiles.json'));
    const env = { OPENAI_API_KEYS: `${CONFIG},${FREE}`, OPENAI_API_KEY_BACKUP: LIMITED };
    const listed = profiles.profilesFor('openai', { configKey: CONFIG, envKeys: ['OPENAI_API_KEY'], env });
    expect(listed.map((profile) => [profile.id, profile.source])).toEqual([
      ['openai:config', 'config'],
      ['openai:env:OPENAI_API_KEYS[2]', 'env'],
      ['openai:env:OPENAI_API_KEY_BACKUP', 'env'],
    ]);
    const pinned = profiles.profilesFor('openai', {
      configKey: CONFIG,
      envKeys: ['OPENAI_API_KEY'],
      env: { ...env, OPENCLAW_LIVE_OPENAI_KEY: LIVE },
    });
    expect(pinned.map((profile) => [profile.id, profile.key])).toEqual([['openai:env:OPENCLAW_LIVE_OPENAI_KEY', LIVE]]);
  });
});

describe('rotation and the live override against a fake provider', () => {
  it('a rate-limited key in OPENAI_API_KEYS rotates at once to the next one', async () => {
    fake.respond(rateLimitOne);
    const { outcome, waits, keys } = await ask({ OPENAI_API_KEYS: `${LIMITED}; ${FREE}` });
    expect(outcome).toMatchObject({ text: 'answered with the free key', profileId: 'openai:env:OPENAI_API_KEYS[2]' });
    expect(keys).toEqual([LIMITED, FREE]);
    // No backoff on the limited key first: another key was free.
    expect(waits).toEqual([]);
  });

  it('OPENAI_API_KEY_<suffix> is a key to rotate to as well', async () => {
    fake.respond(rateLimitOne);
    const { outcome, keys } = await ask({ OPENAI_API_KEY: LIMITED, OPENAI_API_KEY_BACKUP: FREE });
    expect(outcome).toMatchObject({
      text: 'answered with the free key',
      profileId: 'openai:env:OPENAI_API_KEY_BACKUP',
    });
    expect(keys).toEqual([LIMITED, FREE]);
  });

  it('OPENCLAW_LIVE_OPENAI_KEY wins over config and every other variable, and is never rotated away from', async () => {
    fake.respond(rateLimitOne);
    const others = { OPENAI_API_KEYS: `${FREE},${LIMITED}`, OPENAI_API_KEY: FREE };
    const config = { models: { providers: { openai: { apiKey: CONFIG } } } };
    const pinned = await ask({ ...others, OPENCLAW_LIVE_OPENAI_KEY: LIVE }, config);
    expect(pinned.outcome).toMatchObject({ text: 'answered with the live key' });
    expect(pinned.keys).toEqual([LIVE]);
    await kernel?.dispose();

    // Pinned to a key that is rate limited: retried on that key, the others untouched.
    const limited = await ask({ ...others, OPENCLAW_LIVE_OPENAI_KEY: LIMITED }, config);
    expect(limited.error?.message).toMatch(/rate limit/i);
    expect(new Set(limited.keys)).toEqual(new Set([LIMITED]));
    expect(limited.keys.length).toBeGreaterThan(1);
  });
});

describe('readiness and status count them', () => {
  async function readiness(config: Record<string, unknown>, env: Record<string, string>) {
    kernel = await createTestKernel({ env, config, plugins: [plugin('openai'), plugin('anthropic')] });
    return new ModelService(kernel.plugins.kernelServices).readiness();
  }

  it('a list or a suffixed key is a credential; with no model configured it picks one', async () => {
    const model = { agents: { defaults: { model: 'openai/gpt-4.1' } } };
    expect(await readiness(model, { OPENAI_API_KEYS: `${FREE},${LIMITED}` })).toEqual({
      ok: true,
      primary: 'openai/gpt-4.1',
    });
    await kernel!.dispose();
    expect((await readiness(model, { OPENAI_API_KEY_WORK: FREE })).ok).toBe(true);
    await kernel!.dispose();
    expect(await readiness({}, { ANTHROPIC_API_KEYS: FREE })).toEqual({
      ok: true,
      primary: 'anthropic/claude-sonnet-4-20250514',
    });
    await kernel!.dispose();
    expect(await readiness({}, { OPENCLAW_LIVE_OPENAI_KEY: LIVE })).toEqual({ ok: true, primary: 'openai/gpt-4.1' });
  });

  it('claw status counts OPENAI_API_KEYS; claw models status lists each key by its variable, never its value', async () => {
    const stateDir = tempDir('claw-env-keys-status-');
    const env = { OPENCLAW_STATE_DIR: stateDir, OPENAI_API_KEYS: `${LIMITED},${FREE}`, OPENAI_API_KEY_WORK: LIVE };
    const models = await claw(['models', 'status', '--json'], env);
    expect(models.code, models.stderr).toBe(0);
    const openai = JSON.parse(models.stdout).providers.find(
      (entry: { provider: string }) => entry.provider === 'openai',
    );
    expect(openai.profiles.map((profile: { id: string }) => profile.id)).toEqual([
      'openai:env:OPENAI_API_KEYS[1]',
      'openai:env:OPENAI_API_KEYS[2]',
      'openai:env:OPENAI_API_KEY_WORK',
    ]);
    const text = await claw(['models', 'status'], env);
    expect(text.stdout).toContain('openai:env:OPENAI_API_KEYS[2] [env] ready');
    for (const output of [models.stdout, models.stderr, text.stdout, text.stderr])
      for (const key of [LIMITED, FREE, LIVE]) expect(output).not.toContain(key);

    const gw = await startCliGateway(env);
    try {
      await waitFor(() => gw.stdout().includes('model: openai/gpt-4.1 (default agent)'), {
        what: 'the model line',
        timeoutMs: 30_000,
      });
      const status = JSON.parse((await claw(['status', '--json'], env)).stdout);
      expect(status.model).toEqual({ ok: true, primary: 'openai/gpt-4.1' });
      for (const key of [LIMITED, FREE, LIVE]) expect(gw.stdout()).not.toContain(key);
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  }, 120_000);

  it('a key quoted in an error is masked, even when it came from a list', async () => {
    fake.respond((request) => ({ error: { status: 401, message: `Incorrect API key provided: ${request.apiKey}` } }));
    const stateDir = tempDir('claw-env-keys-agent-');
    const result = await claw(['agent', '--local', '-m', 'hi'], {
      OPENCLAW_STATE_DIR: stateDir,
      OPENAI_BASE_URL: fake.openaiBaseUrl,
      OPENAI_API_KEYS: `${LIMITED},${FREE}`,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('openai:env:OPENAI_API_KEYS[2]');
    expect(result.stderr).toContain('Incorrect API key provided');
    for (const key of [LIMITED, FREE]) expect(result.stdout + result.stderr).not.toContain(key);
    // The redactor masks each key of a list alone, not only the whole value.
    const redactor = createRedactor({ config: {}, env: { OPENAI_API_KEYS: `${LIMITED}, ${FREE}` } });
    expect(redactor.text(`key ${FREE} refused`)).not.toContain(FREE);
  }, 60_000);
});
