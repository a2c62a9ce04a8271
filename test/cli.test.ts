import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledPlugins, claw, EMPTY_SCHEMA, onByDefault, tempDir, writePlugin } from './helpers.js';
import { startFakeRegistry, type FakeRegistry } from './fakes/npm-registry.js';

function stateEnv() {
  const stateDir = tempDir('claw-cli-');
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir, npm_config_cache: join(stateDir, '.npm-cache') } };
}

const lastLine = (text: string) => text.trimEnd().split('\n').pop();
const readConfig = (stateDir: string) => JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));

/** A plugin module that leaves a marker file when evaluated, to prove when code runs. */
function markerPlugin(dir: string, id: string, marker: string, extra: Record<string, unknown> = {}, body = '') {
  return writePlugin(dir, {
    manifest: { id, configSchema: EMPTY_SCHEMA, version: '1.2.3', description: `${id} plugin`, ...extra },
    code: `import { writeFileSync } from 'node:fs';
      writeFileSync(${JSON.stringify(marker)}, 'evaluated');
      export default { register(api) { ${body} } };`,
  });
}

describe('claw basics', () => {
  it('prints its version and help', async () => {
    const version = await claw(['--version']);
    expect(version).toMatchObject({
      code: 0,
      stdout: `claw ${JSON.parse(readFileSync('package.json', 'utf8')).version}\n`,
    });
    const help = await claw(['--help'], stateEnv().env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: claw <command>');
    expect(help.stdout).toMatch(/plugins\s+List, inspect, enable, install and diagnose plugins/);
    const pluginsHelp = await claw(['plugins', '--help']);
    expect(pluginsHelp.stdout).toContain('install <dir|file.tgz|npm-spec>');
  });

  it('fails with a non-zero exit and a one-line reason', async () => {
    const { env } = stateEnv();
    for (const [args, code, message] of [
      [['frobnicate'], 2, "claw: Unknown command 'frobnicate' (see claw --help)\n"],
      [['plugins', 'explode'], 2, "claw: Unknown command 'plugins explode' (see claw plugins --help)\n"],
      [['plugins', 'list', '--bogus'], 2, "claw: Unknown option '--bogus'\n"],
      [['plugins', 'info', 'ghost'], 1, 'claw: no plugin "ghost" is installed (see claw plugins list)\n'],
      [
        ['config', 'get', 'agents.defaults.workspace'],
        1,
        'claw: agents.defaults.workspace is not set (the default applies)\n',
      ],
      [['config', 'get', 'a..b'], 2, 'claw: invalid config path "a..b": empty segment\n'],
    ] as const) {
      const result = await claw([...args], env);
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.stderr, args.join(' ')).toBe(message);
    }
    const json = await claw(['plugins', 'info', 'ghost', '--json'], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      error: { message: 'no plugin "ghost" is installed (see claw plugins list)' },
    });
  });
});

describe('claw plugins', () => {
  it('lists the bundled plugins read from their manifests, as a table and as JSON', async () => {
    const { env } = stateEnv();
    const table = await claw(['plugins', 'list'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+ORIGIN\s+VERSION\s+DESCRIPTION/);
    expect(table.stdout).toMatch(/example-clock\s+off\s+bundled\s+0\.1\.0/);
    expect(table.stdout).toMatch(/example-guard\s+off\s+bundled\s+0\.1\.0/);
    const json = JSON.parse((await claw(['plugins', 'list', '--json'], env)).stdout);
    const clock = json.plugins.find((plugin: { id: string }) => plugin.id === 'example-clock');
    expect(clock).toMatchObject({
      origin: 'bundled',
      status: 'disabled',
      enabled: false,
      reason: 'bundled, off by default',
      capabilities: { tools: ['clock_now'], commands: ['time'] },
    });
  });

  it('enables and disables plugins, recording the choice in openclaw.json', async () => {
    const { env, stateDir } = stateEnv();
    expect(await claw(['plugins', 'enable', 'example-clock', 'example-guard'], env)).toMatchObject({
      code: 0,
      stdout: 'Enabled example-clock.\nEnabled example-guard.\n',
    });
    expect(readConfig(stateDir).plugins.entries).toEqual({
      'example-clock': { enabled: true },
      'example-guard': { enabled: true },
    });
    expect((await claw(['plugins', 'list'], env)).stdout).toMatch(/example-clock\s+on\s+bundled/);
    expect((await claw(['plugins', 'disable', 'example-guard'], env)).code).toBe(0);
    expect(readConfig(stateDir).plugins.entries['example-guard']).toEqual({ enabled: false });
    const info = JSON.parse((await claw(['plugins', 'info', 'example-clock', '--json'], env)).stdout);
    expect(info).toMatchObject({ id: 'example-clock', status: 'ready', config: { timezone: 'UTC' } });
    // The enable validates the plugin config first.
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({ plugins: { entries: { 'example-guard': { config: { mask: 7 } } } } }),
    );
    const refused = await claw(['plugins', 'enable', 'example-guard'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'claw: refusing to write the config, the change would make it invalid: plugins.entries.example-guard.config.mask: must be string (plugin example-guard)\n',
    );
  });

  it('switches an exclusive slot and turns the previous holder off', async () => {
    const { env, stateDir } = stateEnv();
    const root = tempDir();
    for (const id of ['memory-sqlite', 'memory-alt']) {
      writePlugin(join(root, id), {
        manifest: { id, kind: 'memory', configSchema: EMPTY_SCHEMA },
        code: 'export default { register() {} };',
      });
    }
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ plugins: { load: { paths: [root] } } }));
    const before = JSON.parse((await claw(['plugins', 'list', '--json'], env)).stdout).plugins;
    expect(before.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([
      ['memory-alt', 'disabled'],
      // A manifest with no claw-only field is OpenClaw's format, and `plugins list` loads such
      // plugins as the gateway does at start (so one that cannot run is listed as failed).
      ['memory-sqlite', 'active'],
      // The test's own memory-sqlite shadows the bundled one (config paths come first).
      ...bundledPlugins()
        .filter((plugin) => plugin.id !== 'memory-sqlite')
        .map((plugin) => [plugin.id, onByDefault(plugin) ? 'ready' : 'disabled']),
    ]);
    const switched = await claw(['plugins', 'enable', 'memory-alt'], env);
    expect(switched.stdout).toBe(
      'Enabled memory-alt.\n  memory slot: "memory-sqlite" → "memory-alt" ("memory-sqlite" is now off)\n',
    );
    expect(readConfig(stateDir).plugins.slots).toEqual({ memory: 'memory-alt' });
    const after = JSON.parse((await claw(['plugins', 'list', '--json'], env)).stdout).plugins;
    expect(after.find((p: { id: string }) => p.id === 'memory-sqlite')).toMatchObject({
      status: 'disabled',
      reason: 'the memory slot is held by "memory-alt"',
    });
  });

  it('reads manifests only: list, info and enable never run plugin code; doctor does', async () => {
    const { env, stateDir } = stateEnv();
    const root = tempDir();
    const marker = join(root, 'evaluated.txt');
    markerPlugin(
      join(root, 'watched'),
      'watched',
      marker,
      { tools: ['w'] },
      `api.registerTool({ name: 'w', description: 'w', parameters: {}, execute: () => ({ content: [] }) });`,
    );
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({ plugins: { load: { paths: [join(root, 'watched')] } } }),
    );
    for (const args of [
      ['plugins', 'list'],
      ['plugins', 'info', 'watched'],
      ['plugins', 'disable', 'watched'],
      ['plugins', 'enable', 'watched'],
      ['config', 'validate'],
    ]) {
      expect((await claw(args, env)).code, args.join(' ')).toBe(0);
      expect(existsSync(marker), args.join(' ')).toBe(false);
    }
    const doctor = await claw(['plugins', 'doctor'], env);
    expect(doctor).toMatchObject({ code: 0 });
    // The watched plugin and the bundled plugins that are on by default are loaded.
    const bundled = bundledPlugins();
    expect(doctor.stdout).toContain(
      `${bundled.length + 1} plugins found, ${bundled.filter(onByDefault).length + 1} loaded, 0 failed`,
    );
    expect(existsSync(marker)).toBe(true);
  });

  it('doctor lists every failed plugin with its reason', async () => {
    const { env, stateDir } = stateEnv();
    const root = tempDir();
    writePlugin(join(root, 'throws'), {
      manifest: { id: 'throws', configSchema: EMPTY_SCHEMA },
      code: 'export default { register() { throw new Error("no API key"); } };',
    });
    writePlugin(join(root, 'badmanifest'), { manifest: '{ id: "badmanifest" }', code: '' });
    writePlugin(join(root, 'fine'), {
      manifest: { id: 'fine', configSchema: EMPTY_SCHEMA },
      code: 'export default { register() {} };',
    });
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ plugins: { load: { paths: [root] } } }));
    const doctor = await claw(['plugins', 'doctor'], env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain('✗ throws: register() threw: no API key');
    expect(doctor.stdout).toContain('✗ badmanifest: openclaw.plugin.json: configSchema: is required');
    const json = JSON.parse((await claw(['plugins', 'doctor', '--json'], env)).stdout);
    expect(json.ok).toBe(false);
    expect(json.failed.map((f: { id: string }) => f.id).sort()).toEqual(['badmanifest', 'throws']);
  });
});

describe('claw config', () => {
  it('gets, sets, unsets and validates, redacting secrets and refusing invalid values', async () => {
    const { env, stateDir } = stateEnv();
    const root = tempDir();
    writePlugin(join(root, 'keyed'), {
      manifest: {
        id: 'keyed',
        configSchema: {
          type: 'object',
          additionalProperties: false,
          properties: { apiKey: { type: 'string' }, region: { type: 'string' } },
        },
      },
      code: 'export default { register() {} };',
    });
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      `{ // JSON5 is fine\n plugins: { load: { paths: ["${join(root, 'keyed')}"] } } }`,
    );
    expect((await claw(['config', 'path'], env)).stdout).toBe(`${join(stateDir, 'openclaw.json')}\n`);
    expect(
      (
        await claw(['config', 'set', 'plugins.entries.keyed.config.apiKey', '${KEYED_API_KEY}'], {
          ...env,
          KEYED_API_KEY: 'sk-live-123',
        })
      ).code,
    ).toBe(0);
    expect(
      (await claw(['config', 'set', 'agents.defaults.maxConcurrent', '6'], { ...env, KEYED_API_KEY: 'x' })).code,
    ).toBe(0);
    const config = readConfig(stateDir);
    expect(config.plugins.entries.keyed.config.apiKey).toBe('${KEYED_API_KEY}');
    expect(config.agents.defaults.maxConcurrent).toBe(6);
    const shown = await claw(['config', 'get', 'plugins.entries.keyed', '--json'], {
      ...env,
      KEYED_API_KEY: 'sk-live-123',
    });
    expect(JSON.parse(shown.stdout)).toEqual({ config: { apiKey: '__REDACTED__' } });
    expect(shown.stdout).not.toContain('sk-live');
    expect(
      (await claw(['config', 'get', 'agents.defaults.maxConcurrent'], { ...env, KEYED_API_KEY: 'x' })).stdout,
    ).toBe('6\n');

    const bad = await claw(['config', 'set', 'agents.defaults.maxConcurrent', '0'], { ...env, KEYED_API_KEY: 'x' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'claw: agents.defaults.maxConcurrent: 0 is out of range: it must be an integer >= 1; nothing written\n',
    );
    expect(readConfig(stateDir).agents.defaults.maxConcurrent).toBe(6);

    expect(
      (await claw(['config', 'unset', 'agents.defaults.maxConcurrent'], { ...env, KEYED_API_KEY: 'x' })).code,
    ).toBe(0);
    expect(readConfig(stateDir).agents).toBeUndefined();
    expect((await claw(['config', 'unset', 'agents.defaults.maxConcurrent'], env)).stderr).toBe(
      'claw: agents.defaults.maxConcurrent is not set\n',
    );

    // As in OpenClaw: a warning naming the variable; the key is left out, the config stays valid.
    const missingVar = await claw(['config', 'validate'], env);
    expect(missingVar.code, missingVar.stderr).toBe(0);
    expect(missingVar.stdout + missingVar.stderr).toContain(
      'plugins.entries.keyed.config.apiKey: references ${KEYED_API_KEY}, which is not set in the environment; left out, so what uses it is unavailable until KEYED_API_KEY is set',
    );
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({
        plugins: { load: { paths: [join(root, 'keyed')] }, entries: { keyed: { config: { region: 5 } } } },
        agents: { defaults: { maxConcurrent: 'x' } },
      }),
    );
    const invalid = JSON.parse((await claw(['config', 'validate', '--json'], env)).stdout);
    expect(invalid.valid).toBe(false);
    expect(invalid.issues).toEqual([
      { level: 'error', path: 'agents.defaults.maxConcurrent', message: 'must be integer', owner: 'kernel' },
      { level: 'error', path: 'plugins.entries.keyed.config.region', message: 'must be string', owner: 'keyed' },
    ]);
  }, 90_000);
});

describe('claw config set with numbers', () => {
  it('refuses what JSON cannot hold and what is out of range, naming the key and the range; -5 is a value', async () => {
    const { env, stateDir } = stateEnv();
    const root = tempDir();
    const offset = { type: 'number', minimum: -10, maximum: 10 };
    writePlugin(join(root, 'dial'), {
      manifest: { id: 'dial', configSchema: { type: 'object', additionalProperties: false, properties: { offset } } },
      code: 'export default { register() {} };',
    });
    const config = { plugins: { load: { paths: [join(root, 'dial')] } }, agents: { defaults: { timeoutSeconds: 30 } } };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config));
    const before = readFileSync(join(stateDir, 'openclaw.json'), 'utf8');
    const set = (...args: string[]) => claw(['config', 'set', ...args], env);
    const refused = async (args: string[], stderr: string) => {
      const result = await set(...args);
      expect([result.code, result.stderr, result.stdout]).toEqual([1, `claw: ${stderr}\n`, '']);
    };

    const infinite = (shown: string) =>
      `agents.defaults.timeoutSeconds: ${shown} is not a finite number (JSON has no Infinity or NaN); nothing written`;
    await refused(['agents.defaults.timeoutSeconds', '1e400'], infinite('1e400'));
    await refused(['agents.defaults.timeoutSeconds', 'NaN'], infinite('NaN'));
    await refused(['--strict-json', 'agents.defaults', '{"timeoutSeconds": 1e999}'], infinite('Infinity'));
    const range = 'agents.defaults.timeoutSeconds: -5 is out of range: it must be an integer >= 1; nothing written';
    await refused(['agents.defaults.timeoutSeconds', '-5'], range);
    await refused(['agents.defaults.timeoutSeconds', '--', '-5'], range);
    await refused(
      ['agents.defaults.subagents.maxSpawnDepth', '9'],
      'agents.defaults.subagents.maxSpawnDepth: 9 is out of range: it must be an integer >= 1 and <= 5; nothing written',
    );
    await refused(
      ['plugins.entries.dial.config', '{offset: -10.5}'],
      'plugins.entries.dial.config.offset: -10.5 is out of range: it must be a number >= -10 and <= 10; nothing written',
    );
    expect(readFileSync(join(stateDir, 'openclaw.json'), 'utf8')).toBe(before);

    // In range, negative, and with an option after it.
    const ok = await set('plugins.entries.dial.config.offset', '-2.5', '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      ok: true,
      path: 'plugins.entries.dial.config.offset',
      value: -2.5,
      changed: true,
    });
    expect(readConfig(stateDir).plugins.entries.dial.config.offset).toBe(-2.5);
    expect((await set('--strict-json', 'agents.defaults.timeoutSeconds', '45')).code).toBe(0);
    expect(readConfig(stateDir).agents.defaults.timeoutSeconds).toBe(45);
    const option = await set('agents.defaults.timeoutSeconds', '5', '-x');
    expect(option.stderr).toContain("Unknown option '-x'");
  });
});

describe('claw plugins install', () => {
  let registry: FakeRegistry;
  let source: string;

  beforeAll(async () => {
    registry = await startFakeRegistry();
    source = tempDir('claw-src-');
    writePlugin(join(source, 'tiny-dep'), {
      manifest: 'null',
      files: {
        'package.json': JSON.stringify({ name: 'tiny-dep', version: '1.0.0', type: 'module', main: 'index.js' }),
        'index.js': 'export const shout = (text) => text.toUpperCase() + "!";',
      },
    });
    registry.publish(join(source, 'tiny-dep'));
    writePlugin(join(source, 'dev-only-dep'), {
      manifest: 'null',
      files: { 'package.json': JSON.stringify({ name: 'dev-only-dep', version: '9.9.9' }), 'index.js': '' },
    });
    registry.publish(join(source, 'dev-only-dep'));
    // A plugin package with a runtime dependency and a dev dependency (both in the registry); only the first may be installed.
    writePlugin(join(source, 'weather'), {
      manifest: {
        id: 'weather',
        name: 'Weather',
        version: '2.0.0',
        configSchema: EMPTY_SCHEMA,
        tools: ['weather_now'],
      },
      files: {
        'package.json': JSON.stringify({
          name: 'claw-plugin-weather',
          version: '2.0.0',
          type: 'module',
          dependencies: { 'tiny-dep': '^1.0.0' },
          devDependencies: { 'dev-only-dep': '^9.9.9' },
          openclaw: { extensions: ['./index.js'] },
        }),
        'index.js': `import { shout } from 'tiny-dep';
          export default { register(api) {
            api.registerTool({ name: 'weather_now', description: 'Weather', parameters: { type: 'object' },
              execute: () => ({ content: [{ type: 'text', text: shout('sunny') }] }) });
          } };`,
      },
    });
    registry.publish(join(source, 'weather'));
  });

  afterAll(() => registry.close());

  const installEnv = () => {
    const state = stateEnv();
    return { ...state, env: { ...state.env, npm_config_registry: registry.url } };
  };

  it('installs from a directory: copies it, installs dependencies (not dev ones), enables it and records the install', async () => {
    const { env, stateDir } = installEnv();
    const result = await claw(['plugins', 'install', join(source, 'weather')], env);
    expect(result.stderr).toContain('[1/6] Fetching…');
    expect(result.stderr).toContain('[4/6] Installing dependencies…');
    expect(result.code, result.stderr).toBe(0);
    const target = join(stateDir, 'extensions', 'weather');
    expect(result.stdout).toContain(`Installed weather 2.0.0 → ${target}`);
    expect(result.stdout).toContain('1 dependencies installed');
    expect(existsSync(join(target, 'node_modules', 'tiny-dep', 'index.js'))).toBe(true);
    expect(existsSync(join(target, 'node_modules', 'dev-only-dep'))).toBe(false);
    expect(readdirSync(join(stateDir, 'extensions'))).toEqual(['weather']);
    const config = readConfig(stateDir);
    expect(config.plugins.entries.weather).toEqual({ enabled: true });
    expect(config.plugins.installs.weather).toMatchObject({
      source: 'path',
      spec: join(source, 'weather'),
      installPath: target,
      version: '2.0.0',
    });
    const listed = JSON.parse((await claw(['plugins', 'list', '--json'], env)).stdout).plugins;
    expect(listed.find((p: { id: string }) => p.id === 'weather')).toMatchObject({ origin: 'global', status: 'ready' });
    // The installed plugin loads with its dependency.
    expect((await claw(['plugins', 'doctor'], env)).stdout).toContain(
      `${bundledPlugins().filter(onByDefault).length + 1} loaded, 0 failed`,
    );
  });

  it('installs from a .tgz built during the test', async () => {
    const { env, stateDir } = installEnv();
    const packDir = tempDir();
    const file = execFileSync(
      'npm',
      ['pack', join(source, 'weather'), '--pack-destination', packDir, '--loglevel=error'],
      { encoding: 'utf8' },
    ).trim();
    const result = await claw(['plugins', 'install', join(packDir, file)], env);
    expect(result.code, result.stderr).toBe(0);
    expect(readConfig(stateDir).plugins.installs.weather).toMatchObject({ source: 'archive', version: '2.0.0' });
    expect(existsSync(join(stateDir, 'extensions', 'weather', 'openclaw.plugin.json'))).toBe(true);
    expect(existsSync(join(stateDir, 'extensions', 'weather', 'node_modules', 'tiny-dep'))).toBe(true);
  });

  it('installs from an npm spec (through the configured registry)', async () => {
    const { env, stateDir } = installEnv();
    const result = await claw(['plugins', 'install', 'claw-plugin-weather@^2.0.0', '--json'], env);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      id: 'weather',
      source: 'npm',
      version: '2.0.0',
      enabled: true,
    });
    expect(readConfig(stateDir).plugins.installs.weather).toMatchObject({
      source: 'npm',
      spec: 'claw-plugin-weather@^2.0.0',
    });
    expect(registry.requests).toContain('/claw-plugin-weather');
  });

  it('refuses an invalid manifest and leaves nothing behind', async () => {
    const { env, stateDir } = installEnv();
    const bad = writePlugin(join(tempDir(), 'bad'), {
      manifest: { id: 'Bad Plugin', configSchema: EMPTY_SCHEMA },
      code: '',
    });
    const result = await claw(['plugins', 'install', bad], env);
    expect(result.code).toBe(1);
    expect(lastLine(result.stderr)).toBe(
      `claw: refusing to install "${bad}": openclaw.plugin.json: id: must match pattern "^[a-z0-9][a-z0-9._-]*$"`,
    );
    expect(readdirSync(join(stateDir, 'extensions'))).toEqual([]);
    expect(existsSync(join(stateDir, 'openclaw.json'))).toBe(false);
  });

  it('refuses an id clash, and replaces an installed plugin only with --force', async () => {
    const { env } = installEnv();
    const impostor = markerPlugin(join(tempDir(), 'impostor'), 'example-clock', join(tempDir(), 'never.txt'));
    const clash = await claw(['plugins', 'install', impostor], env);
    expect(clash.code).toBe(1);
    expect(lastLine(clash.stderr)).toMatch(
      /^claw: plugin id "example-clock" is already taken by the bundled plugin at .*example-clock$/,
    );
    expect((await claw(['plugins', 'install', join(source, 'weather')], env)).code).toBe(0);
    const again = await claw(['plugins', 'install', join(source, 'weather')], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already installed at .*; pass --force to replace it\n$/);
    expect((await claw(['plugins', 'install', join(source, 'weather'), '--force'], env)).code).toBe(0);
  });

  it('installs a plugin that needs config but leaves it off, then uninstalls', async () => {
    const { env, stateDir } = installEnv();
    const needy = writePlugin(join(tempDir(), 'needy'), {
      manifest: {
        id: 'needy',
        configSchema: { type: 'object', required: ['apiKey'], properties: { apiKey: { type: 'string' } } },
      },
      code: 'export default { register() {} };',
    });
    const result = await claw(['plugins', 'install', needy], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('installed but off');
    expect(result.stdout).toContain('plugins.entries.needy.config.apiKey: is required');
    expect(readConfig(stateDir).plugins.entries.needy).toEqual({ enabled: false });
    expect(JSON.parse((await claw(['plugins', 'info', 'needy', '--json'], env)).stdout)).toMatchObject({
      origin: 'global',
      status: 'disabled',
    });
    const uninstall = await claw(['plugins', 'uninstall', 'needy'], env);
    expect(uninstall).toMatchObject({ code: 0 });
    expect(existsSync(join(stateDir, 'extensions', 'needy'))).toBe(false);
    expect(readConfig(stateDir).plugins).toEqual({ entries: { needy: { enabled: false } } });
    expect((await claw(['config', 'validate', '--json'], env)).stdout).toContain('"issues": []');
    expect((await claw(['plugins', 'uninstall', 'example-clock'], env)).stderr).toBe(
      'claw: "example-clock" is bundled with claw and cannot be uninstalled; use claw plugins disable example-clock\n',
    );
  });

  it('links a development directory with --link', async () => {
    const { env, stateDir } = installEnv();
    const dev = writePlugin(join(tempDir(), 'dev'), {
      manifest: { id: 'devplug', configSchema: EMPTY_SCHEMA },
      code: 'export default { register() {} };',
    });
    const result = await claw(['plugins', 'install', dev, '--link'], env);
    expect(result).toMatchObject({
      code: 0,
      stdout: `Linked devplug → ${dev}\n  added ${dev} to plugins.load.paths\n`,
    });
    expect(readConfig(stateDir).plugins.load.paths).toEqual([dev]);
    expect((await claw(['plugins', 'uninstall', 'devplug'], env)).code).toBe(0);
    expect(existsSync(dev)).toBe(true);
    expect(readConfig(stateDir).plugins.load.paths).toEqual([]);
  });
});
