/**
 * The MCP client runtime end to end: real MCP servers from npm (installed by
 * scripts/install-mcp-servers.mjs), the built CLI's `claw agent` against a gateway, and the
 * scripted fake model calling `<server>__<tool>` through the kernel's tool choke point.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { claw, REPO, startCliGateway, tempDir } from './helpers.js';

const SERVERS = join(REPO, '.cache', 'mcp-servers', 'node_modules', '@modelcontextprotocol');
const EVERYTHING = join(SERVERS, 'server-everything', 'dist', 'index.js');

let fake: FakeLlm;
beforeAll(async () => {
  if (!existsSync(EVERYTHING)) throw new Error('run node scripts/install-mcp-servers.mjs first (npm test does)');
  fake = await startFakeLlm();
});
afterAll(() => fake.close());

function stateWith(config: Record<string, unknown>) {
  const stateDir = tempDir('claw-mcp-');
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2));
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir } };
}

const baseConfig = (mcp: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  agents: { defaults: { model: 'openai/gpt-4.1' } },
  models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-mcp-test' } } },
  mcp,
  ...extra,
});

const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

/** The tool result message the model saw on its next request. */
function toolResultSent(index: number): string {
  const body = fake.requests[index]!.body as { messages: Array<{ role: string; content: unknown }> };
  const results = body.messages.filter((message) => message.role === 'tool');
  return JSON.stringify(results.at(-1)?.content);
}

describe('MCP tools through claw agent', () => {
  it('the model calls everything__echo on a real stdio server and gets its result', async () => {
    const { env } = stateWith(baseConfig({ servers: { everything } }));
    await startCliGateway(env);
    fake.reset();
    fake.script(
      { text: 'Calling.', toolCalls: [{ name: 'everything__echo', arguments: { message: 'hello over MCP' } }] },
      { text: 'Done.' },
    );
    const result = await claw(['agent', '-m', 'echo something'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Done.');
    const tools = JSON.stringify((fake.requests[0]!.body as { tools: unknown[] }).tools);
    expect(tools).toContain('everything__echo');
    expect(toolResultSent(1)).toContain('Echo: hello over MCP');
  });
});
