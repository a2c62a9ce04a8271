/**
 * An honest first start: with no usable model the gateway log, `health`, `claw health` and
 * `claw status` say so and how to fix it; with one, they name it. Readiness is decided without
 * calling any provider, the way a turn would choose what to try (route, key, local file).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelService } from '../plugins/models/service.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { claw, REPO, startCliGateway, tempDir, waitFor } from './helpers.js';

const FIX = 'run `claw onboard`, or open Setup in the Control UI (#/setup)';

describe('ModelService.readiness', () => {
  let kernel: TestKernel | undefined;
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
  });

  async function readiness(config: Record<string, unknown>, env: Record<string, string> = {}) {
    kernel = await createTestKernel({
      env,
      config,
      plugins: ['openai', 'anthropic', 'llama-cpp'].map((id) => join(REPO, 'plugins', id)),
    });
    return new ModelService(kernel.plugins.kernelServices).readiness();
  }

  it('no model and no key: not ok, with the fix', async () => {
    expect(await readiness({})).toEqual({
      ok: false,
      primary: null,
      problem:
        'no model is configured for agent "main": agents.defaults.model is not set and no provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY) is in the environment',
      fix: FIX,
    });
  });

  it('a key in the environment picks a model by itself', async () => {
    expect(await readiness({}, { ANTHROPIC_API_KEY: 'sk-ant' })).toEqual({
      ok: true,
      primary: 'anthropic/claude-sonnet-4-20250514',
    });
  });

  it('a configured model without a key says which key is missing', async () => {
    const status = await readiness({ agents: { defaults: { model: 'openai/gpt-4.1' } } });
    expect(status).toMatchObject({ ok: false, primary: 'openai/gpt-4.1', fix: FIX });
    expect(status.problem).toContain('openai/gpt-4.1: no API key for openai: set OPENAI_API_KEY');
  });

  it('keys from config, the environment and auth profiles all count', async () => {
    const model = { agents: { defaults: { model: 'openai/gpt-4.1' } } };
    expect(await readiness({ ...model, models: { providers: { openai: { apiKey: 'sk-config' } } } })).toEqual({
      ok: true,
      primary: 'openai/gpt-4.1',
    });
    expect((await readiness(model, { OPENAI_API_KEY: 'sk-env' })).ok).toBe(true);
    await kernel!.dispose();
    const stateDir = tempDir('claw-readiness-');
    mkdirSync(join(stateDir, 'agents', 'main', 'agent'), { recursive: true });
    writeFileSync(
      join(stateDir, 'agents', 'main', 'agent', 'auth-profiles.json'),
      JSON.stringify({ version: 1, profiles: { 'openai:work': { provider: 'openai', key: 'sk-file' } } }),
    );
    kernel = await createTestKernel({ stateDir, config: model, plugins: [join(REPO, 'plugins', 'openai')] });
    expect((await new ModelService(kernel.plugins.kernelServices).readiness()).ok).toBe(true);
  });

  it('a local server needs a baseUrl (config or OPENAI_BASE_URL), not a key', async () => {
    expect(
      (
        await readiness(
          { agents: { defaults: { model: 'openai/local' } } },
          { OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' },
        )
      ).ok,
    ).toBe(true);
    const custom = await readiness({
      agents: { defaults: { model: 'mybox/llama' } },
      models: { providers: { mybox: { api: 'openai-completions' } } },
    });
    expect(custom).toMatchObject({ ok: false, primary: 'mybox/llama' });
    expect(custom.problem).toContain('models.providers.mybox needs a baseUrl');
  });

  it('llama-cpp needs its GGUF file', async () => {
    const missing = join(tempDir('claw-readiness-gguf-'), 'nope.gguf');
    const status = await readiness({
      agents: { defaults: { model: 'llama-cpp/local' } },
      plugins: { entries: { 'llama-cpp': { config: { modelPath: missing } } } },
    });
    expect(status).toMatchObject({ ok: false, primary: 'llama-cpp/local' });
    expect(status.problem).toContain(`llama-cpp: model file not found: ${missing}`);
  });

  it('a usable fallback is enough', async () => {
    const status = await readiness(
      {
        agents: {
          defaults: { model: { primary: 'openai/gpt-4.1', fallbacks: ['anthropic/claude-sonnet-4-20250514'] } },
        },
      },
      { ANTHROPIC_API_KEY: 'sk-ant' },
    );
    expect(status).toEqual({ ok: true, primary: 'openai/gpt-4.1' });
  });
});

describe('claw gateway, health and status on a first start', () => {
  it('with no model: one warning in the log, and health/status (human and --json) say what to do', async () => {
    const stateDir = tempDir('claw-first-start-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const gw = await startCliGateway(env);
    await waitFor(() => gw.stdout().includes('no usable model'), { what: 'the no-model warning', timeoutMs: 30_000 });
    const warnings = gw
      .stdout()
      .split('\n')
      .filter((line) => line.includes('no usable model'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe(40);
    expect(warnings[0]!.msg).toBe(
      `no usable model: no model is configured for agent "main": agents.defaults.model is not set and no provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY) is in the environment. To fix: ${FIX}`,
    );

    const health = JSON.parse((await claw(['health', '--json'], env)).stdout);
    expect(health).toMatchObject({ status: 'ok', model: { ok: false, primary: null, fix: FIX } });
    expect(health.model.problem).toMatch(/^no model is configured/);
    const healthText = await claw(['health'], env);
    expect(healthText.code).toBe(0);
    expect(healthText.stdout).toContain('  model      NONE USABLE: no model is configured');
    expect(healthText.stdout).toContain(`  fix        ${FIX}`);

    const status = JSON.parse((await claw(['status', '--json'], env)).stdout);
    expect(status.model).toEqual(health.model);
    const statusText = (await claw(['status'], env)).stdout;
    expect(statusText).toContain('  model      NONE USABLE: no model is configured');
    expect(statusText).toContain(`  fix        ${FIX}`);
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  }, 120_000);

  it('with a model: the log names it, no warning, and health says ok', async () => {
    const stateDir = tempDir('claw-first-start-');
    const env = { OPENCLAW_STATE_DIR: stateDir, OPENAI_API_KEY: 'sk-test-first-start' };
    const gw = await startCliGateway(env);
    await waitFor(() => gw.stdout().includes('model: openai/gpt-4.1 (default agent)'), {
      what: 'the model line',
      timeoutMs: 30_000,
    });
    expect(gw.stdout()).not.toContain('no usable model');
    const health = JSON.parse((await claw(['health', '--json'], env)).stdout);
    expect(health.model).toEqual({ ok: true, primary: 'openai/gpt-4.1' });
    expect((await claw(['status'], env)).stdout).toContain('  model      openai/gpt-4.1');
    expect(gw.stdout()).not.toContain('sk-test-first-start');
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  }, 120_000);
});
