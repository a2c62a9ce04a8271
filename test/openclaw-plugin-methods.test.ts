/**
 * OpenClaw's plugin and config detail methods against a real gateway: plugins.inspect over
 * claw's plugin records, plugins.setEnabled through the config write path,
 * config.schema.lookup over the whole config schema, and the refusals for what claw does not
 * do over the wire (credential fields, installing and removing plugins).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway, refusal } from './gateway-helpers.js';
import { REPO } from './helpers.js';

let gw: RunningGateway;
let admin: GatewayClient;
let reader: GatewayClient;

beforeAll(async () => {
  gw = await startGateway({ plugins: [join(REPO, 'plugins', 'example-clock')] });
  admin = await client(gw.url);
  reader = await client(gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await admin?.close();
  await gw?.stop();
});

describe('plugins.inspect', () => {
  it('describes a plugin from its manifest in OpenClaw’s shape', async () => {
    const inspected: any = await reader.request('plugins.inspect', { pluginId: 'example-clock' });
    const declared = {
      channels: [],
      providers: [],
      tools: ['clock_now'],
      contracts: [],
      hooks: [],
      mcpServers: [],
      cliCommands: [],
      cliBackends: [],
      skills: [],
      dangerousConfigFlags: [],
    };
    expect(inspected).toEqual({
      ok: true,
      plugin: {
        id: 'example-clock',
        name: 'Example: clock',
        version: '0.1.0',
        description: expect.stringContaining('current date and time'),
        origin: 'config',
        installed: true,
        enabled: true,
        // Loaded on first use: its manifest already names the tool.
        status: 'ready',
        reason: 'listed in plugins.load.paths',
      },
      source: { kind: 'path', spec: join(REPO, 'plugins', 'example-clock') },
      declared,
      grants: { hooks: { allowPromptInjection: { effective: true }, allowConversationAccess: { effective: true } } },
      components: {
        mapped: [],
        skills: [],
        mcpServers: [],
        commands: [],
        hooks: [],
        lspServers: [],
        unavailable: { capabilities: [], mcpServers: [], lspServers: [] },
      },
      overview: {},
      credentials: [],
      reviewToken: createHash('sha256').update(JSON.stringify(declared)).digest('hex'),
      decisions: [],
    });
  });

  it('refuses a plugin that is not there', async () => {
    expect(await refusal(reader.request('plugins.inspect', { pluginId: 'nope' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'Plugin "nope" not found.',
    });
  });
});

describe('plugins.setEnabled', () => {
  it('turns a plugin off and on in the config file (admin only)', async () => {
    expect(
      (await refusal(reader.request('plugins.setEnabled', { pluginId: 'example-clock', enabled: false }))).code,
    ).toBe('FORBIDDEN');
    const off: any = await admin.request('plugins.setEnabled', { pluginId: 'example-clock', enabled: false });
    expect(off).toMatchObject({
      ok: true,
      restartRequired: expect.any(Boolean),
      runtime: { reload: expect.any(Object), message: expect.any(String), hash: expect.any(String) },
      plugin: { id: 'example-clock', enabled: false },
      pluginId: 'example-clock',
    });
    const config = JSON.parse(readFileSync(join(gw.stateDir, 'openclaw.json'), 'utf8'));
    expect(config.plugins.entries['example-clock'].enabled).toBe(false);

    await admin.request('plugins.setEnabled', { pluginId: 'example-clock', enabled: true });
    const after = JSON.parse(readFileSync(join(gw.stateDir, 'openclaw.json'), 'utf8'));
    expect(after.plugins.entries['example-clock'].enabled).toBe(true);

    expect(await refusal(admin.request('plugins.setEnabled', { pluginId: 'nope', enabled: true }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'no plugin "nope" is installed',
    });
  });
});

describe('what claw does not do over the wire', () => {
  it('credential fields, install and uninstall are refused with the reason', async () => {
    expect(
      await refusal(admin.request('plugins.credentials.inspect', { pluginId: 'example-clock', path: ['apiKey'] })),
    ).toEqual({ code: 'INVALID_REQUEST', message: 'This installed plugin does not declare that credential field.' });
    expect(await refusal(admin.request('plugins.install', { source: 'clawhub', spec: 'x' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw cannot install plugins over the gateway; run `claw plugins install <path>` on the gateway host',
    });
    expect(await refusal(admin.request('plugins.uninstall', { pluginId: 'example-clock' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw cannot uninstall plugins over the gateway; run `claw plugins uninstall <id>` on the gateway host',
    });
  });
});

describe('config.schema.lookup', () => {
  it('answers one path with its schema, reload kind and children', async () => {
    const gateway: any = await reader.request('config.schema.lookup', { path: 'gateway' });
    expect(gateway).toMatchObject({ path: 'gateway', schema: { type: 'object' }, reloadKind: expect.any(String) });
    const port = gateway.children.find((entry: any) => entry.key === 'port');
    expect(port).toEqual({
      key: 'port',
      path: 'gateway.port',
      type: expect.anything(),
      required: false,
      hasChildren: false,
      reloadKind: 'restart',
    });

    const timezone: any = await reader.request('config.schema.lookup', {
      path: 'plugins.entries.example-clock.config.timezone',
    });
    expect(timezone).toEqual({
      path: 'plugins.entries.example-clock.config.timezone',
      schema: { type: 'string', minLength: 1, default: 'UTC', description: expect.any(String) },
      reloadKind: expect.any(String),
      children: [],
    });

    const root: any = await reader.request('config.schema.lookup', { path: '.' });
    expect(root.path).toBe('.');
    expect(root.children.map((entry: any) => entry.key)).toEqual(expect.arrayContaining(['gateway', 'plugins']));
  });

  it('refuses a path the schema does not have', async () => {
    expect(await refusal(reader.request('config.schema.lookup', { path: 'gateway.nope.deeper' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'config schema path not found',
    });
  });
});
