/**
 * Issue 12, part 1: the kernel's tool choke point computes the tool policy from config
 * itself, on every path a tool call can take today — the gateway `agent` method, `chat.send`,
 * `/v1/chat/completions` and a channel's inbound messages — and a caller can only narrow it.
 * Tools are not reachable around the choke point: plugins see them without `execute`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin, textResult, type ChannelAccountContext } from '../sdk/index.js';
import { createTestKernel } from '../sdk/testing.js';
import { idem, runAgent, startAgent, until, type AgentHarness } from './agent-helpers.js';

const REFUSAL = 'is not allowed by the tool policy for this agent';
const TOKEN = 'policy-paths-token';

// A channel whose "platform" is this test: receive() is the inbound path, sends land in `sent`.
let receive: ChannelAccountContext['receive'] | undefined;
const sent: string[] = [];
const testChannel = definePlugin({
  id: 'policy-chat',
  register(api) {
    api.registerChannel({
      id: 'policy-chat',
      label: 'Policy chat',
      textLimit: 1000,
      async start(ctx: ChannelAccountContext) {
        receive = ctx.receive;
      },
      async send(message) {
        sent.push(message.text ?? '');
        return { messageId: `out-${sent.length}` };
      },
      status: () => [{ accountId: 'default', connected: receive !== undefined }],
    });
  },
});

let h: AgentHarness;
beforeAll(async () => {
  h = await startAgent({
    plugins: [testChannel],
    gateway: { auth: { mode: 'token', token: TOKEN }, http: { endpoints: { chatCompletions: { enabled: true } } } },
    config: {
      tools: { deny: ['exec'], byProvider: { openai: { deny: ['edit'] } } },
      agents: {
        list: [
          { id: 'main', default: true },
          { id: 'reader', tools: { deny: ['write'] } },
        ],
      },
      channels: { 'policy-chat': { dmPolicy: 'open', allowFrom: ['*'], agentId: 'reader' } },
    },
  });
  await until(() => receive !== undefined, 5000, 'the test channel to start');
});
afterAll(() => h.stop());
beforeEach(() => h.fake.reset());

/** What the model was told about its tool call (the tool result in its next request). */
function toolResultSeen(): string {
  return JSON.stringify(h.fake.requests.at(-1)?.body ?? {});
}

const writeCall = (path: string) => ({ toolCalls: [{ name: 'write', arguments: { path, content: 'x' } }] });

describe('the configured tool policy on every path', () => {
  it('gateway agent: global deny, byProvider deny, and the main agent may still write', async () => {
    h.fake.script({ toolCalls: [{ name: 'exec', arguments: { command: 'echo hi > exec-ran.txt' } }] }, { text: 'ok' });
    await runAgent(h.client, { message: 'run exec' });
    expect(toolResultSeen()).toContain(`Tool \\"exec\\" ${REFUSAL}`);
    expect(existsSync(join(h.workspace, 'exec-ran.txt'))).toBe(false);

    h.fake.reset();
    h.fake.script(
      { toolCalls: [{ name: 'edit', arguments: { path: 'x.txt', oldText: 'a', newText: 'b' } }] },
      { text: 'ok' },
    );
    await runAgent(h.client, { message: 'edit' });
    expect(toolResultSeen()).toContain(`Tool \\"edit\\" ${REFUSAL}`);

    h.fake.reset();
    h.fake.script(writeCall('main-wrote.txt'), { text: 'ok' });
    await runAgent(h.client, { message: 'write' });
    expect(existsSync(join(h.workspace, 'main-wrote.txt'))).toBe(true);
  });

  it('gateway agent for another agent: its agents.list[].tools applies', async () => {
    h.fake.script(writeCall('reader-agent.txt'), { text: 'ok' });
    await runAgent(h.client, { message: 'write', agentId: 'reader' });
    expect(toolResultSeen()).toContain(`Tool \\"write\\" ${REFUSAL}`);
  });

  it('chat.send to the reader agent session', async () => {
    h.fake.script(writeCall('reader-chat.txt'), { text: 'ok' });
    await h.client.request('chat.send', { sessionKey: 'agent:reader:main', message: 'write', idempotencyKey: idem() });
    await until(() => h.fake.requests.length >= 2, 10_000, 'the second model request');
    expect(toolResultSeen()).toContain(`Tool \\"write\\" ${REFUSAL}`);
  });

  it('/v1/chat/completions for the reader agent', async () => {
    h.fake.script(writeCall('reader-http.txt'), { text: 'ok' });
    const response = await fetch(`http://127.0.0.1:${h.gw.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claw:reader', messages: [{ role: 'user', content: 'write' }] }),
    });
    expect(response.status).toBe(200);
    expect(toolResultSeen()).toContain(`Tool \\"write\\" ${REFUSAL}`);
  });

  it('a channel message routed to the reader agent', async () => {
    h.fake.script(writeCall('reader-channel.txt'), { text: 'channel ok' });
    await receive!({
      accountId: 'default',
      peer: { kind: 'direct', id: 'u1' },
      sender: { id: 'u1', name: 'U' },
      text: 'write please',
      messageId: 'm1',
      mentioned: false,
    });
    await until(() => sent.includes('channel ok'), 10_000, 'the channel reply');
    expect(toolResultSeen()).toContain(`Tool \\"write\\" ${REFUSAL}`);
    expect(existsSync(join(h.gw.stateDir, 'workspace-reader', 'reader-channel.txt'))).toBe(false);
  });
});

describe('the choke point itself', () => {
  const tool = definePlugin({
    id: 'policy-tools',
    register(api) {
      for (const name of ['alpha', 'beta'])
        api.registerTool({
          name,
          description: name,
          parameters: { type: 'object' },
          execute: () => textResult(`${name} ran`),
        });
    },
  });

  it('applies the config without the caller passing anything, and a caller can only narrow it', async () => {
    const kernel = await createTestKernel({
      plugins: [tool],
      config: {
        tools: { deny: ['beta'] },
        agents: { list: [{ id: 'solo', tools: { allow: ['alpha'] } }, { id: 'main' }] },
      },
    });
    const invoke = (name: string, extra: Record<string, unknown> = {}) =>
      kernel.plugins.kernelServices.tools.invoke({
        name,
        params: {},
        toolCallId: 't',
        context: { agentId: 'main' },
        ...extra,
      });
    expect((await invoke('alpha')).result).toEqual(textResult('alpha ran'));
    expect((await invoke('beta')).result.content).toEqual([{ type: 'text', text: `Tool "beta" ${REFUSAL}.` }]);
    // A caller's `allowed` cannot widen the configured policy …
    expect((await invoke('beta', { allowed: () => true })).blocked).toBe(true);
    // … but narrows it.
    expect((await invoke('alpha', { allowed: (name: string) => name !== 'alpha' })).blocked).toBe(true);
    // Per agent: "solo" may use only alpha (and beta stays denied globally).
    const solo = await kernel.plugins.kernelServices.tools.invoke({
      name: 'beta',
      params: {},
      toolCallId: 't',
      context: { agentId: 'solo' },
    });
    expect(solo.blocked).toBe(true);
    await kernel.dispose();
  });

  it('byProvider layers match the run model', async () => {
    const kernel = await createTestKernel({
      plugins: [tool],
      config: { tools: { byProvider: { 'anthropic/claude-x': { deny: ['alpha'] } } } },
    });
    const invoke = (model?: string) =>
      kernel.plugins.kernelServices.tools.invoke({
        name: 'alpha',
        params: {},
        toolCallId: 't',
        context: {},
        ...(model ? { model } : {}),
      });
    expect((await invoke('anthropic/claude-x')).blocked).toBe(true);
    expect((await invoke('anthropic/claude-y')).blocked).toBe(false);
    await kernel.dispose();
  });

  it('plugins and tests get tools without a runnable execute', async () => {
    const kernel = await createTestKernel({ plugins: [tool] });
    const view = await kernel.capabilities.get('tool', 'alpha');
    expect(view).toMatchObject({ name: 'alpha', description: 'alpha', parameters: { type: 'object' } });
    expect(() => view.execute({}, { toolCallId: 'x' })).toThrow(/runs only through kernel\.tools\.invoke/);
    expect(await kernel.plugins.kernelServices.capabilities.find('tool', 'beta')).toMatchObject({ name: 'beta' });
    await expect(async () =>
      (await kernel.plugins.kernelServices.capabilities.find('tool', 'beta'))!.execute({}, { toolCallId: 'x' }),
    ).rejects.toThrow(/choke point/);
    await kernel.dispose();
  });
});
