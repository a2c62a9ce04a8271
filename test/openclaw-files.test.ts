/**
 * An OpenClaw setup's files in claw: its openclaw.json (the keys of OpenClaw's
 * configuration examples) loads and starts the gateway, `claw doctor` lists what claw
 * ignores and repairs what it safely can, and `claw sessions import` reads OpenClaw's
 * SQLite session store and its legacy JSONL files. Built CLI, real files, no network.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSqlite } from '../sdk/sqlite.js';
import type { AgentService } from '../sdk/agent/index.js';
import { useService } from '../sdk/services.js';
import { agentStackDirs, createTestKernel, scriptedModel, type TestKernel } from '../sdk/testing.js';
import type { ModelRequest } from '../sdk/types/models.js';
import { claw, REPO, startCliGateway, tempDir } from './helpers.js';

const EXAMPLE = join(REPO, 'test', 'fixtures', 'openclaw-config', 'openclaw.json5');

function stateWith(config: string | Record<string, unknown>) {
  const stateDir = tempDir('claw-ocfiles-');
  const configPath = join(stateDir, 'openclaw.json');
  if (typeof config === 'string') copyFileSync(config, configPath);
  else writeFileSync(configPath, JSON.stringify(config));
  chmodSync(configPath, 0o600);
  return { stateDir, configPath, env: { OPENCLAW_STATE_DIR: stateDir } };
}

const doctorJson = async (env: Record<string, string>, args: string[] = []) => {
  const result = await claw(['doctor', '--json', ...args], env);
  return {
    code: result.code,
    report: JSON.parse(result.stdout) as {
      ok: boolean;
      checks: Array<{ area: string; level: string; title: string; items?: string[] }>;
      fixed?: { removed: string[] };
    },
  };
};

describe('an OpenClaw openclaw.json', () => {
  it('loads: valid for claw, and doctor lists the OpenClaw settings claw ignores (and only those)', async () => {
    const { env } = stateWith(EXAMPLE);
    const validate = await claw(['config', 'validate'], env);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stderr).toContain(
      'warning: gateway.remote: is an OpenClaw setting claw does not implement; ignored (plugin gateway)',
    );

    const { code, report } = await doctorJson(env);
    expect(code).toBe(0);
    expect(report.checks.find((check) => check.title === 'config is valid')).toBeDefined();
    const ignored = report.checks.find((check) => check.title.includes('OpenClaw settings claw does not implement'))!;
    expect(ignored.level).toBe('warn');
    expect(ignored.items).toEqual(
      expect.arrayContaining([
        'gateway.mode',
        'gateway.remote',
        'gateway.controlUi.embedSandbox',
        'session.maintenance',
        'models.providers.local-proxy.authHeader',
        'env',
        'auth',
        'talk',
      ]),
    );
    // Keys claw implements are used, not listed.
    for (const used of [
      'gateway.port',
      'gateway.auth.token',
      'channels.telegram.botToken',
      'agents.defaults.model',
      'tools.allow',
      'session.scope',
    ])
      expect(ignored.items).not.toContain(used);
  });

  it('a key neither knows, or a bad value for a key claw implements, is still an error naming it', async () => {
    const { env } = stateWith({ gateway: { port: 'eighty', notAKey: true }, mystery: {} });
    const validate = await claw(['config', 'validate'], env);
    expect(validate.code).toBe(1);
    const output = validate.stdout + validate.stderr;
    expect(output).toContain('gateway.notAKey: is not a known key');
    expect(output).toContain('gateway.port: must be integer');
    expect(output).toContain('mystery: is not a known config section');
    const { code, report } = await doctorJson(env);
    expect(code).toBe(1);
    expect(
      report.checks.find((check) => check.level === 'error' && check.area === 'config')!.items!.join('\n'),
    ).toContain('gateway.notAKey');
  });

  it('`claw gateway` starts with gateway.mode, gateway.remote and gateway.controlUi set, naming each once', async () => {
    const { env } = stateWith({
      gateway: {
        mode: 'local',
        remote: { url: 'ws://elsewhere.test:18789' },
        controlUi: { basePath: '/openclaw', embedSandbox: 'scripts' },
        auth: { mode: 'token', token: 'gw-token' },
      },
    });
    const gateway = await startCliGateway(env);
    const warnings = gateway.stderr() + gateway.stdout();
    for (const key of ['gateway.mode', 'gateway.remote', 'gateway.controlUi.embedSandbox']) {
      expect(
        warnings.split(`config ${key}: is an OpenClaw setting claw does not implement; ignored`).length - 1,
        key,
      ).toBe(1);
    }
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  });
});

describe('claw doctor', () => {
  it('--fix makes state owner-only and removes leftovers of dead writers; damaged files are reported, never touched', async () => {
    const { stateDir, configPath, env } = stateWith({});
    const sessions = join(stateDir, 'agents', 'main', 'sessions');
    mkdirSync(sessions, { recursive: true });
    chmodSync(configPath, 0o644);
    writeFileSync(join(sessions, 'sessions.json'), '{"agent:main:main": {"sessionId": ');
    writeFileSync(join(sessions, 'abc.jsonl'), '{"type":"session","id":"abc"}\n{"type":"mess');
    // A temp file of an atomic write whose process is gone (pid 2^22 - 1 is above Linux's default pid_max).
    const leftover = join(stateDir, `.state.json.${2 ** 22 - 1}.0badcafe.tmp`);
    writeFileSync(leftover, 'half');
    const staging = join(stateDir, 'extensions', '.staging-old');
    mkdirSync(staging, { recursive: true });
    const old = new Date(Date.now() - 3_600_000);
    const { utimesSync } = await import('node:fs');
    utimesSync(staging, old, old);
    // Named with its installer's pid, which is gone: left over however fresh.
    const deadStaging = join(stateDir, 'extensions', `.staging-${2 ** 22 - 1}-AbC123`);
    mkdirSync(deadStaging);

    const before = await doctorJson(env);
    expect(before.code).toBe(1);
    const titles = before.report.checks.map((check) => `${check.level} ${check.title}`);
    expect(titles).toContain('error Every user can read the config');
    expect(titles).toContain('warn leftovers of interrupted writes and installs');
    expect(titles).toContain('error state files that do not parse (kept as they are)');
    expect(titles).toContain('warn transcripts ending in a cut-off line (readers skip it)');

    const fixed = await doctorJson(env, ['--fix']);
    expect(fixed.report.fixed!.removed.sort()).toEqual([leftover, staging, deadStaging].sort());
    expect(existsSync(leftover) || existsSync(staging) || existsSync(deadStaging)).toBe(false);
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
    // User data stays as it was.
    expect(readFileSync(join(sessions, 'sessions.json'), 'utf8')).toBe('{"agent:main:main": {"sessionId": ');
    expect(readFileSync(join(sessions, 'abc.jsonl'), 'utf8')).toContain('{"type":"mess');
    const after = fixed.report.checks.map((check) => `${check.level} ${check.title}`);
    expect(after).toContain('ok state dir, config and credentials are owner-only');
    expect(after).toContain('error state files that do not parse (kept as they are)');
    expect(after.some((title) => title.includes('leftovers'))).toBe(false);
  });
});

describe('claw sessions import', () => {
  const kernels: TestKernel[] = [];
  afterEach(async () => {
    for (const kernel of kernels.splice(0)) await kernel.dispose();
  });

  const event = (id: string, parentId: string | null, role: 'user' | 'assistant', text: string) =>
    JSON.stringify({
      type: 'message',
      id,
      parentId,
      timestamp: '2026-09-01T10:00:00.000Z',
      message: { role, content: [{ type: 'text', text }], timestamp: 1756720800000 },
    });

  /** OpenClaw's per-agent database, with the tables and columns the importer reads. */
  function openclawDatabase(from: string, agentId: string) {
    const dir = join(from, 'agents', agentId, 'agent');
    mkdirSync(dir, { recursive: true });
    const Database = loadSqlite();
    const db = new Database(join(dir, 'openclaw-agent.sqlite'));
    db.exec(`
      CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL,
        entry_valid INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL, label TEXT, archived_at INTEGER) STRICT;
      CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
      CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
        event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT;
    `);
    return db;
  }

  it('reads the SQLite store and legacy JSONL; the imported history reaches the model; a rerun changes nothing', async () => {
    const from = tempDir('openclaw-home-');
    const db = openclawDatabase(from, 'main');
    const entry = {
      sessionId: 'sess-sqlite-1',
      createdAt: 1756720000000,
      updatedAt: 1756720800000,
      label: 'from sqlite',
      lastModel: 'anthropic/claude-sonnet-4-6',
      inputTokens: 12,
      outputTokens: 7,
      totalTokens: 19,
      contextTokens: 200000,
      compactionCount: 0,
      someFutureField: true,
    };
    db.prepare(
      'INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)',
    ).run('agent:main:main', 'sess-sqlite-1', JSON.stringify(entry), entry.updatedAt);
    db.prepare('INSERT INTO session_windows VALUES (?, ?, ?, ?)').run(
      'sess-sqlite-1',
      'agent:main:main',
      entry.createdAt,
      entry.updatedAt,
    );
    const insert = db.prepare(
      'INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)',
    );
    insert.run(
      'sess-sqlite-1',
      0,
      JSON.stringify({
        type: 'session',
        version: 3,
        id: 'sess-sqlite-1',
        timestamp: '2026-09-01T09:59:00.000Z',
        cwd: '/home/me',
      }),
      1,
    );
    insert.run('sess-sqlite-1', 1, event('e1', null, 'user', 'my cat is called Miso'), 2);
    insert.run('sess-sqlite-1', 2, event('e2', 'e1', 'assistant', 'Noted: Miso.'), 3);
    db.close();

    const legacy = join(from, 'agents', 'work', 'sessions');
    mkdirSync(legacy, { recursive: true });
    writeFileSync(
      join(legacy, 'sessions.json'),
      JSON.stringify({
        'agent:work:main': { sessionId: 'sess-jsonl-1', createdAt: 1756000000000, updatedAt: 1756000100000 },
      }),
    );
    writeFileSync(
      join(legacy, 'sess-jsonl-1.jsonl'),
      `${JSON.stringify({ type: 'session', version: 3, id: 'sess-jsonl-1', timestamp: '2026-08-24T00:00:00.000Z' })}\n${event('w1', null, 'user', 'work note')}\n`,
    );

    const stateDir = tempDir('claw-import-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    // OpenClaw's own state dir: doctor points at the import.
    const hint = (await doctorJson({ OPENCLAW_STATE_DIR: from })).report.checks.find(
      (check) => check.area === 'compat',
    )!;
    expect(hint).toMatchObject({ level: 'warn', items: ['agents/main/agent/openclaw-agent.sqlite'] });

    const imported = await claw(['sessions', 'import', '--from', from, '--json'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const report = JSON.parse(imported.stdout);
    expect(report.imported).toEqual([
      { agentId: 'main', key: 'agent:main:main', sessionId: 'sess-sqlite-1', source: 'sqlite', entries: 2 },
      { agentId: 'work', key: 'agent:work:main', sessionId: 'sess-jsonl-1', source: 'jsonl', entries: 1 },
    ]);
    const transcript = join(stateDir, 'agents', 'main', 'sessions', 'sess-sqlite-1.jsonl');
    expect(statSync(transcript).mode & 0o777).toBe(0o600);
    const lines = readFileSync(transcript, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.type)).toEqual(['session', 'message', 'message']);
    expect(lines[0]).toMatchObject({ id: 'sess-sqlite-1', sessionKey: 'agent:main:main', cwd: '/home/me' });
    const store = JSON.parse(readFileSync(join(stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'));
    expect(store['agent:main:main']).toMatchObject({
      sessionId: 'sess-sqlite-1',
      label: 'from sqlite',
      lastModel: 'anthropic/claude-sonnet-4-6',
      totalTokens: 19,
      updatedAt: entry.updatedAt,
    });
    expect(store['agent:main:main'].someFutureField).toBeUndefined();

    const listed = JSON.parse((await claw(['sessions', '--json'], env)).stdout);
    expect(listed.sessions.map((row: { key: string }) => row.key).sort()).toEqual([
      'agent:main:main',
      'agent:work:main',
    ]);

    const again = JSON.parse((await claw(['sessions', 'import', '--from', from, '--json'], env)).stdout);
    expect(again).toMatchObject({ imported: [], unchanged: 2, conflicts: [] });

    // The next turn in the imported session carries its history.
    const requests: ModelRequest[] = [];
    const kernel = await createTestKernel({
      stateDir,
      plugins: [...agentStackDirs(), scriptedModel((request) => (requests.push(request), 'Miso, yes.'))],
      // The imported session is days old: an idle reset that long keeps it, as it would have in OpenClaw.
      config: {
        agents: { defaults: { model: 'scripted/x', workspace: join(stateDir, 'workspace') } },
        session: { reset: { mode: 'idle', idleMinutes: 60 * 24 * 365 * 10 } },
      },
    });
    kernels.push(kernel);
    const agent = (await useService<AgentService>(kernel.plugins.kernelServices, 'agent'))!;
    const result = await agent.run({ message: "what is my cat's name?", sessionKey: 'agent:main:main' });
    expect(result.sessionId).toBe('sess-sqlite-1');
    expect(JSON.stringify(requests[0]!.messages)).toContain('my cat is called Miso');
  });

  it("follows OpenClaw's active branch: a message on an abandoned branch is not imported", async () => {
    const from = tempDir('openclaw-home-');
    const db = openclawDatabase(from, 'main');
    db.prepare(
      'INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)',
    ).run('agent:main:branchy', 'sess-tree', JSON.stringify({ sessionId: 'sess-tree', archivedAt: 1756720900000 }), 5);
    const insert = db.prepare(
      'INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)',
    );
    const rows = [
      JSON.stringify({ type: 'session', version: 3, id: 'sess-tree', timestamp: '2026-09-01T09:59:00.000Z' }),
      event('a1', null, 'user', 'plan a trip'),
      event('a2', 'a1', 'assistant', 'Where to?'),
      event('b1', 'a2', 'user', 'ABANDONED: go to the moon'),
      event('b2', 'b1', 'assistant', 'ABANDONED: rockets booked'),
      // The user rewound to a2 and went another way.
      JSON.stringify({ type: 'leaf', id: 'l1', parentId: 'b2', targetId: 'a2' }),
      event('c1', 'a2', 'user', 'go to Lisbon'),
      event('c2', 'c1', 'assistant', 'Lisbon it is.'),
    ];
    rows.forEach((row, seq) => insert.run('sess-tree', seq, row, seq + 1));
    db.close();
    const stateDir = tempDir('claw-import-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const imported = await claw(['sessions', 'import', '--from', from, '--json'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const report = JSON.parse(imported.stdout);
    expect(report.imported).toEqual([
      { agentId: 'main', key: 'agent:main:branchy', sessionId: 'sess-tree', source: 'sqlite', entries: 4 },
    ]);
    expect(report.abandonedEntries).toBe(2);
    const text = readFileSync(join(stateDir, 'agents', 'main', 'sessions', 'sess-tree.jsonl'), 'utf8');
    expect(text).not.toContain('ABANDONED');
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.slice(1).map((line) => [line.id, line.parentId])).toEqual([
      ['a1', null],
      ['a2', 'a1'],
      ['c1', 'a2'],
      ['c2', 'c1'],
    ]);
    // Archived in OpenClaw: archived here too, so left out of the default list.
    const store = JSON.parse(readFileSync(join(stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'));
    expect(store['agent:main:branchy'].archivedAt).toBe(1756720900000);
    expect(JSON.parse((await claw(['sessions', '--json'], env)).stdout).sessions).toEqual([]);
  });

  it("`claw sessions archive` archives through the running gateway, as OpenClaw's CLI does", async () => {
    const { stateDir, env } = stateWith({ gateway: { auth: { mode: 'token', token: 'gw-token' } } });
    const sessions = join(stateDir, 'agents', 'main', 'sessions');
    mkdirSync(sessions, { recursive: true });
    const row = (sessionId: string, updatedAt: number) => ({
      sessionId,
      createdAt: 1,
      updatedAt,
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      contextTokens: 0,
      compactionCount: 0,
    });
    writeFileSync(
      join(sessions, 'sessions.json'),
      JSON.stringify({ 'agent:main:main': row('m', 2), 'agent:main:old': row('o', 1) }),
    );
    await startCliGateway(env);
    const dry = await claw(['sessions', 'archive', 'agent:main:old', 'agent:main:main', '--dry-run'], env);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toBe('[dry-run] archive session agent:main:old\n');
    expect(dry.stderr).toContain("archive agent:main:main: an agent's main session is not archived");
    const archived = await claw(['sessions', 'archive', 'agent:main:old', 'agent:main:nope', '--json'], env);
    expect(archived.code).toBe(1);
    expect(JSON.parse(archived.stdout)).toMatchObject({
      ok: false,
      operation: 'archive',
      results: [
        { key: 'agent:main:old', ok: true, status: 'archived' },
        { key: 'agent:main:nope', ok: false, status: 'not_found' },
      ],
    });
    const again = await claw(['sessions', 'archive', 'agent:main:old'], env);
    expect(again.stdout).toBe('agent:main:old was already archived.\n');
    const listed = JSON.parse((await claw(['sessions', '--json'], env)).stdout);
    expect(listed.sessions.map((s: { key: string }) => s.key)).toEqual(['agent:main:main']);
  });

  it('never overwrites a session claw already has under the same key', async () => {
    const from = tempDir('openclaw-home-');
    const db = openclawDatabase(from, 'main');
    db.prepare(
      'INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)',
    ).run('agent:main:main', 'theirs', '{}', 1);
    db.close();
    const stateDir = tempDir('claw-import-');
    const sessions = join(stateDir, 'agents', 'main', 'sessions');
    mkdirSync(sessions, { recursive: true });
    const mine = JSON.stringify({
      'agent:main:main': {
        sessionId: 'mine',
        createdAt: 1,
        updatedAt: 2,
        inputTokens: 0,
        outputTokens: 0,
        totalTokens: 0,
        contextTokens: 0,
        compactionCount: 0,
      },
    });
    writeFileSync(join(sessions, 'sessions.json'), mine);
    const result = await claw(['sessions', 'import', '--from', from], { OPENCLAW_STATE_DIR: stateDir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      '! main agent:main:main: claw already has this key with session mine; left as it is',
    );
    expect(JSON.parse(readFileSync(join(sessions, 'sessions.json'), 'utf8'))).toEqual(JSON.parse(mine));
  });
});
