/**
 * OpenClaw's kind-agnostic approval methods over claw's exec approvals, in-process: a real
 * host command waits for approval, approval.get shows it pending in OpenClaw's snapshot
 * shape, approval.resolve decides it (the command runs), a second resolve answers how it
 * ended, and approval.history lists it with its outcome. (Error codes of these methods are
 * checked against a spawned gateway in openclaw-cron-channel-methods.test.ts.)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import type { EventFrame } from '../sdk/generated/protocol.js';
import { client, startGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const PLUGINS = ['tools-exec', 'exec-approvals', 'models', 'sessions'].map((id) => join(REPO, 'plugins', id));
let gw: Awaited<ReturnType<typeof startGateway>>;
let operator: GatewayClient;
const requested: EventFrame[] = [];

beforeAll(async () => {
  gw = await startGateway({ plugins: PLUGINS, config: { tools: { exec: { security: 'allowlist', ask: 'on-miss' } } } });
  operator = await client(gw.url, {
    scopes: ['operator.read', 'operator.approvals'],
    onEvent: (frame) => void (frame.event === 'exec.approval.requested' && requested.push(frame)),
  });
}, 120_000);

afterAll(async () => {
  await operator?.close();
  await gw?.kernel.stop();
});

function exec(command: string, workspaceDir: string) {
  return gw.kernel.plugins.kernelServices.tools.invoke({
    name: 'exec',
    params: { command },
    toolCallId: `call-${requested.length}-${command}`,
    context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir },
  });
}

describe('approval.get / resolve / history over exec approvals', () => {
  it('a pending exec approval, decided through approval.resolve, then in the history', async () => {
    const ws = tempDir();
    const running = exec('touch approved', ws);
    await expect.poll(() => requested.length, { timeout: 10_000 }).toBe(1);
    const id = (requested[0]!.payload as { id: string }).id;

    const pending: any = await operator.request('approval.get', { id });
    expect(pending).toEqual({
      approval: {
        id,
        status: 'pending',
        urlPath: `/approve/${id}`,
        createdAtMs: expect.any(Number),
        expiresAtMs: expect.any(Number),
        presentation: {
          kind: 'exec',
          commandText: 'touch approved',
          commandPreview: null,
          warningText: null,
          host: 'gateway',
          nodeId: null,
          agentId: 'main',
          allowedDecisions: ['allow-once', 'allow-always', 'deny'],
        },
      },
    });

    const resolved: any = await operator.request('approval.resolve', { id, kind: 'exec', decision: 'allow-once' });
    expect(resolved).toEqual({
      applied: true,
      approval: {
        ...pending.approval,
        status: 'allowed',
        decision: 'allow-once',
        reason: 'user',
        resolvedAtMs: expect.any(Number),
        source: { agentId: 'main', sessionKey: 'agent:main:main' },
      },
    });
    expect((await running).blocked).toBe(false);
    expect(existsSync(join(ws, 'approved'))).toBe(true);

    // The first answer stands: a later one is told how it ended, and changes nothing.
    expect(await operator.request('approval.resolve', { id, kind: 'exec', decision: 'deny' })).toEqual({
      applied: false,
      approval: resolved.approval,
    });
    expect(await operator.request('approval.get', { id })).toEqual({ approval: resolved.approval });
    expect(await operator.request('approval.history', { limit: 10 })).toEqual({ items: [resolved.approval] });
    expect(await operator.request('approval.history', { kind: 'plugin' })).toEqual({ items: [] });
  });

  it('a denied request reads denied by the user, newest first in the history', async () => {
    const ws = tempDir();
    const running = exec('touch refused', ws);
    await expect.poll(() => requested.length, { timeout: 10_000 }).toBe(2);
    const id = (requested[1]!.payload as { id: string }).id;
    const denied: any = await operator.request('approval.resolve', { id, kind: 'exec', decision: 'deny' });
    expect(denied).toMatchObject({
      applied: true,
      approval: { id, status: 'denied', decision: 'deny', reason: 'user' },
    });
    expect((await running).blocked).toBe(true);
    expect(existsSync(join(ws, 'refused'))).toBe(false);
    const history: any = await operator.request('approval.history', { limit: 1 });
    expect(history.items.map((item: { id: string }) => item.id)).toEqual([id]);
    expect(history.nextCursor).toBe('1');
    const next: any = await operator.request('approval.history', { limit: 1, cursor: history.nextCursor });
    expect(next.items).toHaveLength(1);
    expect(next.items[0].status).toBe('allowed');
    expect(next.nextCursor).toBeUndefined();
  });
});
