/**
 * Methods OpenClaw's Control UI calls on every tab, answered by a real claw gateway in
 * OpenClaw's payload shapes (read from OpenClaw's gateway handlers and protocol schemas):
 * update.status, system.info, diagnostics.*, tasks.list, environments.list, models.authStatus,
 * usage.cost, usage.status, the approval lists and channels.pairing.list — and each refuses a
 * client without the scope OpenClaw requires.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import type { ChannelAccountContext, InboundMessage } from '../sdk/channels/index.js';
import { clawVersion, definePlugin } from '../sdk/index.js';
import { runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { client, refusal } from './gateway-helpers.js';
import { REPO } from './helpers.js';

let receive: ((message: InboundMessage) => Promise<unknown>) | undefined;
const sent: string[] = [];
const inbox = definePlugin({
  id: 'inbox-chat',
  register(api) {
    api.registerChannel({
      id: 'inbox-chat',
      label: 'Inbox chat',
      textLimit: 500,
      async start(ctx: ChannelAccountContext) {
        receive = ctx.receive;
      },
      async send(message) {
        sent.push(message.text ?? '');
        return { messageId: String(sent.length) };
      },
    });
  },
});

let h: AgentHarness;
let reader: GatewayClient;
const KEY = 'sk-secret-value-never-shown';

beforeAll(async () => {
  h = await startAgent({
    plugins: [inbox, ...['tools-exec', 'exec-approvals'].map((id) => join(REPO, 'plugins', id))],
    config: { channels: { 'inbox-chat': {} } },
    env: { ANTHROPIC_API_KEY: KEY },
  });
  reader = await client(h.gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await h?.stop();
});

describe('what OpenClaw’s Control UI asks on every tab', () => {
  it('update.status: claw’s version, no restart sentinel, no update known (admin only)', async () => {
    expect(await h.client.request('update.status', { refreshCheckout: false })).toEqual({
      sentinel: null,
      updateAvailable: null,
      currentVersion: clawVersion(),
    });
    expect(await refusal(reader.request('update.status', {}))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });

  it('system.info: the host and the gateway process', async () => {
    const info: any = await reader.request('system.info', {});
    expect(info).toMatchObject({
      machineName: expect.any(String),
      hostname: expect.any(String),
      platform: process.platform,
      arch: process.arch,
      osLabel: expect.any(String),
      port: h.gw.port,
      nodeVersion: process.version,
      pid: process.pid,
      processInstanceId: expect.any(String),
      uptimeMs: expect.any(Number),
      cpuCount: expect.any(Number),
      memoryTotalBytes: expect.any(Number),
      memoryFreeBytes: expect.any(Number),
      processMemory: { rssBytes: expect.any(Number), heapUsedBytes: expect.any(Number) },
      diskPath: h.gw.stateDir,
      disks: [{ path: h.gw.stateDir, totalBytes: expect.any(Number), availableBytes: expect.any(Number) }],
      defaultAgentUtilityModel: { status: 'unavailable' },
    });
    expect(info.cpuCount).toBeGreaterThan(0);
  });

  it('diagnostics.lanes: the kernel’s lanes after a turn; diagnostics.stability: OpenClaw’s empty recorder', async () => {
    h.fake.script({ text: 'hello', usage: { input: 50, output: 5 } });
    await runAgent(h.client, { message: 'hi' });
    const lanes: any = await reader.request('diagnostics.lanes', {});
    expect(lanes.ts).toEqual(expect.any(Number));
    const main = lanes.lanes.find((lane: any) => lane.lane === 'main');
    expect(main).toMatchObject({
      lane: 'main',
      queuedCount: 0,
      activeCount: 0,
      maxConcurrent: expect.any(Number),
      draining: false,
      generation: 0,
      blockedBy: null,
    });
    expect(main.completed).toBeGreaterThan(0);
    // Session lanes are summed under dynamic while they exist; an idle one is let go.
    expect(lanes.lanes.some((lane: any) => lane.lane.startsWith('session:'))).toBe(false);
    expect(lanes.dynamic).toBeNull();

    expect(await reader.request('diagnostics.stability', { limit: 10 })).toEqual({
      generatedAt: expect.any(String),
      capacity: 0,
      count: 0,
      dropped: 0,
      events: [],
      summary: { byType: {} },
    });
  });

  it('usage.cost sums the turns per day; usage.status has no provider quota to report', async () => {
    h.fake.script({ text: 'counted', usage: { input: 100, output: 10 } });
    await runAgent(h.client, { message: 'count me', sessionKey: 'usage-side' });
    const today = new Date().toISOString().slice(0, 10);
    const cost: any = await reader.request('usage.cost', { startDate: today, endDate: today, mode: 'utc' });
    expect(cost).toMatchObject({
      updatedAt: expect.any(Number),
      days: 1,
      cacheStatus: { status: 'fresh', pendingFiles: 0, staleFiles: 0 },
    });
    expect(cost.daily).toEqual([{ date: today, ...cost.totals }]);
    expect(cost.totals.input).toBeGreaterThanOrEqual(150);
    // Every call priced (gpt-4.1's built-in $2 in, $8 out, $0.50 cached per million tokens).
    expect(cost.totals.missingCostEntries).toBe(0);
    const { input, output, cacheRead } = cost.totals;
    expect(cost.totals.totalCost).toBeCloseTo((input * 2 + output * 8 + cacheRead * 0.5) / 1e6, 10);
    // Without dates: the last 30 days, one entry each, idle ones zero.
    const month: any = await reader.request('usage.cost', {});
    expect(month.days).toBe(30);
    expect(month.daily).toHaveLength(30);
    expect(month.daily[0]).toMatchObject({ input: 0, totalTokens: 0 });
    expect(month.totals).toEqual(cost.totals);

    expect(await reader.request('usage.status', {})).toEqual({ updatedAt: expect.any(Number), providers: [] });
  });

  it('models.authStatus: per provider its status and profiles, never a key', async () => {
    const status: any = await reader.request('models.authStatus', { refresh: true });
    expect(status).toMatchObject({ ts: expect.any(Number), providerCapabilities: [], readiness: { ok: true } });
    const openai = status.providers.find((row: any) => row.provider === 'openai');
    expect(openai).toMatchObject({
      provider: 'openai',
      authProvider: 'openai',
      displayName: 'openai',
      status: 'static',
      profiles: [{ profileId: 'openai:config', type: 'api_key', status: 'static', source: 'config' }],
      apiKey: { source: 'config' },
    });
    const anthropic = status.providers.find((row: any) => row.provider === 'anthropic');
    expect(anthropic).toMatchObject({
      status: 'static',
      profiles: [{ profileId: 'anthropic:env:ANTHROPIC_API_KEY', source: 'external' }],
      apiKey: { source: 'env', envVar: 'ANTHROPIC_API_KEY' },
    });
    const text = JSON.stringify(status);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('sk-test');
  });

  it('tasks.list and environments.list answer OpenClaw’s empty lists; preparing a runtime needs write', async () => {
    expect(await reader.request('tasks.list', { limit: 20 })).toEqual({ tasks: [] });
    expect(await reader.request('environments.list', {})).toEqual({ environments: [] });
    expect(await refusal(reader.request('environments.list', { runtimeId: 'docker' }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.write',
    });
    expect(await h.client.request('environments.list', { runtimeId: 'docker' })).toEqual({ environments: [] });
  });

  it('plugin.approval.list and openclaw.approval.list: [] (claw raises exec approvals only), for approvers', async () => {
    const approver = await client(h.gw.url, { scopes: ['operator.approvals'] });
    try {
      expect(await approver.request('plugin.approval.list', {})).toEqual([]);
      expect(await approver.request('openclaw.approval.list', {})).toEqual([]);
    } finally {
      await approver.close();
    }
    expect(await refusal(reader.request('plugin.approval.list', {}))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.approvals',
    });
  });

  it('channels.pairing.list: accounts on dmPolicy pairing and the senders waiting, codes kept back', async () => {
    await receive!({
      accountId: 'default',
      peer: { kind: 'direct', id: 'stranger' },
      sender: { id: 'stranger', name: 'Stranger' },
      text: 'let me in',
      messageId: 'm1',
      mentioned: false,
    });
    const [pending] = ((await h.client.request('pairing.list', { channel: 'inbox-chat' })) as any).requests;
    expect(pending?.code).toEqual(expect.any(String));
    const pairing: any = await h.client.request('channels.pairing.list', { channel: 'inbox-chat' });
    expect(pairing).toEqual({
      accounts: [{ channel: 'inbox-chat', channelLabel: 'inbox-chat', accountId: 'default', notifySupported: false }],
      requests: [
        {
          requestId: expect.any(String),
          channel: 'inbox-chat',
          channelLabel: 'inbox-chat',
          accountId: 'default',
          senderId: 'stranger',
          senderLabel: 'sender id',
          metadata: { name: 'Stranger' },
          createdAt: expect.any(String),
          lastSeenAt: expect.any(String),
          expiresAt: expect.any(String),
          notifySupported: false,
        },
      ],
      commandOwnerConfigured: false,
      limits: { pendingPerAccount: 3, ttlMs: 3_600_000 },
    });
    expect(JSON.stringify(pairing)).not.toContain(pending!.code);
    expect(await refusal(reader.request('channels.pairing.list', {}))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.pairing',
    });
  });
  it('sessions.observer.visibility: acknowledged (claw writes no running digests); visible is required', async () => {
    expect(await reader.request('sessions.observer.visibility', { visible: true })).toEqual({ ok: true });
    expect(await reader.request('sessions.observer.visibility', { visible: false })).toEqual({ ok: true });
    expect((await refusal(reader.request('sessions.observer.visibility', {})))?.code).toBe('INVALID_REQUEST');
  });
  it('sessions.list {hasBoard: true}: no rows, as no claw session has a board (the Dashboards page asks)', async () => {
    const listed: any = await reader.request('sessions.list', { hasBoard: true });
    expect(listed.sessions).toEqual([]);
    expect(Array.isArray(((await reader.request('sessions.list', { hasBoard: false })) as any).sessions)).toBe(true);
  });
});
