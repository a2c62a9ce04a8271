/**
 * Cron jobs in a running gateway, in real time: the cron.* methods and `cron` events, main
 * jobs through a system-events service (a small test-local one; the heartbeat plugin
 * provides the real one), isolated agent turns in fresh `cron:<id>` sessions with a
 * scripted model and announce delivery to a channel, webhook delivery, and command jobs
 * through the exec tool's policy. Restart and kill -9 behaviour: test/cron-process.test.ts.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, type PluginDefinition } from '../sdk/index.js';
import { agentStackDirs, lastUserText, scriptedModel } from '../sdk/testing.js';
import type { EnqueueSystemEvent, SystemEvent, SystemEventsService, WakeRequest } from '../sdk/types/automation.js';
import type { ModelRequest } from '../sdk/types/models.js';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import type { EventFrame } from '../sdk/generated/protocol.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { until } from './agent-helpers.js';
import { REPO } from './helpers.js';

const CRON = join(REPO, 'plugins', 'cron');
const EXEC = ['tools-exec', 'exec-approvals'].map((id) => join(REPO, 'plugins', id));

/** A stand-in for the heartbeat plugin's system-events service that records what it is asked. */
function systemEvents(
  record: { events: SystemEvent[]; wakes: WakeRequest[] },
  hold?: () => Promise<void>,
): PluginDefinition {
  return definePlugin({
    id: 'test-system-events',
    register(api) {
      const service: SystemEventsService = {
        async enqueue(event: EnqueueSystemEvent) {
          await hold?.();
          const stored: SystemEvent = {
            id: `e${record.events.length}`,
            agentId: event.agentId ?? 'main',
            sessionKey: event.sessionKey ?? 'agent:main:main',
            text: event.text,
            source: event.source,
            contextKey: event.contextKey,
            enqueuedAt: Date.now(),
          };
          record.events.push(stored);
          return stored;
        },
        pending: (sessionKey) => record.events.filter((event) => event.sessionKey === sessionKey),
        async wake(request) {
          record.wakes.push(request);
          return { queued: request.mode === 'now' };
        },
      };
      api.registerService({ id: 'system-events', api: service });
    },
  });
}

/** A chat channel that keeps what it was sent. */
function chatChannel(sent: Array<{ to: string; text: string }>): PluginDefinition {
  return definePlugin({
    id: 'test-chat',
    register(api) {
      api.registerChannel({
        id: 'chat',
        textLimit: 4000,
        async send(message) {
          sent.push({ to: message.to, text: message.text ?? '' });
          return { messageId: String(sent.length) };
        },
      });
    },
  });
}

const MUTATING = new Set(['cron.add', 'cron.update', 'cron.remove', 'cron.run']);
let keys = 0;
/** A request, with the idempotency key every state-changing method needs. */
function call(operator: GatewayClient, method: string, params: Record<string, unknown>): Promise<any> {
  return operator.request(
    method,
    MUTATING.has(method) ? { ...params, idempotencyKey: `cron-test-${process.pid}-${++keys}` } : params,
  );
}

let running: { gw: RunningGateway; operator: GatewayClient } | undefined;
afterEach(async () => {
  await running?.operator.close();
  await running?.gw.stop();
  running = undefined;
});

async function boot(plugins: Array<PluginDefinition | string>, config: Record<string, unknown> = {}) {
  const events: EventFrame[] = [];
  const gw = await startGateway({
    plugins: [CRON, ...plugins],
    config: { messages: { queue: { debounceMs: 0 } }, ...config },
  });
  const operator = await client(gw.url, { onEvent: (frame) => events.push(frame) });
  running = { gw, operator };
  const cronEvents = () =>
    events.filter((frame) => frame.event === 'cron').map((frame) => frame.payload as Record<string, any>);
  const finished = (jobId: string) =>
    cronEvents().filter((event) => event.jobId === jobId && event.action === 'finished');
  return { gw, operator, cronEvents, finished };
}

describe('cron in a running gateway', () => {
  it('main jobs: cron.add/list/status/update/runs/remove, an every-1s job fires on time into a system event + wake', async () => {
    const record = { events: [] as SystemEvent[], wakes: [] as WakeRequest[] };
    const { operator, finished, cronEvents } = await boot([systemEvents(record)]);
    const added = (await call(operator, 'cron.add', {
      name: 'tick',
      schedule: { kind: 'every', everyMs: 1000 },
      sessionTarget: 'main',
      wakeMode: 'now',
      payload: { kind: 'systemEvent', text: 'Reminder: stretch' },
    })) as any;
    expect(added).toMatchObject({
      name: 'tick',
      enabled: true,
      sessionTarget: 'main',
      wakeMode: 'now',
      state: { nextRunAtMs: added.createdAtMs + 1000 },
    });
    await until(() => finished(added.id).length >= 2, 5000, 'two runs');
    const [first, second] = finished(added.id);
    // On time: each run starts within 250 ms of its occurrence, one occurrence each.
    expect(first.runAtMs - added.createdAtMs - 1000).toBeLessThan(250);
    expect(second.scheduledAtMs - first.scheduledAtMs).toBe(1000);
    expect(first).toMatchObject({
      status: 'ok',
      trigger: 'schedule',
      summary: 'Reminder: stretch',
      deliveryStatus: 'not-requested',
    });
    expect(record.events[0]).toMatchObject({
      text: 'Reminder: stretch',
      source: `cron:${added.id}`,
      contextKey: `cron:${added.id}`,
    });
    expect(record.wakes[0]).toEqual({ mode: 'now', reason: `cron:${added.id}` });

    const updated = (await call(operator, 'cron.update', {
      jobId: added.id,
      patch: { wakeMode: 'next-heartbeat', schedule: { kind: 'every', everyMs: 3_600_000 } },
    })) as any;
    expect(updated.wakeMode).toBe('next-heartbeat');
    const wakes = record.wakes.length;
    expect(await call(operator, 'cron.run', { jobId: added.id })).toMatchObject({ ok: true, ran: true });
    await until(() => finished(added.id).some((event) => event.trigger === 'manual'), 5000, 'manual run');
    expect(record.wakes.slice(wakes)).toEqual([{ mode: 'next-heartbeat', reason: `cron:${added.id}` }]);
    expect(await call(operator, 'cron.run', { jobId: added.id, mode: 'due' })).toMatchObject({
      ok: true,
      ran: false,
      reason: 'not-due',
    });

    const status = (await call(operator, 'cron.status', {})) as any;
    expect(status).toMatchObject({
      enabled: true,
      schedulerRunning: true,
      jobs: 1,
      enabledJobs: 1,
      running: [],
      errors: [],
    });
    expect(status.nextWakeAtMs).toBe(updated.state.nextRunAtMs);
    expect(((await call(operator, 'cron.list', {})) as any).jobs.map((job: any) => job.id)).toEqual([added.id]);
    const runs = (await call(operator, 'cron.runs', { jobId: added.id, limit: 2 })) as any;
    expect(runs.entries[0]).toMatchObject({ jobId: added.id, action: 'finished', trigger: 'manual', status: 'ok' });
    // What OpenClaw's Control UI sends on its Automations page: the default agent's jobs
    // (this one has no agentId), OpenClaw's filters, and every job's runs at once.
    const uiList = (await call(operator, 'cron.list', {
      agentId: 'main',
      includeDisabled: true,
      includeDeliveryPreviews: false,
      limit: 50,
      offset: 0,
      enabled: 'all',
      scheduleKind: 'all',
      lastRunStatus: 'all',
      trigger: 'all',
      sortBy: 'nextRunAtMs',
      sortDir: 'asc',
    })) as any;
    expect(uiList.jobs.map((job: any) => job.id)).toEqual([added.id]);
    const filtered = async (filters: Record<string, unknown>) =>
      ((await call(operator, 'cron.list', filters)) as any).jobs.length;
    expect(await filtered({ scheduleKind: 'every' })).toBe(1);
    expect(await filtered({ scheduleKind: 'cron' })).toBe(0);
    expect(await filtered({ lastRunStatus: 'ok' })).toBe(1);
    expect(await filtered({ lastRunStatus: 'unknown' })).toBe(0);
    expect(await filtered({ trigger: 'conditional' })).toBe(0);
    expect(await filtered({ agentId: 'work' })).toBe(0);
    const uiRuns = (await call(operator, 'cron.runs', {
      agentId: 'main',
      scope: 'all',
      limit: 50,
      offset: 0,
      status: 'all',
      sortDir: 'desc',
    })) as any;
    expect(uiRuns).toMatchObject({ total: finished(added.id).length, offset: 0, limit: 50, hasMore: false });
    expect(uiRuns.entries[0]).toMatchObject({ jobId: added.id, trigger: 'manual' });
    const oldestFirst = (await call(operator, 'cron.runs', {
      scope: 'all',
      sortDir: 'asc',
      limit: 1,
      statuses: ['ok'],
      query: 'stretch',
    })) as any;
    expect(oldestFirst).toMatchObject({ hasMore: true, nextOffset: 1, entries: [{ trigger: 'schedule' }] });
    expect(((await call(operator, 'cron.runs', { scope: 'all', deliveryStatus: 'delivered' })) as any).entries).toEqual(
      [],
    );
    await expect(call(operator, 'cron.runs', {})).rejects.toThrow(/jobId is required/);
    expect(await call(operator, 'cron.remove', { jobId: added.id })).toEqual({ ok: true, removed: true });
    // A removed job's history stays, and scope "all" still shows it.
    expect(((await call(operator, 'cron.runs', { scope: 'all' })) as any).total).toBe(uiRuns.total);
    expect(cronEvents().map((event) => event.action)).toEqual(
      expect.arrayContaining(['added', 'started', 'finished', 'updated', 'removed']),
    );

    const bad = await call(operator, 'cron.add', {
      name: 'x',
      schedule: { kind: 'cron', expr: '0 0 7 * * *' },
      payload: { kind: 'systemEvent', text: 'x' },
    }).catch((error) => error);
    // (The error code is checked against the built gateway in test/cron-process.test.ts.)
    expect(bad.message).toMatch(/invalid cron expression "0 0 7 \* \* \*": expected 5 fields/);
  });

  it('cron.maxConcurrentRuns caps the cron lane: 3 due jobs, at most 2 run at once', async () => {
    const record = { events: [] as SystemEvent[], wakes: [] as WakeRequest[] };
    let active = 0;
    let peak = 0;
    const hold = async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 300));
      active--;
    };
    const { gw, operator, finished } = await boot([systemEvents(record, hold)], { cron: { maxConcurrentRuns: 2 } });
    expect(gw.kernel.lanes.concurrency('cron')).toBe(2);
    const at = new Date(Date.now() + 300).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          (await call(operator, 'cron.add', {
            name: `j${i}`,
            schedule: { kind: 'at', at },
            payload: { kind: 'systemEvent', text: `e${i}` },
          })) as any
        ).id,
      );
    await until(() => ids.every((id) => finished(id).length === 1), 8000, 'three runs');
    expect(peak).toBe(2);
    expect(ids.map((id) => finished(id)[0].status)).toEqual(['ok', 'ok', 'ok']);
  });

  it('a main job without a system-events provider fails with an error naming what to enable', async () => {
    const { operator, finished } = await boot([]);
    const job = (await call(operator, 'cron.add', {
      name: 'lost',
      schedule: { kind: 'at', at: new Date(Date.now() + 300).toISOString() },
      payload: { kind: 'systemEvent', text: 'hello' },
    })) as any;
    await until(() => finished(job.id).length === 1, 5000, 'the run');
    expect(finished(job.id)[0]).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/need the "system-events" service.*enable the heartbeat plugin/),
    });
    // A failed one-shot stays (disabled) with its error, so status tells the truth.
    const status = (await call(operator, 'cron.status', {})) as any;
    expect(status.errors).toMatchObject([{ jobId: job.id, lastError: expect.stringMatching(/system-events/) }]);
  });

  it('isolated agent turns: a fresh cron:<id> session each run on the cron lane, model override, announce to a channel', async () => {
    const requests: ModelRequest[] = [];
    const sent: Array<{ to: string; text: string }> = [];
    const model = scriptedModel((request) => {
      requests.push(request);
      return `Briefing #${requests.length}: all quiet.`;
    });
    const { gw, operator, finished } = await boot([...agentStackDirs(), model, chatChannel(sent)], {
      agents: { defaults: { model: 'scripted/default' } },
      channels: { chat: {} },
    });
    const job = (await call(operator, 'cron.add', {
      name: 'brief',
      schedule: { kind: 'every', everyMs: 1000 },
      sessionTarget: 'isolated',
      payload: { kind: 'agentTurn', message: 'Write the briefing', model: 'scripted/briefer' },
      delivery: { mode: 'announce', channel: 'chat', to: 'alice' },
    })) as any;
    let laneSeen = false;
    const lanes = () => gw.kernel.lanes.stats('cron');
    await until(
      () => {
        laneSeen ||= (lanes()?.active ?? 0) > 0 || (lanes()?.completed ?? 0) > 0;
        return finished(job.id).length >= 2;
      },
      8000,
      'two isolated runs',
    );
    await call(operator, 'cron.update', { jobId: job.id, patch: { enabled: false } });
    const [first, second] = finished(job.id);
    expect(first).toMatchObject({
      status: 'ok',
      sessionKey: `cron:${job.id}`,
      delivered: true,
      deliveryStatus: 'delivered',
      model: 'briefer',
      provider: 'scripted',
    });
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(laneSeen).toBe(true);
    // Fresh each time: the second run's model request has no trace of the first.
    expect(requests[1]!.messages.filter((message) => message.role === 'user')).toHaveLength(1);
    expect(lastUserText(requests[1]!)).toContain('Write the briefing');
    expect(sent.slice(0, 2)).toEqual([
      { to: 'alice', text: 'Briefing #1: all quiet.' },
      { to: 'alice', text: 'Briefing #2: all quiet.' },
    ]);
  });

  it('webhook delivery: one POST of the finished run with the bearer token; private hosts need the SSRF allowance', async () => {
    const posts: Array<{ auth?: string; body: any }> = [];
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        posts.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cron`;
    try {
      const record = { events: [] as SystemEvent[], wakes: [] as WakeRequest[] };
      const { operator, finished } = await boot([systemEvents(record)], {
        cron: { webhookToken: 'hook-secret', webhookSsrfPolicy: { allowedHostnames: ['127.0.0.1'] } },
      });
      const at = () => new Date(Date.now() + 200).toISOString();
      const job = (await call(operator, 'cron.add', {
        name: 'hooked',
        schedule: { kind: 'at', at: at() },
        payload: { kind: 'systemEvent', text: 'ping' },
        delivery: { mode: 'webhook', to: url },
      })) as any;
      await until(() => finished(job.id).length === 1, 5000, 'the webhook run');
      expect(posts).toHaveLength(1);
      expect(posts[0]!.auth).toBe('Bearer hook-secret');
      expect(posts[0]!.body).toMatchObject({ jobId: job.id, action: 'finished', status: 'ok', summary: 'ping' });
      expect(finished(job.id)[0]).toMatchObject({ deliveryStatus: 'delivered', delivered: true });
    } finally {
      server.close();
    }
    await running!.operator.close();
    await running!.gw.stop();
    running = undefined;
    // Without the allowance, the loopback target is refused and the refusal recorded.
    const record = { events: [] as SystemEvent[], wakes: [] as WakeRequest[] };
    const { operator, finished } = await boot([systemEvents(record)]);
    const job = (await call(operator, 'cron.add', {
      name: 'blocked',
      schedule: { kind: 'at', at: new Date(Date.now() + 200).toISOString() },
      payload: { kind: 'systemEvent', text: 'ping' },
      delivery: { mode: 'webhook', to: url },
    })) as any;
    await until(() => finished(job.id).length === 1, 5000, 'the refused webhook');
    expect(finished(job.id)[0]).toMatchObject({
      status: 'ok',
      deliveryStatus: 'not-delivered',
      deliveryError: expect.stringMatching(/loopback .*webhookSsrfPolicy/),
    });
  });

  it('command jobs run through the exec tool: allowed by policy they run; denied by policy the run records the refusal', async () => {
    const { operator, finished } = await boot([...agentStackDirs(), ...EXEC, scriptedModel(() => 'x')], {
      agents: { defaults: { model: 'scripted/x' } },
      tools: { exec: { security: 'full', ask: 'off' } },
    });
    const ok = (await call(operator, 'cron.add', {
      name: 'probe',
      schedule: { kind: 'at', at: new Date(Date.now() + 200).toISOString() },
      payload: { kind: 'command', command: 'echo queue depth 3' },
      delivery: { mode: 'none' },
    })) as any;
    await until(() => finished(ok.id).length === 1, 8000, 'the command run');
    expect(finished(ok.id)[0]).toMatchObject({
      status: 'ok',
      summary: expect.stringContaining('queue depth 3'),
      sessionKey: `cron:${ok.id}`,
    });
    await running!.operator.close();
    await running!.gw.stop();
    running = undefined;

    const denied = await boot([...agentStackDirs(), ...EXEC, scriptedModel(() => 'x')], {
      agents: { defaults: { model: 'scripted/x' } },
      tools: { deny: ['exec'] },
    });
    const job = (await call(denied.operator, 'cron.add', {
      name: 'nope',
      schedule: { kind: 'at', at: new Date(Date.now() + 200).toISOString() },
      payload: { kind: 'command', command: 'touch should-not-exist' },
      delivery: { mode: 'none' },
    })) as any;
    await until(() => denied.finished(job.id).length === 1, 8000, 'the denied run');
    expect(denied.finished(job.id)[0]).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^blocked: .*exec/),
    });
    await denied.operator.close();
    await denied.gw.stop();
    running = undefined;

    // Allowed by tool policy, refused by exec approvals (host security "deny"): the same refusal path.
    const refused = await boot([...agentStackDirs(), ...EXEC, scriptedModel(() => 'x')], {
      agents: { defaults: { model: 'scripted/x' } },
      tools: { exec: { security: 'deny' } },
    });
    const marker = join(refused.gw.stateDir, 'workspace', 'should-not-exist');
    const unapproved = (await call(refused.operator, 'cron.add', {
      name: 'unapproved',
      schedule: { kind: 'at', at: new Date(Date.now() + 200).toISOString() },
      payload: { kind: 'command', command: `touch ${marker}` },
      delivery: { mode: 'none' },
    })) as any;
    await until(() => refused.finished(unapproved.id).length === 1, 8000, 'the unapproved run');
    expect(refused.finished(unapproved.id)[0]).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^blocked: exec was not approved/),
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('the cron tool manages jobs for the agent', async () => {
    const record = { events: [] as SystemEvent[], wakes: [] as WakeRequest[] };
    const { gw } = await boot([systemEvents(record)]);
    const added = await gw.kernel.runTool('cron', {
      action: 'add',
      job: {
        name: 'from the agent',
        schedule: { kind: 'at', at: '1h' },
        payload: { kind: 'systemEvent', text: 'later' },
      },
    });
    const job = added.details as any;
    expect(job).toMatchObject({ name: 'from the agent', deleteAfterRun: true });
    expect((await gw.kernel.runTool('cron', { action: 'list' })).details).toMatchObject({ jobs: [{ id: job.id }] });
    const missing = await gw.kernel.runTool('cron', { action: 'remove' });
    expect(missing).toMatchObject({ isError: true, content: [{ text: 'cron: action "remove" needs jobId' }] });
    expect((await gw.kernel.runTool('cron', { action: 'remove', jobId: job.id })).details).toEqual({
      ok: true,
      removed: true,
    });
  });
});
