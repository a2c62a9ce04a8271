/**
 * The session write lock (one writer per session across processes) and tool-call pairing
 * repair, as units. End to end (real processes, the gateway, the fake model) they are
 * covered by transcript-validity.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockHolderAlive, processStartTime, withFileLock } from '../sdk/file-lock.js';
import { SessionLockError } from '../sdk/sessions/index.js';
import { acquireSessionLock, sessionLockPath } from '../plugins/sessions/lock.js';
import { ABORTED_TOOL_RESULT, danglingToolCalls, repairToolPairing } from '../plugins/sessions/tool-pairing.js';
import type { ChatMessage } from '../sdk/types/models.js';
import { REPO, tempDir, waitFor } from './helpers.js';

const KEY = 'agent:main:telegram:group:-100/7';

function foreignLock(dir: string, pid: number, token = 'theirs', pidStartTime?: number): string {
  const file = sessionLockPath(dir, KEY);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({
      pid,
      hostname: hostname(),
      ...(pidStartTime !== undefined ? { pidStartTime } : {}),
      sessionKey: KEY,
      acquiredAt: new Date().toISOString(),
      token,
    }),
  );
  return file;
}

function sleeper(): Promise<{ pid: number; kill(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  return new Promise((resolve) =>
    child.once('spawn', () =>
      resolve({
        pid: child.pid!,
        kill: () => new Promise<void>((done) => (child.once('exit', () => done()), child.kill('SIGKILL'))),
      }),
    ),
  );
}

describe('session lock', () => {
  it('names its holder in an owner-only file, one file per key, removed on release', async () => {
    const dir = tempDir('claw-lock-unit-');
    const lock = await acquireSessionLock(dir, KEY, { lingerMs: 0 });
    expect(lock.file).toBe(sessionLockPath(dir, KEY));
    expect(lock.file).toMatch(/locks\/agent_main_telegram_group_-100_7-[0-9a-f]{10}\.lock$/);
    expect(sessionLockPath(dir, 'agent:main:telegram:group:-100:7')).not.toBe(lock.file);
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toMatchObject({
      pid: process.pid,
      hostname: hostname(),
      pidStartTime: processStartTime(process.pid),
      sessionKey: KEY,
    });
    expect(processStartTime(process.pid)).toEqual(expect.any(Number));
    expect(statSync(lock.file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(lock.file)).mode & 0o777).toBe(0o700);
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
  });

  it('in one process, a second holder waits for the first', async () => {
    const dir = tempDir('claw-lock-unit-');
    const first = await acquireSessionLock(dir, KEY);
    let second: Awaited<ReturnType<typeof acquireSessionLock>> | undefined;
    const pending = acquireSessionLock(dir, KEY).then((lock) => (second = lock));
    // A third contender queued behind them and then stopped says the lock is busy here: it was
    // waiting, not given the lock, and so is the second one ahead of it.
    const stop = new AbortController();
    const third = acquireSessionLock(dir, KEY, { signal: stop.signal });
    stop.abort();
    await expect(third).rejects.toThrow(/busy in this process/);
    expect(second).toBeUndefined();
    first.release();
    await pending;
    expect(second).toBeDefined();
    second!.release();
  });

  it('a live holder in another process: waits, then fails clearly naming it; free once it is gone', async () => {
    const dir = tempDir('claw-lock-unit-');
    const other = await sleeper();
    try {
      foreignLock(dir, other.pid, 'theirs', processStartTime(other.pid));
      let waitedFor: number | undefined;
      await expect(
        acquireSessionLock(dir, KEY, { timeoutMs: 200, onWait: (holder) => (waitedFor = holder?.pid) }),
      ).rejects.toThrow(
        new RegExp(
          `session ${KEY.replace(/[/]/g, '\\/')} is in use by process ${other.pid} \\(since .*\\); gave up waiting`,
        ),
      );
      expect(waitedFor).toBe(other.pid);
      // Stopped once it is waiting for the holder, not at a guessed moment.
      const controller = new AbortController();
      await expect(
        acquireSessionLock(dir, KEY, { signal: controller.signal, onWait: () => controller.abort() }),
      ).rejects.toBeInstanceOf(SessionLockError);
    } finally {
      await other.kill();
    }
    // The holder died without releasing: its lock is taken over at once.
    const lock = await acquireSessionLock(dir, KEY, { timeoutMs: 1000 });
    expect(JSON.parse(readFileSync(lock.file, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('a pid recycled by a later process, or by a thread of one, is not the holder: its lock is taken over at once', async () => {
    const dir = tempDir('claw-lock-unit-');
    const other = await sleeper();
    try {
      // The holder died and its pid went to this later (node) process, which started at another time.
      foreignLock(dir, other.pid, 'theirs', processStartTime(other.pid)! - 1);
      const started = Date.now();
      const lock = await acquireSessionLock(dir, KEY, { timeoutMs: 1000, lingerMs: 0 });
      expect(Date.now() - started).toBeLessThan(500);
      expect(JSON.parse(readFileSync(lock.file, 'utf8')).pid).toBe(process.pid);
      lock.release();
    } finally {
      await other.kill();
    }
    // Thread ids come from the pid pool too, and signal 0 reaches them: a node thread is not its process.
    await new Promise((resolve) => setImmediate(resolve));
    const [thread] = readdirSync('/proc/self/task')
      .map(Number)
      .filter((tid) => tid !== process.pid)
      .sort((a, b) => processStartTime(b)! - processStartTime(a)!);
    expect(processStartTime(thread)).not.toBe(processStartTime(process.pid));
    expect(lockHolderAlive({ pid: thread, hostname: hostname(), pidStartTime: processStartTime(process.pid) })).toBe(
      false,
    );
    expect(
      lockHolderAlive({ pid: process.pid, hostname: hostname(), pidStartTime: processStartTime(process.pid) }),
    ).toBe(true);
  });

  it('a lock file naming no one (a kill while an older version created it) is taken over once it is not brand new', async () => {
    const dir = tempDir('claw-lock-unit-');
    const file = sessionLockPath(dir, KEY);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '');
    // Brand new: maybe being written right now, so it is waited for.
    await expect(acquireSessionLock(dir, KEY, { timeoutMs: 150 })).rejects.toBeInstanceOf(SessionLockError);
    const old = new Date(Date.now() - 5000);
    utimesSync(file, old, old);
    const started = Date.now();
    const lock = await acquireSessionLock(dir, KEY, { timeoutMs: 1000, lingerMs: 0 });
    expect(Date.now() - started).toBeLessThan(500);
    expect(JSON.parse(readFileSync(lock.file, 'utf8')).pid).toBe(process.pid);
    lock.release();
    // The lock appears whole (written aside, then linked into place): nothing is left beside it.
    expect(readdirSync(dirname(file))).toEqual([]);
  });

  it('the same holds for the gateway and config lock files: one naming no one blocks nobody for long', async () => {
    const file = join(tempDir('claw-lock-unit-'), 'openclaw.json.lock');
    writeFileSync(file, '');
    const old = new Date(Date.now() - 5000);
    utimesSync(file, old, old);
    expect(await withFileLock(file, () => JSON.parse(readFileSync(file, 'utf8')).pid, { timeoutMs: 1000 })).toBe(
      process.pid,
    );
  });

  it('a lock its holder stopped touching is stale, even if the pid lives (recycled)', async () => {
    const dir = tempDir('claw-lock-unit-');
    const other = await sleeper();
    try {
      const file = foreignLock(dir, other.pid);
      const old = new Date(Date.now() - 5000);
      utimesSync(file, old, old);
      const lock = await acquireSessionLock(dir, KEY, { staleMs: 2000, timeoutMs: 1000 });
      expect(JSON.parse(readFileSync(lock.file, 'utf8')).pid).toBe(process.pid);
      lock.release();
    } finally {
      await other.kill();
    }
  });

  it('release never removes a lock that is no longer ours', async () => {
    const dir = tempDir('claw-lock-unit-');
    const lock = await acquireSessionLock(dir, KEY, { lingerMs: 0 });
    // Taken over meanwhile (e.g. judged stale by another host): a new file in its place.
    rmSync(lock.file);
    foreignLock(dir, 1, 'newer');
    lock.release();
    expect(JSON.parse(readFileSync(lock.file, 'utf8')).token).toBe('newer');
  });

  it('lingers briefly after release, so the next turn of the session takes it at no cost', async () => {
    const dir = tempDir('claw-lock-unit-');
    const first = await acquireSessionLock(dir, KEY, { lingerMs: 150 });
    const ino = statSync(first.file).ino;
    first.release();
    expect(statSync(first.file).ino).toBe(ino);
    const again = await acquireSessionLock(dir, KEY, { lingerMs: 150 });
    expect(statSync(again.file).ino).toBe(ino);
    again.release();
    await waitFor(() => !existsSync(again.file), { what: 'the lingering lock file to go', timeoutMs: 5000 });
  });
});

describe('session store across processes', () => {
  it('processes updating different sessions at once lose nothing', async () => {
    const dir = tempDir('claw-store-procs-');
    const store = join(REPO, 'dist', 'plugins', 'sessions', 'store.js');
    const script = `
      const { SessionStore } = await import(${JSON.stringify(store)});
      const store = new SessionStore(process.argv[1]);
      for (let i = 1; i <= 15; i++) await store.upsert('agent:main:p' + process.argv[2], { label: 'n' + i });
    `;
    const runs = Array.from(
      { length: 6 },
      (_, index) =>
        new Promise<number>((resolve) =>
          spawn(process.execPath, ['--input-type=module', '-e', script, dir, String(index)], { stdio: 'inherit' }).once(
            'exit',
            (code) => resolve(code ?? -1),
          ),
        ),
    );
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0, 0, 0]);
    const sessions = JSON.parse(readFileSync(join(dir, 'sessions.json'), 'utf8'));
    expect(Object.keys(sessions).sort()).toEqual([0, 1, 2, 3, 4, 5].map((index) => `agent:main:p${index}`));
    for (const entry of Object.values(sessions)) expect((entry as { label: string }).label).toBe('n15');
  });
});

describe('tool-call pairing', () => {
  const call = (id: string) => ({ type: 'toolCall' as const, id, name: 'read', arguments: { path: id } });
  const assistant = (...ids: string[]): ChatMessage => ({ role: 'assistant', content: ids.map(call) });
  const result = (id: string, text = `result ${id}`): ChatMessage => ({
    role: 'toolResult',
    toolCallId: id,
    toolName: 'read',
    content: [{ type: 'text', text }],
  });
  const user = (text: string): ChatMessage => ({ role: 'user', content: text });
  const shape = (messages: ChatMessage[]) =>
    messages.map((message) =>
      message.role === 'toolResult'
        ? `result:${message.toolCallId}:${(message.content[0] as { text: string }).text}`
        : message.role === 'assistant'
          ? `assistant:${message.content.map((part) => (part.type === 'toolCall' ? part.id : part.type)).join(',')}`
          : `user:${message.content as string}`,
    );

  it('a valid history comes back as the same array, ids reused across turns included', () => {
    const history = [
      user('a'),
      assistant('call_1', 'call_2'),
      result('call_1'),
      result('call_2'),
      user('b'),
      assistant('call_1'),
      result('call_1'),
    ];
    expect(repairToolPairing(history)).toBe(history);
    expect(danglingToolCalls(history)).toEqual([]);
  });

  it('finds the calls a stopped run left open at the end', () => {
    expect(
      danglingToolCalls([user('a'), assistant('call_1', 'call_2', 'call_3'), result('call_1')]).map((part) => part.id),
    ).toEqual(['call_2', 'call_3']);
    // A user message after the calls: not a tail to close, older damage for the repair.
    expect(danglingToolCalls([assistant('call_1'), user('b')])).toEqual([]);
  });

  it('moves a displaced result to its call, drops orphans and duplicates, answers the rest', () => {
    const repaired = repairToolPairing([
      user('a'),
      assistant('call_1', 'call_2'),
      user('b'),
      result('call_1'),
      result('call_1', 'duplicate'),
      result('call_9'),
      assistant('call_3'),
    ]);
    expect(shape(repaired)).toEqual([
      'user:a',
      'assistant:call_1,call_2',
      'result:call_1:result call_1',
      `result:call_2:${ABORTED_TOOL_RESULT}`,
      'user:b',
      'assistant:call_3',
      `result:call_3:${ABORTED_TOOL_RESULT}`,
    ]);
  });

  it('an ambiguous stray result (two open calls share its id) is dropped, not guessed', () => {
    const repaired = repairToolPairing([
      assistant('call_1'),
      user('x'),
      assistant('call_1'),
      user('y'),
      result('call_1'),
    ]);
    expect(shape(repaired)).toEqual([
      'assistant:call_1',
      `result:call_1:${ABORTED_TOOL_RESULT}`,
      'user:x',
      'assistant:call_1',
      `result:call_1:${ABORTED_TOOL_RESULT}`,
      'user:y',
    ]);
  });

  it('drops malformed calls (no id or no arguments object), and a message left empty by that', () => {
    const broken = {
      role: 'assistant',
      content: [{ type: 'toolCall', id: '', name: 'read', arguments: {} }],
    } as ChatMessage;
    const half = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'hm' },
        { type: 'toolCall', id: 'call_x', name: 'read' },
      ],
    } as unknown as ChatMessage;
    expect(shape(repairToolPairing([user('a'), broken, user('b'), half, user('c')]))).toEqual([
      'user:a',
      'user:b',
      'assistant:text',
      'user:c',
    ]);
  });
});
