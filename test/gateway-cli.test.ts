import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayClient, GatewayRequestError } from '../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../sdk/device-auth.js';
import { CLI, claw, startCliGateway as startGateway, tempDir, waitFor } from './helpers.js';

function stateEnv() {
  const stateDir = tempDir('claw-gwcli-');
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir } };
}

describe('claw gateway', () => {
  it('runs in the foreground, answers health/status/call, and stops cleanly on SIGTERM', async () => {
    const { env, stateDir } = stateEnv();
    const gw = await startGateway(env);
    // No auth configured: a strong token was generated, saved owner-only, never printed.
    const configFile = join(stateDir, 'openclaw.json');
    const token = JSON.parse(readFileSync(configFile, 'utf8')).gateway.auth.token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(gw.stdout()).toContain('a token was generated and saved to');
    expect(gw.stdout()).not.toContain(token);
    const anonymous = await new GatewayClient({ url: `ws://127.0.0.1:${gw.port}`, identity: generateDeviceIdentity() })
      .connect()
      .catch((error: GatewayRequestError) => error);
    expect(anonymous).toMatchObject({ code: 'INVALID_REQUEST', details: { code: 'AUTH_TOKEN_MISSING' } });
    // The CLI reads it from the config file.
    const health = await claw(['health'], env);
    expect(health.code, health.stderr).toBe(0);
    expect(health.stdout).toMatch(/^Gateway ok · up \d+s · claw \d+\.\d+\.\d+/);
    const status = JSON.parse((await claw(['status', '--json'], env)).stdout);
    expect(status).toMatchObject({
      pid: gw.child.pid,
      listening: { port: gw.port, bind: 'loopback' },
      auth: { mode: 'token' },
      stateDir,
    });
    const called = await claw(['gateway', 'call', 'plugins.list'], env);
    expect(JSON.parse(called.stdout).plugins.find((p: { id: string }) => p.id === 'gateway')).toMatchObject({
      status: 'active',
    });
    const unknown = await claw(['gateway', 'call', 'no.such.method'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'claw: INVALID_REQUEST: unknown method "no.such.method"\n' });
    const badParams = await claw(['gateway', 'call', 'health', '--params', '{nope'], env);
    expect(badParams.code).toBe(2);
    expect(badParams.stderr).toMatch(/^claw: --params is not valid JSON/);
    // Bundled methods' parameter schemas come precompiled with the build: a fresh gateway
    // compiles none of them (no ajv loaded), and still names what was wrong.
    const wrongType = await claw(['gateway', 'call', 'health', '--params', '{"probe":"yes"}'], env);
    expect(wrongType.code).toBe(1);
    expect(wrongType.stderr).toContain('params.probe: must be boolean');
    expect(existsSync(join(stateDir, 'cache', 'validators'))).toBe(false);

    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stdout()).toContain('gateway stopped (SIGTERM)');
    expect(existsSync(join(stateDir, 'gateway.lock'))).toBe(false);
    expect(existsSync(join(stateDir, 'logs', 'gateway.log'))).toBe(true);
    const down = await claw(['health'], env);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^claw: UNAVAILABLE: gateway not reachable at ws:\/\/127\.0\.0\.1:18789/);
  }, 90_000);

  it('claw dashboard prints or opens the web UI URL with the token in the fragment', async () => {
    const { env, stateDir } = stateEnv();
    const gw = await startGateway(env);
    const token = JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8')).gateway.auth.token as string;
    const printed = await claw(['dashboard', '--no-open'], env);
    expect(printed).toMatchObject({ code: 0, stdout: `http://127.0.0.1:${gw.port}/#token=${token}\n`, stderr: '' });
    const json = JSON.parse((await claw(['dashboard', '--json'], env)).stdout);
    expect(json).toEqual({
      ok: true,
      url: `http://127.0.0.1:${gw.port}/#token=${token}`,
      httpUrl: `http://127.0.0.1:${gw.port}/`,
      wsUrl: `ws://127.0.0.1:${gw.port}`,
      port: gw.port,
      tokenIncluded: true,
      running: true,
    });
    // No desktop to open a browser on: it falls back to printing the URL.
    const headless = await claw(['dashboard'], { ...env, DISPLAY: '', WAYLAND_DISPLAY: '' });
    expect(headless.stdout).toContain(`#token=${token}`);
    gw.child.kill('SIGTERM');
    await gw.exited;
    const stopped = await claw(['dashboard', '--no-open'], env);
    expect(stopped.stderr).toContain('The gateway is not running for this state dir; start it with `claw gateway`.');
  });

  it('refuses a second gateway for the same state dir and a LAN bind without auth', async () => {
    const { env } = stateEnv();
    const gw = await startGateway(env);
    const second = await claw(['gateway', '--port', '0'], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `another gateway is already running for this state dir (pid ${gw.child.pid}, port ${gw.port})`,
    );
    gw.child.kill('SIGTERM');
    await gw.exited;
    const lan = await claw(['gateway', '--port', '0', '--bind', 'lan'], stateEnv().env);
    expect(lan.code).toBe(1);
    expect(lan.stderr).toMatch(/refusing to listen on 0\.0\.0\.0 without auth/);
    expect((await claw(['gateway', '--bind', 'moon'], env)).stderr).toBe(
      'claw: --bind must be loopback, lan or custom, got "moon"\n',
    );
  });

  it('requires the token it was started with, and pairs a remote device through `claw devices`', async () => {
    const { env } = stateEnv();
    const gw = await startGateway(env, ['--token', 'cli-secret']);
    const refused = await claw(['health'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('claw: INVALID_REQUEST: unauthorized: gateway token missing\n');
    const authed = { ...env, OPENCLAW_GATEWAY_TOKEN: 'cli-secret' };
    expect((await claw(['health'], authed)).code).toBe(0);

    const phone = generateDeviceIdentity();
    const remote = () =>
      new GatewayClient({
        url: `ws://127.0.0.1:${gw.port}`,
        token: 'cli-secret',
        identity: phone,
        headers: { 'x-forwarded-for': '198.51.100.9' },
      });
    const refusedPhone = await remote()
      .connect()
      .catch((error: GatewayRequestError) => error);
    expect(refusedPhone).toMatchObject({ code: 'NOT_PAIRED' });
    const requestId = ((refusedPhone as GatewayRequestError).details as { requestId: string }).requestId;
    const list = await claw(['devices', 'list'], authed);
    expect(list.stdout).toContain(
      `${requestId}  device ${phone.deviceId.slice(0, 12)}…  operator [operator.read]  from 127.0.0.1`,
    );
    expect(await claw(['devices', 'approve', requestId], authed)).toMatchObject({
      code: 0,
      stdout: `Approved request ${requestId}.\n`,
    });
    const paired = remote();
    const hello = await paired.connect();
    expect(hello.auth.deviceToken).toBeDefined();
    await paired.close();
    expect((await claw(['devices', 'reject', 'no-such-request'], authed)).stderr).toBe(
      'claw: INVALID_REQUEST: no pending pairing request "no-such-request"\n',
    );

    gw.child.kill('SIGTERM');
    await gw.exited;
    // With the gateway down, the pairing store is edited directly.
    const offline = await claw(['devices', 'list', '--json'], env);
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout).paired.some((d: { deviceId: string }) => d.deviceId === phone.deviceId)).toBe(
      true,
    );
  }, 90_000);

  it('config.apply writes the config and restarts the gateway in place', async () => {
    const { env, stateDir } = stateEnv();
    const auth = { token: 'apply-test-token-0123456789' };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ gateway: { tickIntervalMs: 30000, auth } }));
    const gw = await startGateway(env);
    const events: Array<{ event: string; payload: unknown }> = [];
    const watcher = new GatewayClient({
      url: `ws://127.0.0.1:${gw.port}`,
      ...auth,
      identity: generateDeviceIdentity(),
      onEvent: (f) => events.push({ event: f.event, payload: f.payload }),
    });
    await watcher.connect();
    const { hash } = JSON.parse((await claw(['gateway', 'call', 'config.get'], env)).stdout) as { hash: string };
    const applied = await claw(
      [
        'gateway',
        'call',
        'config.apply',
        '--params',
        JSON.stringify({
          config: { gateway: { tickIntervalMs: 15000, auth } },
          baseHash: hash,
          idempotencyKey: 'apply-1',
        }),
      ],
      env,
    );
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ restart: { scheduled: true, delayMs: 250 } });
    await waitFor(() => /restarting \(config\.apply\)[\s\S]*gateway listening/.test(gw.stdout()), {
      what: 'the restart and the gateway listening again',
    });
    expect(gw.stdout()).toMatch(/restarting \(config\.apply\)[\s\S]*gateway listening/);
    expect(events.find((e) => e.event === 'shutdown')).toEqual({
      event: 'shutdown',
      payload: { reason: 'config.apply', restartExpectedMs: 2000 },
    });
    const hello = await new GatewayClient({
      url: `ws://127.0.0.1:${gw.port}`,
      ...auth,
      identity: generateDeviceIdentity(),
    }).connect();
    expect(hello.policy.tickIntervalMs).toBe(15000);
    await watcher.close();
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  });

  it('starts in the kernel the command was found in; its flags beat the config file across restarts and are never saved', async () => {
    const { env, stateDir } = stateEnv();
    const configFile = join(stateDir, 'openclaw.json');
    const flagToken = 'flag-secret-0123456789abcdef';
    const configToken = 'config-token-0123456789abcdef';
    // hooks.token reuses the flag's secret: only the flag can tell the hooks plugin that.
    const config = { gateway: { auth: { token: configToken } }, hooks: { enabled: true, token: flagToken } };
    writeFileSync(configFile, JSON.stringify(config));
    const gw = await startGateway({ ...env, CLAW_TRACE_STARTUP: '1' }, ['--token', flagToken]);
    // One kernel boot before listening: the command's own kernel runs the gateway.
    expect(gw.stderr().match(/kernel: boot/g)).toHaveLength(1);
    const as = (token: string) => ({ ...env, OPENCLAW_GATEWAY_TOKEN: token });
    expect((await claw(['health'], as(flagToken))).code).toBe(0);
    expect((await claw(['health'], as(configToken))).stderr).toContain('unauthorized');
    await waitFor(() => gw.stdout().includes('webhooks not started'), { what: 'the webhook check' });
    expect(gw.stdout()).toContain('hooks.token is the same as the gateway token or password');

    // A restart (in a fresh kernel) keeps the flag and the port it got for --port 0.
    const { hash } = JSON.parse((await claw(['gateway', 'call', 'config.get'], as(flagToken))).stdout) as {
      hash: string;
    };
    const next = { ...config, gateway: { ...config.gateway, tickIntervalMs: 15000 } };
    const params = JSON.stringify({ config: next, baseHash: hash, idempotencyKey: 'flags-1' });
    const applied = await claw(['gateway', 'call', 'config.apply', '--params', params], as(flagToken));
    expect(applied.code, applied.stderr).toBe(0);
    await waitFor(() => (gw.stdout().match(/gateway listening/g) ?? []).length === 2, {
      what: 'the gateway listening again after the restart',
    });
    expect(gw.stdout()).toContain(`"port":${gw.port}`);
    expect((await claw(['health'], as(flagToken))).code).toBe(0);
    expect((await claw(['health'], as(configToken))).stderr).toContain('unauthorized');

    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    const saved = readFileSync(configFile, 'utf8');
    expect(JSON.parse(saved).gateway).toEqual({ auth: { token: configToken }, tickIntervalMs: 15000 });
    for (const text of [gw.stdout(), gw.stderr(), readFileSync(join(stateDir, 'logs', 'gateway.log'), 'utf8')])
      expect(text).not.toContain(flagToken);
  }, 90_000);

  it('lists its commands in claw --help', async () => {
    const help = await claw(['--help'], stateEnv().env);
    expect(help.stdout).toMatch(/Commands from plugins:[\s\S]*gateway\s+Run the gateway in the foreground/);
    expect(help.stdout).toMatch(/devices\s+List, approve and reject device pairing requests \(gateway\)/);
    const usage = await claw(['gateway', '--help']);
    expect(usage.stdout).toContain('Usage: claw gateway [run] [options]');
    expect(CLI).toBeTruthy();
  });
});
