/**
 * Heartbeat and the system-event queue without a gateway: reply verdicts (HEARTBEAT_OK),
 * empty checklists, active hours, the durable queue, and the scheduler driven by a clock the
 * test controls (slots, restarts, missed slots, busy sessions, skips with their reasons).
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../kernel/index.js';
import type { AgentService, DispatchInput, RunResult, SessionEntry } from '../sdk/agent/index.js';
import type { OutboundRequest, OutboundResult } from '../sdk/index.js';
import { formatSystemEvents, MAX_EVENT_CHARS, SystemEventStore } from '../plugins/heartbeat/event-store.js';
import { effectivelyEmpty, judgeReply } from '../plugins/heartbeat/reply.js';
import {
  BUSY_RETRY_MS,
  ERROR_RETRY_MS,
  HeartbeatRunner,
  STARTUP_DELAY_MS,
  type Clock,
} from '../plugins/heartbeat/runner.js';
import { heartbeatAgents, heartbeatSettings, parseEvery, withinActiveHours } from '../plugins/heartbeat/settings.js';
import { HeartbeatState, type HeartbeatEvent } from '../plugins/heartbeat/state.js';
import { REPO, tempDir } from './helpers.js';

describe('heartbeat replies', () => {
  it('HEARTBEAT_OK at the start or end with little else is an acknowledgment', () => {
    expect(judgeReply('HEARTBEAT_OK', 300)).toEqual({ kind: 'ack', rest: '' });
    expect(judgeReply('  **HEARTBEAT_OK**  ', 300)).toEqual({ kind: 'ack', rest: '' });
    expect(judgeReply('All quiet. HEARTBEAT_OK', 300)).toEqual({ kind: 'ack', rest: 'All quiet.' });
    expect(judgeReply('HEARTBEAT_OK - nothing new', 300)).toEqual({ kind: 'ack', rest: 'nothing new' });
  });

  it('more than ackMaxChars of other text, or the token in the middle, is an alert', () => {
    expect(judgeReply(`HEARTBEAT_OK ${'x'.repeat(20)}`, 10)).toEqual({ kind: 'alert', text: 'x'.repeat(20) });
    expect(judgeReply('Disk full. HEARTBEAT_OK was not the answer: act now', 300)).toEqual({
      kind: 'alert',
      text: 'Disk full. HEARTBEAT_OK was not the answer: act now',
    });
    expect(judgeReply('Your 3pm meeting moved to 4pm.', 300)).toEqual({
      kind: 'alert',
      text: 'Your 3pm meeting moved to 4pm.',
    });
    expect(judgeReply('   ', 300)).toEqual({ kind: 'empty' });
  });

  it('a checklist of headings, comments and empty items is effectively empty (the setup template too)', () => {
    expect(effectivelyEmpty(readFileSync(join(REPO, 'plugins', 'agent', 'templates', 'HEARTBEAT.md'), 'utf8'))).toBe(
      true,
    );
    expect(effectivelyEmpty('')).toBe(true);
    expect(effectivelyEmpty('# Heartbeat\n\n<!-- add checks here -->\n- [ ]\n-\n```\n```\n')).toBe(true);
    expect(effectivelyEmpty('# Heartbeat\n- check the inbox\n')).toBe(false);
  });
});

describe('heartbeat settings', () => {
  it('durations: a bare number is minutes, 0m turns the schedule off', () => {
    expect(parseEvery('30m')).toBe(1_800_000);
    expect(parseEvery('45')).toBe(2_700_000);
    expect(parseEvery('1.5h')).toBe(5_400_000);
    expect(parseEvery('2s')).toBe(2000);
    expect(parseEvery('0m')).toBe(0);
    expect(() => parseEvery('soon')).toThrow(/not a duration/);
  });

  it('defaults, per-agent blocks, and only agents with a block run when any has one', () => {
    expect(heartbeatSettings({}, 'main')).toMatchObject({ everyMs: 1_800_000, target: 'last', ackMaxChars: 300 });
    const config = {
      agents: {
        defaults: { heartbeat: { every: '1h', target: 'none', ackMaxChars: 10 } },
        list: [{ id: 'main' }, { id: 'ops', heartbeat: { every: '5m', target: 'telegram', to: '42' } }],
      },
    };
    expect(heartbeatAgents(config)).toEqual(['ops']);
    expect(heartbeatSettings(config, 'ops')).toMatchObject({
      everyMs: 300_000,
      target: 'telegram',
      to: '42',
      ackMaxChars: 10,
    });
    expect(heartbeatAgents({ agents: { list: [{ id: 'a' }, { id: 'b', default: true }] } } as never)).toEqual(['b']);
  });

  it('active hours: [start, end) in the zone, wrapping midnight, start == end never', () => {
    const at = (iso: string) => Date.parse(iso);
    const day = { start: '08:00', end: '22:00', timezone: 'UTC' };
    expect(withinActiveHours(day, at('2026-03-01T07:59:00Z'), undefined)).toBe(false);
    expect(withinActiveHours(day, at('2026-03-01T08:00:00Z'), undefined)).toBe(true);
    expect(withinActiveHours(day, at('2026-03-01T22:00:00Z'), undefined)).toBe(false);
    expect(
      withinActiveHours({ start: '22:00', end: '06:00', timezone: 'UTC' }, at('2026-03-01T23:30:00Z'), undefined),
    ).toBe(true);
    expect(
      withinActiveHours({ start: '09:00', end: '09:00', timezone: 'UTC' }, at('2026-03-01T09:00:00Z'), undefined),
    ).toBe(false);
    expect(withinActiveHours({ start: '00:00', end: '24:00' }, at('2026-03-01T23:59:00Z'), 'UTC')).toBe(true);
    // 08:00 in New York is 13:00 UTC in winter; "user" reads userTimezone.
    const ny = { start: '08:00', end: '09:00' };
    expect(withinActiveHours(ny, at('2026-01-15T13:30:00Z'), 'America/New_York')).toBe(true);
    expect(withinActiveHours({ ...ny, timezone: 'America/New_York' }, at('2026-01-15T08:30:00Z'), 'UTC')).toBe(false);
  });
});

describe('the system-event queue', () => {
  it('is on disk (0600) before enqueue resolves, per session, oldest first', async () => {
    const dir = tempDir('claw-sysev-');
    const store = new SystemEventStore(dir);
    const one = await store.enqueue({ agentId: 'main', sessionKey: 'agent:main:main', text: 'first', source: 'cli' });
    await store.enqueue({ agentId: 'main', sessionKey: 'agent:main:other', text: 'elsewhere', source: 'cli' });
    await store.enqueue({ agentId: 'main', sessionKey: 'agent:main:main', text: 'second', source: 'cron:a' });
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'system-events')).mode & 0o777).toBe(0o700);
    const fresh = new SystemEventStore(dir);
    expect(fresh.pending('agent:main:main').map((event) => event.text)).toEqual(['first', 'second']);
    expect(JSON.parse(readFileSync(store.file, 'utf8')).events).toHaveLength(3);
    expect(await fresh.remove([one.id])).toBe(1);
    expect(store.pending('agent:main:main').map((event) => event.text)).toEqual(['second']);
  });

  it('the same contextKey replaces the older event; the same text twice in a row is kept once', async () => {
    const store = new SystemEventStore(tempDir('claw-sysev-'));
    const key = 'agent:main:main';
    await store.enqueue({
      agentId: 'main',
      sessionKey: key,
      text: 'job ran (1)',
      source: 'cron:j',
      contextKey: 'cron:j',
    });
    await store.enqueue({ agentId: 'main', sessionKey: key, text: 'ping', source: 'cli' });
    await store.enqueue({ agentId: 'main', sessionKey: key, text: 'ping', source: 'cli' });
    await store.enqueue({
      agentId: 'main',
      sessionKey: key,
      text: 'job ran (2)',
      source: 'cron:j',
      contextKey: 'cron:j',
    });
    expect(store.pending(key).map((event) => event.text)).toEqual(['ping', 'job ran (2)']);
  });

  it('refuses empty and overlong text with a clear error', async () => {
    const store = new SystemEventStore(tempDir('claw-sysev-'));
    await expect(store.enqueue({ agentId: 'main', sessionKey: 'k', text: '  ', source: 'cli' })).rejects.toThrow(
      /needs text/,
    );
    await expect(
      store.enqueue({ agentId: 'main', sessionKey: 'k', text: 'x'.repeat(MAX_EVENT_CHARS + 1), source: 'cli' }),
    ).rejects.toThrow(/at most 2000 characters/);
  });

  it('shows as System: lines with when each was queued', () => {
    const text = formatSystemEvents(
      [
        {
          id: '1',
          agentId: 'main',
          sessionKey: 'k',
          text: 'Reminder:\nstandup',
          source: 'cron:x',
          enqueuedAt: Date.parse('2026-03-01T09:15:00Z'),
        },
      ],
      'UTC',
    );
    expect(text).toBe('System: [2026-03-01 09:15:00 UTC] Reminder: standup');
  });
});

// ── The scheduler with a test clock ─────────────────────────────────────────────

class TestClock implements Clock {
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private ids = 0;
  constructor(public time: number) {}
  now = () => this.time;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, fn, id });
    return id;
  };
  clearTimeout = (handle: unknown) => {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  };
  /** Move time forward, firing timers in order and letting the work they start settle. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    for (;;) {
      await settle();
      const next = this.timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.time = Math.max(this.time, next.at);
      next.fn();
    }
    this.time = target;
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Harness {
  clock: TestClock;
  runner: HeartbeatRunner;
  state: HeartbeatState;
  store: SystemEventStore;
  runs: Array<DispatchInput & { at: number }>;
  sent: OutboundRequest[];
  events: HeartbeatEvent[];
  replies: string[];
  busy: { value: boolean };
  workspace: string;
}

const MIN = 60_000;
const START = Date.parse('2026-03-02T12:00:00Z');

function harness(
  options: { stateDir?: string; config?: Record<string, any>; start?: number; session?: Partial<SessionEntry> } = {},
): Harness {
  const stateDir = options.stateDir ?? tempDir('claw-hb-');
  const workspace = join(stateDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const clock = new TestClock(options.start ?? START);
  const state = new HeartbeatState(stateDir);
  const store = new SystemEventStore(stateDir, clock.now);
  const runs: Harness['runs'] = [];
  const sent: OutboundRequest[] = [];
  const events: HeartbeatEvent[] = [];
  const replies: string[] = [];
  const busy = { value: false };
  const agent = {
    isActive: () => busy.value,
    run: async (input: DispatchInput): Promise<RunResult> => {
      runs.push({ ...input, at: clock.now() });
      const text = replies.shift() ?? 'HEARTBEAT_OK';
      return {
        runId: `r${runs.length}`,
        sessionKey: input.sessionKey!,
        sessionId: 's',
        status: 'ok',
        text,
        payloads: [],
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        startedAt: 0,
        endedAt: 0,
      };
    },
  } as unknown as AgentService;
  const config = options.config ?? {
    agents: { defaults: { heartbeat: { every: '30m', target: 'telegram', to: '99' } } },
  };
  const runner = new HeartbeatRunner({
    config: () => config,
    state,
    events: store,
    agent: async () => agent,
    mainKey: (agentId) => `agent:${agentId}:main`,
    session: async () => options.session as SessionEntry | undefined,
    restoreUpdatedAt: async () => undefined,
    workspace: () => ({ dir: workspace }),
    send: async (request): Promise<OutboundResult> => {
      sent.push(request);
      return { delivered: true, cancelled: false, text: request.text, pieces: 1, attempts: 1, messageIds: ['m1'] };
    },
    emit: (event) => events.push(event),
    logger: silentLogger,
    clock,
  });
  return { clock, runner, state, store, runs, sent, events, replies, busy, workspace };
}

describe('the heartbeat schedule (test clock)', () => {
  it('runs at every interval in the main session; HEARTBEAT_OK is not delivered, an alert is', async () => {
    const h = harness();
    h.replies.push('HEARTBEAT_OK', 'The build on main is red since 11:40.');
    h.runner.start();
    await h.clock.advance(30 * MIN - 1);
    expect(h.runs).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.runs.map((run) => [run.at - START, run.sessionKey, run.queueMode])).toEqual([
      [30 * MIN, 'agent:main:main', 'followup'],
    ]);
    expect(h.sent).toHaveLength(0);
    expect(h.events[0]).toMatchObject({ status: 'ok-token', trigger: 'interval', agentId: 'main' });
    await h.clock.advance(30 * MIN);
    expect(h.runs.map((run) => run.at - START)).toEqual([30 * MIN, 60 * MIN]);
    expect(h.sent).toEqual([
      expect.objectContaining({ channel: 'telegram', to: '99', text: 'The build on main is red since 11:40.' }),
    ]);
    expect(h.events[1]).toMatchObject({ status: 'sent', channel: 'telegram', to: '99' });
    await h.runner.stop();
  });

  it('a restart keeps the slot, and slots missed while down run once soon after start', async () => {
    const stateDir = tempDir('claw-hb-');
    const first = harness({ stateDir });
    first.runner.start();
    await first.clock.advance(10 * MIN);
    await first.runner.stop();
    // Back 5 minutes later: the first slot is still at 30 minutes after the first start.
    const second = harness({ stateDir, start: START + 15 * MIN });
    second.runner.start();
    expect(second.runner.nextDue('main')).toBe(START + 30 * MIN);
    await second.clock.advance(15 * MIN);
    expect(second.runs.map((run) => run.at - START)).toEqual([30 * MIN]);
    await second.runner.stop();
    // Down for 3 hours (6 slots): one heartbeat shortly after start, then the interval.
    const third = harness({ stateDir, start: START + 3 * 60 * MIN });
    third.runner.start();
    await third.clock.advance(STARTUP_DELAY_MS);
    expect(third.runs).toHaveLength(1);
    await third.clock.advance(30 * MIN - 1);
    expect(third.runs).toHaveLength(1);
    await third.clock.advance(1 + STARTUP_DELAY_MS);
    expect(third.runs).toHaveLength(2);
    await third.runner.stop();
  });

  it('outside active hours the slot is skipped with a reason; a wake still runs', async () => {
    const h = harness({
      config: {
        agents: {
          defaults: { heartbeat: { every: '30m', activeHours: { start: '08:00', end: '10:00', timezone: 'UTC' } } },
        },
      },
    });
    h.runner.start();
    await h.clock.advance(30 * MIN);
    expect(h.runs).toHaveLength(0);
    expect(h.events).toEqual([
      expect.objectContaining({ status: 'skipped', reason: 'quiet-hours', trigger: 'interval' }),
    ]);
    expect(h.state.agent('main')?.lastRunAt).toBe(START + 30 * MIN);
    expect(h.runner.wakeNow('main', 'cron:job1')).toEqual({ queued: true });
    await h.clock.advance(1000);
    expect(h.runs).toHaveLength(1);
    expect(h.events[1]).toMatchObject({ status: 'ok-token', trigger: 'cron:job1' });
    await h.runner.stop();
  });

  it('an empty HEARTBEAT.md skips the model call with a recorded reason, but never holds back a system event', async () => {
    const h = harness();
    writeFileSync(join(h.workspace, 'HEARTBEAT.md'), '# Heartbeat checklist\n\n<!-- nothing yet -->\n');
    h.runner.start();
    await h.clock.advance(30 * MIN);
    expect(h.runs).toHaveLength(0);
    expect(h.events[0]).toMatchObject({ status: 'skipped', reason: 'empty-heartbeat-file' });
    await h.store.enqueue({
      agentId: 'main',
      sessionKey: 'agent:main:main',
      text: 'Reminder: standup',
      source: 'cron:standup',
    });
    expect(h.runner.wakeNext('main')).toEqual({ queued: true });
    await h.clock.advance(30 * MIN);
    expect(h.runs).toHaveLength(1);
    expect(h.events[1]).toMatchObject({ status: 'ok-token', systemEvents: 1 });
    // A wake with a reason runs even with the empty file and nothing queued.
    h.runner.wakeNow('main', 'hook:wake');
    await h.clock.advance(1000);
    expect(h.runs).toHaveLength(2);
    await h.runner.stop();
  });

  it('a busy main session delays the heartbeat, it is not dropped', async () => {
    const h = harness();
    h.busy.value = true;
    h.runner.start();
    await h.clock.advance(30 * MIN);
    expect(h.runs).toHaveLength(0);
    expect(h.events).toHaveLength(0);
    await h.clock.advance(3 * BUSY_RETRY_MS);
    expect(h.runs).toHaveLength(0);
    h.busy.value = false;
    await h.clock.advance(BUSY_RETRY_MS);
    expect(h.runs).toHaveLength(1);
    await h.runner.stop();
  });

  it('a heartbeat that throws is tried again a minute later, not in a loop', async () => {
    const h = harness();
    // A HEARTBEAT.md that cannot be read (a directory in its place: permissions do not stop root).
    mkdirSync(join(h.workspace, 'HEARTBEAT.md'));
    h.runner.start();
    await h.clock.advance(30 * MIN);
    await h.clock.advance(ERROR_RETRY_MS - 1000);
    expect(h.runs).toHaveLength(0);
    rmSync(join(h.workspace, 'HEARTBEAT.md'), { recursive: true });
    await h.clock.advance(1000);
    expect(h.runs).toHaveLength(1);
    await h.runner.stop();
  });

  it('target last follows the main session route; none and a missing route are recorded, not silent', async () => {
    const last = harness({
      config: { agents: { defaults: { heartbeat: { every: '30m' } } } },
      session: {
        deliveryContext: { channel: 'telegram', to: '7', accountId: 'bot2', threadId: 5 },
      } as Partial<SessionEntry>,
    });
    last.replies.push('Alert!');
    last.runner.start();
    await last.clock.advance(30 * MIN);
    expect(last.sent).toEqual([
      expect.objectContaining({ channel: 'telegram', to: '7', accountId: 'bot2', threadId: '5', text: 'Alert!' }),
    ]);
    await last.runner.stop();

    const nowhere = harness({ config: { agents: { defaults: { heartbeat: { every: '30m' } } } } });
    nowhere.replies.push('Alert!');
    nowhere.runner.start();
    await nowhere.clock.advance(30 * MIN);
    expect(nowhere.events[0]).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/^no-target/),
      preview: 'Alert!',
    });
    await nowhere.runner.stop();

    const none = harness({ config: { agents: { defaults: { heartbeat: { every: '30m', target: 'none' } } } } });
    none.replies.push('Alert!');
    none.runner.start();
    await none.clock.advance(30 * MIN);
    expect(none.sent).toHaveLength(0);
    expect(none.events[0]).toMatchObject({ status: 'skipped', reason: 'target-none' });
    await none.runner.stop();
  });

  it('isolatedSession: each heartbeat in a fresh session of its own beside the main one', async () => {
    const h = harness({
      config: { agents: { defaults: { heartbeat: { every: '30m', target: 'none', isolatedSession: true } } } },
    });
    h.runner.start();
    await h.clock.advance(30 * MIN);
    expect(h.runs).toEqual([expect.objectContaining({ sessionKey: 'agent:main:main:heartbeat', freshSession: true })]);
    expect(h.events[0]).toMatchObject({ status: 'ok-token', sessionKey: 'agent:main:main:heartbeat' });
    await h.runner.stop();
  });

  it('disabled: no schedule, wakes are refused with a reason, and it survives a restart', async () => {
    const stateDir = tempDir('claw-hb-');
    const h = harness({ stateDir });
    h.runner.start();
    h.runner.setEnabled(false);
    await h.clock.advance(60 * MIN);
    expect(h.runs).toHaveLength(0);
    expect(h.runner.wakeNow('main', 'cli')).toMatchObject({ queued: false, reason: expect.stringMatching(/disabled/) });
    expect(h.events.at(-1)).toMatchObject({ status: 'skipped', reason: 'disabled' });
    await h.runner.stop();
    expect(new HeartbeatState(stateDir).enabled).toBe(false);
    const every0 = harness({ config: { agents: { defaults: { heartbeat: { every: '0m' } } } } });
    every0.runner.start();
    expect(every0.runner.nextDue('main')).toBeUndefined();
    expect(every0.runner.wakeNext('main')).toMatchObject({
      queued: false,
      reason: expect.stringMatching(/every is 0/),
    });
    await every0.runner.stop();
  });
});

describe('chat.history without heartbeat noise', () => {
  it('drops heartbeat prompts and OK-only heartbeat turns (tool calls included), keeps alerts and everything else', async () => {
    const { withoutHeartbeatNoise, ackMaxCharsFor } = await import('../plugins/agent/history-filter.js');
    const text = (value: string) => [{ type: 'text', text: value }];
    const messages = [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: text('hi there') },
      { role: 'user', content: 'Heartbeat check.', origin: 'heartbeat' },
      { role: 'assistant', content: [{ type: 'toolCall', id: 't1', name: 'read', arguments: {} }] },
      { role: 'toolResult', content: text('checklist') },
      { role: 'assistant', content: text('**HEARTBEAT_OK**') },
      { role: 'user', content: 'Heartbeat check.', origin: 'heartbeat' },
      { role: 'assistant', content: text('The backup failed twice tonight.') },
      { role: 'user', content: 'thanks' },
      { role: 'assistant', content: text('HEARTBEAT_OK, nothing else') },
    ];
    expect(withoutHeartbeatNoise(messages, 300).map((message) => JSON.stringify(message.content))).toEqual([
      '"hello"',
      JSON.stringify(text('hi there')),
      JSON.stringify(text('The backup failed twice tonight.')),
      '"thanks"',
      // Not a heartbeat turn: a person's conversation is never filtered.
      JSON.stringify(text('HEARTBEAT_OK, nothing else')),
    ]);
    // A longer acknowledgment than ackMaxChars is an alert, and stays.
    const chatty = [
      { role: 'user', content: 'Heartbeat check.', origin: 'heartbeat' },
      { role: 'assistant', content: text('HEARTBEAT_OK all quiet tonight') },
    ];
    expect(withoutHeartbeatNoise(chatty, 300)).toEqual([]);
    expect(withoutHeartbeatNoise(chatty, 5)).toEqual([chatty[1]]);
    expect(
      ackMaxCharsFor(
        {
          agents: {
            defaults: { heartbeat: { ackMaxChars: 50 } },
            list: [{ id: 'ops', heartbeat: { ackMaxChars: 10 } }],
          },
        },
        'OPS',
        300,
      ),
    ).toBe(10);
    expect(ackMaxCharsFor({}, 'main', 300)).toBe(300);
  });
});
