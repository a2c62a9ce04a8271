/**
 * `claw gateway install|uninstall|start|stop|restart|status` against a fake `systemctl`
 * placed first on PATH (test/fakes/systemctl.ts); the unit it writes is checked by the real
 * systemd-analyze.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchdPlist, systemdUnit, type ServiceSpec } from '../plugins/gateway/daemon/unit-files.js';
import { fakeSystemctl } from './fakes/systemctl.js';
import { CLI, claw, tempDir } from './helpers.js';

const TOKEN = 'tok-service-test-0123456789abcdef';

function setup(extraEnv: Record<string, string> = {}) {
  const home = tempDir('claw-svc-home-');
  const stateDir = join(home, 'state');
  const fake = fakeSystemctl(home);
  mkdirSync(stateDir, { mode: 0o700 });
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ gateway: { auth: { token: TOKEN } } }));
  const env = { ...fake.env, OPENCLAW_STATE_DIR: stateDir, ...extraEnv };
  return { home, stateDir, env, calls: fake.calls, unit: fake.unit };
}

describe('claw gateway install/uninstall/start/stop/restart/status (systemd user unit)', () => {
  it('installs a unit that runs this node and claw, with the state dir and no secret, idempotently', async () => {
    const { env, calls, unit, stateDir } = setup();
    const installed = await claw(['gateway', 'install', '--port', '18999'], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`Wrote ${unit}`);
    const text = readFileSync(unit, 'utf8');
    expect(text).toContain(`ExecStart="${process.execPath}" "${CLI}" "gateway" "--port" "18999"`);
    expect(text).toContain(`Environment="OPENCLAW_STATE_DIR=${stateDir}"`);
    expect(text).toContain('Restart=always');
    expect(text).toContain('WantedBy=default.target');
    expect(text).not.toContain(TOKEN);
    expect(calls()).toEqual([
      '--user daemon-reload',
      '--user show openclaw-gateway.service --property=LoadState,ActiveState,SubState,UnitFileState,MainPID',
      '--user enable --now openclaw-gateway.service',
    ]);

    // The same install again changes nothing; a different one needs --force, which restarts.
    const again = await claw(['gateway', 'install', '--port', '18999'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`Already installed: ${unit}`);
    expect(readFileSync(unit, 'utf8')).toBe(text);
    const other = await claw(['gateway', 'install', '--port', '19000'], env);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(
      /differs from what this install would write \(line \d+: .*18999.*19000.*\); rerun with --force/,
    );
    expect(readFileSync(unit, 'utf8')).toBe(text);
    const forced = await claw(['gateway', 'install', '--port', '19000', '--force', '--json'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      ok: true,
      action: 'install',
      replaced: true,
      started: true,
      port: 19000,
    });
    expect(readFileSync(unit, 'utf8')).toContain('"--port" "19000"');
    expect(calls().at(-1)).toBe('--user restart openclaw-gateway.service');
  }, 60_000);

  it('writes a unit systemd-analyze verifies', async (context) => {
    if (!existsSync('/usr/bin/systemd-analyze')) {
      context.skip('systemd-analyze is not installed (/usr/bin/systemd-analyze, Debian package systemd)');
    }
    const { env, unit } = setup({ OPENCLAW_PROFILE: 'work' });
    // A profile names the unit after it and goes into the unit's environment.
    const installed = await claw(['gateway', 'install', '--port', '18998'], env);
    expect(installed.code, installed.stderr).toBe(0);
    const profiled = unit.replace('openclaw-gateway.service', 'openclaw-gateway-work.service');
    expect(readFileSync(profiled, 'utf8')).toContain('Environment="OPENCLAW_PROFILE=work"');
    const verified = spawnSync('/usr/bin/systemd-analyze', ['verify', profiled], { encoding: 'utf8' });
    expect(verified.status, verified.stderr).toBe(0);
    // systemd-analyze exits 0 on an unknown or unparsable line too; it only says so on stderr.
    expect(verified.stderr).not.toContain(profiled);
  }, 60_000);

  it('starts, stops, restarts, reports status and uninstalls through systemctl --user', async () => {
    const { env, calls, unit } = setup();
    const notYet = await claw(['gateway', 'start'], env);
    expect(notYet.code).toBe(1);
    expect(notYet.stderr).toContain('not installed');
    expect((await claw(['gateway', 'install', '--port', '18997'], env)).code).toBe(0);
    for (const action of ['start', 'stop', 'restart']) {
      const result = await claw(['gateway', action], env);
      expect(result.code, result.stderr).toBe(0);
      expect(calls().at(-1)).toBe(`--user ${action} openclaw-gateway.service`);
    }
    const status = await claw(['gateway', 'status', '--port', '18997'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`File:    ${unit} — installed`);
    expect(status.stdout).toContain('State:   active (running), enabled, pid 4242');
    expect(status.stdout).toContain('Gateway lock: none');
    expect(status.stdout).toMatch(/Probe: {3}no answer from ws:\/\/127\.0\.0\.1:18997/);
    const json = JSON.parse((await claw(['gateway', 'status', '--port', '18997', '--json'], env)).stdout);
    expect(json).toMatchObject({
      ok: true,
      service: {
        service: 'openclaw-gateway.service',
        installed: true,
        current: true,
        state: { pid: 4242, loaded: true },
      },
      lock: null,
      probe: { ok: false },
    });

    const removed = await claw(['gateway', 'uninstall'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(unit)).toBe(false);
    expect(calls().slice(-2)).toEqual(['--user disable --now openclaw-gateway.service', '--user daemon-reload']);
    const twice = await claw(['gateway', 'uninstall'], env);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain('No gateway service is installed');
  }, 90_000);

  it('says the service manager is unavailable, suggests the foreground, and exits 1', async () => {
    const { env, unit, stateDir } = setup({ FAKE_SYSTEMCTL_NOBUS: '1' });
    const install = await claw(['gateway', 'install', '--port', '18996'], env);
    expect(install.code).toBe(1);
    expect(install.stderr).toContain(
      'systemd user manager (systemctl --user) is not available here (Failed to connect to bus',
    );
    expect(install.stderr).toContain(`The unit is written (${unit})`);
    expect(install.stderr).toContain('Run the gateway in the foreground instead: claw gateway');
    for (const action of ['start', 'stop', 'restart']) {
      const result = await claw(['gateway', action], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/not available here[\s\S]*claw gateway/);
    }
    // A fresh install with no gateway auth configured yet still gets its status.
    rmSync(join(stateDir, 'openclaw.json'));
    const status = await claw(['gateway', 'status', '--json'], env);
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout)).toMatchObject({
      ok: false,
      service: { installed: true, unavailable: expect.stringContaining('not available') },
      probe: { ok: false },
    });
    // Removing the unit still works: there is no manager running it.
    const removed = await claw(['gateway', 'uninstall'], env);
    expect(removed.code).toBe(0);
    expect(existsSync(unit)).toBe(false);
  }, 90_000);
});

describe('launchd agent (macOS)', () => {
  const spec: ServiceSpec = {
    platform: 'darwin',
    home: '/Users/ann',
    profile: 'work',
    nodePath: '/opt/homebrew/bin/node',
    cliPath: '/opt/homebrew/lib/node_modules/@claw-assistant/claw/dist/apps/cli/bin.cjs',
    port: 18789,
    environment: { OPENCLAW_PROFILE: 'work', OPENCLAW_STATE_DIR: '/Users/ann/claw & co' },
    logDir: '/Users/ann/.openclaw-work/logs',
  };

  it('is a plist with the profile label, the command, the environment escaped, and keep-alive', () => {
    const plist = launchdPlist(spec);
    expect(plist).toContain('<key>Label</key>\n  <string>ai.openclaw.work</string>');
    expect(plist).toContain(
      '<array>\n    <string>/opt/homebrew/bin/node</string>\n    <string>/opt/homebrew/lib/node_modules/@claw-assistant/claw/dist/apps/cli/bin.cjs</string>\n    <string>gateway</string>\n    <string>--port</string>\n    <string>18789</string>\n  </array>',
    );
    expect(plist).toContain('<key>OPENCLAW_STATE_DIR</key>\n    <string>/Users/ann/claw &amp; co</string>');
    expect(plist).toContain('<key>KeepAlive</key>\n  <true/>');
    expect(plist).toContain('<key>RunAtLoad</key>\n  <true/>');
  });

  it('passes plutil -lint', (context) => {
    const plutil = spawnSync('plutil', ['-help']);
    if (plutil.error) context.skip('plutil is not installed (it ships with macOS)');
    const file = join(tempDir('claw-plist-'), 'ai.openclaw.work.plist');
    writeFileSync(file, launchdPlist(spec));
    const lint = spawnSync('plutil', ['-lint', file], { encoding: 'utf8' });
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
  });

  it('a systemd unit quotes paths with spaces, quotes and percent signs', () => {
    const unit = systemdUnit({
      ...spec,
      platform: 'linux',
      nodePath: '/opt/my node/bin/node',
      environment: { OPENCLAW_STATE_DIR: '/srv/50% "state"' },
    });
    expect(unit).toContain('ExecStart="/opt/my node/bin/node" ');
    expect(unit).toContain('Environment="OPENCLAW_STATE_DIR=/srv/50%% \\"state\\""');
  });
});
