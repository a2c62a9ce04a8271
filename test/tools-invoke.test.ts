/**
 * OpenClaw's `tools.invoke` on claw's gateway: one tool run in a session without an agent turn,
 * through the choke point (policy, hooks, approvals, masking); shell and node tools only for
 * operator.admin callers.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { client, refusal } from './gateway-helpers.js';
import { REPO } from './helpers.js';

let h: AgentHarness;
let writer: GatewayClient;
let reader: GatewayClient;
const SECRET = 'sk-tools-invoke-secret-0123456789';

beforeAll(async () => {
  h = await startAgent({
    plugins: ['tools-exec', 'exec-approvals', 'tools-fs'].map((id) => join(REPO, 'plugins', id)),
    config: { tools: { deny: ['write'] } },
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
