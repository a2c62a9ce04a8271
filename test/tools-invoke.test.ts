/**
 * OpenClaw's `tools.invoke` on claw's gateway: one tool run in a session without an agent turn,
 * through the choke point (policy, hooks, approvals, masking); shell and node tools only for
 * operator.admin callers. And `POST /tools/invoke`, the same over HTTP behind gateway auth,
 * with OpenClaw's HTTP deny list (gateway.tools.allow / deny).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { client, refusal, TEST_TOKEN } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

let h: AgentHarness;
let writer: GatewayClient;
let reader: GatewayClient;
const SECRET = 'sk-tools-invoke-secret-0123456789';

beforeAll(async () => {
  // Memory written before the gateway starts, so its start-up sync indexes it.
  const stateDir = tempDir('claw-tools-invoke-');
  mkdirSync(join(stateDir, 'workspace', 'memory'), { recursive: true });
  writeFileSync(join(stateDir, 'workspace', 'MEMORY.md'), '# Memory\n\nThe Lisbon offsite hotel is Memmo Alfama.\n');
  h = await startAgent({
    stateDir,
    plugins: [
      'tools-exec',
      'exec-approvals',
      'tools-fs',
      'memory-sqlite',
      'memory-core',
      'memory-sqlite-engine',
      'embeddings',
    ].map((id) => join(REPO, 'plugins', id)),
    config: { tools: { deny: ['write', 'memory_get'] }, agents: { defaults: { memorySearch: { provider: 'none' } } } },
    gateway: { tools: { allow: ['process'], deny: ['edit'] } },
    env: { TOOLS_INVOKE_SECRET: SECRET, ANTHROPIC_API_KEY: SECRET },
  });
  writer = await client(h.gw.url, { scopes: ['operator.read', 'operator.write'] });
  reader = await client(h.gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await writer?.close();
  await reader?.close();
  await h?.stop();
});

const outputText = (answer: { output?: { content?: Array<{ type: string; text?: string }> } }) =>
  (answer.output?.content ?? []).map((part) => part.text ?? '').join('');

describe('tools.invoke', () => {
  it('runs exec for an owner in the main session, output masked, source core', async () => {
    const answer = await h.client.request<Record<string, unknown>>('tools.invoke', {
      name: 'exec',
      args: { command: 'echo invoked-$((40+2)); echo "$ANTHROPIC_API_KEY"', yieldMs: 0 },
    });
    expect(answer).toMatchObject({ ok: true, toolName: 'exec', source: 'core' });
    const text = outputText(answer as never);
    expect(text).toContain('invoked-42');
    expect(text).not.toContain(SECRET);
  });

  it('refuses shell tools to a caller without operator.admin, naming the scope', async () => {
    const answer = await writer.request('tools.invoke', { name: 'exec', args: { command: 'echo no' } });
    expect(answer).toEqual({
      ok: false,
      toolName: 'exec',
      error: { code: 'forbidden', message: expect.stringContaining('operator.admin') },
    });
  });

  it('runs an ordinary tool for operator.write; the tool policy still blocks what config denies', async () => {
    await h.client.request('tools.invoke', {
      name: 'exec',
      args: { command: 'printf "notes here" > notes.txt', yieldMs: 0 },
    });
    const read = await writer.request<Record<string, unknown>>('tools.invoke', {
      name: 'read',
      args: { path: 'notes.txt' },
    });
    expect(read).toMatchObject({ ok: true, toolName: 'read' });
    expect(outputText(read as never)).toContain('notes here');
    const denied = await writer.request('tools.invoke', { name: 'write', args: { path: 'x.txt', content: 'x' } });
    expect(denied).toMatchObject({ ok: false, toolName: 'write', error: { code: 'forbidden' } });
  });

  it('answers not_found for an unknown tool, refuses a bad agent, and needs operator.write', async () => {
    expect(await writer.request('tools.invoke', { name: 'no_such_tool' })).toEqual({
      ok: false,
      toolName: 'no_such_tool',
      error: { code: 'not_found', message: 'no tool named "no_such_tool"' },
    });
    expect(
      await refusal(writer.request('tools.invoke', { name: 'read', args: { path: 'x' }, agentId: 'ghost' })),
    ).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(await refusal(reader.request('tools.invoke', { name: 'read', args: { path: 'x' } }))).toMatchObject({
      message: expect.stringContaining('operator.write'),
    });
  });

  it('reports a failing call as a tool_error with its output', async () => {
    const answer = await h.client.request<Record<string, unknown>>('tools.invoke', {
      name: 'read',
      args: { path: 'missing-file.txt' },
    });
    expect(answer).toMatchObject({ ok: false, toolName: 'read', error: { code: 'tool_error' } });
  });
});

describe('POST /tools/invoke', () => {
  const post = (body: unknown, options: { token?: string | null; method?: string; raw?: string } = {}) =>
    fetch(`http://127.0.0.1:${h.gw.port}/tools/invoke`, {
      method: options.method ?? 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.token === null ? {} : { authorization: `Bearer ${options.token ?? TEST_TOKEN}` }),
      },
      ...((options.method ?? 'POST') === 'POST' ? { body: options.raw ?? JSON.stringify(body) } : {}),
    });

  it('runs memory_search through the choke point for a bearer of the gateway token', async () => {
    const response = await post({ tool: 'memory_search', args: { query: 'Lisbon offsite hotel' } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { ok: boolean; result: { content: Array<{ text: string }> } };
    expect(body.ok).toBe(true);
    expect(body.result.content.map((part) => part.text).join('')).toContain('Memmo Alfama');
  });

  it('refuses a caller without the token (401) and says nothing about the tool', async () => {
    const response = await post({ tool: 'read', args: { path: 'x' } }, { token: null });
    expect(response.status).toBe(401);
    const wrong = await post({ tool: 'read', args: { path: 'x' } }, { token: 'not-the-token' });
    expect(wrong.status).toBe(401);
  });

  it('keeps exec off HTTP by default (404), lets gateway.tools.allow through and gateway.tools.deny block more', async () => {
    const exec = await post({ tool: 'exec', args: { command: 'echo no' } });
    expect(exec.status).toBe(404);
    expect(await exec.json()).toEqual({
      ok: false,
      error: { type: 'not_found', message: expect.stringContaining('gateway.tools.allow') },
    });
    // process is on the default list, allowed back by config: it answers (here: nothing to list).
    const process = await post({ tool: 'process', args: { action: 'list' } });
    expect(process.status).toBe(200);
    expect((await post({ tool: 'edit', args: { path: 'a', oldText: 'x', newText: 'y' } })).status).toBe(404);
  });

  it('applies the tool policy (403), names a missing tool (404), and rejects bad bodies and methods', async () => {
    const blocked = await post({ tool: 'read', args: { path: 'x' }, agentId: 'ghost' });
    expect(blocked.status).toBe(400);
    expect(((await blocked.json()) as { error: { message: string } }).error.message).toMatch(/ghost/);
    const missing = await post({ tool: 'no_such_tool' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      ok: false,
      error: { type: 'not_found', message: 'no tool named "no_such_tool"' },
    });
    expect((await post(undefined, { raw: '{not json' })).status).toBe(400);
    expect((await post({ args: {} })).status).toBe(400);
    expect((await post({ tool: 'read', args: 'x' })).status).toBe(400);
    expect((await post(undefined, { method: 'GET' })).status).toBe(405);
    const big = await post(undefined, { raw: JSON.stringify({ tool: 'read', args: { pad: 'x'.repeat(2_100_000) } }) });
    expect(big.status).toBe(413);
    // A tool's own failure is a 400 carrying its result.
    const failed = await post({ tool: 'read', args: { path: 'missing-file.txt' } });
    expect(failed.status).toBe(400);
    expect(await failed.json()).toMatchObject({ ok: false, error: { type: 'tool_error' }, result: { isError: true } });
  });

  it('a tool the tool policy denies is refused with 403', async () => {
    const response = await post({ tool: 'memory_get', args: { path: 'MEMORY.md' } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ ok: false, error: { type: 'forbidden' } });
  });
});
