/**
 * Config writes never lose updates, idempotency keys survive restarts, and config changes
 * reach a running gateway (issue 11, parts 2 and 3) — all over real processes.
 */
import { existsSync, readdirSync, readFileSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayClient } from '../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../sdk/device-auth.js';
import { changedPaths, planReload, reloadKind } from '../plugins/gateway/reload-plan.js';
import { diffMergePatch } from '../apps/cli/config-patch.js';
import { withFileLock } from '../sdk/file-lock.js';
import { claw, startCliGateway, tempDir, waitFor } from './helpers.js';

const TOKEN = 'config-writes-token-0123456789abcdef';

function setup(config: Record<string, unknown> = {}) {
  const stateDir = tempDir('claw-cfgw-');
  const file = join(stateDir, 'openclaw.json');
  writeFileSync(file, JSON.stringify({ gateway: { auth: { token: TOKEN } }, ...config }), { mode: 0o600 });
  return { stateDir, file, env: { OPENCLAW_STATE_DIR: stateDir } };
}

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;

async function call(env: Record<string, string>, method: string, params: Record<string, unknown> = {}) {
  const result = await claw(['gateway', 'call', method, '--params', JSON.stringify(params)], env);
  return { ...result, json: result.code === 0 ? (JSON.parse(result.stdout) as Record<string, any>) : undefined };
}

/** 10 `claw config set` processes at once, each its own key under one object, plus one array edit. */
async function tenWriters(env: Record<string, string>) {
  const runs = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      claw(['config', 'set', '--json', `channels.c${i}.dmPolicy`, i % 2 ? 'disabled' : 'allowlist'], env),
    ),
  );
  for (const run of runs) expect(run.code, run.stderr).toBe(0);
  return runs.map((run) => JSON.parse(run.stdout) as Record<string, any>);
}

describe('config writes never lose updates', () => {
  it('10 concurrent `claw config set` without a gateway: every key survives, the file stays owner-only, no lock is left', async () => {
    const { env, file, stateDir } = setup({ meta: { keep: true } });
    const results = await tenWriters(env);
    expect(results.every((result) => result.via === 'file' && result.changed)).toBe(true);
    const config = read(file);
    for (let i = 0; i < 10; i++)
      expect(config.channels[`c${i}`]).toEqual({ dmPolicy: i % 2 ? 'disabled' : 'allowlist' });
    expect(config.meta).toEqual({ keep: true });
    expect(config.gateway.auth.token).toBe(TOKEN);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(stateDir).filter((name) => name.includes('.lock') || name.endsWith('.tmp'))).toEqual([]);
  });

  it('10 concurrent `claw config set` through a running gateway: every key survives and each answer says it is live', async () => {
    const { env, file } = setup();
    await startCliGateway(env);
    const results = await tenWriters(env);
    for (const result of results) {
      expect(result).toMatchObject({ via: 'gateway', changed: true, restartRequired: false });
      expect(result.reload.hotPaths).toEqual([result.path]);
    }
    const config = read(file);
    for (let i = 0; i < 10; i++) expect(config.channels[`c${i}`].dmPolicy).toBe(i % 2 ? 'disabled' : 'allowlist');
  });

  it('a writer waits for the config lock and a dead holder does not block it', async () => {
    const { env, file, stateDir } = setup();
    // A lock left by a process that died (a pid that cannot exist) is taken over at once.
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({
        pid: 2 ** 22 + 12345,
        hostname: (await import('node:os')).hostname(),
        startedAt: new Date().toISOString(),
      }),
    );
    const taken = await claw(['config', 'set', 'meta.a', '1'], env);
    expect(taken.code, taken.stderr).toBe(0);
    // A live holder makes the writer wait, then its change lands on top of the holder's.
    // Each try at the lock links a fresh temp file `openclaw.json.lock.<pid>.<hex>`; a second
    // try by the writer shows its first one found the lock held, and that it is waiting.
    const tries = new Set<string>();
    const watcher = watch(stateDir, (_event, name) => {
      const match = name === null ? null : /^openclaw\.json\.lock\.(\d+)\.[0-9a-f]+$/.exec(name);
      if (match && Number(match[1]) !== process.pid) tries.add(name!);
    });
    let writer: Promise<{ code: number; stderr: string }> | undefined;
    await withFileLock(`${file}.lock`, async () => {
      writer = claw(['config', 'set', 'meta.b', '2'], env);
      await waitFor(() => tries.size >= 2, { what: 'the writer to try the held lock twice' });
      expect(read(file).meta).toEqual({ a: 1 });
      writeFileSync(file, JSON.stringify({ ...read(file), meta: { a: 1, c: 3 } }));
    });
    watcher.close();
    expect((await writer!).code).toBe(0);
    expect(read(file).meta).toEqual({ a: 1, b: 2, c: 3 });
  });

  it('config.set/patch with a stale baseHash are refused with CONFIG_CONFLICT and change nothing', async () => {
    const { env, file } = setup();
    await startCliGateway(env);
    const got = (await call(env, 'config.get')).json!;
    const first = await call(env, 'config.patch', {
      patch: { meta: { a: 1 } },
      baseHash: got.hash,
      idempotencyKey: 'p1',
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.json!.hash).not.toBe(got.hash);
    const before = readFileSync(file, 'utf8');
    for (const [method, params] of [
      ['config.patch', { patch: { meta: { b: 2 } } }],
      ['config.set', { config: { meta: { c: 3 }, gateway: { auth: { token: TOKEN } } } }],
    ] as const) {
      const stale = await call(env, method, { ...params, baseHash: got.hash, idempotencyKey: `${method}-stale` });
      expect(stale.code).toBe(1);
      expect(stale.stderr).toMatch(
        /INVALID_REQUEST: the config file changed since it was read \(baseHash [0-9a-f]{12}… is not the current [0-9a-f]{12}…\)/,
      );
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    // With the current hash it goes through.
    const fresh = await call(env, 'config.patch', {
      patch: { meta: { b: 2 } },
      baseHash: first.json!.hash,
      idempotencyKey: 'p2',
    });
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(read(file).meta).toEqual({ a: 1, b: 2 });
  });
});

describe('hot reload (gateway.reload)', () => {
  it('a dmPolicy change takes effect in the running gateway without a restart; other changes say a restart is needed', async () => {
    const { env, file } = setup({ gateway: { auth: { token: TOKEN }, reload: { mode: 'hot' } } });
    const gw = await startCliGateway(env);
    // A client of its own: while the file is invalid, CLI processes cannot boot.
    const browser = new GatewayClient({
      url: `ws://127.0.0.1:${gw.port}`,
      token: TOKEN,
      identity: generateDeviceIdentity(),
      scopes: ['operator.read', 'operator.write'],
    });
    await browser.connect();
    const send = async (id: string) => ({
      json: await browser.request<Record<string, any>>('webchat.send', {
        text: 'hello',
        clientId: 'browser1',
        idempotencyKey: id,
      }),
    });
    expect((await send('m1')).json).toMatchObject({ status: 'dispatched' });

    const set = await claw(['config', 'set', 'channels.webchat.dmPolicy', 'disabled'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('Set channels.webchat.dmPolicy. Applied to the running gateway without a restart.\n');
    expect((await send('m2')).json).toMatchObject({
      status: 'blocked',
      reason: expect.stringContaining('dmPolicy "disabled"'),
    });

    // An edit made outside the gateway (an editor) is picked up from disk too.
    writeFileSync(
      file,
      JSON.stringify({ ...read(file), channels: { webchat: { dmPolicy: 'open', allowFrom: ['*'] } } }),
    );
    let attempt = 0;
    const reopened = await waitFor(
      async () => {
        const answer = (await send(`m3-${attempt++}`)).json;
        return answer.status === 'dispatched' ? answer : undefined;
      },
      { intervalMs: 100, what: 'the gateway to pick up dmPolicy "open" from disk' },
    );
    expect(reopened).toMatchObject({ status: 'dispatched' });
    // An invalid edit on disk is refused; the running config stays.
    writeFileSync(file, JSON.stringify({ ...read(file), channels: { webchat: { dmPolicy: 'nobody' } } }));
    await waitFor(() => gw.stdout().includes('config change on disk ignored'), {
      what: 'the gateway to refuse the invalid edit',
    });
    expect(gw.stdout()).toMatch(
      /config change on disk ignored, the running config stays: channels\.webchat\.dmPolicy: must be one of/,
    );
    expect((await send('m4')).json).toMatchObject({ status: 'dispatched' });
    writeFileSync(
      file,
      JSON.stringify({ ...read(file), channels: { webchat: { dmPolicy: 'open', allowFrom: ['*'] } } }),
    );

    // Not safe to apply in place: in "hot" mode the CLI and the method result say so.
    const restart = await claw(['config', 'set', '--json', 'gateway.tickIntervalMs', '20000'], env);
    expect(restart.code, restart.stderr).toBe(0);
    expect(JSON.parse(restart.stdout)).toMatchObject({
      via: 'gateway',
      restartRequired: true,
      reload: {
        mode: 'hot',
        restartPaths: ['gateway.tickIntervalMs'],
        restartRequired: true,
        restartScheduled: false,
        message: 'Restart the gateway to apply gateway.tickIntervalMs.',
      },
    });
    const patched = await call(env, 'config.patch', {
      patch: { gateway: { presenceIntervalMs: 2000 } },
      baseHash: (await call(env, 'config.get')).json!.hash,
      idempotencyKey: 'r2',
    });
    expect(patched.json).toMatchObject({
      restartRequired: true,
      message: 'Restart the gateway to apply gateway.tickIntervalMs, gateway.presenceIntervalMs.',
    });
    // The status round trip is answered after both edits were handled, by the same process: no restart.
    const status = (await call(env, 'status')).json!;
    expect(status.pid).toBe(gw.child.pid);
    expect(gw.stdout()).not.toContain('restarting');

    // "hybrid" (the default) restarts in place for what needs it.
    const hybrid = await claw(['config', 'unset', 'gateway.reload'], env);
    expect(hybrid.stdout).toBe(
      'Removed gateway.reload. The gateway is restarting to apply gateway.tickIntervalMs, gateway.presenceIntervalMs.\n',
    );
    await waitFor(
      () =>
        /restarting \(config change: gateway\.tickIntervalMs, gateway\.presenceIntervalMs\)[\s\S]*gateway listening/.test(
          gw.stdout(),
        ),
      {
        what: 'the in-place restart and the gateway listening again',
      },
    );
    expect(gw.stdout()).toMatch(
      /restarting \(config change: gateway\.tickIntervalMs, gateway\.presenceIntervalMs\)[\s\S]*gateway listening/,
    );
    const nothing = await claw(['config', 'set', 'meta.note', 'x'], env);
    expect(nothing.stdout).toBe('Set meta.note. No gateway restart needed.\n');
    await browser.close();
  });

  it('plans each changed path: hot, restart or nothing', () => {
    expect(changedPaths({ a: { b: 1, c: [1] } }, { a: { b: 1, c: [1, 2] }, d: { e: 1 } })).toEqual([
      ['a', 'c'],
      ['d', 'e'],
    ]);
    expect(reloadKind(['channels', 'telegram', 'dmPolicy'])).toBe('hot');
    expect(reloadKind(['channels', 'telegram', 'accounts', 'work', 'allowFrom'])).toBe('hot');
    expect(reloadKind(['channels', 'telegram', 'botToken'])).toBe('restart');
    expect(reloadKind(['models', 'providers', 'openai', 'apiKey'])).toBe('hot');
    expect(reloadKind(['tools', 'deny'])).toBe('hot');
    expect(reloadKind(['agents', 'defaults', 'model', 'primary'])).toBe('hot');
    expect(reloadKind(['agents', 'defaults', 'workspace'])).toBe('restart');
    expect(reloadKind(['gateway', 'reload', 'mode'])).toBe('none');
    expect(reloadKind(['plugins', 'entries', 'x', 'enabled'])).toBe('restart');
    expect(planReload({}, { meta: { a: 1 }, gateway: { port: 1 }, tools: { deny: ['exec'] } })).toEqual({
      changedPaths: ['meta.a', 'gateway.port', 'tools.deny'],
      hot: [['tools', 'deny']],
      restart: [['gateway', 'port']],
      none: [['meta', 'a']],
    });
    expect(diffMergePatch({ a: { b: 1, c: 2 }, l: [1] }, { a: { b: 1 }, l: [1, 2], n: 'x' })).toEqual({
      a: { c: null },
      l: [1, 2],
      n: 'x',
    });
  });
});

describe('idempotency keys survive a gateway restart', () => {
  it('a retry after kill -9 and restart gets the first outcome without running again; other params are refused by name', async () => {
    const { env, file, stateDir } = setup();
    const first = await startCliGateway(env);
    const request = {
      patch: { meta: { value: 1 } },
      baseHash: (await call(env, 'config.get')).json!.hash,
      idempotencyKey: 'retry-me',
    };
    const original = await call(env, 'config.patch', request);
    expect(original.code, original.stderr).toBe(0);
    const later = await call(env, 'config.patch', {
      patch: { meta: { value: 2 } },
      baseHash: original.json!.hash,
      idempotencyKey: 'another',
    });
    expect(later.code).toBe(0);
    const keys = join(stateDir, 'gateway', 'idempotency.jsonl');
    expect(statSync(keys).mode & 0o777).toBe(0o600);

    first.child.kill('SIGKILL');
    await first.exited;
    await startCliGateway(env);
    const retried = await call(env, 'config.patch', request);
    expect(retried.code, retried.stderr).toBe(0);
    // The first outcome (its hash), and the file still holds the later write: it did not run again.
    expect(retried.json).toEqual(original.json);
    expect(read(file).meta).toEqual({ value: 2 });

    const mismatch = await call(env, 'config.patch', { ...request, patch: { meta: { value: 3 } } });
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toBe(
      'claw: INVALID_REQUEST: idempotencyKey "retry-me" was already used for a config.patch request with different params; send a new key for a new request, or the same params to get the first result\n',
    );
    expect(read(file).meta).toEqual({ value: 2 });
    expect(existsSync(keys)).toBe(true);
  });
});
