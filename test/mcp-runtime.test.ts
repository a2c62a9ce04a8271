/**
 * The MCP client runtime end to end: real MCP servers from npm (installed by
 * scripts/install-mcp-servers.mjs), the built CLI's `claw agent` against a gateway, and the
 * scripted fake model calling `<server>__<tool>` through the kernel's tool choke point.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame } from '../sdk/index.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { client, TEST_TOKEN } from './gateway-helpers.js';
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
  gateway: { auth: { mode: 'token', token: TEST_TOKEN } },
  agents: { defaults: { model: 'openai/gpt-4.1' } },
  models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-mcp-test' } } },
  mcp,
  ...extra,
});

const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
const crashy = { command: process.execPath, args: [join(REPO, 'test', 'fixtures', 'mcp-crash-server.mjs')] };

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

describe('MCP tools through tools.invoke', () => {
  it('a call before any turn starts the server from before_tool_call; an unknown server is not_found', async () => {
    const { env } = stateWith(baseConfig({ servers: { everything } }));
    const gateway = await startCliGateway(env);
    const operator = await client(`ws://127.0.0.1:${gateway.port}`, { scopes: ['operator.admin'] });
    try {
      const answer = await operator.request<{ ok: boolean; source?: string; output?: unknown }>('tools.invoke', {
        name: 'everything__echo',
        args: { message: 'invoked directly' },
      });
      expect(answer, JSON.stringify(answer)).toMatchObject({ ok: true, source: 'core' });
      expect(JSON.stringify(answer.output)).toContain('Echo: invoked directly');
      const unknown = await operator.request('tools.invoke', { name: 'nowhere__echo', args: {} });
      expect(unknown).toMatchObject({ ok: false, error: { code: 'not_found' } });
    } finally {
      await operator.close();
    }
  });
});

describe('MCP tools obey the owner policy', () => {
  it('tools.deny of the whole server keeps it from starting and refuses the call', async () => {
    const { env } = stateWith(baseConfig({ servers: { everything } }, { tools: { deny: ['everything__*'] } }));
    await startCliGateway(env);
    fake.reset();
    fake.script(
      { text: 'Calling.', toolCalls: [{ name: 'everything__echo', arguments: { message: 'x' } }] },
      { text: 'Refused.' },
    );
    const result = await claw(['agent', '-m', 'echo'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.stringify((fake.requests[0]!.body as { tools?: unknown[] }).tools ?? [])).not.toContain('everything__');
    expect(toolResultSent(1)).toMatch(/not allowed by the tool policy|Unknown tool/);
  });

  it('ask: always holds the call until an operator approves; allow-always saves an mcpTools grant', async () => {
    const { env, stateDir } = stateWith(
      baseConfig({ servers: { everything } }, { tools: { exec: { ask: 'always' } } }),
    );
    const gateway = await startCliGateway(env);
    const requested: EventFrame[] = [];
    const approver = await client(`ws://127.0.0.1:${gateway.port}`, {
      scopes: ['operator.read', 'operator.approvals'],
      onEvent: (frame) => frame.event === 'exec.approval.requested' && requested.push(frame),
    });
    try {
      fake.reset();
      fake.script(
        { text: 'Calling.', toolCalls: [{ name: 'everything__echo', arguments: { message: 'approved call' } }] },
        { text: 'Done.' },
      );
      const running = claw(['agent', '-m', 'echo'], env);
      await expect.poll(() => requested.length, { timeout: 20_000 }).toBe(1);
      const { id, request } = requested[0]!.payload as { id: string; request: Record<string, unknown> };
      expect(request).toMatchObject({
        kind: 'mcp',
        mcp: { server: 'everything', tool: 'echo', arguments: { message: 'approved call' } },
      });
      const pending = await claw(['approvals', 'pending', '--json'], env);
      expect(JSON.parse(pending.stdout).approvals).toEqual([expect.objectContaining({ id })]);
      const resolved = await claw(['approvals', 'resolve', id, 'allow-always'], env);
      expect(resolved.code, resolved.stderr).toBe(0);
      const result = await running;
      expect(result.code, result.stderr).toBe(0);
      expect(toolResultSent(1)).toContain('Echo: approved call');
      const doc = JSON.parse(readFileSync(join(stateDir, 'exec-approvals.json'), 'utf8'));
      expect(doc.agents.main.mcpTools).toEqual([
        { server: 'everything', tool: 'echo', source: 'allow-always', addedAt: expect.any(Number) },
      ]);
    } finally {
      approver.close();
    }
  });

  it('a secret in the result is masked before the model sees it', async () => {
    const secret = 'sk-live-0123456789abcdefSECRET';
    const server = { ...everything, env: { SERVICE_API_KEY: secret } };
    const { env } = stateWith(baseConfig({ servers: { everything: server } }));
    await startCliGateway(env);
    fake.reset();
    fake.script({ text: 'Env.', toolCalls: [{ name: 'everything__get-env', arguments: {} }] }, { text: 'Done.' });
    const result = await claw(['agent', '-m', 'env'], env);
    expect(result.code, result.stderr).toBe(0);
    const sent = toolResultSent(1);
    expect(sent).toContain('SERVICE_API_KEY');
    expect(sent).not.toContain(secret);
  });

  it('a server that dies mid-call gives a clear error, and restarts for the next call', async () => {
    const { env } = stateWith(baseConfig({ servers: { crashy } }));
    await startCliGateway(env);
    fake.reset();
    fake.script(
      { text: 'Pid.', toolCalls: [{ name: 'crashy__pid', arguments: {} }] },
      { text: 'Crash.', toolCalls: [{ name: 'crashy__crash', arguments: {} }] },
      { text: 'Pid again.', toolCalls: [{ name: 'crashy__pid', arguments: {} }] },
      { text: 'Done.' },
    );
    const result = await claw(['agent', '-m', 'go'], env);
    expect(result.code, result.stderr).toBe(0);
    const first = /pid (\d+)/.exec(toolResultSent(1))![1];
    const crash = toolResultSent(2);
    expect(crash).toContain('MCP server \\"crashy\\" stopped during the call to crashy__crash');
    expect(crash).toContain('exited with code 3');
    expect(crash).toContain('not retried');
    const second = /pid (\d+)/.exec(toolResultSent(3))![1];
    expect(second).not.toBe(first);
  });
});

describe('config changes on a running gateway', () => {
  it('disabling a server retires it at once: its process ends and the next turn no longer has its tools', async () => {
    const { env } = stateWith(baseConfig({ servers: { crashy } }));
    const gateway = await startCliGateway(env);
    fake.reset();
    fake.script({ text: 'Pid.', toolCalls: [{ name: 'crashy__pid', arguments: {} }] }, { text: 'Done.' });
    expect((await claw(['agent', '-m', 'pid'], env)).code).toBe(0);
    const pid = Number(/pid (\d+)/.exec(toolResultSent(1))![1]);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    const set = await claw(['config', 'set', 'mcp.servers.crashy.enabled', 'false'], env);
    expect(set.code, set.stderr).toBe(0);
    await expect.poll(alive, { timeout: 20_000 }).toBe(false);
    expect(gateway.stdout() + gateway.stderr()).not.toMatch(/restarting/i);
    fake.reset();
    fake.script({ text: 'Nothing to call.' });
    expect((await claw(['agent', '-m', 'again'], env)).code).toBe(0);
    expect(JSON.stringify((fake.requests[0]!.body as { tools?: unknown[] }).tools ?? [])).not.toContain('crashy__');
  });
});

describe('an HTTP MCP server with a header token', () => {
  let http: Server;
  let url: string;
  const TOKEN = 'mcp-header-token-abcdef0123456789';
  beforeAll(async () => {
    http = createServer(async (req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad token"}');
        return;
      }
      // Stateless: a server and transport per request, as the MCP SDK's examples do.
      const server = new McpServer({ name: 'remote', version: '1.0.0' });
      server.registerTool('whoami', { description: 'Says who answers' }, async () => ({
        content: [{ type: 'text', text: 'remote tools over streamable HTTP' }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

  it('connects with the configured header and the model gets the tool; a wrong token is refused', async () => {
    const remote = { url, transport: 'streamable-http', headers: { Authorization: `Bearer ${TOKEN}` } };
    const wrong = { url, transport: 'streamable-http', headers: { Authorization: 'Bearer wrong-token-000000000000' } };
    const { env } = stateWith(baseConfig({ servers: { remote, wrong } }));
    const gateway = await startCliGateway(env);
    fake.reset();
    fake.script({ text: 'Asking.', toolCalls: [{ name: 'remote__whoami', arguments: {} }] }, { text: 'Done.' });
    const result = await claw(['agent', '-m', 'who'], env);
    expect(result.code, result.stderr).toBe(0);
    const tools = JSON.stringify((fake.requests[0]!.body as { tools: unknown[] }).tools);
    expect(tools).toContain('remote__whoami');
    expect(tools).not.toContain('wrong__');
    expect(toolResultSent(1)).toContain('remote tools over streamable HTTP');
    // The log is JSON lines: the quotes around the name come escaped.
    expect(gateway.stdout() + gateway.stderr()).toMatch(/MCP server \\"wrong\\" could not connect/);
    expect(gateway.stdout() + gateway.stderr()).not.toContain(TOKEN);
  });
});
