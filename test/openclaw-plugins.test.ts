/**
 * OpenClaw plugins in claw: two real community plugins from npm (fetched as tarballs by
 * scripts/install-openclaw-plugins.mjs before the tests, installed here with
 * `claw plugins install` like a user would) and fixtures written in OpenClaw's documented
 * style (test/fixtures/openclaw-plugins/). Each runs in an agent turn with a scripted
 * model; outbound APIs are faked on 127.0.0.1.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentService } from '../sdk/agent/index.js';
import { useService } from '../sdk/services.js';
import {
  agentStackDirs,
  bundledPluginDir,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import type { ModelRequest } from '../sdk/types/models.js';
// @ts-expect-error -- a plain .mjs script without type declarations
import { OPENCLAW_PLUGIN_CACHE, tarballName } from '../scripts/install-openclaw-plugins.mjs';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { claw, REPO, tempDir } from './helpers.js';

const FIXTURES = join(REPO, 'test', 'fixtures', 'openclaw-plugins');

function tarball(spec: string): string {
  const file = join(OPENCLAW_PLUGIN_CACHE as string, (tarballName as (spec: string) => string)(spec));
  if (!existsSync(file))
    throw new Error(`${file} is missing: run \`node scripts/install-openclaw-plugins.mjs\` (npm test does)`);
  return file;
}

function stateEnv() {
  const stateDir = tempDir('claw-ocplugins-');
  return {
    stateDir,
    env: {
      OPENCLAW_STATE_DIR: stateDir,
      OPENCLAW_CONFIG_PATH: join(stateDir, 'openclaw.json'),
      npm_config_cache: join(stateDir, '.npm-cache'),
      npm_config_offline: 'true',
    },
  };
}

const kernels: TestKernel[] = [];
const servers: Array<Server | FakeLlm> = [];
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose();
  for (const server of servers.splice(0))
    await ('url' in server ? server.close() : new Promise((done) => server.close(done)));
});

/** The last tool result the model was shown, as text. */
function lastToolResult(request: ModelRequest): string | undefined {
  const result = [...request.messages].reverse().find((message) => message.role === 'toolResult');
  if (!result || result.role !== 'toolResult') return undefined;
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** A model that calls `tool` once with `args`, then answers with what the tool returned. */
function callsTool(tool: string, args: Record<string, unknown>, requests: ModelRequest[] = []) {
  return scriptedModel((request): ScriptedAnswer => {
    requests.push(request);
    const seen = lastToolResult(request);
    return seen === undefined ? { toolCalls: [{ name: tool, arguments: args }] } : `tool said: ${seen}`;
  });
}

async function agentKernel(
  stateDir: string,
  plugins: Array<string | ReturnType<typeof scriptedModel>>,
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
) {
  const kernel = await createTestKernel({
    stateDir,
    env,
    plugins: [...agentStackDirs(), ...plugins],
    config: { agents: { defaults: { model: 'scripted/x', workspace: join(stateDir, 'workspace') } }, ...config },
  });
  kernels.push(kernel);
  // OpenClaw plugins declare by registering, so they load at start, as in the gateway.
  await kernel.start();
  const agent = (await useService<AgentService>(kernel.plugins.kernelServices, 'agent'))!;
  return { kernel, agent };
}

/** memory_search through the kernel's tool path, as an agent turn calls it. */
async function memorySearch(kernel: TestKernel, workspace: string, query: string) {
  const { result } = await kernel.plugins.kernelServices.tools.invoke({
    name: 'memory_search',
    params: { query },
    toolCallId: 't-search',
    context: { agentId: 'main', workspaceDir: workspace },
  });
  return { isError: result.isError === true, text: (result.content[0] as { text: string }).text };
}

describe('real OpenClaw community plugins from npm', () => {
  it('@ollama/openclaw-web-search installs, says enabled, and its web search runs in an agent turn', async () => {
    const { stateDir, env } = stateEnv();
    const installed = await claw(['plugins', 'install', tarball('@ollama/openclaw-web-search@0.2.2')], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('Installed openclaw-web-search 0.2.2');
    expect(installed.stdout).toContain('  enabled');

    // The plugin talks to a local Ollama at its fixed address; this stands in for it.
    const queries: unknown[] = [];
    const ollama = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        queries.push({ path: req.url, body: JSON.parse(body) });
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            results: [
              { title: 'Claw 1.0 released', url: 'https://example.test/claw', content: 'A local-first assistant.' },
            ],
          }),
        );
      });
    });
    await new Promise<void>((resolve, reject) => {
      ollama.once('error', (error) =>
        reject(new Error(`port 11434 (the plugin's Ollama address) is taken: ${error.message}`)),
      );
      ollama.listen(11434, '127.0.0.1', resolve);
    });
    servers.push(ollama);

    const requests: ModelRequest[] = [];
    const { agent } = await agentKernel(stateDir, [
      join(stateDir, 'extensions', 'openclaw-web-search'),
      callsTool('ollama_web_search', { query: 'claw release' }, requests),
    ]);
    const result = await agent.run({ message: 'what is new with claw?' });
    expect(result.status).toBe('ok');
    expect(requests[0]!.tools?.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['ollama_web_search', 'ollama_web_fetch']),
    );
    expect(queries).toEqual([
      { path: '/api/experimental/web_search', body: { query: 'claw release', max_results: 5 } },
    ]);
    expect(result.text).toContain('tool said: 1. Claw 1.0 released');
    expect(result.text).toContain('https://example.test/claw');
  });

  it('jasper-context-compactor installs, says enabled; its hook runs in an agent turn, its command answers, its gateway method reads the transcript', async () => {
    const { stateDir, env } = stateEnv();
    const installed = await claw(['plugins', 'install', tarball('jasper-context-compactor@0.4.1')], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('Installed context-compactor');
    expect(installed.stdout).toContain('  enabled');

    const { kernel, agent } = await agentKernel(
      stateDir,
      [join(stateDir, 'extensions', 'context-compactor'), scriptedModel((request) => `echo: ${lastUserText(request)}`)],
      // Read by the plugin from the whole config (api.config), as in OpenClaw.
      { plugins: { entries: { 'context-compactor': { config: { maxTokens: 1 } } } } },
    );
    const turn = await agent.run({ message: 'hello there' });
    expect(turn.text).toBe('echo: hello there');
    const logged = kernel.logs.map((record) => record.message);
    expect(logged).toContain('[context-compactor] Initialized (maxTokens=1, keepRecent=2000)');
    // Its before_agent_start handler ran in the turn (it finds no message list in the event, as in OpenClaw today).
    expect(logged).toContain('[context-compactor] No messages to compact');

    const command = await agent.run({ message: '/context-stats' });
    expect(command.text).toContain('Session file not available');

    const method = await kernel.capabilities.get('gatewayMethod', 'context-compactor.stats');
    const sessions = join(stateDir, 'agents', 'main', 'sessions');
    const transcript = join(
      sessions,
      readdirSync(sessions).find((name) => name.endsWith('.jsonl'))!,
    );
    const stats = (await method.handler({ sessionFile: transcript }, {} as never)) as Record<string, unknown>;
    expect(stats).toMatchObject({ maxTokens: 1, needsCompaction: true });
    expect(stats.messages).toBeGreaterThanOrEqual(2);
  });
});

describe('the OpenClaw plugin API adapter (fixtures in OpenClaw style)', () => {
  it('a provider plugin (definePluginEntry + registerProvider with catalog.run) serves an agent turn over openai-completions', async () => {
    const llm = await startFakeLlm({ apiKeys: ['acme-key'] });
    servers.push(llm);
    llm.script({ text: 'hello from acme' });
    const stateDir = tempDir('claw-ocprovider-');
    const { agent } = await agentKernel(
      stateDir,
      // The requests go out through claw's own openai plugin, which speaks openai-completions.
      [join(FIXTURES, 'acme-provider'), bundledPluginDir('openai')],
      {
        agents: { defaults: { model: 'acme-ai/acme-large', workspace: join(stateDir, 'workspace') } },
        plugins: { entries: { 'acme-ai': { config: { baseUrl: llm.openaiBaseUrl } } } },
      },
      { ACME_AI_API_KEY: 'acme-key' },
    );
    const result = await agent.run({ message: 'hi' });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('hello from acme');
    expect(llm.requests.map((request) => [request.api, request.apiKey, request.body.model])).toEqual([
      ['openai-chat', 'acme-key', 'acme-large'],
    ]);
  });

  it('a provider plugin without its key fails the turn naming the env var', async () => {
    const stateDir = tempDir('claw-ocprovider-');
    const { agent } = await agentKernel(stateDir, [join(FIXTURES, 'acme-provider')], {
      agents: { defaults: { model: 'acme-ai/acme-large', workspace: join(stateDir, 'workspace') } },
    });
    const result = await agent.run({ message: 'hi' });
    expect(result.status).toBe('error');
    expect(result.error).toContain('ACME_AI_API_KEY');
  });

  it('defineToolPlugin tools: declarative execute(params, config, context) and a factory tool with execute(toolCallId, params, signal)', async () => {
    const stateDir = tempDir('claw-octools-');
    const { kernel, agent } = await agentKernel(
      stateDir,
      [join(FIXTURES, 'stock-quotes'), callsTool('stock_quote', { symbol: 'claw' })],
      {
        plugins: { entries: { 'stock-quotes': { config: { currency: 'EUR' } } } },
      },
    );
    const result = await agent.run({ message: 'price?' });
    const quote = JSON.parse(result.text.slice('tool said: '.length));
    expect(quote).toMatchObject({ symbol: 'CLAW', price: 99.25, currency: 'EUR' });
    expect(quote.toolCallId).toMatch(/^call_/);

    const clock = await kernel.runTool(
      'market_clock',
      {},
      { sessionKey: 'agent:main:main', signal: new AbortController().signal },
    );
    expect(clock.content).toEqual([
      { type: 'text', text: 'open for agent:main:main (call test-market_clock, signal given)' },
    ]);
    // contracts.tools makes the tools known before the plugin loads.
    expect(
      kernel.capabilities
        .list('tool')
        .filter((info) => info.pluginId === 'stock-quotes')
        .map((info) => info.name),
    ).toEqual(['market_clock', 'stock_quote']);
  });

  it('an embedding provider plugin (registerEmbeddingProvider) installs enabled and memory_search ranks with its vectors in hybrid mode', async () => {
    const { stateDir, env } = stateEnv();
    const installed = await claw(['plugins', 'install', join(FIXTURES, 'hash-embeddings')], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('  enabled');
    expect(installed.stdout).not.toContain('needs');

    const workspace = join(stateDir, 'workspace');
    mkdirSync(join(workspace, 'memory'), { recursive: true });
    writeFileSync(join(workspace, 'MEMORY.md'), '# Preferences\n\nThe user drinks dark roast coffee every morning.\n');
    writeFileSync(
      join(workspace, 'memory', 'garden.md'),
      '# Garden\n\nTomatoes need staking before the July storms.\n',
    );
    // The CLI does not start the gateway: memory loads the plugin that lists the id in contracts.embeddingProviders.
    const set = await claw(['config', 'set', 'agents.defaults.memorySearch.provider', 'hash-embed'], env);
    expect(set.code, set.stderr).toBe(0);
    const cli = await claw(['memory', 'search', 'roast coffee', '--json'], env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ mode: 'hybrid', results: [{ path: 'MEMORY.md' }] });

    const { kernel } = await agentKernel(
      stateDir,
      [
        join(stateDir, 'extensions', 'hash-embeddings'),
        ...['memory-sqlite', 'memory-core', 'memory-sqlite-engine', 'embeddings'].map(bundledPluginDir),
      ],
      {
        agents: { defaults: { model: 'scripted/x', workspace, memorySearch: { provider: 'hash-embed' } } },
      },
    );
    const result = await memorySearch(kernel, workspace, 'roast coffee');
    expect(result.isError, result.text).not.toBe(true);
    const payload = JSON.parse(result.text);
    expect(payload.mode).toBe('hybrid');
    expect(payload.results[0].path).toBe('MEMORY.md');
    // The query went through the plugin's embedBatch; the chunks did not again: the index the
    // CLI built under the same fingerprint (plugin:hash-embed:words-32:…) is reused as is.
    const embedded = kernel.logs
      .map((record) => record.message)
      .filter((message) => message.startsWith('hash-embed: embedded'));
    expect(embedded).toEqual(['hash-embed: embedded 1 texts']);
  });

  it('memorySearch.provider naming no registered embedding provider fails memory_search with the known ids', async () => {
    const stateDir = tempDir('claw-ocembed-');
    const workspace = join(stateDir, 'workspace');
    const { kernel } = await agentKernel(
      stateDir,
      [
        join(FIXTURES, 'hash-embeddings'),
        ...['memory-sqlite', 'memory-core', 'memory-sqlite-engine', 'embeddings'].map(bundledPluginDir),
      ],
      {
        agents: { defaults: { model: 'scripted/x', workspace, memorySearch: { provider: 'hash-embd' } } },
      },
    );
    const { isError, text } = await memorySearch(kernel, workspace, 'coffee');
    expect(isError).toBe(true);
    expect(text).toContain(
      'memorySearch.provider (agent main) is "hash-embd", which is neither built in nor registered by an enabled plugin',
    );
    expect(text).toContain('"openai", "gemini", "voyage", "none", "hash-embed"');
  });

  it('APIs claw lacks are named: install says "installed, but needs: …", plugins doctor names each, the mapped tool still works', async () => {
    const { stateDir, env } = stateEnv();
    const installed = await claw(['plugins', 'install', join(FIXTURES, 'voice-kit')], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(
      'installed, but needs: registerSpeechProvider, registerEmbeddingProvider, registerCliBackend, on("before_agent_reply")',
    );
    expect(installed.stdout).not.toContain('  enabled');

    const doctor = await claw(['plugins', 'doctor'], env);
    expect(doctor.stdout).toContain('voice-kit: needs registerSpeechProvider (claw has no speech (TTS) providers)');
    // A registerEmbeddingProvider call is mapped, but this one lacks OpenClaw's create(options).
    expect(doctor.stdout).toContain(
      'voice-kit: needs registerEmbeddingProvider (embedding provider "voice-kit" has no create(options) function)',
    );
    expect(doctor.stdout).toContain('voice-kit: needs on("before_agent_reply") (unknown hook "before_agent_reply")');
    expect(doctor.stdout).toContain("voice-kit: OpenClaw plugin, runs through claw's OpenClaw API adapter");
    const json = JSON.parse((await claw(['plugins', 'doctor', '--json'], env)).stdout);
    expect(
      json.openclaw
        .find((entry: { id: string }) => entry.id === 'voice-kit')
        .missing.map((note: string) => note.split(' ')[0]),
    ).toEqual([
      'registerSpeechProvider',
      'registerEmbeddingProvider',
      'registerCliBackend',
      'on("before_agent_reply")',
    ]);

    const { kernel } = await agentKernel(stateDir, [join(stateDir, 'extensions', 'voice-kit')]);
    expect((await kernel.runTool('voice_kit_echo', { text: 'still here' })).content).toEqual([
      { type: 'text', text: 'still here' },
    ]);
  });

  it('OpenClaw manifest fields load: object commands rows, kind "context-engine" named as a kind claw does not implement', async () => {
    const { stateDir, env } = stateEnv();
    const installed = await claw(['plugins', 'install', join(FIXTURES, 'context-kit')], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('  enabled');
    const listed = JSON.parse((await claw(['plugins', 'list', '--json'], env)).stdout);
    const record = listed.plugins.find((plugin: { id: string }) => plugin.id === 'context-kit');
    expect(record).toMatchObject({ status: 'active', capabilities: { commands: ['ctxinfo'] } });
    expect(record.warnings).toContain(
      'kind "context-engine" is an OpenClaw plugin kind claw does not implement (claw\'s slots: memory, agentLoop, sandbox); the plugin loads, but nothing uses it as a context-engine',
    );
    const { agent } = await agentKernel(stateDir, [
      join(stateDir, 'extensions', 'context-kit'),
      scriptedModel(() => 'unused'),
    ]);
    expect((await agent.run({ message: '/ctxinfo' })).text).toBe('context kit: nothing held');
  });

  it('a CommonJS plugin with no usable export is failed, with the reason, in plugins list and at start', async () => {
    const { stateDir, env } = stateEnv();
    const installed = await claw(['plugins', 'install', join(FIXTURES, 'cjs-no-export')], env);
    expect(installed.stdout).toContain('installed, but register() failed: cannot load plugin.js');
    const reason =
      'cannot load plugin.js: the module does not export a plugin (expected a default export with register(api))';
    const listed = await claw(['plugins', 'list'], env);
    expect(listed.stdout).toMatch(/cjs-no-export\s+failed/);
    expect(listed.stdout).toContain(`cjs-no-export: ${reason}`);
    const json = JSON.parse((await claw(['plugins', 'list', '--json'], env)).stdout);
    expect(json.plugins.find((plugin: { id: string }) => plugin.id === 'cjs-no-export')).toMatchObject({
      status: 'failed',
      error: reason,
    });
    const kernel = await createTestKernel({ stateDir, plugins: [join(stateDir, 'extensions', 'cjs-no-export')] });
    kernels.push(kernel);
    await kernel.start();
    expect(kernel.plugins.get('cjs-no-export')).toMatchObject({ status: 'failed', error: reason });
  });

  it('claw plugins are never run through the adapter (bundled ones, and any that use claw manifest fields)', async () => {
    const kernel = await createTestKernel({ plugins: [bundledPluginDir('tools-fs'), join(FIXTURES, 'stock-quotes')] });
    kernels.push(kernel);
    const { isOpenclawPlugin } = await import('../host/openclaw-plugins.js');
    expect(
      kernel.plugins
        .list()
        .filter(isOpenclawPlugin)
        .map((record) => record.id),
    ).toEqual(['stock-quotes']);
  });
});
