/**
 * The agent commands of the built CLI: claw setup, claw agent (through a running gateway and
 * embedded with --local), claw models list|status, claw sessions — with the model faked on
 * 127.0.0.1, plus a local GGUF through the llama-cpp provider.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { writeTinyLlamaGguf } from './fixtures/gguf.js';
import { claw, CLI, startCliGateway, tempDir } from './helpers.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());

function stateWith(config: Record<string, unknown>) {
  const stateDir = tempDir('claw-agentcli-');
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2));
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir } };
}

const openaiConfig = () => ({
  agents: { defaults: { model: 'openai/gpt-4.1' } },
  models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-cli' } } },
});

describe('claw setup', () => {
  it('creates the config and the workspace templates, and never overwrites', async () => {
    const stateDir = tempDir('claw-setup-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const first = await claw(['setup'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Created config ${join(stateDir, 'openclaw.json')}`);
    expect(first.stdout).toMatch(/created AGENTS\.md/);
    // The gateway will need auth: setup makes a strong token and keeps the file owner-only.
    expect(first.stdout).toContain('Generated a gateway token');
    const config = JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));
    expect(config.gateway.auth).toEqual({ mode: 'token', token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(first.stdout).not.toContain(config.gateway.auth.token);
    expect(statSync(join(stateDir, 'openclaw.json')).mode & 0o777).toBe(0o600);
    const workspace = join(stateDir, 'workspace');
    for (const name of ['AGENTS.md', 'SOUL.md', 'TOOLS.md', 'IDENTITY.md', 'USER.md', 'BOOTSTRAP.md'])
      expect(existsSync(join(workspace, name)), name).toBe(true);
    writeFileSync(join(workspace, 'SOUL.md'), 'my own soul');
    const second = await claw(['setup'], env);
    expect(second.stdout).toMatch(/kept {4}SOUL\.md \(already there\)/);
    expect(second.stdout).toContain('already exists (left as it is)');
    expect(JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8')).gateway.auth.token).toBe(
      config.gateway.auth.token,
    );
    expect(readFileSync(join(workspace, 'SOUL.md'), 'utf8')).toBe('my own soul');
    // The first-run ritual deleted BOOTSTRAP.md: setup does not bring it back.
    rmSync(join(workspace, 'BOOTSTRAP.md'));
    const third = await claw(['setup'], env);
    expect(third.code, third.stderr).toBe(0);
    expect(existsSync(join(workspace, 'BOOTSTRAP.md'))).toBe(false);
  });

  it('seeds BOOTSTRAP.md only into a brand-new workspace, not beside an existing one', async () => {
    const stateDir = tempDir('claw-setup-');
    const workspace = join(tempDir('claw-ws-'), 'mine');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'AGENTS.md'), 'my rules');
    const result = await claw(['setup', '--workspace', workspace, '--json'], { OPENCLAW_STATE_DIR: stateDir });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.kept).toEqual(['AGENTS.md']);
    expect(report.created).toContain('SOUL.md');
    expect(report.created).not.toContain('BOOTSTRAP.md');
    expect(existsSync(join(workspace, 'BOOTSTRAP.md'))).toBe(false);
  });
});

describe('claw agent', () => {
  it('--local runs the turn in-process and streams the answer', async () => {
    const { env, stateDir } = stateWith(openaiConfig());
    fake.reset();
    fake.script({ text: 'Hello from the local run.' });
    const result = await claw(['agent', '--local', '--message', 'hi'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Hello from the local run.\n');
    const sessions = JSON.parse(readFileSync(join(stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'));
    expect(Object.keys(sessions)).toEqual(['agent:main:main']);
  });

  it('goes through the running gateway when there is one, and --json prints the result', async () => {
    const { env } = stateWith(openaiConfig());
    await startCliGateway(env);
    fake.reset();
    fake.script({ text: 'Through the gateway.' }, { text: 'As JSON.' });
    const streamed = await claw(['agent', '-m', 'hello gateway', '--session', 'agent:main:cli-test'], env);
    expect(streamed.code, streamed.stderr).toBe(0);
    expect(streamed.stdout).toBe('Through the gateway.\n');
    const json = await claw(['agent', '--message', 'again', '--session', 'agent:main:cli-test', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'ok', summary: 'As JSON.' });
    // Both turns landed in the same session on the gateway.
    const sessions = await claw(['sessions', '--json'], env);
    const rows = JSON.parse(sessions.stdout).sessions;
    expect(rows.map((row: { key: string }) => row.key)).toEqual(['agent:main:cli-test']);
    expect(JSON.stringify(fake.requests[1]!.body)).toContain('hello gateway');
  });

  it('reports a failed run with exit code 1 and the reason', async () => {
    const { env } = stateWith({ agents: { defaults: { model: 'anthropic/claude-sonnet-4-5' } } });
    const result = await claw(['agent', '--local', '--message', 'hi'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/run error: no model could answer: no API key for anthropic/);
  });

  it('text written before a tool call, then the answer: each printed once; tool results use phase "result"', async () => {
    const { env } = stateWith(openaiConfig());
    const script = () =>
      fake.script(
        { text: 'Let me check.', toolCalls: [{ name: 'read', arguments: { path: 'missing.txt' } }] },
        { text: 'The answer is 42.', chunkSize: 4 },
      );
    fake.reset();
    script();
    const local = await claw(['agent', '--local', '-m', 'what is it?'], env);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toBe('Let me check.\nThe answer is 42.\n');
    expect(local.stderr).toMatch(/^\[tool\] read\n\[tool\] read failed: .*missing\.txt/m);
    await startCliGateway(env);
    script();
    const remote = await claw(['agent', '-m', 'and again?'], env);
    expect(remote.code, remote.stderr).toBe(0);
    expect(remote.stdout).toBe('Let me check.\nThe answer is 42.\n');
    expect(remote.stderr).toMatch(/\[tool\] read failed/);
  });

  it('never prints NO_REPLY, whole or in pieces', async () => {
    const { env } = stateWith(openaiConfig());
    fake.reset();
    fake.script(
      { text: 'NO_REPLY', chunkSize: 3 },
      { text: 'Checking.', toolCalls: [{ name: 'read', arguments: { path: 'missing.txt' } }] },
      { text: 'no_reply', chunkSize: 2 },
    );
    const quiet = await claw(['agent', '--local', '-m', 'nothing to say'], env);
    expect(quiet).toMatchObject({ code: 0, stdout: '' });
    const after = await claw(['agent', '--local', '-m', 'look, then nothing'], env);
    expect(after).toMatchObject({ code: 0, stdout: 'Checking.\n' });
  });

  it('piped into a reader that stops early (| head): exits 0 without an EPIPE crash', async () => {
    const { env } = stateWith(openaiConfig());
    fake.reset();
    fake.script({ text: Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n'), chunkSize: 8, delayMs: 15 });
    const child = spawn(process.execPath, [CLI, 'agent', '--local', '-m', 'count'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // Like `head -n 1`: read until the first line, then close the pipe.
    await new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => chunk.includes('\n') && resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', (exit) => resolve(exit)));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  });

  it('--agent with an unknown id is an error naming the agents, and creates nothing', async () => {
    const { env, stateDir } = stateWith({
      ...openaiConfig(),
      agents: { defaults: { model: 'openai/gpt-4.1' }, list: [{ id: 'home', default: true }, { id: 'work' }] },
    });
    fake.reset();
    const local = await claw(['agent', '--local', '--agent', 'wrok', '-m', 'hi'], env);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('unknown agent "wrok": the configured agents are home, work');
    for (const command of [['models', 'status'], ['models', 'list'], ['sessions']]) {
      const other = await claw([...command, '--agent', 'wrok'], env);
      expect(other.code, command.join(' ')).toBe(2);
      expect(other.stderr, command.join(' ')).toMatch(/unknown agent "wrok": the (configured )?agents are home, work/);
    }
    expect((await claw(['sessions', '--agent', 'work'], env)).code).toBe(0);
    await startCliGateway(env);
    const remote = await claw(['agent', '--agent', 'wrok', '-m', 'hi'], env);
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain('unknown agent "wrok"');
    expect(fake.requests).toHaveLength(0);
    expect(existsSync(join(stateDir, 'agents', 'wrok'))).toBe(false);
    expect(existsSync(join(stateDir, 'workspace-wrok'))).toBe(false);
    // A listed agent that is not the default works.
    fake.script({ text: 'Work here.' });
    expect(await claw(['agent', '--agent', 'work', '-m', 'hi'], env)).toMatchObject({
      code: 0,
      stdout: 'Work here.\n',
    });
  }, 90_000);

  it('rejects bad flags with usage errors', async () => {
    const { env } = stateWith({});
    expect(await claw(['agent'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/give the message with --message/),
    });
    expect(await claw(['agent', '-m', 'x', '--thinking', 'max'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--thinking must be/),
    });
  });

  it('answers with a local GGUF model through the llama-cpp provider', async () => {
    const dir = tempDir('claw-gguf-');
    const model = writeTinyLlamaGguf(join(dir, 'tiny.gguf'), { seed: 7 });
    const { env } = stateWith({
      agents: { defaults: { model: 'llama-cpp/tiny' } },
      // A small local context takes the coding tools: the full list (browser, canvas, nodes) outgrows 8k.
      tools: { profile: 'coding' },
      plugins: {
        entries: { 'llama-cpp': { config: { modelPath: model, threads: 1, maxTokens: 12, contextSize: 8192 } } },
      },
    });
    const result = await claw(['agent', '--local', '--message', 'hello'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().length).toBeGreaterThan(0);
  }, 60_000);
});

describe('claw models and claw sessions', () => {
  it('models list shows the default and the catalog; models status shows keys and cooldowns', async () => {
    const { env, stateDir } = stateWith({
      agents: {
        defaults: {
          model: { primary: 'openai/gpt-4.1', fallbacks: ['anthropic/claude-sonnet-4-5'] },
          models: { 'openai/gpt-4.1': { alias: 'gpt' } },
        },
      },
      models: { providers: { openai: { apiKey: 'sk-x' } } },
    });
    const list = await claw(['models', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^Default: openai\/gpt-4\.1\nFallbacks: anthropic\/claude-sonnet-4-5/);
    expect(list.stdout).toMatch(/openai\/gpt-4\.1 {2}\(alias gpt, ctx 1048k\)/);
    const listJson = JSON.parse((await claw(['models', 'list', '--json'], env)).stdout);
    expect(listJson.models.some((model: { ref: string }) => model.ref.startsWith('anthropic/'))).toBe(true);
    const profiles = join(stateDir, 'agents', 'main', 'agent');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(profiles, { recursive: true });
    writeFileSync(
      join(profiles, 'auth-profiles.json'),
      JSON.stringify({
        version: 1,
        profiles: { 'anthropic:work': { provider: 'anthropic', key: 'sk-ant' } },
        usageStats: {
          'anthropic:work': { cooldownUntil: Date.now() + 10 * 60_000, lastFailureKind: 'rate_limit', errorCount: 2 },
        },
      }),
    );
    const status = await claw(['models', 'status'], env);
    expect(status.stdout).toMatch(/openai {7}openai:config \[config\] ready/);
    expect(status.stdout).toMatch(/anthropic {4}anthropic:work \[file\] cooling down 10 min after rate_limit/);
  });

  it('sessions lists entries and filters by --active', async () => {
    const { env, stateDir } = stateWith({});
    const dir = join(stateDir, 'agents', 'main', 'sessions');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const now = Date.now();
    writeFileSync(
      join(dir, 'sessions.json'),
      JSON.stringify({
        'agent:main:main': { sessionId: 'a', createdAt: now, updatedAt: now - 60_000, totalTokens: 1200 },
        'agent:main:telegram:dm:1': { sessionId: 'b', createdAt: now, updatedAt: now - 3 * 3_600_000, totalTokens: 5 },
      }),
    );
    const all = JSON.parse((await claw(['sessions', '--json'], env)).stdout);
    expect(all.sessions.map((row: { key: string }) => row.key)).toEqual([
      'agent:main:main',
      'agent:main:telegram:dm:1',
    ]);
    const active = JSON.parse((await claw(['sessions', '--json', '--active', '30'], env)).stdout);
    expect(active).toMatchObject({ count: 1, activeMinutes: 30 });
    const text = await claw(['sessions'], env);
    expect(text.stdout).toMatch(/agent:main:main\s+1m ago\s+1200 tok/);
    expect((await claw(['sessions', '--active', 'soon'], env)).code).toBe(2);
  });
});
