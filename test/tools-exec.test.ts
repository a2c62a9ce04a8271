import { existsSync, readFileSync, realpathSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext, ToolResult } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { REPO, tempDir, waitFor } from './helpers.js';

const PLUGIN = join(REPO, 'plugins', 'tools-exec');
// Host commands go through exec approvals (defaults: security full, ask off); without an approver they are refused.
const APPROVALS = join(REPO, 'plugins', 'exec-approvals');

let kernel: TestKernel;
let small: TestKernel;
/** A tool runs only through the kernel's choke point (policy, params check, masking). */
interface ToolHandle {
  kernel: TestKernel;
  name: string;
}
const handle = (owner: TestKernel, name: string): ToolHandle => ({ kernel: owner, name });
let exec: ToolHandle;
let proc: ToolHandle;

beforeAll(async () => {
  kernel = await createTestKernel({ plugins: [PLUGIN, APPROVALS] });
  small = await createTestKernel({
    plugins: [PLUGIN, APPROVALS],
    config: { plugins: { entries: { 'tools-exec': { config: { maxOutputChars: 1000, maxFinishedSessions: 1 } } } } },
  });
  exec = handle(kernel, 'exec');
  proc = handle(kernel, 'process');
});

afterAll(async () => {
  await kernel.dispose();
  await small.dispose();
});

async function run(
  handle: ToolHandle,
  params: Record<string, unknown>,
  ctx: Partial<ToolContext> = {},
): Promise<ToolResult> {
  const { toolCallId = 'x', ...context } = ctx;
  const request = {
    name: handle.name,
    params,
    toolCallId,
    context: { ...context, workspaceDir: ctx.workspaceDir ?? tempDir() },
  };
  return (await handle.kernel.plugins.kernelServices.tools.invoke(request)).result;
}

function text(result: ToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function details<T = Record<string, unknown>>(result: ToolResult): T {
  return result.details as T;
}

/** A process counts as gone once it no longer exists or is a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether `pid` is gone within `withinMs` (false, not a throw, so a test can say which process outlived its kill). */
function gone(pid: number, withinMs = 4000): Promise<boolean> {
  return waitFor(() => !alive(pid), { timeoutMs: withinMs, intervalMs: 50, what: `process ${pid} to exit` }).then(
    () => true,
    () => false,
  );
}

/** The pid a shell wrote to `path`, once it is there. */
async function readPid(path: string): Promise<number> {
  return Number(
    await waitFor(() => existsSync(path) && readFileSync(path, 'utf8').trim(), { what: `a pid in ${path}` }),
  );
}

/** Start a shell whose child (a sleep) records its pid, so a test can check the child dies too. */
// The pid file is written after "started", so a test that waits for it knows the output is in the pipe.
const SHELL_WITH_CHILD = 'sleep 30 & p=$!; echo started; echo $p > child.pid; wait';

describe('exec', () => {
  it('runs a command in the workspace with extra environment and returns its output', async () => {
    const ws = tempDir();
    const result = await run(
      exec,
      { command: 'pwd; echo "$GREETING $OPENCLAW_SHELL"; echo oops >&2', env: { GREETING: 'hi' } },
      { workspaceDir: ws },
    );
    expect(result.isError).toBeUndefined();
    expect(text(result)).toBe(`${realpathSync(ws)}\nhi exec\noops\n`);
    expect(details(result)).toMatchObject({
      status: 'completed',
      exitCode: 0,
      signal: null,
      cwd: ws,
      truncated: false,
      omittedChars: 0,
    });
    expect(details<{ durationMs: number }>(result).durationMs).toBeGreaterThanOrEqual(0);
    expect(text(await run(exec, { command: 'true' }))).toBe('(no output)');
  });

  it('resolves workdir against the workspace and refuses a missing one', async () => {
    const ws = tempDir();
    mkdirSync(join(ws, 'sub'));
    expect(text(await run(exec, { command: 'pwd', workdir: 'sub' }, { workspaceDir: ws }))).toBe(
      `${realpathSync(join(ws, 'sub'))}\n`,
    );
    const missing = await run(exec, { command: 'pwd', workdir: 'nope' }, { workspaceDir: ws });
    expect(missing).toMatchObject({
      isError: true,
      content: [{ text: `exec: working directory ${join(ws, 'nope')} does not exist or is not a directory` }],
    });
  });

  it('reports a non-zero exit as an error with the output and the code', async () => {
    const result = await run(exec, { command: 'echo partial; echo broken >&2; exit 3' });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('partial\nbroken\n\n\n[exit code 3]');
    expect(details(result)).toMatchObject({ status: 'failed', exitCode: 3 });
  });

  it('rejects bad params as error results', async () => {
    expect(await run(exec, {})).toMatchObject({
      isError: true,
      content: [{ text: 'Invalid arguments for exec: command: is required' }],
    });
    expect(await run(exec, { command: 'true', timeout: -1 })).toMatchObject({
      isError: true,
      content: [{ text: 'Invalid arguments for exec: timeout: must be >= 0' }],
    });
    expect(await run(exec, { command: 'true', env: { A: {} } })).toMatchObject({
      isError: true,
      content: [{ text: 'Invalid arguments for exec: env.A: must be string' }],
    });
    expect(text(await run(exec, { command: 'echo a\0b' }))).toMatch(/^exec: could not start the command: .*null bytes/);
  });

  it('kills the whole process group on timeout, children included', async () => {
    const ws = tempDir();
    const started = Date.now();
    const result = await run(exec, { command: SHELL_WITH_CHILD, timeout: 0.5 }, { workspaceDir: ws });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('started\n\n\n[timed out after 500ms; the command and its child processes were killed]');
    expect(details(result)).toMatchObject({ status: 'timeout', signal: 'SIGTERM' });
    expect(await gone(await readPid(join(ws, 'child.pid')))).toBe(true);
    expect(await gone(details<{ pid: number }>(result).pid)).toBe(true);
  });

  it('escalates to SIGKILL when a child ignores SIGTERM', async () => {
    const ws = tempDir();
    const command = `(trap '' TERM; exec sleep 30) & echo $! > child.pid; wait`;
    const result = await run(exec, { command, timeoutSeconds: 0.3 }, { workspaceDir: ws });
    expect(details(result)).toMatchObject({ status: 'timeout' });
    const child = await readPid(join(ws, 'child.pid'));
    expect(await gone(child, 5000)).toBe(true);
  });

  it('caps captured output, keeping the start and the end', async () => {
    const tool = handle(small, 'exec');
    const command = 'i=0; while [ $i -lt 500 ]; do echo "line $i"; i=$((i+1)); done';
    const result = await run(tool, { command });
    const output = text(result);
    const total = Array.from({ length: 500 }, (_, k) => `line ${k}\n`).join('').length;
    expect(output.startsWith('line 0\nline 1\n')).toBe(true);
    expect(output.endsWith('line 498\nline 499\n')).toBe(true);
    expect(output).toContain(`\n[... ${total - 1000} characters omitted ...]\n`);
    expect(details(result)).toMatchObject({
      status: 'completed',
      truncated: true,
      omittedChars: total - 1000,
      outputChars: total,
    });
  });

  it('kills a foreground command when the run is aborted', async () => {
    const ws = tempDir();
    const controller = new AbortController();
    const pending = run(exec, { command: SHELL_WITH_CHILD }, { workspaceDir: ws, signal: controller.signal });
    const child = await readPid(join(ws, 'child.pid'));
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('started\n\n\n[aborted; the command and its child processes were killed]');
    expect(details(result)).toMatchObject({ status: 'aborted' });
    expect(await gone(child)).toBe(true);

    const before = tempDir();
    const refused = await run(exec, { command: 'touch ran' }, { workspaceDir: before, signal: AbortSignal.abort() });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ text: 'exec: the run was aborted before the command started' }],
    });
    expect(existsSync(join(before, 'ran'))).toBe(false);
  });

  it('moves a command that outlives yieldMs to the background, then poll picks up the rest', async () => {
    const result = await run(exec, { command: 'echo early; sleep 1; echo late', yieldMs: 400 });
    expect(result.isError).toBeUndefined();
    const { sessionId, status } = details<{ sessionId: string; status: string }>(result);
    expect(status).toBe('running');
    expect(text(result)).toMatch(
      new RegExp(`^Command still running in the background as session ${sessionId} \\(pid \\d+\\)\\.`),
    );
    expect(text(result)).toMatch(/\n\nOutput so far:\nearly\n$/);
    const polled = await run(proc, { action: 'poll', sessionId, timeout: 5000 });
    expect(text(polled)).toMatch(/^late\n/);
    let final = polled;
    while (details<{ status: string }>(final).status === 'running')
      final = await run(proc, { action: 'poll', sessionId, timeout: 5000 });
    expect(text(final)).toMatch(/\[exit code 0\]$/);
    expect(details(final)).toMatchObject({ status: 'completed', exitCode: 0 });
  });
});

describe('process', () => {
  it('background → poll → write → log → list → kill', async () => {
    const ws = tempDir();
    const started = await run(
      exec,
      { command: 'echo ready; while read line; do echo "got $line"; done', background: true },
      { workspaceDir: ws },
    );
    const { sessionId, pid } = details<{ sessionId: string; pid: number }>(started);
    expect(text(started)).not.toContain('Output so far');

    const first = await run(proc, { action: 'poll', sessionId, timeout: 5000 });
    expect(text(first)).toMatch(/^ready\n\n\n\[still running after \d+m?s\]$/);
    expect(details(first)).toMatchObject({ sessionId, status: 'running', pid, newChars: 6 });
    expect(text(await run(proc, { action: 'poll', sessionId }))).toMatch(/^\(no new output\)\n\n\[still running/);

    const wrote = await run(proc, { action: 'write', sessionId, data: 'hello\n' });
    expect(text(wrote)).toBe(`Wrote 6 bytes to session ${sessionId}.`);
    expect(text(await run(proc, { action: 'poll', sessionId, timeout: 5000 }))).toMatch(/^got hello\n/);
    await run(proc, { action: 'write', sessionId, data: 'again\n' });
    await run(proc, { action: 'poll', sessionId, timeout: 5000 });

    const log = await run(proc, { action: 'log', sessionId });
    expect(text(log)).toMatch(/^ready\ngot hello\ngot again\n\n\[lines 1-3 of 3\] \[still running/);
    const window = await run(proc, { action: 'log', sessionId, offset: 1, limit: 1 });
    expect(text(window)).toMatch(/^got hello\n\n\[lines 2-2 of 3\]/);
    expect(details(window)).toMatchObject({ totalLines: 3, offset: 1, returnedLines: 1 });

    const listed = await run(proc, { action: 'list' });
    expect(text(listed)).toMatch(
      new RegExp(`^${sessionId}  running  pid ${pid}  \\d+m?s  echo ready; while read line;`, 'm'),
    );
    const sessions = details<{ sessions: Array<{ sessionId: string }> }>(listed).sessions;
    expect(sessions.find((session) => session.sessionId === sessionId)).toMatchObject({
      status: 'running',
      pid,
      cwd: ws,
      exitCode: null,
    });

    const killed = await run(proc, { action: 'kill', sessionId });
    expect(text(killed)).toMatch(new RegExp(`^Killed session ${sessionId} `));
    expect(details(killed)).toMatchObject({ status: 'killed', signal: 'SIGTERM' });
    expect(await gone(pid)).toBe(true);
    expect(text(await run(proc, { action: 'poll', sessionId }))).toBe('(no new output)\n\n[killed by SIGTERM]');
    expect(text(await run(proc, { action: 'kill', sessionId }))).toBe(
      `Session ${sessionId} had already ended [killed by SIGTERM].`,
    );
    expect(text(await run(proc, { action: 'list' }))).toMatch(
      new RegExp(`${sessionId}  killed \\[killed by SIGTERM\\]`),
    );
    expect(await run(proc, { action: 'write', sessionId, data: 'x' })).toMatchObject({
      isError: true,
      content: [{ text: `process: session ${sessionId} has already ended` }],
    });
  });

  it('write with eof closes stdin so the command can finish', async () => {
    const started = await run(exec, { command: 'sort', background: true });
    const { sessionId } = details<{ sessionId: string }>(started);
    expect(text(await run(proc, { action: 'write', sessionId, data: 'b\na\n', eof: true }))).toBe(
      `Wrote 4 bytes to session ${sessionId} and closed its stdin.`,
    );
    let polled = await run(proc, { action: 'poll', sessionId, timeout: 5000 });
    let output = text(polled);
    while (details<{ status: string }>(polled).status === 'running') {
      polled = await run(proc, { action: 'poll', sessionId, timeout: 5000 });
      output += text(polled);
    }
    expect(output).toContain('a\nb\n');
    expect(details(polled)).toMatchObject({ status: 'completed', exitCode: 0 });
  });

  it('reports unknown actions and sessions, and keeps sessions per agent', async () => {
    expect(await run(proc, { action: 'explode' })).toMatchObject({
      isError: true,
      content: [
        { text: 'Invalid arguments for process: action: must be one of "list", "poll", "log", "write", "kill"' },
      ],
    });
    expect(await run(proc, { action: 'poll' })).toMatchObject({
      isError: true,
      content: [{ text: 'process: "sessionId" is required for action "poll"' }],
    });
    expect(text(await run(proc, { action: 'poll', sessionId: 'nope' }))).toMatch(/^process: no session "nope"/);

    const mine = await run(exec, { command: 'sleep 5', background: true }, { agentId: 'alice' });
    const { sessionId } = details<{ sessionId: string }>(mine);
    expect(
      details<{ sessions: Array<{ sessionId: string }> }>(await run(proc, { action: 'list' }, { agentId: 'bob' }))
        .sessions,
    ).toEqual([]);
    expect(text(await run(proc, { action: 'list' }, { agentId: 'bob' }))).toBe('No background sessions.');
    expect((await run(proc, { action: 'kill', sessionId }, { agentId: 'bob' })).isError).toBe(true);
    expect(details(await run(proc, { action: 'kill', sessionId }, { agentId: 'alice' }))).toMatchObject({
      status: 'killed',
    });
    expect(await run(proc, { action: 'write', sessionId }, { agentId: 'alice' })).toMatchObject({
      isError: true,
      content: [{ text: 'process: "data" is required for action "write" (or eof: true to close stdin)' }],
    });
  });

  it('keeps at most maxFinishedSessions finished sessions', async () => {
    const tool = handle(small, 'exec');
    const process = handle(small, 'process');
    const ids: string[] = [];
    for (const word of ['one', 'two']) {
      const started = await run(tool, { command: `echo ${word}`, background: true });
      const { sessionId } = details<{ sessionId: string }>(started);
      ids.push(sessionId);
      while (
        details<{ status: string }>(await run(process, { action: 'poll', sessionId, timeout: 2000 })).status ===
        'running'
      );
    }
    const sessions = details<{ sessions: Array<{ sessionId: string }> }>(
      await run(process, { action: 'list' }),
    ).sessions;
    expect(sessions.map((session) => session.sessionId)).toEqual([ids[1]]);
  });
});

describe('kernel stop', () => {
  it('kills every background command and its children', async () => {
    const own = await createTestKernel({ plugins: [PLUGIN, APPROVALS] });
    await own.start();
    const ws = tempDir();
    const started = await run(
      handle(own, 'exec'),
      { command: SHELL_WITH_CHILD, background: true, timeout: 0 },
      { workspaceDir: ws },
    );
    const shell = details<{ pid: number }>(started).pid;
    const child = await readPid(join(ws, 'child.pid'));
    expect(alive(shell) && alive(child)).toBe(true);
    await own.stop();
    expect(await gone(shell)).toBe(true);
    expect(await gone(child)).toBe(true);
    const listed = await run(handle(own, 'process'), { action: 'list' });
    expect(text(listed)).toBe('No background sessions.');
    await own.dispose();
  });
});
