/**
 * Heartbeat and system events with a running gateway, in real time, against the scripted
 * fake model: the schedule fires, HEARTBEAT_OK is suppressed while an alert reaches a fake
 * channel, quiet hours and an empty HEARTBEAT.md are skipped with their reasons (and a system
 * event still runs), a restart keeps the slot and a missed one runs once, and queued events
 * survive kill -9 of the real `claw gateway`, both before the turn and in the middle of it.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../sdk/index.js';
import type { OutboundMessage } from '../sdk/channels/index.js';
import type { EventFrame } from '../sdk/generated/protocol.js';
import { connectOperator, writeConfig } from './bench/crash.js';
import { startFakeLlm, type FakeLlm, type RecordedRequest } from './fakes/llm-server.js';
import { idem, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { claw, REPO, startCliGateway, tempDir, waitFor } from './helpers.js';

const HEARTBEAT = join(REPO, 'plugins', 'heartbeat');

/** A channel that only records what it was asked to send. */
function pagerChannel(sent: OutboundMessage[]) {
  return definePlugin({
    id: 'pager',
    register(api) {
      api.registerChannel({
        id: 'pager',
        textLimit: 4000,
        async send(message: OutboundMessage) {
          sent.push(message);
          return { messageId: String(sent.length) };
        },
      });
    },
  });
}

const harnesses: AgentHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});

async function start(
  heartbeat: Record<string, unknown>,
  options: { stateDir?: string; sent?: OutboundMessage[] } = {},
): Promise<AgentHarness> {
  const h = await startAgent({
    config: { agents: { defaults: { heartbeat } } },
    plugins: [HEARTBEAT, pagerChannel(options.sent ?? [])],
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
  });
  harnesses.push(h);
  return h;
}

const heartbeats = (events: EventFrame[]) =>
  events.filter((frame) => frame.event === 'heartbeat').map((frame) => frame.payload as Record<string, any>);
const bodyText = (request: RecordedRequest) => JSON.stringify(request.body);
/** The user message of the turn (the last one in the request). */
const lastUser = (request: RecordedRequest) =>
  JSON.stringify(
    (request.body.messages as Array<{ role: string; content: unknown }>)
      .filter((message) => message.role === 'user')
      .at(-1)?.content,
  );

describe('heartbeat in a running gateway', { timeout: 90_000 }, () => {
  it('fires on schedule; HEARTBEAT_OK is not delivered, an alert goes to the target channel', async () => {
    const sent: OutboundMessage[] = [];
    const h = await start({ every: '2s', target: 'pager', to: 'ops-room' }, { sent });
    h.fake.script({ text: 'HEARTBEAT_OK' }, { text: 'ALERT: disk 95% full on /var' });
    // Generous: two turns under a loaded CI machine; the wait ends as soon as both have fired.
    await until(() => heartbeats(h.events).length >= 2, 60_000, 'two heartbeats');
    await h.client.request('set-heartbeats', { idempotencyKey: idem(), enabled: false });
    const [first, second] = heartbeats(h.events);
    expect(first).toMatchObject({
      status: 'ok-token',
      trigger: 'interval',
      agentId: 'main',
      sessionKey: 'agent:main:main',
    });
    expect(second).toMatchObject({
      status: 'sent',
      channel: 'pager',
      to: 'ops-room',
      preview: 'ALERT: disk 95% full on /var',
    });
    // Slots at 2 s and 4 s from the schedule's start (not a busy loop).
    const anchor = JSON.parse(readFileSync(join(h.gw.stateDir, 'heartbeat', 'state.json'), 'utf8')).agents.main
      .anchorAt as number;
    expect(h.fake.requests[0]!.at - anchor).toBeGreaterThanOrEqual(2000);
    expect(h.fake.requests[1]!.at - anchor).toBeGreaterThanOrEqual(4000);
    expect(sent).toEqual([expect.objectContaining({ to: 'ops-room', text: 'ALERT: disk 95% full on /var' })]);
    expect(h.fake.requests).toHaveLength(2);
    const last = (await h.client.request('last-heartbeat', {})) as Record<string, any>;
    expect(last).toMatchObject({
      enabled: false,
      last: { status: 'sent' },
      agents: [{ agentId: 'main', every: '2s', nextDueAt: null, pendingEvents: 0 }],
    });
    // chat.history (the web UI's) hides heartbeat prompts and the OK-only turn; the alert stays.
    const history = (await h.client.request('chat.history', { sessionKey: 'agent:main:main' })) as {
      messages: Array<{ role: string; content: unknown; origin?: string }>;
    };
    const texts = history.messages.map((message) => JSON.stringify(message.content));
    expect(texts.join('\n')).not.toContain('HEARTBEAT_OK');
    expect(history.messages.filter((message) => message.role === 'user')).toEqual([]);
    expect(texts).toEqual([expect.stringContaining('ALERT: disk 95% full on /var')]);
    // The transcript keeps all of it, the prompts marked with their origin.
    const sessionId = JSON.parse(
      readFileSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'),
    )['agent:main:main'].sessionId as string;
    const lines = readFileSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', `${sessionId}.jsonl`), 'utf8');
    expect(lines.match(/"origin":"heartbeat"/g)).toHaveLength(2);
    expect(lines).toContain('HEARTBEAT_OK');
  });

  it('a system event with mode now runs a heartbeat that sees it, and it is gone after that turn', async () => {
    const h = await start({ every: '0m', target: 'none' });
    h.fake.script({ text: 'HEARTBEAT_OK' }, { text: 'hello' });
    const queued = (await h.client.request('system-event', {
      idempotencyKey: idem(),
      text: 'Deploy 42 finished',
      mode: 'now',
    })) as Record<string, any>;
    expect(queued).toMatchObject({
      ok: true,
      event: { sessionKey: 'agent:main:main', source: 'gateway' },
      wake: { queued: true },
    });
    await until(() => heartbeats(h.events).length >= 1, 20_000, 'the heartbeat');
    expect(heartbeats(h.events)[0]).toMatchObject({ status: 'ok-token', trigger: 'system-event', systemEvents: 1 });
    expect(lastUser(h.fake.requests[0]!)).toMatch(/System: \[[^\]]+\] Deploy 42 finished/);
    await until(
      () => !readFileSync(join(h.gw.stateDir, 'system-events', 'queue.json'), 'utf8').includes('Deploy 42'),
      5000,
      'the event removed',
    );
    // The next user turn does not see it again.
    await h.client.request('agent', { message: 'hi', idempotencyKey: 'hb-next' }, { expectFinal: true });
    expect(lastUser(h.fake.requests[1]!)).toContain('hi');
    expect(lastUser(h.fake.requests[1]!)).not.toContain('System: [');
    // next-heartbeat without a schedule says why nothing will wake.
    const later = (await h.client.request('system-event', {
      idempotencyKey: idem(),
      text: 'later',
      mode: 'next-heartbeat',
    })) as Record<string, any>;
    expect(later.wake).toMatchObject({ queued: false, reason: expect.stringMatching(/every is 0/) });
    // The same contextKey keeps only the newest event.
    await h.client.request('system-event', { idempotencyKey: idem(), text: 'job ran (1)', contextKey: 'cron:j' });
    await h.client.request('system-event', { idempotencyKey: idem(), text: 'job ran (2)', contextKey: 'cron:j' });
    const queued2 = JSON.parse(readFileSync(join(h.gw.stateDir, 'system-events', 'queue.json'), 'utf8')).events.map(
      (event: { text: string }) => event.text,
    );
    expect(queued2).toEqual(['later', 'job ran (2)']);
    expect(((await h.client.request('last-heartbeat', {})) as Record<string, any>).agents[0].pendingEvents).toBe(2);
    await expect(h.client.request('wake', { idempotencyKey: idem(), mode: 'now', text: '  ' })).rejects.toThrow(
      /wake needs text/,
    );
    await expect(
      h.client.request('system-event', { idempotencyKey: idem(), text: 'x', agentId: 'nobody' }),
    ).rejects.toThrow(/unknown agent "nobody"/);
  });

  it('a heartbeat does not keep the main session alive: its updatedAt is what the last real turn left', async () => {
    const h = await start({ every: '0m', target: 'none' });
    h.fake.script({ text: 'hello there' }, { text: 'HEARTBEAT_OK' });
    await h.client.request('agent', { message: 'hi', idempotencyKey: idem() }, { expectFinal: true });
    const sessions = () =>
      JSON.parse(readFileSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'));
    const before = sessions()['agent:main:main'];
    // A heartbeat that touched the session now would leave a later updatedAt.
    await waitFor(() => Date.now() > before.updatedAt + 1, { what: 'the clock to pass the last turn' });
    await h.client.request('wake', { idempotencyKey: idem(), mode: 'now', text: 'Check the build' });
    await until(() => heartbeats(h.events).length >= 1, 20_000, 'the heartbeat');
    await until(() => sessions()['agent:main:main'].updatedAt === before.updatedAt, 5000, 'updatedAt restored');
    expect(sessions()['agent:main:main'].sessionId).toBe(before.sessionId);
    expect(h.fake.requests).toHaveLength(2);
  });

  it("isolatedSession: the heartbeat has no main-session history but still sees the main session's events", async () => {
    const h = await start({ every: '0m', target: 'none', isolatedSession: true });
    h.fake.script({ text: 'remembered: the code word is PLUM' }, { text: 'HEARTBEAT_OK' });
    await h.client.request(
      'agent',
      { message: 'the code word is PLUM', idempotencyKey: idem() },
      { expectFinal: true },
    );
    await h.client.request('system-event', { idempotencyKey: idem(), text: 'Backup finished', mode: 'now' });
    await until(() => heartbeats(h.events).length >= 1, 20_000, 'the heartbeat');
    expect(heartbeats(h.events)[0]).toMatchObject({
      status: 'ok-token',
      sessionKey: 'agent:main:main:heartbeat',
      systemEvents: 1,
    });
    const request = bodyText(h.fake.requests[1]!);
    expect(request).toContain('Backup finished');
    expect(request).not.toContain('PLUM');
    await until(
      () => !readFileSync(join(h.gw.stateDir, 'system-events', 'queue.json'), 'utf8').includes('Backup'),
      5000,
      'the event removed',
    );
  });

  it('outside active hours the scheduled heartbeat is skipped with quiet-hours, and no model call is made', async () => {
    const hour = new Date().getUTCHours();
    const pad = (n: number) => String(n % 24).padStart(2, '0');
    const h = await start({
      every: '1s',
      activeHours: { start: `${pad(hour + 2)}:00`, end: `${pad(hour + 3)}:00`, timezone: 'UTC' },
    });
    await until(() => heartbeats(h.events).length >= 2, 20_000, 'two ticks');
    expect(heartbeats(h.events).slice(0, 2)).toEqual([
      expect.objectContaining({ status: 'skipped', reason: 'quiet-hours' }),
      expect.objectContaining({ status: 'skipped', reason: 'quiet-hours' }),
    ]);
    expect(h.fake.requests).toHaveLength(0);
  });

  it('an empty HEARTBEAT.md is skipped with a recorded reason, and a queued system event still runs', async () => {
    const stateDir = tempDir('claw-hb-gw-');
    mkdirSync(join(stateDir, 'workspace'), { recursive: true });
    writeFileSync(join(stateDir, 'workspace', 'HEARTBEAT.md'), '# Heartbeat checklist\n\n- [ ]\n');
    const h = await start({ every: '1s', target: 'none' }, { stateDir });
    await until(
      () => heartbeats(h.events).some((event) => event.reason === 'empty-heartbeat-file'),
      20_000,
      'the skip',
    );
    expect(h.fake.requests).toHaveLength(0);
    expect(((await h.client.request('last-heartbeat', {})) as Record<string, any>).last).toMatchObject({
      status: 'skipped',
      reason: 'empty-heartbeat-file',
    });
    h.fake.script({ text: 'HEARTBEAT_OK' });
    await h.client.request('system-event', {
      idempotencyKey: idem(),
      text: 'Cron: backup done',
      mode: 'next-heartbeat',
    });
    await until(
      () => heartbeats(h.events).some((event) => event.status === 'ok-token'),
      20_000,
      'the heartbeat with the event',
    );
    expect(bodyText(h.fake.requests[0]!)).toContain('Cron: backup done');
  });

  it('a restart keeps the slot (not pushed forward), and a slot missed while down runs once', async () => {
    const stateDir = tempDir('claw-hb-restart-');
    const first = await start({ every: '6s', target: 'none' }, { stateDir });
    const anchor = JSON.parse(readFileSync(join(stateDir, 'heartbeat', 'state.json'), 'utf8')).agents.main
      .anchorAt as number;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await first.stop();
    harnesses.splice(harnesses.indexOf(first), 1);
    const restartedAt = Date.now();
    const second = await start({ every: '6s', target: 'none' }, { stateDir });
    second.fake.script({ text: 'HEARTBEAT_OK' });
    await until(() => heartbeats(second.events).length >= 1, 15_000, 'the first heartbeat');
    // The slot the heartbeat used (recorded when it began), against the first start's anchor.
    const slot = ((await second.client.request('last-heartbeat', {})) as Record<string, any>).agents[0]
      .lastRunAt as number;
    expect(slot - anchor).toBeGreaterThanOrEqual(6000);
    // A schedule reset to restart + every would be at least this late.
    expect(slot).toBeLessThan(restartedAt + 6000 - 300);
    await second.stop();
    harnesses.splice(harnesses.indexOf(second), 1);

    // Down for "ten slots" of an hourly heartbeat: one run soon after start, not ten.
    const file = join(stateDir, 'heartbeat', 'state.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    state.agents.main.lastRunAt = Date.now() - 10 * 3_600_000;
    writeFileSync(file, JSON.stringify(state));
    const third = await start({ every: '1h', target: 'none' }, { stateDir });
    third.fake.respond(() => ({ text: 'HEARTBEAT_OK' }));
    await until(() => heartbeats(third.events).length >= 1, 20_000, 'the missed heartbeat');
    // Once the scheduler has put the next slot an hour after this run, no catch-up run is left.
    const lastHeartbeat = async () =>
      ((await third.client.request('last-heartbeat', {})) as Record<string, any>).agents[0];
    await waitFor(
      async () => {
        const agent = await lastHeartbeat();
        return agent.nextDueAt - agent.lastRunAt === 3_600_000;
      },
      { what: 'the next slot an hour on', timeoutMs: 10_000 },
    );
    expect(heartbeats(third.events)).toHaveLength(1);
    expect(third.fake.requests).toHaveLength(1);
  }, 40_000);
});

describe('heartbeat config', () => {
  it('the README example validates; unknown keys and bad values are refused by name', async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const example = /```json5\n(\{ agents: \{ defaults: \{ heartbeat:[^\n]*)\n```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const dir = tempDir('claw-hb-config-');
    writeFileSync(join(dir, 'openclaw.json'), example!);
    const ok = await claw(['config', 'validate'], { OPENCLAW_STATE_DIR: dir });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    writeFileSync(
      join(dir, 'openclaw.json'),
      JSON.stringify({
        agents: {
          defaults: { heartbeat: { every: 'soon', includeReasoning: true } },
          list: [{ id: 'ops', heartbeat: { activeHours: { start: '25:00', end: '08:00' } } }],
        },
      }),
    );
    const bad = await claw(['config', 'validate'], { OPENCLAW_STATE_DIR: dir });
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/agents\.defaults\.heartbeat/);
    expect(bad.stdout + bad.stderr).toMatch(/includeReasoning/);
    expect(bad.stdout + bad.stderr).toMatch(/every/);
    expect(bad.stdout + bad.stderr).toMatch(
      /agents\.list\.0\.heartbeat\.activeHours\.start|agents\.list\[0\]\.heartbeat\.activeHours\.start/,
    );
  });
});

describe('system events and kill -9 (claw gateway)', () => {
  let fake: FakeLlm | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('an event queued by claw system event survives kill -9 before the turn and in the middle of it', async () => {
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-hb-kill-');
    writeConfig(stateDir, fake, { agents: { defaults: { model: 'openai/gpt-4.1', heartbeat: { every: '0m' } } } });
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const queue = join(stateDir, 'system-events', 'queue.json');

    const first = await startCliGateway(env);
    const cli = await claw(['system', 'event', '--text', 'Deploy 42 finished'], env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^ok \(heartbeat.every is 0/);
    // Acknowledged means on disk: kill at once.
    first.child.kill('SIGKILL');
    await first.exited;
    expect(statSync(queue).mode & 0o777).toBe(0o600);
    expect(readFileSync(queue, 'utf8')).toContain('Deploy 42 finished');

    // The next turn sees it; the gateway dies in the middle of that turn.
    let phase: 'hang' | 'answer' = 'hang';
    fake.respond(() => (phase === 'hang' ? { hang: true } : { text: 'ANSWER noted' }));
    const second = await startCliGateway(env);
    const operator = await connectOperator(second.port);
    void operator
      .request('agent', { message: 'status?', idempotencyKey: 'kill-mid-turn' }, { expectFinal: true })
      .catch(() => undefined);
    await waitFor(() => fake!.requests.length > 0, { what: 'the model request', timeoutMs: 10_000 });
    expect(bodyText(fake.requests[0]!)).toMatch(/System: \[[^\]]+\] Deploy 42 finished/);
    second.child.kill('SIGKILL');
    await second.exited;
    await operator.close().catch(() => undefined);
    expect(readFileSync(queue, 'utf8')).toContain('Deploy 42 finished');

    // After the restart the interrupted turn resumes, sees the event again, and only then is it removed.
    phase = 'answer';
    await startCliGateway(env);
    await waitFor(() => !readFileSync(queue, 'utf8').includes('Deploy 42'), {
      what: 'the event to leave the queue',
      timeoutMs: 15_000,
    });
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
    expect(bodyText(fake.requests.at(-1)!)).toContain('Deploy 42 finished');
    expect(existsSync(join(stateDir, 'heartbeat', 'state.json'))).toBe(true);
  }, 60_000);

  it('a heartbeat cut off by kill -9 runs again at the next start (not resumed by the intake journal), exactly once', async () => {
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-hb-inflight-');
    writeConfig(stateDir, fake, {
      agents: { defaults: { model: 'openai/gpt-4.1', heartbeat: { every: '0m', target: 'none' } } },
    });
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const stateFile = join(stateDir, 'heartbeat', 'state.json');
    let phase: 'hang' | 'answer' = 'hang';
    fake.respond(() => (phase === 'hang' ? { hang: true } : { text: 'HEARTBEAT_OK' }));
    const first = await startCliGateway(env);
    expect((await claw(['system', 'event', '--text', 'Backup finished', '--mode', 'now'], env)).code).toBe(0);
    await waitFor(() => fake!.requests.length > 0, { what: 'the model request', timeoutMs: 10_000 });
    expect(lastUser(fake.requests[0]!)).toContain('Backup finished');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).agents.main.inFlight).toMatchObject({
      trigger: expect.any(String),
    });

    phase = 'answer';
    const restarted = await startCliGateway(env);
    await waitFor(() => !JSON.parse(readFileSync(stateFile, 'utf8')).agents.main.inFlight, {
      what: 'the re-run heartbeat to finish',
      timeoutMs: 15_000,
    });
    const state = JSON.parse(readFileSync(stateFile, 'utf8')).agents.main;
    expect(state.last).toMatchObject({
      status: 'ok-token',
      trigger: expect.stringMatching(/^recovered:/),
      systemEvents: 1,
    });
    // A turn asked for now runs on the main lane after anything the start queued there, so once
    // it is answered a resumption by the intake journal would have reached the model too.
    const operator = await connectOperator(restarted.port);
    await operator.request(
      'agent',
      { message: 'after the restart', idempotencyKey: 'after-restart' },
      { expectFinal: true },
    );
    await operator.close().catch(() => undefined);
    // The hung request and one re-run: the intake journal did not resume it as well.
    expect(fake.requests.map((request) => lastUser(request))).toEqual([
      expect.stringContaining('Backup finished'),
      expect.stringContaining('Backup finished'),
      expect.stringContaining('after the restart'),
    ]);
    expect(readFileSync(join(stateDir, 'system-events', 'queue.json'), 'utf8')).not.toContain('Backup finished');
  }, 60_000);

  it('claw system heartbeat last / disable / enable talk to the running gateway', async () => {
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-hb-cli-');
    writeConfig(stateDir, fake, { agents: { defaults: { model: 'openai/gpt-4.1', heartbeat: { every: '1h' } } } });
    const env = { OPENCLAW_STATE_DIR: stateDir };
    await startCliGateway(env);
    const disabled = await claw(['system', 'heartbeat', 'disable', '--json'], env);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(JSON.parse(disabled.stdout)).toEqual({ ok: true, enabled: false });
    const human = await claw(['system', 'heartbeat', 'last'], env);
    expect(human.stdout).toMatch(
      /^Heartbeats: off \(claw system heartbeat enable\)\nLast: none yet\n  main: every 1h, next -, 0 pending/,
    );
    const last = await claw(['system', 'heartbeat', 'last', '--json'], env);
    expect(JSON.parse(last.stdout)).toMatchObject({
      enabled: false,
      last: null,
      agents: [{ agentId: 'main', every: '1h', nextDueAt: null }],
    });
    const enabled = await claw(['system', 'heartbeat', 'enable'], env);
    expect(enabled.stdout).toBe('Scheduled heartbeats are on.\n');
    const again = JSON.parse((await claw(['system', 'heartbeat', 'last', '--json'], env)).stdout);
    expect(again.agents[0].nextDueAt).toBeGreaterThan(Date.now() + 3_500_000);
    const bad = await claw(['system', 'event', '--mode', 'soon', '--text', 'x'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--mode must be now or next-heartbeat/);
    const presence = await claw(['system', 'presence', '--json'], env);
    expect(presence.code, presence.stderr).toBe(0);
    expect(Array.isArray(JSON.parse(presence.stdout))).toBe(true);
    expect((await claw(['system', 'presence'], env)).stdout).toMatch(
      /^(No clients connected\.|(connected|gone) .*since \d{4}-)/m,
    );
  }, 40_000);
});
