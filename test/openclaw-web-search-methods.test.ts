/**
 * OpenClaw's webSearch.status and webSearch.test against a real gateway with the web-search
 * plugin and its SearXNG and DuckDuckGo providers; SearXNG's JSON API is faked on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway, refusal } from './gateway-helpers.js';
import { REPO } from './helpers.js';

let server: Server;
let gw: RunningGateway;
let admin: GatewayClient;
let reader: GatewayClient;
const queries: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    queries.push(url.searchParams.get('q') ?? '');
    if (url.searchParams.get('q') === 'explode') return void res.writeHead(500).end('down');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        query: url.searchParams.get('q'),
        results: [{ title: 'Claw docs', url: 'https://claw.example/docs', content: 'How claw works', engine: 'x' }],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw = await startGateway({
    plugins: ['web-search', 'searxng', 'duckduckgo'].map((id) => join(REPO, 'plugins', id)),
    config: {
      agents: { defaults: { model: 'openai/gpt-4.1' } },
      plugins: { entries: { searxng: { config: { webSearch: { baseUrl: base } } } } },
    },
  });
  admin = await client(gw.url);
  reader = await client(gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await admin?.close();
  await gw?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

describe('webSearch.status', () => {
  it('names the provider web_search uses and every installed provider', async () => {
    const status: any = await reader.request('webSearch.status', {});
    expect(status).toEqual({
      enabled: true,
      provider: 'searxng',
      agentId: 'main',
      model: { provider: 'openai', id: 'gpt-4.1', runtime: 'claw' },
      route: { kind: 'managed', provider: 'searxng', label: expect.any(String), testable: true },
      testProvider: { id: 'searxng', label: expect.any(String) },
      providers: expect.any(Array),
    });
    const byId = Object.fromEntries(status.providers.map((provider: any) => [provider.id, provider]));
    expect(byId.searxng).toEqual({
      id: 'searxng',
      pluginId: 'searxng',
      label: expect.any(String),
      hint: '',
      configured: true,
      installed: true,
      available: true,
      requiresCredential: true,
      credentialSource: 'config',
      configPath: ['plugins.entries.searxng.config.webSearch'],
    });
    expect(byId.duckduckgo).toMatchObject({ requiresCredential: false, credentialSource: 'none', configured: false });
    expect(await refusal(reader.request('webSearch.status', { modelProvider: 'openai' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'modelProvider and modelId must be supplied together.',
    });
  });
});

describe('webSearch.test', () => {
  it('runs one live search with the chosen provider (admin only)', async () => {
    const answer: any = await admin.request('webSearch.test', { query: 'claw gateway' });
    expect(answer).toEqual({
      provider: 'searxng',
      latencyMs: expect.any(Number),
      status: 'ok',
      results: [{ title: 'Claw docs', url: 'https://claw.example/docs', snippet: 'How claw works' }],
      cached: false,
    });
    expect(queries).toContain('claw gateway');
    expect((await refusal(reader.request('webSearch.test', { query: 'x' }))).code).toBe('FORBIDDEN');
  });

  it('reports a failing provider as status error, and refuses an empty query', async () => {
    const answer: any = await admin.request('webSearch.test', { query: 'explode' });
    expect(answer).toMatchObject({ provider: 'searxng', status: 'error', error: expect.any(String) });
    expect((await refusal(admin.request('webSearch.test', { query: '  ' }))).code).toBe('INVALID_REQUEST');
  });
});
