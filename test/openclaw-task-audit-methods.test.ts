/**
 * OpenClaw methods for its task ledger, task suggestions, progress cards, worker environments,
 * audit trail, change history, system agent, native hooks and agent questions — features claw
 * does not have — answered by a real claw gateway in OpenClaw's shapes: lists empty, ids
 * unknown as OpenClaw words it, changes refused as unavailable.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { client, refusal } from './gateway-helpers.js';

let h: AgentHarness;
let reader: GatewayClient;

beforeAll(async () => {
  h = await startAgent();
  reader = await client(h.gw.url, { scopes: ['operator.read'] });
}, 180_000);

afterAll(async () => {
  await reader?.close();
  await h?.stop();
});

describe('tasks, suggestions and progress cards: claw keeps none', () => {
  it('tasks.get and tasks.history: every task id is unknown, worded as OpenClaw', async () => {
    expect(await refusal(reader.request('tasks.get', { taskId: 'task-1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'task not found: task-1',
    });
    expect(await refusal(reader.request('tasks.history', { taskId: 'task-1', limit: 20 }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'Task not found.',
    });
    expect(await refusal(reader.request('tasks.get', {}))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('taskId'),
    });
  });

  it('tasks.cancel, retry and dismiss find nothing and say so per task (write scope)', async () => {
    expect(await h.client.request('tasks.cancel', { taskId: 'task-1', reason: 'stop' })).toEqual({
      found: false,
      cancelled: false,
    });
    for (const method of ['tasks.retry', 'tasks.dismiss'])
      expect(await h.client.request(method, { taskIds: ['a', 'b'] })).toEqual({
        results: [
          { taskId: 'a', ok: false, reason: 'task not found' },
          { taskId: 'b', ok: false, reason: 'task not found' },
        ],
      });
    expect(await refusal(reader.request('tasks.cancel', { taskId: 'task-1' }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.write',
    });
  });

  it('taskSuggestions: an empty list, nothing to dismiss, accepting is unavailable', async () => {
    expect(await reader.request('taskSuggestions.list', { sessionKey: 'main' })).toEqual({ suggestions: [] });
    expect(await h.client.request('taskSuggestions.dismiss', { taskId: 's-1', reason: 'no' })).toEqual({
      taskId: 's-1',
      dismissed: false,
    });
    expect(await refusal(h.client.request('taskSuggestions.accept', { taskId: 's-1', mode: 'current' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no task suggestions to accept',
    });
  });

  it('progressCard: no card; putting or refreshing one is unavailable', async () => {
    expect(await reader.request('progressCard.get', { sessionKey: 'agent:main:main' })).toEqual({ card: null });
    expect(await refusal(h.client.request('progressCard.put', { sessionKey: 'main', markdown: '- [ ] x' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no progress cards',
    });
    expect(
      await refusal(h.client.request('progressCard.refresh', { sessionKey: 'main', idempotencyKey: randomUUID() })),
    ).toEqual({ code: 'UNAVAILABLE', message: 'claw has no progress cards to refresh' });
  });
});

describe('worker environments: claw has none', () => {
  it('status of any id is unknown; prepare and destroy are unavailable (admin)', async () => {
    expect(await refusal(reader.request('environments.status', { environmentId: 'env-1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unknown environmentId',
    });
    expect(
      await refusal(h.client.request('environments.prepare', { profileId: 'cloud', projectPath: '/tmp/p' })),
    ).toEqual({ code: 'UNAVAILABLE', message: 'claw has no worker environments to prepare' });
    expect(await refusal(h.client.request('environments.destroy', { environmentId: 'env-1', force: true }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no worker environments to destroy',
    });
    expect(await refusal(reader.request('environments.destroy', { environmentId: 'env-1' }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });
});

describe('audit trail and change history: claw records none', () => {
  it('audit.list and audit.activity.list answer no events', async () => {
    expect(await reader.request('audit.list', { limit: 50, kind: 'agent_run' })).toEqual({ events: [] });
    expect(await reader.request('audit.activity.list', { limit: 50, direction: 'inbound' })).toEqual({ events: [] });
  });

  it("audit.run.inspect answers OpenClaw's not-found inspection, by run or by execution", async () => {
    const byRun: any = await reader.request('audit.run.inspect', { runId: 'run-7', decisionLimit: 10 });
    expect(byRun).toEqual({
      schemaVersion: 1,
      run: { runId: 'run-7', status: 'unknown' },
      identity: {
        state: 'unknown',
        reasonCode: 'run_not_found',
        missingEvidence: ['run.record', 'identity.context'],
        remediation: [{ code: 'verify_run_id', text: expect.any(String) }],
      },
      decisionDisplays: [],
      coverage: { state: 'unknown', missingEvidence: ['run.record', 'identity.context'] },
    });
    const byExecution: any = await reader.request('audit.run.inspect', { executionId: 'exec-1' });
    expect(byExecution.run).toEqual({ executionId: 'exec-1', status: 'unknown' });
    expect(byExecution.identity.reasonCode).toBe('execution_not_found');
    expect(await refusal(reader.request('audit.run.inspect', {}))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'audit.run.inspect needs exactly one of runId or executionId',
    });
  });

  it('openclaw.changes.list: no entries (admin)', async () => {
    expect(await h.client.request('openclaw.changes.list', { limit: 25 })).toEqual({ entries: [] });
    expect(await refusal(reader.request('openclaw.changes.list', {}))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });
});

describe('system agent and native hooks: claw has neither', () => {
  it("openclaw.setup.detect reports claw's configured workspace and model, with no candidates", async () => {
    const detected: any = await h.client.request('openclaw.setup.detect', {});
    expect(detected).toEqual({
      manualProviders: [],
      authOptions: [],
      prepareOptions: [],
      nativeSessionCatalogs: [],
      nativeSessionCatalogPreferenceRequired: false,
      workspace: h.workspace,
      setupComplete: true,
      candidates: [],
      unavailableCandidates: [],
      recommendedInstalls: [],
      // The harness configures the fake LLM's model as the default agent's.
      configuredModel: expect.stringMatching(/^[\w-]+\/[\w.-]+$/),
    });
  });

  it('verify reports unavailable, history is empty, chat/activation/hook relays are refused', async () => {
    expect(await h.client.request('openclaw.setup.verify', {})).toEqual({
      ok: false,
      status: 'unavailable',
      error: expect.stringContaining('claw has no OpenClaw system agent'),
    });
    expect(await h.client.request('openclaw.chat.history', { limit: 10 })).toEqual({ turns: [] });
    // The Control UI's greeting request (no message) gets an optional welcome pointing at `claw onboard`.
    expect(await h.client.request('openclaw.chat', { sessionId: 's1' })).toEqual({
      sessionId: 's1',
      reply: expect.stringContaining('claw onboard'),
      optionalWelcome: true,
      action: 'none',
    });
    for (const [method, params] of [
      ['openclaw.chat', { sessionId: 's1', message: 'hi' }],
      ['openclaw.setup.activate.start', { sessionId: 's1' }],
    ] as const)
      expect(await refusal(h.client.request(method, params))).toEqual({
        code: 'UNAVAILABLE',
        message: expect.stringContaining('claw has no OpenClaw system agent'),
      });
    expect(await refusal(h.client.request('nativeHook.invoke', { provider: 'codex', relayId: 'r' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no native hook relays',
    });
  });
});

describe('agent questions: claw agents ask none', () => {
  it('question.list is empty; get and resolve find no such question', async () => {
    expect(await h.client.request('question.list', {})).toEqual({ questions: [] });
    expect(await refusal(h.client.request('question.get', { id: 'q1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: "question 'q1' was not found",
    });
    expect(await refusal(h.client.request('question.resolve', { id: 'q1', cancel: true }))).toEqual({
      code: 'INVALID_REQUEST',
      message: "question 'q1' was not found",
    });
  });
});
