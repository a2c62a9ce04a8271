/**
 * Cron across real process deaths, with the built `claw`: a gateway killed with SIGKILL
 * before a job is due runs it exactly once after it starts again; one killed while a run
 * is going re-runs that occurrence exactly once. Plus `claw cron` / `claw automations`
 * round trips against the running gateway.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from './agent-helpers.js';
import { claw, startCliGateway, tempDir, waitFor } from './helpers.js';

function setup() {
  const stateDir = tempDir('claw-cron-proc-');
  // Command jobs run through the exec tool: the host policy here lets them run without asking.
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ tools: { exec: { security: 'full', ask: 'off' } } }));
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir }, out: join(stateDir, 'out.txt') };
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
const runLog = (stateDir: string, jobId: string) => {
  const file = join(stateDir, 'cron', 'runs', `${jobId}.jsonl`);
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
};

/** `claw cron status` once nothing is running: a run that was going to happen has happened by then. */
async function settled(env: Record<string, string>): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const status = JSON.parse((await claw(['cron', 'status', '--json'], env)).stdout) as Record<string, any>;
      return status.running.length === 0 ? status : undefined;
    },
    { intervalMs: 100, what: 'cron to have no run going' },
  );
}

async function add(env: Record<string, string>, args: string[]): Promise<{ id: string; [key: string]: unknown }> {
  const result = await claw(['cron', 'add', ...args, '--json'], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

describe('cron across kill -9 and restarts (real gateway processes)', () => {
  it('killed before the due time: the job runs exactly once after the gateway starts again', async () => {
    const { stateDir, env, out } = setup();
    const gw = await startCliGateway(env);
    const job = await add(env, ['--name', 'reminder', '--at', '3s', '--command', `echo ran >> ${out}`, '--no-deliver']);
    expect(job).toMatchObject({
      name: 'reminder',
      sessionTarget: 'isolated',
      deleteAfterRun: true,
      payload: { kind: 'command' },
    });
    gw.child.kill('SIGKILL');
    await gw.exited;
    // The restart must find the job overdue: wait for the clock to pass its due time, not for a guessed 3.5 s.
    const dueAt =
      (job.state as { nextRunAtMs?: number } | undefined)?.nextRunAtMs ??
      Date.parse((job.schedule as { at: string }).at);
    expect(Number.isFinite(dueAt)).toBe(true);
    await waitFor(() => Date.now() > dueAt + 100, { what: 'the due time to pass while the gateway is down' });
    expect(lines(out)).toEqual([]);
    const again = await startCliGateway(env);
    await until(() => runLog(stateDir, job.id).length === 1, 15_000, 'the run after the restart');
    // Succeeded one-shot: deleted, and nothing running, so no second run can still come.
    await waitFor(
      async () => JSON.parse((await claw(['cron', 'list', '--all', '--json'], env)).stdout).jobs.length === 0,
      { intervalMs: 100, what: 'the one-shot to be deleted' },
    );
    await settled(env);
    expect(lines(out)).toEqual(['ran']);
    expect(runLog(stateDir, job.id)).toMatchObject([{ status: 'ok', trigger: 'schedule' }]);
    again.child.kill('SIGTERM');
    await again.exited;
  }, 60_000);

  it('killed during a run: that occurrence is re-run exactly once at the next start, and the history says so', async () => {
    const { stateDir, env, out } = setup();
    const gw = await startCliGateway(env);
    const job = await add(env, [
      '--name',
      'slow',
      '--every',
      '1h',
      '--command',
      `echo start >> ${out}; sleep 2; echo end >> ${out}`,
      '--no-deliver',
    ]);
    expect((await claw(['cron', 'run', job.id], env)).code).toBe(0);
    await until(() => lines(out).includes('start'), 10_000, 'the run to start');
    gw.child.kill('SIGKILL');
    await gw.exited;
    const stored = JSON.parse(readFileSync(join(stateDir, 'cron', 'jobs.json'), 'utf8'));
    expect(stored.jobs[0].state.runningAtMs).toEqual(expect.any(Number));

    const again = await startCliGateway(env);
    await until(() => runLog(stateDir, job.id).some((entry) => entry.status === 'ok'), 15_000, 'the re-run');
    // Nothing running once the re-run is recorded: a second re-run would show here or in the history below.
    await settled(env);
    const history = runLog(stateDir, job.id);
    expect(history).toMatchObject([
      {
        status: 'error',
        trigger: 'manual',
        error: expect.stringMatching(/interrupted by a gateway restart; re-running it once/),
      },
      { status: 'ok', trigger: 'recovery' },
    ]);
    expect(lines(out).filter((line) => line === 'start')).toHaveLength(2);
    const status = JSON.parse((await claw(['cron', 'status', '--json'], env)).stdout);
    expect(status).toMatchObject({ enabled: true, jobs: 1, running: [], errors: [] });
    expect(status.nextWakeAtMs).toBe(
      JSON.parse((await claw(['cron', 'list', '--json'], env)).stdout).jobs[0].state.nextRunAtMs,
    );
    again.child.kill('SIGTERM');
    await again.exited;
  }, 60_000);

  it('claw cron / claw automations: add, list, edit, runs, rm; bad flags are refused with the reason', async () => {
    const { env, out, stateDir } = setup();
    const gw = await startCliGateway(env);
    const job = await add(env, [
      '--name',
      'Morning brief',
      '--cron',
      '0 7 * * *',
      '--tz',
      'America/New_York',
      '--session',
      'isolated',
      '--message',
      'Summarize overnight updates.',
      '--model',
      'openai/gpt-4.1',
      '--announce',
      '--channel',
      'telegram',
      '--to',
      '12345',
    ]);
    expect(job).toMatchObject({
      schedule: { kind: 'cron', expr: '0 7 * * *', tz: 'America/New_York' },
      payload: { kind: 'agentTurn', model: 'openai/gpt-4.1' },
      delivery: { mode: 'announce', channel: 'telegram', to: '12345' },
    });
    const listed = await claw(['automations', 'list'], env);
    expect(listed.stdout).toMatch(
      /Morning brief\s+cron 0 7 \* \* \* \(America\/New_York\)\s+isolated\s+idle\s+in \d+[smhd]/,
    );
    const edited = await claw(
      ['cron', 'edit', job.id, '--every', '2h', '--no-deliver', '--thinking', 'low', '--json'],
      env,
    );
    expect(JSON.parse(edited.stdout)).toMatchObject({
      schedule: { kind: 'every', everyMs: 7_200_000 },
      delivery: { mode: 'none' },
      payload: { message: 'Summarize overnight updates.', thinking: 'low' },
    });
    const probe = await add(env, [
      '--name',
      'probe',
      '--every',
      '1h',
      '--command',
      `echo probed >> ${out}; echo queue depth 3`,
      '--no-deliver',
    ]);
    const started = await claw(['cron', 'run', probe.id], env);
    expect(started).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Started job \S+ \(run \S+\); see claw cron runs/),
    });
    await until(() => lines(out).length === 1, 10_000, 'the manual run');
    // The command's output comes before the run is recorded; `cron runs` reads the record.
    await until(() => runLog(stateDir, probe.id).length === 1, 10_000, 'the manual run to be recorded');
    const runs = await claw(['cron', 'runs', probe.id], env);
    expect(runs.stdout).toMatch(/ok\s+manual\s+\d+ms not-requested queue depth 3/);
    const status = await claw(['cron', 'status'], env);
    expect(status.stdout).toMatch(
      /^Scheduler: running\nJobs: +2 \(2 enabled\) in .*jobs\.json\nNext wake: in \d+[smhd] /,
    );
    const disabled = await claw(['cron', 'disable', probe.id], env);
    expect(disabled.stdout).toBe(`Disabled job ${probe.id} "probe" (every 1h), disabled.\n`);
    expect(JSON.parse((await claw(['cron', 'rm', probe.id, '--json'], env)).stdout)).toEqual({
      ok: true,
      removed: true,
    });
    expect((await claw(['cron', 'rm', probe.id], env)).stdout).toBe(`No job ${probe.id}.\n`);

    const refused = [
      [
        ['cron', 'add', '--name', 'x', '--every', '1h', '--session', 'foo', '--message', 'm'],
        /--session must be main or isolated, got "foo"/,
      ],
      [
        ['cron', 'add', '--name', 'x', '--cron', '0 0 7 * * *', '--message', 'm'],
        /INVALID_REQUEST: invalid cron expression .* expected 5 fields/,
      ],
      [['cron', 'add', '--name', 'x', '--every', 'soon', '--message', 'm'], /--every must be a duration/],
      [
        ['cron', 'add', '--name', 'x', '--at', '1m', '--every', '1h', '--message', 'm'],
        /use only one of --at, --every/,
      ],
      [
        ['cron', 'add', '--name', 'x', '--every', '1h', '--session', 'main', '--message', 'm'],
        /main cron jobs require payload.kind="systemEvent"/,
      ],
      [
        ['cron', 'add', '--name', 'x', '--every', '1h'],
        /payload: one of --system-event, --message, --command is required/,
      ],
      [['cron', 'frobnicate'], /^claw: Unknown command 'cron frobnicate' \(see claw cron --help\)\n$/],
      [['cron', 'ad', '--name', 'x'], /^claw: Unknown command 'cron ad'\. Did you mean 'cron add'\?\n$/],
      [['cron', 'list', '--al'], /^claw: Unknown option '--al'\. Did you mean '--all'\?\n$/],
    ] as const;
    for (const [args, message] of refused) {
      const result = await claw([...args], env);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBeGreaterThan(0);
      expect(result.stderr).toMatch(message);
    }
    gw.child.kill('SIGTERM');
    await gw.exited;
  }, 90_000);
});
