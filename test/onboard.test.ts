/**
 * `claw onboard`: non-interactive from flags, interactive in a pseudo-terminal, and the
 * gateway's wizard.* methods — each against fakes on 127.0.0.1 (an OpenAI-compatible server,
 * the Telegram Bot API, Discord's REST API). Nothing is saved unless its live check passed.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { FakeTelegramApi } from './fakes/telegram-api.js';
import { FakeDiscord } from './fakes/discord.js';
import { fakeSystemctl } from './fakes/systemctl.js';
import { writeTinyLlamaGguf } from './fixtures/gguf.js';
import { spawnCliGateway, type CliGateway } from './cli-gateway.js';
import { client } from './gateway-helpers.js';
import { claw, CLI, tempDir, waitFor } from './helpers.js';

const KEY = 'sk-onboard-right-key-0123456789';
const WRONG = 'sk-onboard-wrong-key-9876543210';

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm({ apiKeys: [KEY] });
});
afterAll(async () => {
  await llm.close();
});

function state(config?: Record<string, unknown>) {
  const dir = tempDir('claw-onboard-');
  if (config) writeFileSync(join(dir, 'openclaw.json'), JSON.stringify(config));
  return {
    dir,
    env: { OPENCLAW_STATE_DIR: dir, OPENCLAW_CONFIG_PATH: join(dir, 'openclaw.json') } as Record<string, string>,
    config: (): any => JSON5.parse(readFileSync(join(dir, 'openclaw.json'), 'utf8')),
  };
}

const customFlags = (key: string) => [
  'onboard',
  '--non-interactive',
  '--accept-risk',
  '--auth-choice',
  'custom-api-key',
  '--custom-base-url',
  llm.openaiBaseUrl,
  '--custom-api-key',
  key,
  '--custom-model-id',
  'gpt-test',
  '--skip-channels',
  '--skip-health',
];

describe('claw onboard --non-interactive', () => {
  it('sets up a fresh state dir against an OpenAI-compatible server, then claw agent answers', async () => {
    const s = state();
    const before = llm.requests.length;
    const result = await claw([...customFlags(KEY), '--json'], s.env);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(KEY);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ ok: true, model: 'custom/gpt-test', channels: [] });
    // The live test was a real request with the candidate key.
    expect(llm.requests.slice(before).map((request) => request.apiKey)).toContain(KEY);

    const config = s.config();
    expect(config.models.providers.custom).toMatchObject({ baseUrl: llm.openaiBaseUrl, apiKey: KEY });
    expect(config.agents.defaults.model).toBe('custom/gpt-test');
    expect(config.gateway.auth).toMatchObject({ mode: 'token' });
    expect(config.gateway.auth.token.length).toBeGreaterThanOrEqual(32);
    expect(existsSync(join(summary.workspace, 'AGENTS.md'))).toBe(true);

    llm.script({ text: 'Hello from the onboarded model' });
    const reply = await claw(['agent', '--local', '-m', 'hi'], s.env);
    expect(reply.code, reply.stderr).toBe(0);
    expect(reply.stdout).toContain('Hello from the onboarded model');
  }, 60_000);

  it('refuses a key the live test rejects (401), exits 1 and saves nothing', async () => {
    const s = state();
    const result = await claw(customFlags(WRONG), s.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/live test failed.*401|401.*live test failed/s);
    expect(result.stdout + result.stderr).not.toContain(WRONG);
    expect(existsSync(join(s.dir, 'openclaw.json'))).toBe(false);
  }, 60_000);

  it('names the missing flag, and wants --accept-risk', async () => {
    const s = state();
    const noUrl = await claw(
      ['onboard', '--non-interactive', '--accept-risk', '--auth-choice', 'custom-api-key', '--skip-health'],
      s.env,
    );
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('--custom-base-url');
    const noModel = await claw(['onboard', '--non-interactive', '--accept-risk', '--skip-health'], s.env);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('--auth-choice');
    const noRisk = await claw(['onboard', '--non-interactive', '--auth-choice', 'skip'], s.env);
    expect(noRisk.code).toBe(2);
    expect(noRisk.stderr).toContain('--accept-risk');
    expect(existsSync(join(s.dir, 'openclaw.json'))).toBe(false);
  }, 60_000);

  it('run again, keeps what it is not told to change', async () => {
    const s = state();
    expect((await claw(customFlags(KEY), s.env)).code).toBe(0);
    const first = s.config();
    const elsewhere = join(s.dir, 'other-workspace');
    const again = await claw(
      ['onboard', '--non-interactive', '--accept-risk', '--workspace', elsewhere, '--skip-channels', '--skip-health'],
      s.env,
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Model: custom/gpt-test (kept)');
    const second = s.config();
    expect(second.agents.defaults.workspace).toBe(elsewhere);
    expect(second.models).toEqual(first.models);
    expect(second.gateway).toEqual(first.gateway);
    expect(existsSync(join(elsewhere, 'SOUL.md'))).toBe(true);
  }, 60_000);

  it("finds the key in the environment by OpenClaw's conventions: the live override wins, and stays there", async () => {
    const s = state();
    const env = {
      ...s.env,
      OPENAI_BASE_URL: llm.openaiBaseUrl,
      OPENAI_API_KEY: WRONG,
      OPENCLAW_LIVE_OPENAI_KEY: KEY,
    };
    const before = llm.requests.length;
    const flags = ['onboard', '--non-interactive', '--accept-risk', '--auth-choice', 'openai-api-key'];
    const result = await claw([...flags, '--skip-channels', '--skip-health'], env);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(llm.requests.slice(before).map((request) => request.apiKey)).toEqual([KEY]);
    expect(result.stdout + result.stderr).not.toContain(KEY);
    const config = s.config();
    expect(config.agents.defaults.model).toBe('openai/gpt-4.1');
    expect(config.models?.providers?.openai?.apiKey).toBeUndefined();

    // Only a list in the environment: still a key, no flag needed.
    const listed = state();
    const again = await claw([...flags, '--skip-channels', '--skip-health'], {
      ...listed.env,
      OPENAI_BASE_URL: llm.openaiBaseUrl,
      OPENAI_API_KEYS: `${KEY},${WRONG}`,
    });
    expect(again.code, again.stderr + again.stdout).toBe(0);
  }, 60_000);

  const ggufFlags = (file: string) => [
    'onboard',
    '--non-interactive',
    '--accept-risk',
    '--auth-choice',
    'llama-cpp',
    '--model-path',
    file,
    '--skip-channels',
    '--skip-health',
  ];

  it('loads a local GGUF and has it answer before saving it as the model', async () => {
    const s = state();
    const file = writeTinyLlamaGguf(join(s.dir, 'models', 'tiny.gguf'), { seed: 4 });
    const result = await claw([...ggufFlags(file), '--json'], { ...s.env, CLAW_LOG_LEVEL: 'debug' });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, model: 'llama-cpp/local' });
    // llama.cpp really loaded the file (the provider logs each load) before anything was saved.
    expect(result.stderr).toContain(`[llama-cpp] loaded ${file}`);
    const config = s.config();
    expect(config.plugins.entries['llama-cpp'].config.modelPath).toBe(file);
    expect(config.agents.defaults.model).toBe('llama-cpp/local');
  }, 120_000);

  it('refuses a GGUF file llama.cpp cannot load (right magic, garbage after), exits 1 and saves nothing', async () => {
    const s = state();
    const file = join(s.dir, 'broken.gguf');
    // Deterministic noise after the magic, as a download cut short or a file mangled on disk.
    const noise = Buffer.alloc(8192);
    for (let i = 0, x = 7; i < noise.length; i++) noise[i] = x = (x * 1103515245 + 12345) & 0xff;
    writeFileSync(file, Buffer.concat([Buffer.from('GGUF'), noise]));
    const result = await claw(ggufFlags(file), s.env);
    expect(result.code, result.stderr + result.stdout).toBe(1);
    expect(result.stderr).toContain(`the live test failed: llama-cpp: could not load ${file} as a GGUF model`);
    expect(existsSync(join(s.dir, 'openclaw.json'))).toBe(false);

    const notGguf = join(s.dir, 'notes.gguf');
    writeFileSync(notGguf, 'just text');
    const refused = await claw(ggufFlags(notGguf), s.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--model-path: ${notGguf} is not a GGUF model`);
    expect(existsSync(join(s.dir, 'openclaw.json'))).toBe(false);
  }, 120_000);

  it('checks a Telegram token with the Bot API before saving it', async () => {
    const telegram = new FakeTelegramApi();
    await telegram.start();
    try {
      const s = state({ channels: { telegram: { apiRoot: telegram.apiRoot, enabled: false } } });
      const base = ['onboard', '--non-interactive', '--accept-risk', '--auth-choice', 'skip', '--skip-health'];
      const bad = await claw([...base, '--telegram-token', '123456:not-the-right-token'], s.env);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/Telegram refused the token \(401/);
      expect(bad.stderr).not.toContain('not-the-right-token');
      expect(s.config().channels.telegram.botToken).toBeUndefined();

      const good = await claw([...base, '--telegram-token', telegram.token], s.env);
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout).toContain('Telegram: @claw_test_bot');
      expect(good.stdout).not.toContain(telegram.token);
      expect(s.config().channels.telegram).toEqual({ apiRoot: telegram.apiRoot, botToken: telegram.token });
    } finally {
      await telegram.stop();
    }
  }, 60_000);

  it('checks a Discord token with /users/@me before saving it', async () => {
    const discord = new FakeDiscord();
    await discord.start();
    try {
      const s = state();
      const env = { ...s.env, DISCORD_API_URL: discord.apiUrl };
      const base = ['onboard', '--non-interactive', '--accept-risk', '--auth-choice', 'skip', '--skip-health'];
      const bad = await claw([...base, '--discord-token', 'aaaa.bbbb.cccccccccccc'], env);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('Discord refused the token');
      const good = await claw([...base, '--discord-token', discord.token], env);
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout).toContain('Discord: clawbot');
      expect(s.config().channels.discord.token).toBe(discord.token);
    } finally {
      await discord.stop();
    }
  }, 60_000);
});

describe('claw onboard in a terminal', () => {
  it('asks for a custom OpenAI-compatible server, its key and model, tests it and saves it; installs the service', async () => {
    const s = state();
    // A HOME of its own and a fake systemctl: the daemon step writes a unit and enables it.
    const systemctl = fakeSystemctl(tempDir('claw-onboard-home-'));
    const env = { ...s.env, ...systemctl.env, TERM: 'xterm-256color' };
    const command = `stty cols 120 rows 50; exec '${process.execPath}' '${CLI}' onboard`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (chunk) => (screen += chunk.toString('utf8').replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '')));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    /** Wait for `text` to appear after everything seen so far, then type `keys`. */
    let seen = 0;
    const answer = async (text: string, keys: string) => {
      const at = await waitFor(
        () => {
          const index = screen.indexOf(text, seen);
          return index >= 0 ? index + 1 : undefined;
        },
        { timeoutMs: 30_000, what: `"${text}" on the screen; it ends with:\n${screen.slice(-800)}` },
      );
      seen = at;
      child.stdin.write(keys);
    };
    const DOWN = '\x1b[B';
    try {
      await answer('How much do you want to set now?', '\r');
      // OpenAI, Anthropic, Ollama, vLLM, LM Studio, then "Another OpenAI-compatible server".
      await answer('Which model should the assistant use?', DOWN.repeat(5) + '\r');
      await answer('Base URL of the server', `${llm.openaiBaseUrl}\r`);
      await answer('API key', `${KEY}\r`);
      await answer('Model id', 'gpt-pty\r');
      await answer("Folder for the agent's files", '\r');
      await answer('Which chat apps', '\r');
      // A service manager answers here, so yes is the default.
      await answer('Install the gateway as a service (systemd user unit / launchd)?', '\r');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    expect(screen).toContain('Setup complete');
    expect(screen).toContain('enabled and started (port 18789)');
    expect(readFileSync(systemctl.unit, 'utf8')).toContain('"--port" "18789"');
    expect(systemctl.calls().at(-1)).toBe('--user enable --now openclaw-gateway.service');
    expect(screen).not.toContain(KEY);
    const config = s.config();
    expect(config.models.providers.custom).toMatchObject({ baseUrl: llm.openaiBaseUrl, apiKey: KEY });
    expect(config.agents.defaults.model).toBe('custom/gpt-pty');
  }, 90_000);
});

describe('wizard.* over the gateway', () => {
  const TOKEN = 'onboard-wizard-token-0123456789abcdef';
  let gw: CliGateway;
  let s: ReturnType<typeof state>;
  beforeAll(async () => {
    s = state({ gateway: { auth: { mode: 'token', token: TOKEN } } });
    const { CLI: cli } = await import('./helpers.js');
    gw = await spawnCliGateway(cli, s.env);
  }, 60_000);
  afterAll(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });

  it('runs the model section: a wrong key is asked again, the right one is saved; one wizard at a time', async () => {
    const c = await client(`ws://127.0.0.1:${gw.port}`, { token: TOKEN });
    try {
      let response: any = await c.request('wizard.start', { section: 'model' });
      expect(response).toMatchObject({
        done: false,
        status: 'running',
        step: { id: 'model.provider', type: 'select' },
      });
      const sessionId = response.sessionId;
      await expect(c.request('wizard.start', { section: 'model' })).rejects.toThrow(/already running/);

      const answer = (stepId: string, value?: unknown) =>
        c.request<any>('wizard.next', { sessionId, answer: { stepId, value } });
      response = await answer('model.provider', 'custom');
      expect(response.step).toMatchObject({ id: 'model.baseUrl', type: 'text' });
      response = await answer('model.baseUrl', llm.openaiBaseUrl);
      expect(response.step).toMatchObject({ id: 'model.apiKey', sensitive: true });
      response = await answer('model.apiKey', WRONG);
      response = await answer('model.id', 'gpt-wizard');
      // The live test failed: the provider is asked again with the error, the key only masked.
      expect(response.step.id).toBe('model.provider');
      expect(response.step.error).toMatch(/live test failed.*401/);
      expect(JSON.stringify(response)).not.toContain(WRONG);
      expect(existsSync(join(s.dir, 'openclaw.json')) && s.config().models).toBeFalsy();

      response = await answer('model.provider', 'custom');
      response = await answer('model.baseUrl', llm.openaiBaseUrl);
      expect(response.step.placeholder).toContain('…3210');
      response = await answer('model.apiKey', KEY);
      response = await answer('model.id', 'gpt-wizard');
      expect(response.step).toMatchObject({ id: 'done', type: 'note' });
      expect(response.step.message).toContain('custom/gpt-wizard');
      response = await c.request('wizard.next', { sessionId });
      expect(response).toMatchObject({ done: true, status: 'done' });
      expect(await c.request('wizard.status', { sessionId })).toEqual({ status: 'done' });
      expect(s.config().agents.defaults.model).toBe('custom/gpt-wizard');
      expect(s.config().models.providers.custom.apiKey).toBe(KEY);
    } finally {
      c.close();
    }
  }, 60_000);

  it('cancel ends a wizard, so another can start', async () => {
    const c = await client(`ws://127.0.0.1:${gw.port}`, { token: TOKEN });
    try {
      const first: any = await c.request('wizard.start', { section: 'workspace' });
      expect(first.step).toMatchObject({ id: 'workspace.path', type: 'text' });
      await expect(
        c.request('wizard.next', { sessionId: first.sessionId, answer: { stepId: 'nope', value: 'x' } }),
      ).rejects.toThrow(/current step is "workspace.path"/);
      expect(await c.request('wizard.cancel', { sessionId: first.sessionId })).toEqual({ status: 'cancelled' });
      expect(await c.request('wizard.status', { sessionId: first.sessionId })).toEqual({ status: 'cancelled' });
      const second: any = await c.request('wizard.start', { section: 'workspace' });
      expect(second.status).toBe('running');
      await c.request('wizard.cancel', { sessionId: second.sessionId });
    } finally {
      c.close();
    }
  }, 60_000);
});
