import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createKernel, silentLogger, type KernelOptions, type PluginsConfig } from '../kernel/index.js';
import { resolveEnablement } from '../host/enablement.js';
import { clawKernelParts } from '../host/kernel-options.js';
import { createTestKernel } from '../sdk/testing.js';
import { findRoute } from '../plugins/gateway/http.js';
import { EMPTY_SCHEMA, tempDir, writePlugin } from './helpers.js';

type Marks = Record<string, string[]>;
const marks = () => ((globalThis as { __clawMarks?: Marks }).__clawMarks ??= {});

/** Module source that records its evaluation under `key`, then registers what `body` says. */
function tracked(key: string, body = ''): string {
  return `
    const marks = (globalThis.__clawMarks ??= {});
    (marks[${JSON.stringify(key)}] ??= []).push('evaluated');
    export default { register(api) { ${body} } };`;
}

const tool = (name: string) =>
  `api.registerTool({ name: '${name}', description: '${name}', parameters: { type: 'object' }, execute: () => ({ content: [{ type: 'text', text: '${name}' }] }) });`;

describe('enablement', () => {
  const on = (
    id: string,
    origin: Parameters<typeof resolveEnablement>[1],
    plugins: PluginsConfig,
    byDefault = false,
    slots: never[] = [],
  ) => resolveEnablement(id, origin, slots, byDefault, plugins);

  it('follows the precedence: global switch, deny, allow, entries, origin default', () => {
    expect(on('a', 'global', { enabled: false })).toEqual({
      enabled: false,
      reason: 'all plugins are off (plugins.enabled is false)',
    });
    expect(on('a', 'global', { deny: ['a'], allow: ['a'] })).toEqual({
      enabled: false,
      reason: 'listed in plugins.deny',
    });
    expect(on('a', 'global', { allow: ['b'] })).toEqual({ enabled: false, reason: 'not listed in plugins.allow' });
    expect(on('a', 'global', { allow: ['a'], entries: { a: { enabled: false } } })).toEqual({
      enabled: false,
      reason: 'plugins.entries.a.enabled is false',
    });
    expect(on('a', 'bundled', { entries: { a: { enabled: true } } }).enabled).toBe(true);
    expect(on('a', 'bundled', {})).toEqual({ enabled: false, reason: 'bundled, off by default' });
    expect(on('a', 'bundled', {}, true)).toEqual({ enabled: true, reason: 'bundled, on by default' });
    expect(on('a', 'workspace', {})).toEqual({ enabled: false, reason: 'workspace plugin, off until enabled' });
    expect(on('a', 'global', {})).toEqual({ enabled: true, reason: 'installed' });
    expect(on('a', 'config', {})).toEqual({ enabled: true, reason: 'listed in plugins.load.paths' });
  });

  it('gives an exclusive slot to exactly one plugin, with a default holder and "none"', () => {
    const slot = ['memory'] as never[];
    expect(resolveEnablement('memory-sqlite', 'bundled', slot, false, {})).toEqual({
      enabled: true,
      reason: 'holds the memory slot',
    });
    expect(
      resolveEnablement('memory-qmd', 'bundled', slot, false, { entries: { 'memory-qmd': { enabled: true } } }),
    ).toEqual({
      enabled: false,
      reason: 'the memory slot is held by "memory-sqlite"',
    });
    expect(resolveEnablement('memory-qmd', 'bundled', slot, false, { slots: { memory: 'memory-qmd' } }).enabled).toBe(
      true,
    );
    expect(resolveEnablement('memory-sqlite', 'bundled', slot, false, { slots: { memory: 'none' } })).toEqual({
      enabled: false,
      reason: 'the memory slot is set to "none"',
    });
  });
});

describe('manifest requires', () => {
  const provider = `export default { register(api) { api.registerService({ id: 'store', api: {} }); } };`;
  const setup = (key: string, requires: Record<string, string[]>) => {
    const root = tempDir();
    const needy = writePlugin(join(root, 'needy'), {
      manifest: { id: 'needy', configSchema: EMPTY_SCHEMA, tools: ['needy_tool'], requires },
      code: tracked(key, tool('needy_tool')),
    });
    const store = writePlugin(join(root, 'store'), {
      manifest: { id: 'store', configSchema: EMPTY_SCHEMA, services: ['store'] },
      code: provider,
    });
    return [needy, store];
  };

  it('a plugin whose required service is off is not loaded, and the diagnostic names both plugins', async () => {
    const kernel = await createTestKernel({
      plugins: setup('requires-off', { services: ['store'] }),
      config: { plugins: { entries: { store: { enabled: false } } } },
    });
    try {
      expect(await kernel.capabilities.find('tool', 'needy_tool')).toBeUndefined();
      expect(marks()['requires-off']).toBeUndefined();
      const error = /requires the service "store", which is unavailable: plugin "store" provides it but is off/;
      expect(kernel.plugins.get('needy')).toMatchObject({ status: 'failed', error: expect.stringMatching(error) });
      expect(kernel.plugins.diagnostics).toContainEqual(
        expect.objectContaining({
          level: 'error',
          pluginId: 'needy',
          message: expect.stringMatching(/^plugin "needy" requires/),
        }),
      );
    } finally {
      await kernel.dispose();
    }
  });

  it('a plugin whose requirements are met runs (its providers still load only when used)', async () => {
    const met = await createTestKernel({ plugins: setup('requires-met', { services: ['store'] }) });
    try {
      expect(await met.capabilities.find('tool', 'needy_tool')).toMatchObject({ name: 'needy_tool' });
      expect(marks()['requires-met']).toEqual(['evaluated']);
      expect(met.plugins.get('store')!.status).toBe('ready');
    } finally {
      await met.dispose();
    }
  });

  it("requiresPlugins (OpenClaw's): a missing plugin is warned about by name, and the plugin still loads", async () => {
    const root = tempDir();
    const companion = writePlugin(join(root, 'companion'), {
      manifest: { id: 'companion', configSchema: EMPTY_SCHEMA },
      code: tracked('companion'),
    });
    const addon = writePlugin(join(root, 'addon'), {
      manifest: {
        id: 'addon',
        configSchema: EMPTY_SCHEMA,
        tools: ['addon_tool'],
        requiresPlugins: ['companion', 'base-engine'],
      },
      code: tracked('requires-plugins', tool('addon_tool')),
    });
    const logged: string[] = [];
    const kernel = await createTestKernel({
      plugins: [addon, companion],
      logger: { ...silentLogger, warn: (message) => void logged.push(message), child: () => silentLogger },
    });
    try {
      const warning = 'plugin "addon" requires plugin "base-engine", which is not installed';
      expect(kernel.plugins.diagnostics).toEqual([{ level: 'warning', pluginId: 'addon', message: warning }]);
      expect(logged).toContain(warning);
      expect(await kernel.capabilities.find('tool', 'addon_tool')).toMatchObject({ name: 'addon_tool' });
      expect(kernel.plugins.get('addon')!.status).toBe('active');
    } finally {
      await kernel.dispose();
    }
    // A plugin that is off is not warned about: it does nothing, with or without its companions.
    const off = await createTestKernel({
      plugins: [addon],
      config: { plugins: { entries: { addon: { enabled: false } } } },
    });
    try {
      expect(off.plugins.diagnostics).toEqual([]);
    } finally {
      await off.dispose();
    }
  });

  it('a required slot held by nobody stops the plugin', async () => {
    const kernel = await createTestKernel({
      plugins: setup('requires-slot', { slots: ['memory'] }),
      config: { plugins: { slots: { memory: 'none' } } },
    });
    try {
      expect(await kernel.capabilities.find('tool', 'needy_tool')).toBeUndefined();
      expect(kernel.plugins.get('needy')!.error).toMatch(
        /requires the memory slot, which is unavailable: no plugin provides it/,
      );
    } finally {
      await kernel.dispose();
    }
  });

  it('a service the host offers itself meets requires with no plugin behind it, and plugins.allow cannot turn it off', async () => {
    const root = tempDir();
    const needy = writePlugin(join(root, 'needy'), {
      manifest: {
        id: 'needy',
        configSchema: EMPTY_SCHEMA,
        tools: ['needy_tool'],
        requires: { services: ['host-clock'] },
      },
      code: tracked('requires-host', tool('needy_tool')),
    });
    const boot = (services?: KernelOptions['services']) =>
      createKernel({
        ...clawKernelParts({
          pluginDirs: [needy],
          roots: { config: false, workspace: false, bundled: false, global: false },
        }),
        env: {},
        stateDir: join(root, 'state'),
        logger: silentLogger,
        config: { plugins: { allow: ['needy'] } },
        services,
      });
    const hosted = await boot(({ paths }) => ({ 'host-clock': { stateDir: paths.stateDir } }));
    expect(await hosted.capabilities.find('tool', 'needy_tool')).toMatchObject({ name: 'needy_tool' });
    expect(await hosted.capabilities.find('service', 'host-clock')).toMatchObject({
      api: { stateDir: join(root, 'state') },
    });
    const bare = await boot();
    expect(await bare.capabilities.find('tool', 'needy_tool')).toBeUndefined();
    expect(bare.plugins.get('needy')!.error).toMatch(
      /requires the service "host-clock", which is unavailable: no plugin provides it/,
    );
    await Promise.all([hosted.stop(), bare.stop()]);
  });
});

describe('discovery', () => {
  it('searches load paths, workspace, bundled, then global; the first id wins and the clash is reported', async () => {
    const base = tempDir();
    const stateDir = join(base, 'state');
    const workspace = join(base, 'ws');
    const roots = {
      config: join(base, 'linked'),
      workspace: join(workspace, '.openclaw', 'extensions'),
      bundled: join(base, 'bundled'),
      global: join(stateDir, 'extensions'),
    };
    for (const [origin, root] of Object.entries(roots)) {
      writePlugin(join(root, 'dup'), {
        manifest: { id: 'dup', configSchema: EMPTY_SCHEMA, description: origin },
        code: tracked(`dup-${origin}`),
      });
      writePlugin(join(root, `only-${origin}`), {
        manifest: { id: `only-${origin}`, configSchema: EMPTY_SCHEMA },
        code: tracked('x'),
      });
    }
    const kernel = await createKernel({
      ...clawKernelParts({ bundledDir: roots.bundled }),
      env: {},
      stateDir,
      logger: silentLogger,
      config: {
        agents: { defaults: { workspace } },
        plugins: { load: { paths: [join(roots.config, 'dup'), join(roots.config, 'only-config')] } },
      },
    });
    const list = kernel.plugins.list().map((record) => [record.id, record.origin, record.status]);
    expect(list).toEqual([
      ['dup', 'config', 'ready'],
      ['only-config', 'config', 'ready'],
      ['only-workspace', 'workspace', 'disabled'],
      ['only-bundled', 'bundled', 'disabled'],
      ['only-global', 'global', 'ready'],
    ]);
    expect(kernel.plugins.get('dup')!.description).toBe('config');
    expect(kernel.plugins.diagnostics.map((d) => d.message)).toEqual([
      `duplicate plugin id "dup": ${join(roots.workspace, 'dup')} (workspace) is ignored; ${join(roots.config, 'dup')} (config) takes precedence`,
      `duplicate plugin id "dup": ${join(roots.bundled, 'dup')} (bundled) is ignored; ${join(roots.config, 'dup')} (config) takes precedence`,
      `duplicate plugin id "dup": ${join(roots.global, 'dup')} (global) is ignored; ${join(roots.config, 'dup')} (config) takes precedence`,
    ]);
  });

  it('boots with zero plugins', async () => {
    const kernel = await createTestKernel();
    expect(kernel.plugins.list()).toEqual([]);
    expect(kernel.issues()).toEqual([]);
    expect(await kernel.capabilities.find('tool', 'anything')).toBeUndefined();
    await expect(kernel.capabilities.get('tool', 'anything')).rejects.toThrow('no plugin provides tool "anything"');
    expect(await kernel.capabilities.slot('memory')).toBeUndefined();
    await kernel.hooks.runVoid('message_received', { channel: 'c', from: 'u', content: 'x', timestamp: 0 });
    await kernel.start();
    await kernel.dispose();
  });
});

describe('lazy activation', () => {
  it('never evaluates the module of a plugin whose capabilities are not used', async () => {
    const root = tempDir();
    writePlugin(join(root, 'used'), {
      manifest: { id: 'used', configSchema: EMPTY_SCHEMA, tools: ['used_tool'] },
      code: tracked('lazy-used', tool('used_tool')),
    });
    writePlugin(join(root, 'unused'), {
      manifest: { id: 'unused', configSchema: EMPTY_SCHEMA, tools: ['unused_tool'] },
      code: tracked('lazy-unused', tool('unused_tool')),
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'used'), join(root, 'unused')] });
    await kernel.start();
    expect(kernel.capabilities.list('tool').map((info) => [info.name, info.loaded])).toEqual([
      ['unused_tool', false],
      ['used_tool', false],
    ]);
    expect(marks()['lazy-used']).toBeUndefined();
    const found = await kernel.capabilities.get('tool', 'used_tool');
    await kernel.capabilities.get('tool', 'used_tool');
    expect(found.name).toBe('used_tool');
    expect(marks()['lazy-used']).toEqual(['evaluated']);
    expect(marks()['lazy-unused']).toBeUndefined();
    expect(kernel.plugins.get('used')!.status).toBe('active');
    expect(kernel.plugins.get('unused')!.status).toBe('ready');
    await kernel.dispose();
    expect(marks()['lazy-unused']).toBeUndefined();
  });

  it('loads hook plugins when their hook first runs; the first message-path hook also loads sync-hook plugins', async () => {
    const root = tempDir();
    writePlugin(join(root, 'sender'), {
      manifest: { id: 'sender', configSchema: EMPTY_SCHEMA, hooks: ['message_sending'] },
      code: tracked('lazy-sender', `api.on('message_sending', (e) => ({ content: e.content + ' [signed]' }));`),
    });
    writePlugin(join(root, 'writer'), {
      manifest: { id: 'writer', configSchema: EMPTY_SCHEMA, hooks: ['before_message_write'] },
      code: tracked('lazy-writer', `api.on('before_message_write', () => ({ block: true }));`),
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'sender'), join(root, 'writer')] });
    expect(marks()['lazy-sender']).toBeUndefined();
    expect(marks()['lazy-writer']).toBeUndefined();
    await kernel.hooks.runVoid('gateway_start', { port: 1, host: 'h' });
    expect(marks()['lazy-sender']).toBeUndefined();
    const result = await kernel.hooks.runModifying('message_sending', { to: 'u', content: 'hello' });
    expect(result).toEqual({ content: 'hello [signed]' });
    expect(marks()['lazy-writer']).toEqual(['evaluated']);
    expect(kernel.hooks.runSync('before_message_write', { message: { role: 'assistant', content: 'x' } })).toEqual({
      block: true,
    });
    await kernel.dispose();
  });

  it('lists declared gateway methods before loading, and validates params once loaded', async () => {
    const root = tempDir();
    writePlugin(join(root, 'rpc'), {
      manifest: { id: 'rpc', configSchema: EMPTY_SCHEMA, gatewayMethods: ['demo.echo'] },
      code: tracked(
        'lazy-rpc',
        `api.registerGatewayMethod('demo.echo', {
        params: { type: 'object', required: ['text'], properties: { text: { type: 'string' } }, additionalProperties: false },
        scope: 'operator.read',
        handler: (params) => ({ echo: params.text }),
      });`,
      ),
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'rpc')] });
    expect(kernel.protocol.methodNames()).toEqual(['demo.echo']);
    expect(kernel.protocol.method('demo.echo')).toMatchObject({ owner: 'rpc', registered: false });
    expect(marks()['lazy-rpc']).toBeUndefined();
    const method = await kernel.capabilities.get('gatewayMethod', 'demo.echo');
    expect(kernel.protocol.method('demo.echo')).toMatchObject({ registered: true, scope: 'operator.read' });
    expect(kernel.protocol.validateParams('demo.echo', { text: 'hi' })).toEqual({ ok: true, value: { text: 'hi' } });
    expect(kernel.protocol.validateParams('demo.echo', { txt: 'hi' })).toEqual({
      ok: false,
      issues: [
        { path: 'params.text', message: 'is required' },
        { path: 'params.txt', message: 'is not a known key' },
      ],
    });
    expect(await method.handler({ text: 'hi' }, {})).toEqual({ echo: 'hi' });
    await kernel.dispose();
  });

  it('routes HTTP paths to the plugin that declared the prefix', async () => {
    const root = tempDir();
    writePlugin(join(root, 'web'), {
      manifest: { id: 'web', configSchema: EMPTY_SCHEMA, httpRoutes: ['/hooks'] },
      code: tracked(
        'lazy-web',
        `api.registerHttpRoute({ method: 'POST', path: '/hooks/github', handler: (req, res) => res.end('ok') });`,
      ),
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'web')] });
    expect([...kernel.capabilities.routePrefixes()]).toEqual([['/hooks', 'web']]);
    expect(await findRoute(kernel.capabilities, 'POST', '/hooksx')).toBeUndefined();
    expect(marks()['lazy-web']).toBeUndefined();
    const found = await findRoute(kernel.capabilities, 'POST', '/hooks/github');
    expect(found && `${found.pluginId}: ${found.route.method} ${found.route.path}`).toBe('web: POST /hooks/github');
    expect(await findRoute(kernel.capabilities, 'GET', '/hooks/github')).toBeUndefined();
    const routes = await kernel.capabilities.routes('web');
    expect(routes.map((route) => `${route.method} ${route.path}`)).toEqual(['POST /hooks/github']);
    await kernel.dispose();
  });
});

describe('failure isolation', () => {
  it('marks a plugin failed when its module throws on load, and keeps everything else working', async () => {
    const root = tempDir();
    writePlugin(join(root, 'explodes'), {
      manifest: { id: 'explodes', configSchema: EMPTY_SCHEMA, tools: ['boom'] },
      code: `throw new Error('kaboom at import');`,
    });
    writePlugin(join(root, 'works'), {
      manifest: { id: 'works', configSchema: EMPTY_SCHEMA, tools: ['fine'] },
      code: tracked('w', tool('fine')),
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'explodes'), join(root, 'works')] });
    await expect(kernel.capabilities.get('tool', 'boom')).rejects.toThrow(
      'tool "boom" is unavailable: plugin "explodes" failed: cannot load index.js: kaboom at import',
    );
    expect(kernel.plugins.get('explodes')).toMatchObject({
      status: 'failed',
      error: 'cannot load index.js: kaboom at import',
    });
    expect((await kernel.capabilities.get('tool', 'fine')).name).toBe('fine');
    expect(kernel.logs.some((log) => log.level === 'error' && log.plugin === 'explodes')).toBe(true);
    await kernel.dispose();
  });

  it('rolls back everything a plugin registered before register() threw', async () => {
    const root = tempDir();
    writePlugin(join(root, 'half'), {
      manifest: {
        id: 'half',
        configSchema: EMPTY_SCHEMA,
        tools: ['half_tool'],
        hooks: ['agent_end'],
        gatewayMethods: ['half.m'],
      },
      code: tracked(
        'half',
        `${tool('half_tool')}
        api.on('agent_end', () => {});
        api.registerGatewayMethod('half.m', { handler: () => 1 });
        throw new Error('changed my mind');`,
      ),
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'half')] });
    await expect(kernel.plugins.activate('half')).rejects.toThrow(
      'plugin "half" failed: register() threw: changed my mind',
    );
    expect(kernel.hooks.has('agent_end')).toBe(false);
    expect(kernel.protocol.method('half.m')).toMatchObject({ registered: false });
    await expect(kernel.capabilities.get('tool', 'half_tool')).rejects.toThrow(/register\(\) threw: changed my mind/);
    await kernel.dispose();
  });

  it('refuses registrations the manifest did not declare, and notes declarations left unregistered', async () => {
    const root = tempDir();
    writePlugin(join(root, 'sneaky'), {
      manifest: { id: 'sneaky', configSchema: EMPTY_SCHEMA, tools: ['a'] },
      code: tracked('sneaky', `${tool('a')} ${tool('b')}`),
    });
    writePlugin(join(root, 'lazybones'), {
      manifest: { id: 'lazybones', configSchema: EMPTY_SCHEMA, tools: ['promised'], hooks: ['agent_end'] },
      code: tracked('lazybones', `api.on('agent_end', () => {});`),
    });
    writePlugin(join(root, 'hooky'), {
      manifest: { id: 'hooky', configSchema: EMPTY_SCHEMA, tools: ['t'] },
      code: tracked('hooky', `${tool('t')} api.on('agent_end', () => {});`),
    });
    const kernel = await createTestKernel({
      plugins: [join(root, 'sneaky'), join(root, 'lazybones'), join(root, 'hooky')],
    });
    await kernel.plugins.activateAll();
    expect(kernel.plugins.get('sneaky')!.error).toBe(
      'register() threw: tool "b" is not declared in the manifest "tools" list',
    );
    expect(kernel.plugins.get('hooky')!.error).toBe(
      'register() threw: hook "agent_end" is not declared in the manifest "hooks" list',
    );
    expect(kernel.plugins.get('lazybones')).toMatchObject({
      status: 'active',
      warnings: ['declares tool "promised" but did not register it'],
    });
    await expect(kernel.capabilities.get('tool', 'promised')).rejects.toThrow(
      'plugin "lazybones" declares tool "promised" but did not register it',
    );
    await kernel.dispose();
  });

  it('fails the second of two plugins that declare the same capability', async () => {
    const root = tempDir();
    writePlugin(join(root, 'first'), {
      manifest: { id: 'first', configSchema: EMPTY_SCHEMA, channels: ['chat'] },
      code: tracked('f'),
    });
    writePlugin(join(root, 'second'), {
      manifest: { id: 'second', configSchema: EMPTY_SCHEMA, channels: ['chat'] },
      code: tracked('s'),
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'first'), join(root, 'second')] });
    expect(kernel.plugins.get('second')).toMatchObject({
      status: 'failed',
      error: 'channel "chat" is already provided by plugin "first"',
    });
    await kernel.dispose();
  });

  it('rejects modules without a plugin export, or with a different id', async () => {
    const root = tempDir();
    writePlugin(join(root, 'noexport'), {
      manifest: { id: 'noexport', configSchema: EMPTY_SCHEMA },
      code: 'export const x = 1;',
    });
    writePlugin(join(root, 'wrongid'), {
      manifest: { id: 'wrongid', configSchema: EMPTY_SCHEMA },
      code: 'export default { id: "other", register() {} };',
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'noexport'), join(root, 'wrongid')] });
    await kernel.plugins.activateAll();
    expect(kernel.plugins.get('noexport')!.error).toBe(
      'cannot load index.js: the module does not export a plugin (expected a default export with register(api))',
    );
    expect(kernel.plugins.get('wrongid')!.error).toBe(
      'cannot load index.js: module exports plugin id "other" but the manifest says "wrongid"',
    );
    await kernel.dispose();
  });

  it('explains why a capability of a disabled plugin is unavailable', async () => {
    const root = tempDir();
    writePlugin(join(root, 'off'), {
      manifest: { id: 'off', configSchema: EMPTY_SCHEMA, tools: ['sleepy'] },
      code: tracked('off'),
    });
    const kernel = await createTestKernel({
      plugins: [join(root, 'off')],
      config: { plugins: { entries: { off: { enabled: false } } } },
    });
    await expect(kernel.capabilities.get('tool', 'sleepy')).rejects.toThrow(
      'no plugin provides tool "sleepy": plugin "off" provides it but is off (plugins.entries.off.enabled is false)',
    );
    await expect(kernel.plugins.activate('off')).rejects.toThrow(
      'plugin "off" is off (plugins.entries.off.enabled is false)',
    );
    await kernel.dispose();
  });
});

describe('slots, services and third-party TypeScript', () => {
  it('gives the memory slot to its holder and loads it on first use', async () => {
    const root = tempDir();
    for (const id of ['memory-sqlite', 'memory-alt']) {
      writePlugin(join(root, id), {
        manifest: { id, configSchema: EMPTY_SCHEMA, kind: 'memory' },
        code: tracked(
          `slot-${id}`,
          `api.registerMemory({ id: '${id}', search: async () => [], get: async (p) => ({ path: p, text: '${id}' }), status: () => ({}) });`,
        ),
      });
    }
    const dirs = [join(root, 'memory-sqlite'), join(root, 'memory-alt')];
    const byDefault = await createTestKernel({ plugins: dirs });
    expect(byDefault.plugins.list().map((r) => [r.id, r.status, r.reason])).toEqual([
      ['memory-sqlite', 'ready', 'holds the memory slot'],
      ['memory-alt', 'disabled', 'the memory slot is held by "memory-sqlite"'],
    ]);
    expect((await (await byDefault.capabilities.slot('memory'))!.get('x')).text).toBe('memory-sqlite');
    const switched = await createTestKernel({
      plugins: dirs,
      config: { plugins: { slots: { memory: 'memory-alt' } } },
    });
    expect((await (await switched.capabilities.slot('memory'))!.get('x')).text).toBe('memory-alt');
    expect(marks()['slot-memory-alt']).toEqual(['evaluated']);
    const none = await createTestKernel({ plugins: dirs, config: { plugins: { slots: { memory: 'none' } } } });
    expect(await none.capabilities.slot('memory')).toBeUndefined();
    for (const kernel of [byDefault, switched, none]) await kernel.dispose();
  });

  it('starts services of startup plugins and stops them in reverse order', async () => {
    const events: string[] = [];
    const service = (id: string) => ({
      id,
      start: () => void events.push(`start ${id}`),
      stop: () => void events.push(`stop ${id}`),
    });
    const kernel = await createTestKernel({
      plugins: [
        { id: 'svc-a', register: (api) => api.registerService(service('a')) },
        { id: 'svc-b', register: (api) => api.registerService(service('b')) },
        {
          id: 'svc-bad',
          register: (api) =>
            api.registerService({
              id: 'bad',
              start: () => {
                throw new Error('port in use');
              },
            }),
        },
      ],
    });
    await kernel.start();
    await kernel.stop();
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
    expect(kernel.plugins.get('svc-bad')).toMatchObject({
      status: 'failed',
      error: 'service "bad" failed to start: port in use',
    });
    await kernel.dispose();
  });

  it('loads a third-party TypeScript plugin through jiti, with `claw/sdk` resolving to this SDK', async () => {
    const root = tempDir();
    writePlugin(join(root, 'ts-plugin'), {
      manifest: {
        id: 'ts-plugin',
        configSchema: { type: 'object', properties: { greeting: { type: 'string', default: 'hello' } } },
        tools: ['greet'],
      },
      entryFile: 'index.ts',
      code: `
        import { definePlugin, textResult } from 'claw/sdk';
        interface Config { greeting: string }
        const suffix: string = '!';
        export default definePlugin<Config>({
          id: 'ts-plugin',
          register(api) {
            api.registerTool({
              name: 'greet', description: 'Greets', parameters: { type: 'object', properties: { name: { type: 'string' } } },
              execute: (params: { name: string }) => textResult(api.config.greeting + ', ' + params.name + suffix),
            });
          },
        });`,
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'ts-plugin')] });
    expect(await kernel.runTool('greet', { name: 'Ada' })).toEqual({
      content: [{ type: 'text', text: 'hello, Ada!' }],
    });
    await kernel.dispose();
  });

  it('validates registration arguments with a clear error', async () => {
    const kernel = await createTestKernel({
      plugins: [
        {
          id: 'bad-tool',
          register: (api) => api.registerTool({ name: 'x', description: 'x', parameters: { type: 'object' } } as never),
        },
        {
          id: 'bad-command',
          register: (api) => api.registerCommand({ name: '/slash', description: 'd', handler: () => {} }),
        },
      ],
    });
    expect(kernel.plugins.get('bad-tool')!.error).toBe('register() threw: tool "x" execute must be a function');
    expect(kernel.plugins.get('bad-command')!.error).toBe(
      'register() threw: command "/slash" must be registered without the leading "/"',
    );
    await kernel.dispose();
  });

  it('keeps the workspace extensions folder off unless enabled', async () => {
    const base = tempDir();
    const workspace = join(base, 'ws');
    mkdirSync(workspace);
    writePlugin(join(workspace, '.openclaw', 'extensions', 'repo-plugin'), {
      manifest: { id: 'repo-plugin', configSchema: EMPTY_SCHEMA },
      code: tracked('ws'),
    });
    const off = await createKernel({
      ...clawKernelParts(),
      env: {},
      stateDir: join(base, 's'),
      logger: silentLogger,
      config: { agents: { defaults: { workspace } } },
    });
    expect(off.plugins.get('repo-plugin')).toMatchObject({ origin: 'workspace', status: 'disabled' });
    const on = await createKernel({
      ...clawKernelParts(),
      env: {},
      stateDir: join(base, 's'),
      logger: silentLogger,
      config: { agents: { defaults: { workspace } }, plugins: { entries: { 'repo-plugin': { enabled: true } } } },
    });
    expect(on.plugins.get('repo-plugin')).toMatchObject({ origin: 'workspace', status: 'ready' });
  });
});
