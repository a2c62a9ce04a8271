/**
 * `claw onboard`'s daemon step: the gateway installed as a systemd user unit through the
 * gateway plugin's `gateway-daemon` service, against a fake `systemctl` first on PATH
 * (test/fakes/systemctl.ts) and a temporary HOME — from the flags, and over the gateway's
 * wizard.* methods.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { fakeSystemctl } from './fakes/systemctl.js';
import { spawnCliGateway } from './cli-gateway.js';
import { client } from './gateway-helpers.js';
import { claw, CLI, tempDir } from './helpers.js';

const SHOW = '--user show openclaw-gateway.service --property=LoadState,ActiveState,SubState,UnitFileState,MainPID';

function setup(options: { noBus?: boolean } = {}) {
  const home = tempDir('claw-onboard-daemon-');
  const stateDir = join(home, 'state');
  const fake = fakeSystemctl(home, options);
  const env = { ...fake.env, OPENCLAW_STATE_DIR: stateDir };
  return {
    ...fake,
    env,
    stateDir,
    config: (): any => JSON5.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8')),
  };
}

const base = ['onboard', '--non-interactive', '--accept-risk', '--auth-choice', 'skip', '--skip-channels'];

describe('claw onboard --non-interactive, daemon step', () => {
  it('--install-daemon writes the unit for the chosen port and enables and starts it with systemctl --user', async () => {
    const s = setup();
    const result = await claw(
      [...base, '--skip-health', '--gateway-port', '18777', '--install-daemon', '--json'],
      s.env,
    );
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.daemon).toMatchObject({ installed: true });
    expect(summary.daemon.message).toContain(`Wrote ${s.unit}`);
    expect(summary.daemon.message).toContain('enabled and started (port 18777)');
    const unit = readFileSync(s.unit, 'utf8');
    expect(unit).toContain(`ExecStart="${process.execPath}" "${CLI}" "gateway" "--port" "18777"`);
    expect(unit).toContain(`Environment="OPENCLAW_STATE_DIR=${s.stateDir}"`);
    // The gateway's token is in the config, never in the unit.
    const token = s.config().gateway.auth.token as string;
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(unit).not.toContain(token);
    expect(s.calls()).toEqual([SHOW, '--user daemon-reload', SHOW, '--user enable --now openclaw-gateway.service']);
  }, 60_000);

  it('without a service manager says so, installs nothing, and the rest of the setup stands (exit 0)', async () => {
    const s = setup({ noBus: true });
    const result = await claw([...base, '--gateway-port', '18778', '--install-daemon'], s.env);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toContain(
      'Gateway service: not installed — No service manager here: run `claw gateway` in the foreground (the systemd user manager (systemctl --user) is not available here (Failed to connect to bus',
    );
    // The health check after it: no gateway runs, and none was started.
    expect(result.stdout).toContain('The gateway is not running: start it with claw gateway');
    expect(existsSync(s.unit)).toBe(false);
    expect(s.calls()).toEqual([SHOW]);
    expect(s.config().gateway).toMatchObject({ port: 18778, auth: { mode: 'token' } });
  }, 60_000);

  it('installs nothing without --install-daemon (nor asks the service manager), and refuses contradicting flags', async () => {
    const s = setup();
    const quiet = await claw([...base, '--skip-health', '--json'], s.env);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(JSON.parse(quiet.stdout).daemon).toEqual({ installed: false, message: 'not installed' });
    const skipped = await claw([...base, '--skip-health', '--skip-daemon'], s.env);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toContain('Gateway service: not installed (later: claw gateway install');
    expect(existsSync(s.unit)).toBe(false);
    expect(s.calls()).toEqual([]);

    const both = await claw([...base, '--install-daemon', '--no-install-daemon'], s.env);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--install-daemon and --no-install-daemon/--skip-daemon contradict each other');
    const elsewhere = await claw([...base, '--section', 'model', '--install-daemon'], s.env);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('--install-daemon is for the whole setup or --section daemon');
  }, 60_000);

  it('--section daemon runs only the daemon step', async () => {
    const s = setup();
    const result = await claw(
      ['onboard', '--non-interactive', '--accept-risk', '--section', 'daemon', '--install-daemon', '--skip-health'],
      s.env,
    );
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stdout.trim()).toBe('Gateway service: installed (claw gateway status shows it)');
    expect(readFileSync(s.unit, 'utf8')).toContain('"--port" "18789"');
  }, 60_000);
});

describe('the daemon step over the gateway (wizard.*)', () => {
  it('is offered, defaulting to yes, and enables the unit without starting a second gateway', async () => {
    const TOKEN = 'onboard-daemon-token-0123456789abcdef';
    const s = setup();
    mkdirSync(s.stateDir, { mode: 0o700 });
    writeFileSync(
      join(s.stateDir, 'openclaw.json'),
      JSON.stringify({ gateway: { auth: { mode: 'token', token: TOKEN } } }),
    );
    const gw = await spawnCliGateway(CLI, s.env);
    const c = await client(`ws://127.0.0.1:${gw.port}`, { token: TOKEN });
    try {
      let response: any = await c.request('wizard.start', { section: 'daemon' });
      expect(response.step).toMatchObject({
        id: 'daemon.install',
        type: 'confirm',
        message: 'Install the gateway as a service (systemd user unit / launchd)?',
        initialValue: true,
      });
      response = await c.request('wizard.next', {
        sessionId: response.sessionId,
        answer: { stepId: 'daemon.install', value: true },
      });
      // This gateway holds the state dir's lock: the service is enabled for the next login, not started.
      expect(response.step).toMatchObject({ id: 'daemon.result', type: 'note', title: 'Gateway service' });
      expect(response.step.message).toContain(`Wrote ${s.unit}`);
      expect(response.step.message).toContain(
        `enabled, not started: a gateway is already running outside the service (pid ${gw.child.pid})`,
      );
      response = await c.request('wizard.next', { sessionId: response.sessionId });
      expect(response.step).toMatchObject({ id: 'done', type: 'note' });
      expect(response.step.message).toContain('Gateway service: installed');
      expect(existsSync(s.unit)).toBe(true);
      expect(s.calls()).toEqual([SHOW, '--user daemon-reload', SHOW, '--user enable openclaw-gateway.service']);
    } finally {
      c.close();
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  }, 60_000);
});
