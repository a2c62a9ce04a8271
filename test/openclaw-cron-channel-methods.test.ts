/**
 * OpenClaw methods answered from claw's real cron jobs and channel accounts, by a spawned
 * `claw gateway`: cron.get (OpenClaw's job read view), the cron scratch pad (absent in claw),
 * channels.stop / channels.start of a running account, and channels.pairing.approve /
 * dismiss of waiting DM pairing requests by the ids channels.pairing.list gives them, and the
 * approval methods with nothing pending (not found, no standing grants, no nodes).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, generateDeviceIdentity } from '../apps/cli/gateway-client.js';
import { spawnCliGateway, type CliGateway } from './cli-gateway.js';
import { pairingRequestId } from '../plugins/channels/pairing-request-id.js';
import { CLI, tempDir } from './helpers.js';
import { refusal } from './gateway-helpers.js';

const TOKEN = 'cron-channel-methods-token-0123456789';
let gw: CliGateway;
let stateDir: string;
let admin: GatewayClient;
let reader: GatewayClient;

function connect(scopes: string[]): Promise<GatewayClient> {
  const client = new GatewayClient({
    url: `ws://127.0.0.1:${gw.port}`,
    token: TOKEN,
    identity: generateDeviceIdentity(),
    scopes,
  });
  return client.connect().then(() => client);
}

beforeAll(async () => {
  stateDir = tempDir('claw-cron-channel-methods-');
  // Disabled accounts, so nothing goes online: Telegram's uses DM pairing, Discord's takes no DMs.
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({
      gateway: { auth: { mode: 'token', token: TOKEN } },
      channels: {
        telegram: { enabled: false, dmPolicy: 'pairing' },
        discord: { enabled: false, dmPolicy: 'disabled' },
      },
    }),
  );
  const now = Date.now();
  const request = (senderId: string, code: string) => ({
    code,
    channel: 'telegram',
    accountId: 'default',
    senderId,
    senderName: `sender ${senderId}`,
    createdAt: now,
    expiresAt: now + 3_600_000,
  });
  mkdirSync(join(stateDir, 'credentials'), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(stateDir, 'credentials', 'telegram-pairing.json'),
    JSON.stringify({ version: 1, requests: [request('111', 'AAAA2222'), request('222', 'BBBB3333')] }),
    { mode: 0o600 },
  );
  gw = await spawnCliGateway(CLI, { OPENCLAW_STATE_DIR: stateDir });
  admin = await connect(['operator.admin']);
  reader = await connect(['operator.read']);
}, 120_000);

afterAll(async () => {
  await admin?.close();
  await reader?.close();
  gw?.child.kill();
  await gw?.exited;
});

describe('cron.get and the cron scratch pad', () => {
  it("cron.get answers a real job in OpenClaw's read view; its revision follows edits", async () => {
    const job = (await admin.request('cron.add', {
      idempotencyKey: randomUUID(),
      name: 'nightly report',
      schedule: { kind: 'cron', expr: '0 3 * * *' },
      sessionTarget: 'isolated',
      wakeMode: 'next-heartbeat',
      payload: { kind: 'agentTurn', message: 'write the report' },
    })) as { id: string };
    const view: any = await reader.request('cron.get', { jobId: job.id });
    expect(view).toMatchObject({
      id: job.id,
      name: 'nightly report',
      schedule: { kind: 'cron', expr: '0 3 * * *' },
      effectiveAgentId: 'main',
      configRevision: expect.stringMatching(/^sha256:/),
      nextRunAtMs: expect.any(Number),
      lastRunAtMs: null,
      lastRunStatus: null,
      lastRunError: null,
      lastDelivered: null,
      lastDeliveryStatus: null,
      lastDeliveryError: null,
      deliverySuppressionReason: null,
      lastFailureNotificationDelivered: null,
      lastFailureNotificationDeliveryStatus: null,
      lastFailureNotificationDeliveryError: null,
    });
    expect(view.nextRunAtMs).toBe(view.state.nextRunAtMs);
    await admin.request('cron.update', { jobId: job.id, patch: { name: 'nightly summary' } });
    const edited: any = await reader.request('cron.get', { id: job.id });
    expect(edited.name).toBe('nightly summary');
    expect(edited.configRevision).not.toBe(view.configRevision);

    expect(await refusal(reader.request('cron.get', { jobId: 'nope' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'cron job not found: nope. List jobs (cron.list) and retry with a current job id.',
    });
    expect(await refusal(reader.request('cron.get', {}))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'invalid cron.get params: missing id',
    });
  });

  it('the scratch pad reads empty and refuses writes (admin only)', async () => {
    const job = (await admin.request('cron.add', {
      idempotencyKey: randomUUID(),
      name: 'pad',
      schedule: { kind: 'every', everyMs: 3_600_000 },
      sessionTarget: 'isolated',
      wakeMode: 'next-heartbeat',
      payload: { kind: 'agentTurn', message: 'x' },
    })) as { id: string };
    expect(await admin.request('cron.scratch.get', { jobId: job.id })).toEqual({
      scratch: null,
      currentRevision: 0,
      maxBytes: 262_144,
    });
    expect(await refusal(admin.request('cron.scratch.set', { jobId: job.id, content: 'notes' }))).toEqual({
      code: 'UNAVAILABLE',
      message: "claw's cron jobs have no scratch pad",
    });
    expect(await refusal(reader.request('cron.scratch.get', { jobId: job.id }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });
});

describe('channels.stop and channels.start', () => {
  const running = async () => {
    const status: any = await reader.request('channels.status', {});
    const webchat = (status.channelAccounts?.webchat ?? []) as Array<{ accountId: string; running: boolean }>;
    return webchat.find((account) => account.accountId === 'default')?.running;
  };

  it('stops and starts the WebChat account, and status follows', async () => {
    expect(await running()).toBe(true);
    expect(await admin.request('channels.stop', { channel: 'webchat' })).toEqual({
      channel: 'webchat',
      accountId: 'default',
      stopped: true,
    });
    expect(await running()).toBe(false);
    expect(await admin.request('channels.start', { channel: 'webchat', accountId: 'default' })).toEqual({
      channel: 'webchat',
      accountId: 'default',
      started: true,
      outcome: { status: 'handed-off' },
    });
    expect(await running()).toBe(true);
    expect(await admin.request('channels.start', { channel: 'webchat' })).toEqual({
      channel: 'webchat',
      accountId: 'default',
      started: true,
      outcome: { status: 'skipped', reason: 'already-running' },
    });
  });

  it('a disabled account is skipped; an unknown channel and a reader are refused', async () => {
    expect(await admin.request('channels.start', { channel: 'telegram' })).toEqual({
      channel: 'telegram',
      accountId: 'default',
      started: false,
      outcome: { status: 'skipped', reason: 'disabled' },
    });
    expect(await refusal(admin.request('channels.start', { channel: 'pigeon' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unknown channel: pigeon',
    });
    expect(await refusal(reader.request('channels.stop', { channel: 'webchat' }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });
});

describe('channels.pairing.approve and dismiss', () => {
  it('approve lets the sender in, dismiss drops a request without approving it', async () => {
    // channels.pairing.list shows enabled accounts only; the ids are those it would give these requests.
    const file = JSON.parse(readFileSync(join(stateDir, 'credentials', 'telegram-pairing.json'), 'utf8'));
    const [first, second] = file.requests.map(pairingRequestId) as string[];

    expect(
      await admin.request('channels.pairing.approve', {
        channel: 'telegram',
        accountId: 'default',
        requestId: first,
        notify: true,
      }),
    ).toEqual({
      requestId: first,
      senderId: '111',
      notification: 'unsupported',
      commandOwnerBootstrap: 'not-requested',
    });
    const allowed = JSON.parse(readFileSync(join(stateDir, 'credentials', 'telegram-allowFrom.json'), 'utf8'));
    expect(allowed.allowFrom).toEqual(['111']);

    expect(
      await admin.request('channels.pairing.dismiss', { channel: 'telegram', accountId: 'default', requestId: second }),
    ).toEqual({ requestId: second, senderId: '222' });
    const after = JSON.parse(readFileSync(join(stateDir, 'credentials', 'telegram-pairing.json'), 'utf8'));
    expect(after.requests).toEqual([]);
    expect(JSON.parse(readFileSync(join(stateDir, 'credentials', 'telegram-allowFrom.json'), 'utf8'))).toEqual(allowed);

    for (const method of ['channels.pairing.approve', 'channels.pairing.dismiss'])
      expect(
        await refusal(admin.request(method, { channel: 'telegram', accountId: 'default', requestId: second })),
      ).toEqual({ code: 'INVALID_REQUEST', message: 'pending DM access request no longer exists' });
    expect(
      await refusal(
        admin.request('channels.pairing.dismiss', { channel: 'discord', accountId: 'default', requestId: 'x' }),
      ),
    ).toEqual({ code: 'INVALID_REQUEST', message: 'channel account does not use DM pairing: discord:default' });
  });
});

describe('approval methods with nothing to approve', () => {
  it('unknown approvals are not found; claw has no standing grants and no nodes', async () => {
    for (const [method, params] of [
      ['approval.get', { id: 'no-such-approval' }],
      ['approval.resolve', { id: 'no-such-approval', kind: 'exec', decision: 'deny' }],
    ] as const)
      expect(await refusal(admin.request(method, params))).toEqual({
        code: 'INVALID_REQUEST',
        message: 'approval not found',
      });
    expect(await admin.request('approval.history', { limit: 20 })).toEqual({ items: [] });
    expect(await refusal(admin.request('approval.history', { cursor: 'x' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'invalid approval.history cursor',
    });
    expect(await admin.request('exec.approval.grants.list', { limit: 5 })).toEqual({ grants: [] });
    expect(await admin.request('exec.approval.grants.revoke', { grantId: 'g1' })).toEqual({ outcome: 'not-found' });
    for (const method of ['exec.approvals.node.get', 'exec.approvals.node.set'])
      expect(await refusal(admin.request(method, { nodeId: 'mac-1', file: {} }))).toMatchObject({
        code: 'UNAVAILABLE',
        message: expect.stringMatching(/^node not connected: mac-1 \(/),
      });
    expect(await refusal(reader.request('approval.history', {}))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.approvals',
    });
  });
});
