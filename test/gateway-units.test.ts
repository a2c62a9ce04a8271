import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DedupeCache, paramsFingerprint } from '../plugins/gateway/dedupe.js';
import { mergePatch } from '../plugins/gateway/merge-patch.js';
import { PRESENCE_MAX_ENTRIES, PRESENCE_TTL_MS, PresenceTracker } from '../plugins/gateway/presence.js';
import { needsGeneratedToken, resolveSettings, type GatewaySection } from '../plugins/gateway/settings.js';
import { GATEWAY_DEFAULTS } from './gateway-helpers.js';
import { tailLog } from '../plugins/gateway/tail.js';
import { createGatewayLogging, prettyLine } from '../plugins/gateway/logging.js';
import { relayLogger } from '../apps/cli/relay-logger.js';
import { createLogger, type LogRecord } from '../sdk/logger.js';
import { PairingStore } from '../plugins/gateway/pairing.js';
import { createRedactor } from '../host/redact.js';
import { pluginsWithLeftWork } from '../plugins/gateway/left-work.js';
import { tempDir } from './helpers.js';

const base: GatewaySection = GATEWAY_DEFAULTS;
const rateLimit = GATEWAY_DEFAULTS.auth.rateLimit;
const LONG = 'x'.repeat(16);

describe('gateway settings', () => {
  it('defaults to 127.0.0.1:18789; config beats environment; flags arrive as config', () => {
    expect(resolveSettings({ ...base, auth: { token: 'cfg', rateLimit } }, {})).toMatchObject({
      host: '127.0.0.1',
      port: 18789,
      bind: 'loopback',
      loopbackOnly: true,
      auth: { mode: 'token' },
    });
    expect(resolveSettings(base, { OPENCLAW_GATEWAY_PORT: '19000', OPENCLAW_GATEWAY_TOKEN: 'env' })).toMatchObject({
      port: 19000,
      auth: { mode: 'token', token: 'env' },
    });
    expect(
      resolveSettings(
        { ...base, port: 20000, auth: { token: 'cfg', rateLimit } },
        { OPENCLAW_GATEWAY_PORT: '19000', OPENCLAW_GATEWAY_TOKEN: 'env' },
      ),
    ).toMatchObject({
      port: 20000,
      auth: { mode: 'token', token: 'cfg' },
    });
    expect(resolveSettings({ ...base, bind: 'lan' }, { OPENCLAW_GATEWAY_PASSWORD: LONG })).toMatchObject({
      host: '0.0.0.0',
      loopbackOnly: false,
      auth: { mode: 'password' },
    });
    expect(
      resolveSettings({ ...base, bind: 'custom', customBindHost: '127.0.0.2', auth: { mode: 'none', rateLimit } }, {}),
    ).toMatchObject({ host: '127.0.0.2', loopbackOnly: true, auth: { mode: 'none' } });
  });

  it('a gateway with no auth configured gets a generated token; "none" only when explicit', () => {
    expect(needsGeneratedToken(base, {})).toBe(true);
    expect(needsGeneratedToken(base, { OPENCLAW_GATEWAY_TOKEN: 'env' })).toBe(false);
    expect(needsGeneratedToken({ ...base, auth: { mode: 'none', rateLimit } }, {})).toBe(false);
    expect(() => resolveSettings(base, {})).toThrow(/no gateway auth is configured/);
  });

  it('refuses unsafe or incomplete auth', () => {
    expect(() => resolveSettings({ ...base, bind: 'lan', auth: { mode: 'none', rateLimit } }, {})).toThrow(
      /refusing to listen on 0\.0\.0\.0 without auth/,
    );
    expect(() =>
      resolveSettings(
        { ...base, bind: 'custom', customBindHost: '192.168.1.5', auth: { mode: 'none', rateLimit } },
        {},
      ),
    ).toThrow(/refusing to listen on 192\.168\.1\.5/);
    expect(() => resolveSettings({ ...base, bind: 'lan', auth: { token: 'a', rateLimit } }, {})).toThrow(
      /with a 1-character token: .* at least 16 characters/,
    );
    expect(() => resolveSettings({ ...base, bind: 'lan' }, { OPENCLAW_GATEWAY_PASSWORD: 'x'.repeat(15) })).toThrow(
      /15-character password/,
    );
    expect(() => resolveSettings({ ...base, auth: { mode: 'token', rateLimit } }, {})).toThrow(
      /gateway.auth.mode is "token" but no token is set/,
    );
    expect(() => resolveSettings({ ...base, auth: { mode: 'password', rateLimit } }, {})).toThrow(/no password is set/);
    expect(() => resolveSettings(base, { OPENCLAW_GATEWAY_PORT: 'eighty' })).toThrow(
      /OPENCLAW_GATEWAY_PORT "eighty" is not a port number/,
    );
  });
});

describe('presence', () => {
  it('keeps disconnected entries for 5 minutes and at most 200 entries', () => {
    let now = 0;
    const presence = new PresenceTracker(() => now);
    presence.upsert({
      instanceId: 'a',
      connId: 'c1',
      clientId: 'cli',
      roles: ['operator'],
      scopes: [],
      connected: true,
      reason: 'connect',
    });
    presence.disconnect('a', 'other-connection');
    expect(presence.snapshot()[0]).toMatchObject({ connected: true });
    presence.disconnect('a', 'c1');
    now = PRESENCE_TTL_MS - 1;
    expect(presence.snapshot()).toHaveLength(1);
    now = PRESENCE_TTL_MS + 1;
    expect(presence.snapshot()).toHaveLength(0);
    for (let i = 0; i < PRESENCE_MAX_ENTRIES + 20; i++) {
      presence.upsert({
        instanceId: `i${i}`,
        clientId: 'x',
        roles: [],
        scopes: [],
        connected: true,
        reason: 'connect',
      });
    }
    const entries = presence.snapshot();
    expect(entries).toHaveLength(PRESENCE_MAX_ENTRIES);
    expect(entries[0]!.instanceId).toBe(`i${PRESENCE_MAX_ENTRIES + 19}`);
  });
});

describe('idempotency cache', () => {
  it('replays the first outcome inside the window and runs again after it', async () => {
    let now = 0;
    const cache = new DedupeCache(1000, { now: () => now });
    let runs = 0;
    const work = async () => ({ ok: true, payload: ++runs });
    expect(await cache.run('k', { a: 1 }, work)).toEqual({ outcome: { ok: true, payload: 1 }, replayed: false });
    expect(await cache.run('k', { a: 1 }, work)).toEqual({ outcome: { ok: true, payload: 1 }, replayed: true });
    now = 1001;
    expect(await cache.run('k', { a: 1 }, work)).toEqual({ outcome: { ok: true, payload: 2 }, replayed: false });
  });

  it('refuses a key reused with different params (key order does not matter)', async () => {
    const cache = new DedupeCache(60_000);
    const work = async () => ({ ok: true });
    await cache.run('k', { a: 1, b: { c: 2, d: 3 } }, work);
    expect(await cache.run('k', { b: { d: 3, c: 2 }, a: 1 }, work)).toEqual({ outcome: { ok: true }, replayed: true });
    expect(await cache.run('k', { a: 2, b: { c: 2, d: 3 } }, work)).toEqual({ conflict: true });
    expect(paramsFingerprint({ x: [1, 2] })).not.toBe(paramsFingerprint({ x: [2, 1] }));
  });

  it('gives a repeat of a two-phase call the acks sent so far, later acks, then the same outcome', async () => {
    const cache = new DedupeCache(60_000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const first = cache.run('agent', {}, async (ack) => {
      runs++;
      ack({ status: 'accepted' });
      await gate;
      ack({ status: 'progress' });
      return { ok: true, payload: { status: 'ok' } };
    });
    const repeatAcks: unknown[] = [];
    const repeat = cache.run(
      'agent',
      {},
      async () => ({ ok: false }),
      (payload) => repeatAcks.push(payload),
    );
    expect(repeatAcks).toEqual([{ status: 'accepted' }]);
    release();
    expect(((await repeat) as { outcome: unknown }).outcome).toEqual({ ok: true, payload: { status: 'ok' } });
    expect(((await first) as { replayed: boolean }).replayed).toBe(false);
    expect(repeatAcks).toEqual([{ status: 'accepted' }, { status: 'progress' }]);
    expect(runs).toBe(1);
  });

  it('keeps keys on disk (owner-only): a new cache replays outcomes, refuses other params, and never reruns an interrupted call', async () => {
    const dir = tempDir('claw-dedupe-');
    const file = join(dir, 'gateway', 'idempotency.jsonl');
    const first = new DedupeCache(60_000, { file });
    await first.run('done', { n: 1 }, async () => ({ ok: true, payload: { value: 42 } }));
    void first.run('cut', { n: 2 }, async (ack) => {
      ack({ runId: 'r1', status: 'accepted' });
      return new Promise<never>(() => {}); // the process "dies" with this still running
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // A torn last line (killed mid-append) is skipped.
    appendFileSync(file, '{"k":"torn","p":"x","e":9');
    const second = new DedupeCache(60_000, { file });
    let runs = 0;
    const work = async () => ({ ok: true, payload: ++runs });
    expect(await second.run('done', { n: 1 }, work)).toEqual({
      outcome: { ok: true, payload: { value: 42 } },
      replayed: true,
    });
    expect(await second.run('done', { n: 9 }, work)).toEqual({ conflict: true });
    const acks: unknown[] = [];
    const cut = (await second.run('cut', { n: 2 }, work, (ack) => acks.push(ack))) as {
      outcome: { ok: boolean; error?: { message: string } };
    };
    expect(cut.outcome.ok).toBe(false);
    expect(cut.outcome.error?.message).toMatch(
      /restarted before this request finished, and whether it took effect is not known; it is not run again/,
    );
    expect(acks).toEqual([{ runId: 'r1', status: 'accepted' }]);
    expect(runs).toBe(0);
  });

  it('asks the method what became of a call a restart cut short: in progress, finished, or never accepted', async () => {
    const dir = tempDir('claw-dedupe-');
    const file = join(dir, 'gateway', 'idempotency.jsonl');
    const first = new DedupeCache(60_000, { file });
    const hang = async () => new Promise<never>(() => {}); // the process "dies" with these still running
    for (const key of ['pending', 'finished', 'never']) void first.run(key, {}, hang);
    const second = new DedupeCache(60_000, { file });
    let runs = 0;
    const work = async () => ({ ok: true, payload: ++runs });
    let asked = 0;
    let finish!: (outcome: { ok: true; payload: string }) => void;
    const later = new Promise<{ ok: true; payload: string }>((resolve) => (finish = resolve));
    const recover = (key: string) => async () => {
      asked++;
      if (key === 'pending')
        return { state: 'pending' as const, acks: [{ runId: 'r9', status: 'accepted' }], outcome: later };
      if (key === 'finished') return { state: 'done' as const, outcome: { ok: true, payload: 'first outcome' } };
      return { state: 'not-accepted' as const };
    };
    // Two retries at once: the method is asked once, both get the acknowledgment again and then the result.
    const acks: unknown[] = [];
    const retries = [
      second.run('pending', {}, work, (ack) => acks.push(ack), recover('pending')),
      second.run('pending', {}, work, (ack) => acks.push(ack), recover('pending')),
    ];
    finish({ ok: true, payload: 'resumed result' });
    for (const retry of await Promise.all(retries))
      expect(retry).toEqual({ outcome: { ok: true, payload: 'resumed result' }, replayed: true });
    expect(acks).toEqual([
      { runId: 'r9', status: 'accepted' },
      { runId: 'r9', status: 'accepted' },
    ]);
    expect(await second.run('finished', {}, work, undefined, recover('finished'))).toEqual({
      outcome: { ok: true, payload: 'first outcome' },
      replayed: true,
    });
    const never = (await second.run('never', {}, work, undefined, recover('never'))) as {
      outcome: { ok: boolean; error?: { message: string; retryable?: boolean } };
    };
    expect(never.outcome).toMatchObject({
      ok: false,
      error: { retryable: true, message: expect.stringMatching(/safe to send again/) },
    });
    expect([runs, asked]).toEqual([0, 3]);
    // The key is free again: sent again, it runs once; and the recovered outcomes are on disk for the next restart.
    expect(await second.run('never', {}, work, undefined, recover('never'))).toEqual({
      outcome: { ok: true, payload: 1 },
      replayed: false,
    });
    const third = new DedupeCache(60_000, { file });
    expect(await third.run('pending', {}, work)).toEqual({
      outcome: { ok: true, payload: 'resumed result' },
      replayed: true,
    });
    expect(await third.run('never', {}, work)).toEqual({ outcome: { ok: true, payload: 1 }, replayed: true });
  });

  it('stays bounded in memory and on disk', async () => {
    const dir = tempDir('claw-dedupe-');
    const file = join(dir, 'idempotency.jsonl');
    const cache = new DedupeCache(60_000, { maxEntries: 100, maxFileBytes: 8192, file });
    for (let i = 0; i < 250; i++) await cache.run(`k${i}`, { i }, async () => ({ ok: true }));
    expect(cache.size).toBeLessThanOrEqual(101);
    expect(statSync(file).size).toBeLessThanOrEqual(8192);
    const reloaded = new DedupeCache(60_000, { maxEntries: 100, file });
    expect(await reloaded.run('k249', { i: 249 }, async () => ({ ok: false }))).toEqual({
      outcome: { ok: true },
      replayed: true,
    });
  });
});

describe('config merge patch', () => {
  it('follows RFC 7386', () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null, e: 3 }, d: [2, 3], f: 'x' })).toEqual({
      a: { c: 2, e: 3 },
      d: [2, 3],
      f: 'x',
    });
    expect(mergePatch({ a: 1 }, 'replace')).toBe('replace');
  });
});

describe('log tail', () => {
  it('returns the last lines, then only new whole lines after a cursor, and notices rotation', () => {
    const file = join(tempDir(), 'gateway.log');
    expect(tailLog(file)).toMatchObject({ lines: [], cursor: 0 });
    writeFileSync(file, Array.from({ length: 10 }, (_, i) => `line ${i}`).join('\n') + '\n');
    const last = tailLog(file, { limit: 3 });
    expect(last).toMatchObject({ lines: ['line 7', 'line 8', 'line 9'], truncated: true });
    appendFileSync(file, 'line 10\nline 11\nhalf');
    const more = tailLog(file, { cursor: last.cursor });
    expect(more).toMatchObject({ lines: ['line 10', 'line 11'], truncated: false, reset: false });
    appendFileSync(file, ' done\n');
    expect(tailLog(file, { cursor: more.cursor }).lines).toEqual(['half done']);
    const paged = tailLog(file, { cursor: 0, limit: 4 });
    expect(paged.lines).toEqual(['line 0', 'line 1', 'line 2', 'line 3']);
    expect(tailLog(file, { cursor: paged.cursor, limit: 1 }).lines).toEqual(['line 4']);
    writeFileSync(file, 'fresh\n');
    expect(tailLog(file, { cursor: more.cursor })).toMatchObject({ lines: ['fresh'], reset: true });
  });
});

describe('pairing store', () => {
  it('expires pending requests after their TTL and keeps tokens only as hashes', () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const file = join(tempDir(), 'pairing.json');
    const redact = createRedactor({ config: {}, env: {} });
    const store = new PairingStore(file, redact, 5 * 60_000, () => now);
    const { request } = store.request({ deviceId: 'd1', publicKey: 'k', role: 'operator', scopes: ['operator.read'] });
    expect(store.listPending()).toHaveLength(1);
    now += 5 * 60_000 + 1;
    expect(store.listPending()).toHaveLength(0);
    expect(() => store.approve(request.requestId, 'x')).toThrow(/no pending pairing request/);
    const fresh = store.request({ deviceId: 'd1', publicKey: 'k', role: 'operator', scopes: ['operator.read'] });
    store.approve(fresh.request.requestId, 'op');
    const token = store.issueToken('d1', 'operator');
    expect(store.verifyToken('d1', 'operator', token)).toBe(true);
    expect(store.verifyToken('d1', 'operator', `${token}x`)).toBe(false);
    expect(store.verifyToken('d1', 'node', token)).toBe(false);
    expect(JSON.stringify(new PairingStore(file, redact).listPaired())).not.toContain(token);
  });
});

describe('work a previous gateway left', () => {
  it('picks plugins not loaded yet whose declared state files hold something; NUL padding is empty', () => {
    const stateDir = tempDir();
    const journal = (agent: string, data: Buffer) => {
      mkdirSync(join(stateDir, 'agents', agent), { recursive: true });
      writeFileSync(join(stateDir, 'agents', agent, 'intake.jsonl'), data);
    };
    const plugin = (id: string, status: 'ready' | 'active', patterns: string[]) =>
      ({
        id,
        status,
        manifest: { id, configSchema: {}, services: [id], activation: { onStartupIfState: patterns } },
      }) as never;
    const plugins = [
      plugin('agent', 'ready', ['agents/*/intake.jsonl']),
      plugin('loaded', 'active', ['agents/*/intake.jsonl']),
      plugin('outside', 'ready', ['../agents/*/intake.jsonl']),
    ];
    const picked = () => pluginsWithLeftWork(plugins, stateDir).map((record) => record.id);

    expect(picked()).toEqual([]);
    mkdirSync(join(stateDir, 'agents', 'empty'), { recursive: true });
    journal('main', Buffer.alloc(64));
    expect(picked()).toEqual([]);
    journal('work', Buffer.from('{"t":"accepted"}\n'));
    expect(picked()).toEqual(['agent']);
  });
});

describe('gateway log lines', () => {
  it("are pino's JSON shape, in order, above the level, and survive data JSON cannot hold", async () => {
    const stateDir = tempDir('claw-gwlog-');
    const out: string[] = [];
    const stdout = { write: (line: string) => out.push(line) } as unknown as NodeJS.WritableStream;
    const logging = createGatewayLogging({
      stateDir,
      level: 'info',
      stdout,
      maxFileBytes: 1e6,
      redact: { text: (t) => t },
    });
    const cyclic: Record<string, unknown> = { big: 10n };
    cyclic.self = cyclic;
    const child = logging.logger.child({ plugin: 'demo' });
    child.debug('below the level');
    child.info('first', { port: 1 });
    child.child({ account: 'a' }).warn('second', { data: cyclic, error: new Error('boom') });
    logging.flush();
    const lines = readFileSync(logging.file, 'utf8').trim().split('\n');
    expect(lines).toEqual(out.map((line) => line.trim()));
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(Object.keys(first!)).toEqual(['level', 'time', 'pid', 'plugin', 'port', 'msg']);
    expect(first).toMatchObject({ level: 30, pid: process.pid, plugin: 'demo', port: 1, msg: 'first' });
    expect(second).toMatchObject({
      level: 40,
      account: 'a',
      msg: 'second',
      data: { big: '10', self: '[Circular]' },
      error: { type: 'Error', message: 'boom' },
    });
  });

  it('follow a relay logger to its new destination, children made before the switch too', () => {
    const seen: Array<[string, LogRecord]> = [];
    const sink = (name: string) => createLogger({ level: 'debug', sink: (record) => seen.push([name, record]) });
    const relay = relayLogger(sink('cli'));
    const plugin = relay.child({ plugin: 'p' });
    plugin.warn('before');
    relay.retarget(sink('gateway'));
    plugin.warn('after');
    relay.child({ plugin: 'q' }).info('new child');
    expect(seen.map(([name, record]) => [name, record.plugin, record.message])).toEqual([
      ['cli', 'p', 'before'],
      ['gateway', 'p', 'after'],
      ['gateway', 'q', 'new child'],
    ]);
  });

  it('render a pino-shaped record as one readable line', () => {
    const time = new Date(2026, 0, 2, 3, 4, 5).getTime();
    expect(
      prettyLine({ level: 30, time, pid: 1, hostname: 'h', plugin: 'gateway', msg: 'listening', port: 18789 }, false),
    ).toBe('03:04:05 INFO  [gateway] listening port=18789\n');
    expect(prettyLine({ level: 50, time, msg: 'boom', err: { code: 1 } }, true)).toBe(
      '03:04:05 \x1b[31mERROR\x1b[0m boom err={"code":1}\n',
    );
  });
});
