/**
 * Failover as a user of the built CLI sees it: a failing primary hands over to the fallback
 * in one retry, stderr says which model failed and which is tried next, and text a failed
 * attempt already printed is not printed again — embedded (--local) and through a gateway.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm, type RecordedRequest } from './fakes/llm-server.js';
import { claw, startCliGateway, tempDir } from './helpers.js';

const PRIMARY = 'openai/gpt-4.1';
const FALLBACK = 'openai/gpt-4.1-mini';
const NOTICE = `[model] model ${PRIMARY} failed (500), trying ${FALLBACK}\n`;

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function stateWith(model: unknown) {
  const stateDir = tempDir('claw-failover-');
  const config = {
    agents: { defaults: { model } },
    models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-failover' } } },
  };
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2));
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir } };
}

const models = () => fake.requests.map((request) => request.body.model as string);
const withFallback = { primary: PRIMARY, fallbacks: [FALLBACK] };
const serverError = () => ({
  error: { status: 500, message: 'The server had an error while processing your request.' },
});

describe('claw agent with a failing primary', () => {
  it('--local: a 500 gets one retry, then the fallback answers; stderr names both; the next run skips the primary', async () => {
    const { env, stateDir } = stateWith(withFallback);
    fake.respond((request: RecordedRequest) =>
      request.body.model === 'gpt-4.1' ? serverError() : { text: 'Answered by the fallback.' },
    );
    const result = await claw(['agent', '--local', '-m', 'hi'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Answered by the fallback.\n');
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1', 'gpt-4.1-mini']);
    expect(result.stderr).toContain('; trying again (2/2)\n');
    expect(result.stderr).toContain(NOTICE);
    // The cooldown is saved with the key's profile, so the next process skips the primary at once.
    const profiles = JSON.parse(readFileSync(join(stateDir, 'agents', 'main', 'agent', 'auth-profiles.json'), 'utf8'));
    expect(profiles.usageStats['openai:config'].models['gpt-4.1']).toMatchObject({ lastFailureKind: 'overloaded' });
    fake.reset();
    fake.respond(() => ({ text: 'Straight to the fallback.' }));
    const next = await claw(['agent', '--local', '-m', 'again'], env);
    expect(next.stdout).toBe('Straight to the fallback.\n');
    expect(models()).toEqual(['gpt-4.1-mini']);
    expect(next.stderr).not.toContain('[model]');
  });

  it('--local: text of an attempt cut part-way is printed once, whether the retry repeats it or another model answers', async () => {
    // No fallback: the same model is asked again and starts the same way.
    const alone = stateWith(PRIMARY);
    fake.script({ text: 'PARTIAL-', cut: true }, { text: 'PARTIAL-and the rest.' });
    const retried = await claw(['agent', '--local', '-m', 'hi'], alone.env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe('PARTIAL-and the rest.\n');
    expect(retried.stderr).toMatch(/\[model\] openai stream ended before the model finished; trying again \(2\/9\)/);

    // With a fallback: no retry of a cut stream; the fallback's answer follows on its own line.
    fake.reset();
    const chain = stateWith(withFallback);
    fake.script({ text: 'PARTIAL-', cut: true }, { text: 'A whole answer.' });
    const fallen = await claw(['agent', '--local', '-m', 'hi'], chain.env);
    expect(fallen.code, fallen.stderr).toBe(0);
    expect(fallen.stdout).toBe('PARTIAL-\nA whole answer.\n');
    expect(fallen.stdout.match(/PARTIAL-/g)).toHaveLength(1);
    expect(fallen.stderr).toContain(`[model] model ${PRIMARY} failed (timeout), trying ${FALLBACK}\n`);
    expect(models()).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
  });

  it('through the gateway: the same notice reaches the CLI from the run’s events', async () => {
    const { env } = stateWith(withFallback);
    await startCliGateway(env);
    fake.respond((request: RecordedRequest) =>
      request.body.model === 'gpt-4.1' ? serverError() : { text: 'Via the gateway.' },
    );
    const result = await claw(['agent', '-m', 'hi'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Via the gateway.\n');
    expect(result.stderr).toContain(NOTICE);
  });
});
