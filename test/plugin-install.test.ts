/**
 * `claw plugins install` for plugins that fill an exclusive slot (memory, agentLoop,
 * sandbox) from a directory, a .tgz, a `file:` npm spec and `--link`; and plugins that
 * declare claw itself as a dependency. Real files and the built CLI; no network.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claw, EMPTY_SCHEMA, REPO, tempDir, writePlugin } from './helpers.js';

type Slot = 'memory' | 'agentLoop' | 'sandbox';

const REGISTER: Record<Slot, string> = {
  memory: `api.registerMemory({
    search: async () => ({ results: [] }),
    get: async (path) => ({ path, text: '', from: 1, lines: 0, totalLines: 0 }),
    status: () => ({ backend: 'fake' }),
  });`,
  agentLoop: `api.registerAgentLoop({
    runTurn: async () => ({ status: 'ok', text: 'ok', messages: [], usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }),
  });`,
  sandbox: `api.registerSandbox({ id: 'fake', check: async () => ({ ok: true }), ensure: async () => { throw new Error('no sandboxes here'); }, list: async () => [], remove: async () => {} });`,
};

/** A slot plugin package: JavaScript, importing the SDK by the package name (resolved by the host's aliases). */
function slotPlugin(dir: string, id: string, slot: Slot): string {
  return writePlugin(dir, {
    manifest: { id, kind: slot, version: '1.0.0', configSchema: EMPTY_SCHEMA },
    files: {
      'package.json': JSON.stringify({
        name: `claw-plugin-${id}`,
        version: '1.0.0',
        type: 'module',
        peerDependencies: { '@claw-assistant/claw': '*' },
        openclaw: { extensions: ['./index.js'] },
      }),
      'index.js': `import { definePlugin } from '@claw-assistant/claw/sdk';
        export default definePlugin({ id: ${JSON.stringify(id)}, register(api) { ${REGISTER[slot]} } });`,
    },
  });
}

function stateEnv() {
  const stateDir = tempDir('claw-install-');
  return {
    stateDir,
    env: {
      OPENCLAW_STATE_DIR: stateDir,
      OPENCLAW_CONFIG_PATH: join(stateDir, 'openclaw.json'),
      npm_config_cache: join(stateDir, '.npm-cache'),
      // Nothing here may need the registry.
      npm_config_offline: 'true',
    },
  };
}

const readConfig = (stateDir: string) => JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));

async function enabledIds(env: Record<string, string>): Promise<string[]> {
  const listed = await claw(['plugins', 'list', '--json'], env);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout).plugins as Array<{ id: string; enabled: boolean }>)
    .filter((p) => p.enabled)
    .map((p) => p.id)
    .sort();
}

const DEFAULT_HOLDER: Record<Slot, string | undefined> = {
  memory: 'memory-sqlite',
  agentLoop: 'agent-loop',
  sandbox: 'sandbox-docker',
};

describe('installing slot plugins', () => {
  const cases: Array<[Slot, 'dir' | 'tgz' | 'file-spec']> = [];
  for (const slot of ['memory', 'agentLoop', 'sandbox'] as const)
    for (const from of ['dir', 'tgz', 'file-spec'] as const) cases.push([slot, from]);

  it.each(cases)(
    'a %s plugin from a %s: recorded, slot untouched; `plugins enable` then switches the slot',
    async (slot, from) => {
      const { env, stateDir } = stateEnv();
      const id = `fake-${slot.toLowerCase()}-${from}`;
      const dir = slotPlugin(join(tempDir(), id), id, slot);
      let spec = dir;
      if (from !== 'dir') {
        const packDir = tempDir();
        const file = execFileSync('npm', ['pack', dir, '--pack-destination', packDir, '--loglevel=error'], {
          encoding: 'utf8',
          env: { ...process.env, ...env },
        }).trim();
        // A `file:` spec names a packed archive or (for the agentLoop case) the folder itself.
        spec = from === 'tgz' ? join(packDir, file) : `file:${slot === 'agentLoop' ? dir : join(packDir, file)}`;
      }
      const before = await enabledIds(env);

      const installed = await claw(['plugins', 'install', spec, '--json'], env);
      expect(installed.code, installed.stderr + installed.stdout).toBe(0);
      const outcome = JSON.parse(installed.stdout);
      expect(outcome).toMatchObject({
        ok: true,
        id,
        source: from === 'dir' ? 'path' : from === 'tgz' ? 'archive' : 'npm',
        enabled: false,
      });
      expect(outcome.notes.join('\n')).toContain(`claw plugins enable ${id}`);
      let config = readConfig(stateDir);
      expect(config.plugins.installs[id]).toMatchObject({
        installPath: join(stateDir, 'extensions', id),
        version: '1.0.0',
      });
      expect(config.plugins.slots).toBeUndefined();
      expect(config.plugins.entries?.[id]).toBeUndefined();
      expect(await enabledIds(env)).toEqual(before);
      const off = JSON.parse((await claw(['plugins', 'info', id, '--json'], env)).stdout);
      expect(off).toMatchObject({ origin: 'global', enabled: false, status: 'disabled' });

      const enabled = await claw(['plugins', 'enable', id], env);
      expect(enabled.code, enabled.stderr).toBe(0);
      config = readConfig(stateDir);
      expect(config.plugins.slots).toEqual({ [slot]: id });
      expect(config.plugins.entries).toEqual({ [id]: { enabled: true } });
      // Only the previous holder went off; everything else stays as it was.
      const previous = DEFAULT_HOLDER[slot];
      expect(await enabledIds(env)).toEqual([...before.filter((other) => other !== previous), id].sort());
      const on = JSON.parse((await claw(['plugins', 'info', id, '--json'], env)).stdout);
      expect(on).toMatchObject({
        enabled: true,
        status: 'ready',
        reason: `holds the ${slot} slot`,
        capabilities: { kind: [slot] },
      });
      // The plugin host loads it and it registers the slot it holds.
      const doctor = await claw(['plugins', 'doctor', '--json'], env);
      const report = JSON.parse(doctor.stdout);
      expect(report.failed).toEqual([]);
      expect(report.warnings.filter((warning: { id: string }) => warning.id === id)).toEqual([]);
      expect(report.issues.filter((issue: { level: string }) => issue.level === 'error')).toEqual([]);
    },
  );

  it('--enable switches the slot during the install', async () => {
    const { env, stateDir } = stateEnv();
    const dir = slotPlugin(join(tempDir(), 'mem-now'), 'mem-now', 'memory');
    const result = await claw(['plugins', 'install', dir, '--enable'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('memory slot: "memory-sqlite" → "mem-now"');
    expect(readConfig(stateDir).plugins.slots).toEqual({ memory: 'mem-now' });
    expect(JSON.parse((await claw(['plugins', 'info', 'mem-now', '--json'], env)).stdout)).toMatchObject({
      enabled: true,
      status: 'ready',
    });
  });

  it('--link a slot plugin: linked, off until enabled (or on at once with --enable)', async () => {
    const { env, stateDir } = stateEnv();
    const dir = slotPlugin(join(tempDir(), 'loop-dev'), 'loop-dev', 'agentLoop');
    const linked = await claw(['plugins', 'install', dir, '--link'], env);
    expect(linked.code, linked.stderr).toBe(0);
    expect(readConfig(stateDir).plugins).toEqual({ load: { paths: [dir] } });
    expect(JSON.parse((await claw(['plugins', 'info', 'loop-dev', '--json'], env)).stdout)).toMatchObject({
      origin: 'config',
      enabled: false,
    });
    expect((await claw(['plugins', 'enable', 'loop-dev'], env)).code).toBe(0);
    expect(readConfig(stateDir).plugins.slots).toEqual({ agentLoop: 'loop-dev' });
    expect(JSON.parse((await claw(['plugins', 'info', 'loop-dev', '--json'], env)).stdout)).toMatchObject({
      enabled: true,
      reason: 'holds the agentLoop slot',
    });

    const other = stateEnv();
    const sandbox = slotPlugin(join(tempDir(), 'box-dev'), 'box-dev', 'sandbox');
    const now = await claw(['plugins', 'install', sandbox, '--link', '--enable'], other.env);
    expect(now.code, now.stderr).toBe(0);
    expect(readConfig(other.stateDir).plugins.slots).toEqual({ sandbox: 'box-dev' });
    expect(JSON.parse((await claw(['plugins', 'info', 'box-dev', '--json'], other.env)).stdout)).toMatchObject({
      enabled: true,
      reason: 'holds the sandbox slot',
    });
  }, 90_000);
});

describe('a plugin that depends on claw itself', () => {
  it('gets no package from npm for it, but a link to this installation', async () => {
    const { env, stateDir } = stateEnv();
    const localDep = writePlugin(join(tempDir(), 'local-dep'), {
      manifest: 'null',
      files: {
        'package.json': JSON.stringify({ name: 'local-dep', version: '1.0.0', type: 'module', main: 'index.js' }),
        'index.js': 'export const two = 2;',
      },
    });
    const packageJson = {
      name: 'claw-plugin-needs-claw',
      version: '1.0.0',
      type: 'module',
      // `claw` on the registry is an unrelated package; with npm offline, asking for it would fail the install.
      dependencies: { claw: '^1.0.0', 'local-dep': `file:${localDep}` },
      peerDependencies: { '@claw-assistant/claw': '*' },
    };
    const dir = writePlugin(join(tempDir(), 'needs-claw'), {
      manifest: { id: 'needs-claw', configSchema: EMPTY_SCHEMA, tools: ['two'] },
      files: {
        'package.json': JSON.stringify(packageJson),
        'index.js': `import { definePlugin, textResult } from '@claw-assistant/claw/sdk';
          import { textResult as legacy } from 'claw/sdk';
          import { two } from 'local-dep';
          export default definePlugin({ id: 'needs-claw', register(api) {
            api.registerTool({ name: 'two', description: 'Two', parameters: { type: 'object' }, execute: () => legacy(String(two)) });
          } });
          export const same = textResult === legacy;`,
        'probe.mjs': `import * as sdk from '@claw-assistant/claw/sdk';
          import * as legacy from 'claw/sdk';
          import { ChannelSendError } from '@claw-assistant/claw/sdk/channels';
          import { defineMemoryPlugin } from '@claw-assistant/claw/sdk/memory';
          console.log(JSON.stringify({
            sdk: import.meta.resolve('@claw-assistant/claw/sdk'),
            legacy: import.meta.resolve('claw/sdk'),
            same: sdk.definePlugin === legacy.definePlugin,
            channelSendError: typeof ChannelSendError,
            defineMemoryPlugin: typeof defineMemoryPlugin,
          }));`,
      },
    });
    const result = await claw(['plugins', 'install', dir], env);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toContain('1 dependencies installed');
    const target = join(stateDir, 'extensions', 'needs-claw');
    expect(existsSync(join(target, 'node_modules', 'local-dep', 'index.js'))).toBe(true);
    // The package.json is kept as the author wrote it.
    expect(JSON.parse(readFileSync(join(target, 'package.json'), 'utf8'))).toEqual(packageJson);
    for (const name of ['claw', join('@claw-assistant', 'claw')]) {
      const link = join(target, 'node_modules', name);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(realpathSync(link)).toBe(realpathSync(REPO));
    }
    // Plain Node resolves both specifiers from the plugin to the host's built SDK.
    const probe = JSON.parse(execFileSync(process.execPath, [join(target, 'probe.mjs')], { encoding: 'utf8' }));
    const sdkFile = `file://${realpathSync(join(REPO, 'dist', 'sdk', 'index.js'))}`;
    expect(probe).toEqual({
      sdk: sdkFile,
      legacy: sdkFile,
      same: true,
      channelSendError: 'function',
      defineMemoryPlugin: 'function',
    });
    // And the plugin host loads it.
    const doctor = JSON.parse((await claw(['plugins', 'doctor', '--json'], env)).stdout);
    expect(doctor.failed).toEqual([]);
  });
});

describe('leftovers of an install killed midway', () => {
  it('the next install removes them (or puts a previous version back); a live installer keeps its own', async () => {
    const { env, stateDir } = stateEnv();
    const extensions = join(stateDir, 'extensions');
    // A pid that was a node process and is gone, and a node process that is alive (another installer).
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const folder = (name: string, ageMs = 0) => {
        const path = join(extensions, name);
        mkdirSync(join(path, 'plugin'), { recursive: true });
        writeFileSync(join(path, 'plugin', 'openclaw.plugin.json'), '{}');
        const at = new Date(Date.now() - ageMs);
        utimesSync(path, at, at);
        return path;
      };
      const deadStaging = folder(`.staging-${dead.pid}-AbC123`);
      const liveStaging = folder(`.staging-${live.pid}-XyZ789`);
      // Named before stage folders carried a pid: judged by age.
      const oldStaging = folder('.staging-Old123', 3_600_000);
      const newStaging = folder('.staging-New123');
      // Killed between moving the previous version aside and moving the new one in: the plugin folder is missing.
      const previous = folder(`.replaced-${dead.pid}-1700000000000-was-here`);
      const replaced = folder(`.replaced-${dead.pid}-1700000000000-still-here`);
      mkdirSync(join(extensions, 'still-here'));

      const dir = writePlugin(join(tempDir(), 'fresh'), {
        manifest: { id: 'fresh', configSchema: EMPTY_SCHEMA },
        files: { 'index.js': 'export default { id: "fresh", register() {} };' },
      });
      const result = await claw(['plugins', 'install', dir], env);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      expect(result.stdout).toContain(`removed ${deadStaging}, left by an interrupted install`);
      expect(result.stdout).toContain(`put the previous version back at ${join(extensions, 'was-here')}`);
      expect([deadStaging, oldStaging, previous, replaced].filter((path) => existsSync(path))).toEqual([]);
      expect([liveStaging, newStaging].filter((path) => existsSync(path))).toEqual([liveStaging, newStaging]);
      expect(existsSync(join(extensions, 'was-here', 'plugin', 'openclaw.plugin.json'))).toBe(true);
      expect(existsSync(join(extensions, 'still-here'))).toBe(true);
      // What the install itself staged is gone too; the plugin is in place.
      const hidden = readdirSync(extensions).filter((name) => name.startsWith('.'));
      expect(hidden.sort()).toEqual(['.staging-New123', `.staging-${live.pid}-XyZ789`].sort());
      expect(existsSync(join(extensions, 'fresh', 'openclaw.plugin.json'))).toBe(true);
    } finally {
      live.kill();
    }
  });
});
