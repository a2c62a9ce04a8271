/**
 * OpenClaw methods for features claw lacks (self-update runs, the secret store, themes,
 * browser plugin bundles, the plugin catalogue, link previews, pull-request tracking,
 * suspension, the host editor), against a real gateway: reads answer OpenClaw's empty
 * shapes, changes fail with UNAVAILABLE naming what is missing, and OpenClaw's scopes hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway, refusal } from './gateway-helpers.js';

let gw: RunningGateway;
let admin: GatewayClient;
let reader: GatewayClient;

beforeAll(async () => {
  gw = await startGateway();
  admin = await client(gw.url);
  reader = await client(gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await admin?.close();
  await gw?.stop();
});

describe('features claw lacks answer OpenClaw’s empty shapes', () => {
  it('update: no runs; a run or hold is refused; no failed attempt to report', async () => {
    expect(await admin.request('update.runs.get', { runId: 'run-1' })).toEqual({ run: null });
    expect(await refusal(admin.request('update.run', {}))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw’s gateway does not update itself; run `claw update` on its host',
    });
    expect(await refusal(admin.request('update.hold', {}))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw’s gateway has no update campaign to hold',
    });
    expect(await refusal(admin.request('update.report', { attemptId: 'a1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'This failed update attempt is stale or unavailable.',
    });
    expect(await refusal(reader.request('update.runs.get', { runId: 'run-1' }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });

  it('secrets: an empty store; writes, reloads and resolves are refused', async () => {
    expect(await admin.request('secrets.store.list', {})).toEqual({ entries: [] });
    for (const [method, message] of [
      ['secrets.store.set', 'claw has no secret store; put keys in the environment or its config'],
      ['secrets.store.delete', 'claw has no secret store'],
      ['secrets.reload', 'claw has no secret references to reload; keys are read when used'],
      ['secrets.resolve', 'claw has no secret references to resolve'],
    ] as const) {
      expect(await refusal(admin.request(method, { name: 'OPENAI_API_KEY', value: 'sk-x' }))).toEqual({
        code: 'UNAVAILABLE',
        message,
      });
    }
    expect((await refusal(reader.request('secrets.store.list', {}))).code).toBe('FORBIDDEN');
  });

  it('themes: the one default theme, selected gateway-wide; choosing another is refused', async () => {
    const theme = { id: 'claw', name: 'Claw', description: expect.any(String) };
    const current = { id: 'claw', mode: 'system', scope: 'gateway', overrides: {} };
    expect(await reader.request('themes.list', {})).toEqual({ current, theme, themes: [theme] });
    expect(await reader.request('themes.get', { id: 'claw' })).toEqual({ current, theme });
    expect(await refusal(reader.request('themes.get', { id: 'knot' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'Theme knot is unavailable. List themes to choose an installed theme.',
    });
    expect(await refusal(admin.request('themes.set', { id: 'knot' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no theme catalogue or stored appearance preferences',
    });
    expect((await refusal(reader.request('themes.set', { id: 'claw' }))).code).toBe('FORBIDDEN');
  });

  it('plugin UI: no bundles, tabs or surfaces; uiDescriptors lists the methods the gateway answers', async () => {
    const catalog: any = await reader.request('plugins.controlUi.list', {});
    expect(catalog).toEqual({ revision: expect.stringMatching(/^[0-9a-f]{64}$/), plugins: [], diagnostics: [] });
    expect(await refusal(admin.request('plugins.controlUi.reload', { pluginId: 'x' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw’s plugins contribute no Control UI bundles',
    });
    expect((await refusal(reader.request('plugins.controlUi.report', { pluginId: 'x', revision: 'r' }))).code).toBe(
      'UNAVAILABLE',
    );

    const descriptors: any = await reader.request('plugins.uiDescriptors', {});
    expect(descriptors).toEqual({
      ok: true,
      generation: 0,
      descriptors: [],
      methods: expect.arrayContaining(['health', 'plugins.list', 'plugins.uiDescriptors']),
      controlUiTabs: [],
      controlUiWidgetKinds: [],
      controlUiLinkReaders: [],
      pluginSurfaceUrls: {},
    });

    expect(await refusal(reader.request('plugin.surface.refresh', {}))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'surface required',
    });
    expect(await refusal(reader.request('plugin.surface.refresh', { surface: 'canvas' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'canvas plugin surface unavailable: claw’s plugins serve no UI surfaces',
    });
  });

  it('plugin catalogue: nothing to browse (with the reason), no entry to get', async () => {
    expect(await reader.request('plugins.catalog.browse', { query: 'memory' })).toEqual({
      items: [],
      remoteError: expect.stringContaining('claw has no plugin catalogue'),
    });
    expect(await refusal(reader.request('plugins.catalog.get', { id: 'clawhub:memory' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no plugin catalogue; install plugins from a folder',
    });
  });

  it('Control UI lookups: no link previews or pull-request tracking', async () => {
    expect(await reader.request('controlUi.linkPreview', { url: 'https://example.com/' })).toEqual({});
    expect(await refusal(reader.request('controlUi.linkPreview', { url: 'file:///etc/passwd' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'invalid controlUi.linkPreview params',
    });
    expect(
      await reader.request('controlUi.sessionPullRequests.subscribe', { sessionKeys: ['agent:main:main'] }),
    ).toEqual({ subscribed: false });
    expect(
      await refusal(reader.request('controlUi.sessionPullRequests.checks', { sessionKey: 'agent:main:main' })),
    ).toEqual({ code: 'UNAVAILABLE', message: 'claw tracks no pull requests or CI checks for sessions' });
  });

  it('suspension and the host editor are refused, admin only', async () => {
    expect(await refusal(admin.request('gateway.suspend.prepare', {}))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw’s gateway cannot be suspended; stop it with `claw gateway stop`',
    });
    expect((await refusal(admin.request('gateway.suspend.resume', {}))).code).toBe('UNAVAILABLE');
    expect(await refusal(admin.request('config.openFile', {}))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw does not open editors on the gateway host; `claw config path` names the file to edit',
    });
    expect(await refusal(reader.request('gateway.suspend.prepare', {}))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });
});
