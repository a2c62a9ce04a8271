/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser and use DOM types.)
/**
 * The MCP page in a real browser (Debian's Chromium driven by playwright-core) against a real
 * gateway with the mcp plugin and a real stdio MCP server from npm (server-everything,
 * installed by scripts/install-mcp-servers.mjs). The page lists the configured servers
 * without showing any secret, turns one off and on through config.patch (checked in the
 * config file), probes the real server and lists its tools, shows it running once a turn has
 * used it, and stops it with Restart servers. Screenshots go to test-results/web-mcp/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';
import { AGENT_STACK } from '../sdk/testing.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-mcp');
const TOKEN = 'mcp-page-test-token-0123456789';
const EVERYTHING = join(
  REPO,
  '.cache',
  'mcp-servers',
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);
const PLUGINS = [...AGENT_STACK, 'openai', 'channel-webchat', 'mcp'].map((id) => join(REPO, 'plugins', id));
/** Values that must never reach the page. */
const SECRETS = [
  'env-secret-value-123',
  'pw-in-url-secret',
  'header-secret-value',
  'team-secret-value',
  'arg-secret-456',
];

interface StatusAnswer {
  servers: Array<{ name: string; runtime: { state: string; toolCount: number } }>;
}

describe.skipIf(!existsSync(CHROMIUM))('MCP page in Chromium', () => {
  let fake: FakeLlm;
  let gw: RunningGateway;
  let operator: GatewayClient;
  let browser: Browser;
  let page: Page;
  let configFile: string;
  const pageErrors: string[] = [];

  const view = () => page.locator('main');
  const card = (name: string) => view().locator(`.mcp-server[data-server="${name}"]`);
  const readConfig = () => JSON.parse(readFileSync(configFile, 'utf8'));

  beforeAll(async () => {
    if (!existsSync(EVERYTHING)) throw new Error('run node scripts/install-mcp-servers.mjs first (npm test does)');
    mkdirSync(SHOTS, { recursive: true });
    const appDir = join(tempDir('claw-web-mcp-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-web-mcp-state-');
    const config = {
      agents: { defaults: { model: 'openai/gpt-4.1', workspace: tempDir('claw-web-mcp-ws-') } },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-mcp-page-secret' } } },
      mcp: {
        servers: {
          everything: {
            command: process.execPath,
            args: [EVERYTHING, 'stdio', '--api-key=arg-secret-456'],
            env: { EVERYTHING_API_TOKEN: 'env-secret-value-123' },
            toolFilter: { exclude: ['trigger-*'] },
            connectionTimeoutMs: 20_000,
          },
          remote: {
            url: 'https://page-user:pw-in-url-secret@mcp.example.invalid/mcp',
            transport: 'streamable-http',
            headers: { Authorization: 'Bearer header-secret-value', 'X-Team': 'team-secret-value' },
            requestTimeoutMs: 20_000,
            connectionTimeoutMs: 5_000,
            enabled: false,
          },
        },
      },
      plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
    };
    const gateway = { auth: { mode: 'token', token: TOKEN } };
    configFile = join(stateDir, 'openclaw.json');
    writeFileSync(configFile, JSON.stringify({ ...config, gateway }, null, 2));
    gw = await startGateway({ stateDir, plugins: PLUGINS, config, gateway });
    operator = await client(gw.url, { token: TOKEN });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/WebSocket/.test(message.text())) pageErrors.push(message.text());
    });
    await page.goto(`http://127.0.0.1:${gw.port}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor({ timeout: 60_000 });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'MCP', exact: true }).click();
    await page.getByRole('heading', { name: 'MCP', level: 1 }).waitFor();
    await card('everything').waitFor();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await operator?.close();
    await gw?.stop();
    await fake?.close();
  });

  it('lists the configured servers with their launch, filter and timeouts, and no secret', async () => {
    await view().getByText('2 servers configured, 1 enabled, 1 with a tool filter.').waitFor();
    const everything = card('everything');
    await everything.getByText('Enabled', { exact: true }).waitFor();
    await everything.getByText('Not started', { exact: true }).waitFor();
    expect(await everything.locator('.mcp-launch').textContent()).toContain(`${EVERYTHING} stdio`);
    await everything.getByText('EVERYTHING_API_TOKEN', { exact: true }).waitFor();
    await everything.getByText('not trigger-*', { exact: true }).waitFor();
    await everything.getByText('connect 20000 ms', { exact: true }).waitFor();
    const remote = card('remote');
    await remote.getByText('Disabled', { exact: true }).waitFor();
    await remote.getByText('streamable-http', { exact: true }).waitFor();
    await remote.getByText('Authorization, X-Team', { exact: true }).waitFor();
    await remote.getByText('connect 5000 ms, request 20000 ms', { exact: true }).waitFor();
    // A disabled server cannot be probed (mcp.probe refuses it): no button for it.
    expect(await remote.getByRole('button', { name: 'Probe remote' }).count()).toBe(0);
    const text = await view().innerText();
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    await page.screenshot({ path: join(SHOTS, 'mcp.png'), fullPage: true });
  });

  it('turns a server off and on with config.patch', async () => {
    const everything = card('everything');
    await everything.getByRole('button', { name: 'Disable everything' }).click();
    await everything.getByRole('button', { name: 'Enable everything' }).waitFor();
    expect(readConfig().mcp.servers.everything.enabled).toBe(false);
    // Applied in place: the running gateway's MCP runtime sees the server off at once.
    await page.getByText('everything is disabled. Applied to the running gateway without a restart.').waitFor();
    const status = await operator.request<StatusAnswer>('mcp.status', {});
    expect(status.servers.find((server) => server.name === 'everything')!.runtime.state).toBe('disabled');
    // The rest of the definition, secrets included, is kept as written.
    expect(readConfig().mcp.servers.everything.env).toEqual({ EVERYTHING_API_TOKEN: 'env-secret-value-123' });
    expect(readConfig().mcp.servers.remote.headers.Authorization).toBe('Bearer header-secret-value');
    await everything.getByText('Disabled', { exact: true }).waitFor();
    expect(await everything.getByRole('button', { name: 'Probe everything' }).count()).toBe(0);

    await everything.getByRole('button', { name: 'Enable everything' }).click();
    await everything.getByRole('button', { name: 'Disable everything' }).waitFor();
    expect(readConfig().mcp.servers.everything.enabled).toBe(true);
    await everything.getByText('Enabled', { exact: true }).waitFor();
  });

  it('probes the real stdio server and lists the tools it offers', async () => {
    const everything = card('everything');
    await everything.getByRole('button', { name: 'Probe everything' }).click();
    const tools = everything.getByRole('list', { name: 'Tools of everything' });
    await tools.waitFor({ timeout: 60_000 });
    const listed = await tools.locator('li').allTextContents();
    expect(listed).toContain('everything__echo');
    expect(listed.every((name) => name.startsWith('everything__') && !name.startsWith('everything__trigger-'))).toBe(
      true,
    );
    await everything.getByText(/^Connected: \d+ tools?/).waitFor();
    await page.screenshot({ path: join(SHOTS, 'mcp-probed.png'), fullPage: true });
  });

  it('shows the server running once a turn used it, and Restart servers stops it', async () => {
    fake.script(
      { text: 'Calling.', toolCalls: [{ name: 'everything__echo', arguments: { message: 'from the page test' } }] },
      { text: 'Done.' },
    );
    const { runId } = await operator.request<{ runId: string }>('chat.send', {
      idempotencyKey: 'mcp-page-turn',
      sessionKey: 'agent:main:main',
      message: 'echo something',
    });
    await operator.request('agent.wait', { runId, timeoutMs: 60_000 });
    const status = await operator.request<StatusAnswer>('mcp.status', {});
    const live = status.servers.find((server) => server.name === 'everything')!.runtime;
    expect(live.state).toBe('connected');

    await view().getByRole('button', { name: 'Refresh' }).click();
    const everything = card('everything');
    await everything.getByText('Running', { exact: true }).first().waitFor();
    await everything.getByText(`${live.toolCount} tools`, { exact: true }).waitFor();

    await view().getByRole('button', { name: 'Restart servers' }).click();
    await page.getByText('1 running MCP server stopped; each starts again on next use.').waitFor();
    await everything.getByText('Not started', { exact: true }).waitFor();
    const after = await operator.request<StatusAnswer>('mcp.status', {});
    expect(after.servers.find((server) => server.name === 'everything')!.runtime.state).toBe('idle');

    // A phone-sized screen: the cards stack, long launch lines wrap, nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 800 });
    await view().getByRole('button', { name: 'Probe everything' }).click();
    await everything.getByRole('list', { name: 'Tools of everything' }).waitFor({ timeout: 60_000 });
    const overflow = await page.evaluate(() => {
      const main = document.querySelector('main')!;
      return Math.max(document.documentElement.scrollWidth - window.innerWidth, main.scrollWidth - main.clientWidth);
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'mcp-narrow.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
