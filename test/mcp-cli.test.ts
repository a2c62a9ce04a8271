/**
 * `claw mcp` (the registry of saved MCP servers) and the gateway's mcp.* methods, over the
 * built CLI: real stdio servers from npm (installed by scripts/install-mcp-servers.mjs), a
 * streamable-http server built here on the MCP SDK's server classes that wants a header token,
 * and a gateway whose live MCP runtime `mcp.status` reports and `claw mcp reload` retires.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { claw, REPO, startCliGateway, tempDir } from './helpers.js';

const SERVERS = join(REPO, '.cache', 'mcp-servers', 'node_modules', '@modelcontextprotocol');
const EVERYTHING = join(SERVERS, 'server-everything', 'dist', 'index.js');
const FILESYSTEM = join(SERVERS, 'server-filesystem', 'dist', 'index.js');

const HTTP_TOKEN = 'mcp-http-test-token-5b7c9d1e3f';

/**
 * A stateless streamable-http MCP server on 127.0.0.1: one tool without safety annotations,
 * and 401 for any request whose Authorization header is not `Bearer <HTTP_TOKEN>`.
 */
async function startHttpMcpServer(): Promise<{ url: string; refused: () => number; close: () => Promise<void> }> {
  let refused = 0;
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${HTTP_TOKEN}`) {
      refused++;
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const mcp = new McpServer({ name: 'token-test', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Says who is asking.' }, async () => ({
      content: [{ type: 'text', text: 'an authorized client' }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close().then(() => mcp.close()));
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    refused: () => refused,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let fake: FakeLlm;
beforeAll(async () => {
  if (!existsSync(EVERYTHING) || !existsSync(FILESYSTEM))
    throw new Error('run node scripts/install-mcp-servers.mjs first (npm test does)');
  fake = await startFakeLlm();
});
afterAll(() => fake.close());

/** A state dir with this config (a function of the state dir when the config names paths in it). */
function state(config: Record<string, unknown> | ((stateDir: string) => Record<string, unknown>) = {}) {
  const stateDir = tempDir('claw-mcp-cli-');
  const file = join(stateDir, 'openclaw.json');
  const body = typeof config === 'function' ? config(stateDir) : config;
  writeFileSync(file, JSON.stringify(body, null, 2), { mode: 0o600 });
  return { stateDir, file, env: { OPENCLAW_STATE_DIR: stateDir } as Record<string, string> };
}

const readConfig = (file: string) =>
  JSON.parse(readFileSync(file, 'utf8')) as { mcp?: { servers?: Record<string, any> } };

async function mcp(env: Record<string, string>, ...args: string[]) {
  return claw(['mcp', ...args], env);
}

async function mcpJson(env: Record<string, string>, ...args: string[]) {
  const result = await mcp(env, ...args, '--json');
  return { ...result, json: JSON.parse(result.stdout) as Record<string, any> };
}

describe('claw mcp registry (no gateway)', () => {
  it('adds a real stdio server after probing it, lists, shows, classifies and edits it, and unsets it', async () => {
    const { env, file } = state();
    const added = await mcp(
      env,
      'add',
      'everything',
      '--command',
      process.execPath,
      '--arg',
      EVERYTHING,
      '--arg',
      'stdio',
      '--arg',
      '--api-key',
      '--arg',
      'sk-flag-secret-value-1234',
      '--env',
      'GITHUB_TOKEN=ghp_literalsecret0123456789',
      '--timeout',
      '20',
      '--approval',
      'approve',
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`Saved MCP server "everything" to ${file}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readConfig(file).mcp!.servers!.everything).toEqual({
      command: process.execPath,
      args: [EVERYTHING, 'stdio', '--api-key', 'sk-flag-secret-value-1234'],
      env: { GITHUB_TOKEN: 'ghp_literalsecret0123456789' },
      requestTimeoutMs: 20000,
      codex: { defaultToolsApprovalMode: 'approve' },
    });

    const listed = await mcpJson(env, 'list');
    expect(listed.code).toBe(0);
    expect(listed.json.everything.args).toEqual([EVERYTHING, 'stdio', '--api-key', '***']);
    expect(listed.json.everything.env).toEqual({ GITHUB_TOKEN: '***' });
    expect(listed.stdout).not.toContain('sk-flag-secret');
    expect(listed.stdout).not.toContain('ghp_literal');

    const status = await mcpJson(env, 'status');
    expect(status.json).toEqual({
      path: file,
      servers: [
        {
          name: 'everything',
          configured: true,
          enabled: true,
          ok: true,
          transport: 'stdio',
          launch: `${process.execPath} ${EVERYTHING} stdio --api-key ***`,
          requestTimeoutMs: 20000,
          connectionTimeoutMs: 30000,
          supportsParallelToolCalls: false,
          codex: { defaultToolsApprovalMode: 'approve' },
        },
      ],
    });
    const verbose = await mcp(env, 'status', '--verbose');
    expect(verbose.stdout).toContain('- everything: stdio');
    expect(verbose.stdout).toContain('timeouts: connect=30000ms request=20000ms');
    expect(verbose.stdout).toContain('approval: approve');

    const tools = await mcp(env, 'tools', 'everything', '--include', 'echo,get-*', '--exclude', 'get-env');
    expect(tools.code, tools.stderr).toBe(0);
    const configured = await mcp(env, 'configure', 'everything', '--disable', '--connect-timeout', '5', '--parallel');
    expect(configured.code, configured.stderr).toBe(0);
    expect(readConfig(file).mcp!.servers!.everything).toMatchObject({
      enabled: false,
      connectionTimeoutMs: 5000,
      supportsParallelToolCalls: true,
      toolFilter: { include: ['echo', 'get-*'], exclude: ['get-env'] },
    });
    const disabledProbe = await mcpJson(env, 'probe', 'everything');
    expect(disabledProbe.code).toBe(1);
    expect(disabledProbe.json.error.type).toBe('cli_error');
    expect(disabledProbe.json.error.message).toContain('claw mcp configure everything --enable');

    await mcp(env, 'configure', 'everything', '--enable', '--clear-timeouts', '--no-parallel', '--clear-tools');
    const after = readConfig(file).mcp!.servers!.everything;
    expect(after.enabled).toBeUndefined();
    expect(after.toolFilter).toBeUndefined();
    expect(after.connectionTimeoutMs).toBeUndefined();
    expect(after.supportsParallelToolCalls).toBeUndefined();

    const unset = await mcp(env, 'unset', 'everything');
    expect(unset.code, unset.stderr).toBe(0);
    expect(readConfig(file).mcp).toBeUndefined();
    const again = await mcp(env, 'unset', 'everything');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('No MCP server named "everything"');
  }, 120_000);

  it('refuses bad names, both transports, OAuth and TLS, and a server that does not start (nothing saved)', async () => {
    const { env, file } = state();
    const badName = await mcp(env, 'set', 'docs__x', '{"command":"x"}');
    expect(badName.code).toBe(1);
    expect(badName.stderr).toContain('must not contain "__"');
    const both = await mcp(env, 'add', 'x', '--command', 'a', '--url', 'http://127.0.0.1:1/');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('not both');
    const oauth = await mcp(env, 'add', 'x', '--url', 'https://mcp.example.test/', '--auth', 'oauth');
    expect(oauth.code).toBe(2);
    expect(oauth.stderr).toContain('does not support OAuth');
    const tls = await mcp(env, 'set', 'x', '{"url":"https://mcp.example.test/","sslVerify":false}');
    expect(tls.code).toBe(2);
    expect(tls.stderr).toContain('sslVerify');
    const login = await mcpJson(env, 'login', 'x');
    expect(login.code).toBe(1);
    expect(login.json.error.message).toContain('OAuth is not supported');

    const dead = await mcp(
      env,
      'add',
      'dead',
      '--command',
      process.execPath,
      '--arg',
      '-e',
      '--arg',
      'process.exit(3)',
    );
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain('exited with code 3');
    expect(dead.stderr).toContain('Nothing was saved');
    expect(existsSync(file) ? readConfig(file).mcp : undefined).toBeUndefined();
    const unchecked = await mcp(env, 'add', 'dead', '--command', '/nonexistent/mcp-server', '--no-probe');
    expect(unchecked.code, unchecked.stderr).toBe(0);
    const exists = await mcp(env, 'add', 'dead', '--command', 'x', '--no-probe');
    expect(exists.code).toBe(1);
    expect(exists.stderr).toContain('already exists');
  }, 120_000);

  it('set saves a whole definition, normalizing type "http" to transport "streamable-http"; show masks it', async () => {
    const { env, file } = state();
    const set = await mcp(
      env,
      'set',
      'docs',
      JSON.stringify({
        type: 'http',
        url: 'https://reader:hunter2@mcp.example.test/mcp?token=abc123',
        headers: { Authorization: 'Bearer literal-token-abcdef', 'X-Team': '${DOCS_TEAM}' },
      }),
    );
    expect(set.code, set.stderr).toBe(0);
    expect(readConfig(file).mcp!.servers!.docs).toEqual({
      transport: 'streamable-http',
      url: 'https://reader:hunter2@mcp.example.test/mcp?token=abc123',
      headers: { Authorization: 'Bearer literal-token-abcdef', 'X-Team': '${DOCS_TEAM}' },
    });
    const show = await mcpJson(env, 'show', 'docs');
    expect(show.json).toEqual({
      transport: 'streamable-http',
      url: 'https://***:***@mcp.example.test/mcp?token=***',
      headers: { Authorization: '***', 'X-Team': '${DOCS_TEAM}' },
    });
    const status = await mcpJson(env, 'status');
    expect(status.json.servers[0]).toMatchObject({
      transport: 'streamable-http',
      launch: 'streamable-http https://***:***@mcp.example.test/mcp?token=***',
    });
    expect(status.stdout).not.toContain('hunter2');
    const unknown = await mcpJson(env, 'show', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.json).toEqual({
      ok: false,
      error: {
        type: 'cli_error',
        message: `No MCP server named "nope" in ${file}. Run claw mcp list to see configured servers.`,
      },
    });
  }, 120_000);

  it('doctor reports static problems without connecting, and --probe proves the server starts', async () => {
    const { env, stateDir } = state((stateDir) => ({
      mcp: {
        servers: {
          files: { command: process.execPath, args: [FILESYSTEM, '.'], cwd: stateDir },
          gone: { command: 'no-such-mcp-server-binary' },
          nowhere: { command: process.execPath, cwd: join(stateDir, 'missing') },
          secret: {
            url: 'http://127.0.0.1:9/mcp',
            headers: { Authorization: 'Bearer abcdef0123456789', 'X-Team': '${MCP_CLI_TEST_UNSET_VAR}' },
          },
          off: { command: 'no-such-mcp-server-binary', enabled: false },
        },
      },
    }));
    const doctor = await mcpJson(env, 'doctor');
    expect(doctor.code).toBe(1);
    const issues = Object.fromEntries(
      (doctor.json.servers as Array<{ name: string; issues: unknown[] }>).map((server) => [server.name, server.issues]),
    );
    expect(doctor.json.ok).toBe(false);
    expect(issues.files).toEqual([]);
    expect(issues.gone).toEqual([
      { level: 'error', message: 'stdio command not found or not executable: no-such-mcp-server-binary' },
    ]);
    expect(issues.nowhere).toEqual([
      { level: 'error', message: `stdio cwd does not exist: ${join(stateDir, 'missing')}` },
    ]);
    expect(issues.secret).toEqual([
      {
        level: 'warning',
        message: 'headers.Authorization holds a literal secret; prefer a ${VAR} reference to an environment variable',
      },
      { level: 'warning', message: expect.stringContaining('headers.X-Team references ${MCP_CLI_TEST_UNSET_VAR}') },
    ]);
    expect(issues.off).toEqual([{ level: 'warning', message: 'server is disabled' }]);

    const probed = await mcpJson(env, 'doctor', 'files', '--probe');
    expect(probed.code, probed.stdout).toBe(0);
    expect(probed.json.servers).toEqual([{ name: 'files', ok: true, issues: [] }]);
    const text = await mcp(env, 'doctor', 'gone');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('- gone: issues\n  ! error: stdio command not found');
  }, 120_000);
});

describe('claw mcp probe', () => {
  it('reports OpenClaw probe shapes for real stdio servers: resources/prompts only when advertised, filters', async () => {
    const { env } = state((stateDir) => ({
      mcp: {
        servers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          files: {
            command: process.execPath,
            args: [FILESYSTEM, stateDir],
            toolFilter: { include: ['read_*', 'list_directory'] },
            env: { NODE_OPTIONS: '--require=/tmp/evil.js' },
          },
          off: { command: 'no-such-mcp-server-binary', enabled: false },
        },
      },
    }));
    const probe = await mcpJson(env, 'probe');
    expect(probe.code, probe.stderr).toBe(0);
    expect(Object.keys(probe.json).sort()).toEqual(['diagnostics', 'generatedAt', 'servers', 'tools']);
    expect(Number.isNaN(Date.parse(probe.json.generatedAt))).toBe(false);
    expect(probe.json.diagnostics).toEqual([]);
    expect(Object.keys(probe.json.servers)).toEqual(['everything', 'files']);
    const everything = probe.json.servers.everything;
    expect(everything).toMatchObject({
      launch: `${process.execPath} ${EVERYTHING} stdio`,
      codexApprovalMode: 'auto',
      resources: true,
      prompts: true,
      listChanged: { tools: true, resources: true, prompts: true },
    });
    expect(everything.tools).toBeGreaterThan(5);
    expect(everything.approvalHint).toBeUndefined(); // its tools carry annotations
    const files = probe.json.servers.files;
    expect(files).not.toHaveProperty('resources');
    expect(files).not.toHaveProperty('prompts');
    expect(files.filteredTools).toBeGreaterThan(0);
    expect(files.warnings).toEqual([expect.stringContaining('env NODE_OPTIONS dropped')]);
    const tools = probe.json.tools as string[];
    expect(tools).toEqual([...tools].sort());
    expect(tools).toEqual(
      expect.arrayContaining([
        'everything__echo',
        'everything__resources_list',
        'everything__resources_read',
        'everything__prompts_list',
        'everything__prompts_get',
        'files__read_text_file',
        'files__list_directory',
      ]),
    );
    expect(tools).not.toContain('files__write_file');
    expect(tools.filter((name) => name.startsWith('files__'))).toHaveLength(files.tools);

    const text = await mcp(env, 'probe', 'files');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/- files: \d+ tools, approval auto\n/);
  }, 120_000);

  it('prints the whole result and exits nonzero when a selected server does not connect', async () => {
    const { env } = state({
      mcp: {
        servers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          crash: { command: process.execPath, args: ['-e', 'console.error("boom: no config"); process.exit(4)'] },
          // Closes its stdin first, so claw's first write fails (EPIPE) before the exit is seen.
          deaf: {
            command: process.execPath,
            args: ['-e', 'process.stdin.destroy(); console.error("no ears"); setTimeout(() => process.exit(5), 300)'],
          },
        },
      },
    });
    const probe = await mcpJson(env, 'probe');
    expect(probe.code).toBe(1);
    expect(Object.keys(probe.json.servers)).toEqual(['everything']);
    expect(probe.json.diagnostics).toEqual([
      { serverName: 'crash', message: expect.stringMatching(/exited with code 4.*boom: no config/) },
      { serverName: 'deaf', message: expect.stringMatching(/exited with code 5.*no ears/) },
    ]);
    expect(probe.stderr).toContain('MCP probe failed for "crash"');
    const empty = await mcp(state({ mcp: { servers: { off: { command: 'x', enabled: false } } } }).env, 'probe');
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain('No enabled MCP servers');
  }, 120_000);

  it('probes a streamable-http server with a header token from the environment; a wrong token is a diagnostic', async () => {
    const http = await startHttpMcpServer();
    try {
      const { env, file } = state();
      const added = await claw(
        [
          'mcp',
          'add',
          'remote',
          '--url',
          http.url,
          '--transport',
          'streamable-http',
          '--header',
          'Authorization=Bearer ${REMOTE_MCP_TOKEN}',
        ],
        { ...env, REMOTE_MCP_TOKEN: HTTP_TOKEN },
      );
      expect(added.code, added.stderr).toBe(0);
      expect(readConfig(file).mcp!.servers!.remote.headers).toEqual({
        Authorization: 'Bearer ${REMOTE_MCP_TOKEN}',
      });
      const probe = await claw(['mcp', 'probe', 'remote', '--json'], { ...env, REMOTE_MCP_TOKEN: HTTP_TOKEN });
      expect(probe.code, probe.stderr).toBe(0);
      expect(probe.stdout).not.toContain(HTTP_TOKEN);
      expect(JSON.parse(probe.stdout)).toMatchObject({
        servers: {
          remote: {
            launch: `streamable-http ${http.url}`,
            tools: 1,
            codexApprovalMode: 'auto',
            approvalHint: 'tools have no safety annotations; calls require approval in prompting session postures',
          },
        },
        tools: ['remote__whoami'],
        diagnostics: [],
      });

      const before = http.refused();
      const wrong = await claw(['mcp', 'probe', 'remote', '--json'], { ...env, REMOTE_MCP_TOKEN: 'not-the-token' });
      expect(wrong.code).toBe(1);
      expect(http.refused()).toBeGreaterThan(before);
      const result = JSON.parse(wrong.stdout);
      expect(result.servers).toEqual({});
      expect(result.diagnostics).toEqual([{ serverName: 'remote', message: expect.stringContaining('remote') }]);
      const refusedAdd = await claw(
        [
          'mcp',
          'add',
          'other',
          '--url',
          http.url,
          '--transport',
          'streamable-http',
          '--header',
          'Authorization=Bearer nope',
        ],
        env,
      );
      expect(refusedAdd.code).toBe(1);
      expect(refusedAdd.stderr).toContain('Nothing was saved');
    } finally {
      await http.close();
    }
  }, 120_000);
});

describe('claw mcp against a running gateway', () => {
  it('writes through the gateway; mcp.status shows live runtime state, mcp.probe probes, claw mcp reload retires', async () => {
    const { env } = state({
      agents: { defaults: { model: 'openai/gpt-4.1' } },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-mcp-cli-test' } } },
    });
    const idleReload = await mcp(env, 'reload');
    expect(idleReload.code).toBe(0);
    expect(idleReload.stdout).toContain('No gateway is running');

    await startCliGateway(env);
    const added = await mcp(
      env,
      'add',
      'everything',
      '--command',
      process.execPath,
      '--arg',
      EVERYTHING,
      '--arg',
      'stdio',
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('The running gateway has applied it.');

    const call = async (method: string, params: Record<string, unknown> = {}) => {
      const result = await claw(['gateway', 'call', method, '--params', JSON.stringify(params)], env);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as Record<string, any>;
    };
    const idle = await call('mcp.status');
    expect(idle.servers).toEqual([
      expect.objectContaining({
        name: 'everything',
        transport: 'stdio',
        runtime: { state: 'idle', tools: [], toolCount: 0, restarts: 0, sandboxInstances: 0 },
      }),
    ]);

    fake.reset();
    fake.script(
      { text: 'Calling.', toolCalls: [{ name: 'everything__echo', arguments: { message: 'via gateway' } }] },
      { text: 'Done.' },
    );
    const turn = await claw(['agent', '-m', 'echo something'], env);
    expect(turn.code, turn.stderr).toBe(0);
    const live = await call('mcp.status');
    expect(live.servers[0].runtime).toMatchObject({ state: 'connected', restarts: 0 });
    expect(live.servers[0].runtime.tools).toContain('everything__echo');
    expect(live.servers[0].runtime.toolCount).toBe(live.servers[0].runtime.tools.length);

    const probe = await call('mcp.probe', { name: 'everything' });
    expect(probe).toMatchObject({ ok: true, diagnostics: [], servers: { everything: { resources: true } } });
    const missing = await claw(['gateway', 'call', 'mcp.probe', '--params', '{"name":"nope"}'], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('no MCP server named "nope"');

    const reload = await mcpJson(env, 'reload');
    expect(reload.code, reload.stderr).toBe(0);
    expect(reload.json).toEqual({ ok: true, gateway: true, retired: 1 });
    const after = await call('mcp.status');
    expect(after.servers[0].runtime).toMatchObject({ state: 'idle', tools: [] });
  }, 120_000);
});
