/**
 * `claw node install|uninstall|start|stop|restart|status` through the gateway plugin's
 * `service-units` service, against a fake `systemctl` first on PATH (as the gateway service
 * tests do): the unit's text (checked by the real systemd-analyze where installed), OpenClaw's
 * names and flags, usage errors, and the way out where no service manager can be reached.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { serviceUnits } from '../plugins/gateway/daemon/units-service.js';
import { serviceFileText, systemdUnit, type ServiceSpec } from '../plugins/gateway/daemon/unit-files.js';
import {
  NODE_SERVICE_SUBCOMMANDS,
  nodeRunArgs,
  nodeServiceCommand,
  type NodeServiceCommand,
} from '../plugins/node-host/service-cli.js';
import { fakeSystemctl } from './fakes/systemctl.js';
import { CLI, tempDir } from './helpers.js';

function setup(extraEnv: Record<string, string> = {}) {
  const home = tempDir('claw-node-svc-');
  const stateDir = join(home, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  const fake = fakeSystemctl(home);
  const env: Record<string, string | undefined> = { ...fake.env, OPENCLAW_STATE_DIR: stateDir, ...extraEnv };
  const units = serviceUnits(env, { stateDir, configPath: join(stateDir, 'openclaw.json') });
  const kernel = {
    capabilities: { find: async (_kind: string, id: string) => (id === 'service-units' ? { api: units } : undefined) },
  } as never;
  const unit = join(home, '.config', 'systemd', 'user', 'openclaw-node.service');
  const run = async (command: NodeServiceCommand, argv: string[] = []) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (chunk) => (out += chunk));
    stderr.on('data', (chunk) => (err += chunk));
    const ctx = { stdout, stderr, env } as never;
    const code = await nodeServiceCommand(command, argv, ctx, kernel);
    return { code, stdout: out, stderr: err };
  };
  return { home, stateDir, unit, calls: fake.calls, run };
}

describe('claw node install/uninstall/start/stop/restart/status (systemd user unit)', () => {
  it('installs openclaw-node.service running claw node run with the gateway flags, idempotently', async () => {
    const { unit, calls, run, stateDir } = setup();
    const installed = await run('install', [
      '--host',
      'gw.example.lan',
      '--port',
      '18790',
      '--tls',
      '--tls-fingerprint',
      'AB'.repeat(32),
      '--display-name',
      'Build box 100%',
      '--node-id',
      'build-1',
      '--runtime',
      'node',
    ]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`Wrote ${unit}`);
    expect(installed.stdout).toContain('The node host service is enabled and started.');
    const text = readFileSync(unit, 'utf8');
    expect(text).toContain(
      `ExecStart="${process.execPath}" "${CLI}" "node" "run" "--host" "gw.example.lan" "--port" "18790" "--tls" "--tls-fingerprint" "${'AB'.repeat(32)}" "--node-id" "build-1" "--display-name" "Build box 100%%"`,
    );
    expect(text).toContain('Description=claw node host');
    expect(text).toContain(`Environment="OPENCLAW_STATE_DIR=${stateDir}"`);
    expect(text).toContain('TimeoutStopSec=30');
    expect(text).toContain('Restart=always');
    expect(calls()).toEqual([
      '--user daemon-reload',
      '--user show openclaw-node.service --property=LoadState,ActiveState,SubState,UnitFileState,MainPID',
      '--user enable --now openclaw-node.service',
    ]);

    const again = await run('install', [
      '--host',
      'gw.example.lan',
      '--port',
      '18790',
      '--tls',
      '--tls-fingerprint',
      'AB'.repeat(32),
      '--display-name',
      'Build box 100%',
      '--node-id',
      'build-1',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`Already installed: ${unit}`);
    const other = await run('install', ['--port', '18791']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/differs from what this install would write .*rerun with --force/);
    expect(readFileSync(unit, 'utf8')).toBe(text);
    const forced = await run('install', ['--port', '18791', '--force', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      ok: true,
      action: 'install',
      replaced: true,
      started: true,
      args: ['node', 'run', '--port', '18791'],
    });
    expect(calls().at(-1)).toBe('--user restart openclaw-node.service');
  }, 60_000);

  it('writes a unit systemd-analyze verifies', async (context) => {
    if (!existsSync('/usr/bin/systemd-analyze'))
      context.skip('systemd-analyze is not installed (/usr/bin/systemd-analyze, Debian package systemd)');
    const { home, run } = setup({ OPENCLAW_PROFILE: 'lab' });
    expect((await run('install', ['--display-name', 'Lab "one"'])).code).toBe(0);
    const unit = join(home, '.config', 'systemd', 'user', 'openclaw-node-lab.service');
    expect(readFileSync(unit, 'utf8')).toContain('Description=claw node host (profile lab)');
    const verified = spawnSync('/usr/bin/systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stderr).not.toContain(unit);
  }, 60_000);

  it('starts, stops, restarts, reports status and uninstalls through systemctl --user', async () => {
    const { unit, calls, run } = setup();
    const notYet = await run('start');
    expect(notYet.code).toBe(1);
    expect(notYet.stderr).toContain('the node host service is not installed');
    expect(notYet.stderr).toContain('claw node install');
    const restartFirst = await run('restart');
    expect(restartFirst.code).toBe(1);
    expect(restartFirst.stderr).toContain('install it with: claw node install');
    expect((await run('install')).code).toBe(0);
    for (const action of ['start', 'stop', 'restart'] as const) {
      const result = await run(action);
      expect(result.code, result.stderr).toBe(0);
      expect(calls().at(-1)).toBe(`--user ${action} openclaw-node.service`);
    }
    const status = await run('status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('Service: openclaw-node.service (systemd user unit)');
    expect(status.stdout).toContain(`File:    ${unit} — installed`);
    expect(status.stdout).toContain('State:   active (running), enabled, pid 4242');
    expect(JSON.parse((await run('status', ['--json'])).stdout)).toMatchObject({
      ok: true,
      service: { service: 'openclaw-node.service', installed: true, state: { pid: 4242 } },
    });
    const removed = await run('uninstall');
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`Removed ${unit}`);
    expect(existsSync(unit)).toBe(false);
    expect(calls().slice(-2)).toEqual(['--user disable --now openclaw-node.service', '--user daemon-reload']);
    const twice = await run('uninstall');
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain('No node host service is installed');
  }, 60_000);

  it('says the service manager is unavailable, suggests the foreground, and exits 1', async () => {
    const { unit, run } = setup({ FAKE_SYSTEMCTL_NOBUS: '1' });
    const install = await run('install');
    expect(install.code).toBe(1);
    expect(install.stderr).toContain('systemd user manager (systemctl --user) is not available here');
    expect(install.stderr).toContain(`the unit is written (${unit})`);
    expect(install.stderr).toContain('Run the node host in the foreground instead: claw node run');
    for (const action of ['start', 'stop', 'restart'] as const) {
      const result = await run(action);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/not available here[\s\S]*claw node run/);
    }
    const status = await run('status', ['--json']);
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout)).toMatchObject({
      ok: false,
      service: { installed: true, unavailable: expect.stringContaining('not available') },
    });
    expect((await run('uninstall')).code).toBe(0);
    expect(existsSync(unit)).toBe(false);
  }, 60_000);

  it('refuses bad flags before writing anything', async () => {
    const { unit, run } = setup();
    await expect(run('install', ['--port', '70000'])).rejects.toThrow(/--port must be a port number/);
    await expect(run('install', ['--runtime', 'bun'])).rejects.toThrow(/Node only/);
    await expect(run('install', ['--pair', 'abc'])).rejects.toThrow(/must not be stored in a service/);
    await expect(run('install', ['--tls-fingerprint', 'nope'])).rejects.toThrow(/SHA-256 fingerprint/);
    await expect(run('install', ['--display-name', 'a\nb'])).rejects.toThrow(/single line/);
    await expect(run('stop', ['--force'])).rejects.toThrow(/Unknown option '--force'/);
    await expect(run('install', ['--tls', '--no-tls'])).rejects.toThrow(/contradict/);
    expect(existsSync(unit)).toBe(false);
    expect(nodeRunArgs({})).toEqual(['node', 'run']);
    expect(nodeRunArgs({ 'context-path': '/openclaw-gw', 'no-tls': true })).toEqual([
      'node',
      'run',
      '--context-path',
      '/openclaw-gw',
      '--no-tls',
    ]);
    expect(NODE_SERVICE_SUBCOMMANDS.install.help).toContain('openclaw-node.service');
    expect(Object.keys(NODE_SERVICE_SUBCOMMANDS)).toEqual([
      'install',
      'uninstall',
      'start',
      'stop',
      'restart',
      'status',
    ]);
  });
});

describe('unit text for another claw program', () => {
  const spec: ServiceSpec = {
    platform: 'darwin',
    home: '/Users/me',
    nodePath: '/usr/local/bin/node',
    cliPath: '/opt/claw/dist/apps/cli/bin.cjs',
    port: 0,
    environment: { OPENCLAW_STATE_DIR: '/Users/me/.openclaw' },
    logDir: '/Users/me/.openclaw/logs',
  };
  const program = {
    kind: 'node',
    description: 'claw node host',
    args: ['node', 'run', '--port', '1'],
    stopTimeoutSec: 30,
  };

  it('writes a launchd agent ai.openclaw.node with the program, its own logs and stop timeout', () => {
    const plist = serviceFileText(spec, program);
    expect(plist).toContain('<string>ai.openclaw.node</string>');
    expect(plist).toContain('<string>node</string>\n    <string>run</string>');
    expect(plist).toContain('/Users/me/.openclaw/logs/node.service.err.log');
    expect(plist).toContain('<key>ExitTimeOut</key>\n  <integer>30</integer>');
    expect(serviceFileText({ ...spec, profile: 'lab' }, program)).toContain('<string>ai.openclaw.node.lab</string>');
  });

  it("leaves the gateway's own unit as it was", () => {
    const gateway = systemdUnit({ ...spec, platform: 'linux', port: 18789 });
    expect(gateway).toContain('Description=claw gateway\n');
    expect(gateway).toContain('"gateway" "--port" "18789"');
    expect(gateway).toContain('TimeoutStopSec=330');
    expect(serviceFileText({ ...spec, platform: 'linux', port: 18789 })).toBe(gateway);
  });
});
