/**
 * exec host=node and the nodes tool against a fake "nodes" service, through the kernel's tool
 * choke point with the real exec-approvals plugin: which node is picked, the prepare → plan →
 * system.run wire, the gateway's own policy, a node asking for approval (a person answers,
 * then the plan goes again with OpenClaw's approval fields), refusals, a node going away
 * mid-run, and masking.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { definePlugin, NodeInvokeError, type NodeInfo, type NodeService } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { resolveExecTarget } from '../plugins/tools-exec/exec-target.js';
import { REPO, tempDir } from './helpers.js';

const EXEC = join(REPO, 'plugins', 'tools-exec');
const APPROVALS = join(REPO, 'plugins', 'exec-approvals');
const SESSIONS = ['models', 'sessions'].map((id) => join(REPO, 'plugins', id));
const kernels: TestKernel[] = [];

afterAll(async () => {
  for (const kernel of kernels) await kernel.stop();
});

interface Sent {
  nodeId: string;
  command: string;
  params: Record<string, any>;
}

/** What the fake node does with system.run: run it, want a person first, refuse, or vanish. */
type RunMode = 'run' | 'ask' | 'deny' | 'vanish';

function node(nodeId: string, over: Partial<NodeInfo> = {}): NodeInfo {
  return {
    nodeId,
    displayName: nodeId.toUpperCase(),
    platform: 'linux',
    remoteIp: '10.0.0.2',
    connected: true,
    paired: true,
    caps: ['system'],
    declaredCommands: ['system.run', 'system.run.prepare', 'system.notify', 'device.info'],
    commands: ['system.run', 'system.run.prepare', 'system.notify', 'device.info'],
    lastSeenAtMs: 1,
    ...over,
  };
}

function fakeNodes(nodes: NodeInfo[], sent: Sent[], state: { mode: RunMode; stdout?: string }) {
  const service: NodeService = {
    list: async () => nodes,
    async resolve(query) {
      const hits = nodes.filter((n) => n.nodeId === query || n.displayName === query);
      if (hits.length === 0) throw new NodeInvokeError('NOT_FOUND', `no node matches "${query}"`);
      return hits[0]!;
    },
    async invoke(nodeId, command, params) {
      const p = params as Record<string, any>;
      sent.push({ nodeId, command, params: p });
      if (command === 'system.run.prepare')
        return {
          plan: {
            argv: p.command,
            cwd: p.cwd ?? null,
            commandText: p.rawCommand,
            commandPreview: null,
            agentId: p.agentId,
            sessionKey: p.sessionKey ?? null,
            policySnapshot: { v: 1 },
          },
          execPolicy: { security: 'full', ask: state.mode === 'ask' ? 'always' : 'off' },
        };
      if (command === 'system.run') {
        if (state.mode === 'vanish')
          throw new NodeInvokeError('NODE_DISCONNECTED', `node ${nodeId} disconnected; not retried`, nodeId);
        if (state.mode === 'deny') throw new NodeInvokeError('SYSTEM_RUN_DENIED', 'SYSTEM_RUN_DENIED: allowlist miss');
        if (state.mode === 'ask' && !p.approved)
          throw new NodeInvokeError('SYSTEM_RUN_DENIED', 'SYSTEM_RUN_DENIED: approval required');
        return { exitCode: 0, timedOut: false, success: true, stdout: state.stdout ?? 'hello from node\n', stderr: '' };
      }
      if (command === 'system.notify' || command === 'device.info') return { ok: true, command };
      throw new NodeInvokeError('COMMAND_NOT_ALLOWED', `${command} is not allowed on ${nodeId}`);
    },
  };
  return definePlugin({ id: 'fake-nodes', register: (api) => api.registerService({ id: 'nodes', api: service }) });
}

async function setup(
  config: Record<string, unknown>,
  nodes: NodeInfo[] = [node('alpha')],
  mode: RunMode = 'run',
  approvals?: 'allow-once' | 'allow-always' | 'deny',
) {
  const sent: Sent[] = [];
  const state: { mode: RunMode; stdout?: string } = { mode };
  const kernel = await createTestKernel({
    stateDir: tempDir('claw-exec-node-'),
    plugins: [EXEC, APPROVALS, ...SESSIONS, fakeNodes(nodes, sent, state)],
    config,
  });
  kernels.push(kernel);
  const asked: any[] = [];
  if (approvals) {
    const service = (await kernel.plugins.kernelServices.capabilities.find('service', 'exec-approvals'))!.api as {
      resolve(id: string, d: string): string;
    };
    kernel.plugins.kernelServices.protocol.onEmit((emitted) => {
      if (emitted.event !== 'exec.approval.requested') return;
      const payload = emitted.payload as { id: string; request: unknown };
      asked.push(payload.request);
      queueMicrotask(() => service.resolve(payload.id, approvals));
    });
  }
  const call = async (tool: string, params: Record<string, unknown>, context: Record<string, unknown> = {}) => {
    const outcome = await kernel.plugins.kernelServices.tools.invoke({
      name: tool,
      params,
      toolCallId: `call-${Math.random()}`,
      context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: tempDir(), ...context },
    });
    return {
      ...outcome,
      text: outcome.message.content.map((part) => ('text' in part ? part.text : '')).join('\n'),
    };
  };
  return { kernel, sent, state, asked, call };
}

const commandsSent = (sent: Sent[]) => sent.map((s) => `${s.nodeId}:${s.command}`);

describe('where exec runs (OpenClaw rules)', () => {
  const sandbox = { sandbox: { id: 'sb', spec: { workdir: '/workspace' } } } as never;
  const plain = {} as never;
  it('auto never picks a node; host=node from auto only without a sandbox', () => {
    expect(resolveExecTarget({}, plain, {})).toEqual({ host: 'gateway' });
    expect(resolveExecTarget({}, sandbox, {})).toEqual({ host: 'sandbox' });
    expect(resolveExecTarget({ host: 'node' }, plain, {})).toEqual({ host: 'node' });
    expect(resolveExecTarget({ host: 'node' }, sandbox, {})).toMatch(/host=node is not allowed here .*sandbox/);
    expect(resolveExecTarget({ host: 'gateway' }, sandbox, {})).toMatch(/not allowed here/);
  });
  it('a configured host is the only one a call may name; tools.exec.host=node runs from a sandbox too', () => {
    expect(resolveExecTarget({}, sandbox, { host: 'node', node: 'alpha' })).toEqual({
      host: 'node',
      boundNode: 'alpha',
    });
    expect(resolveExecTarget({ host: 'gateway' }, plain, { host: 'node' })).toMatch(
      /configured host is node.*tools\.exec\.host=gateway/,
    );
    expect(resolveExecTarget({ host: 'sandbox' }, plain, {})).toMatch(/no sandbox runtime/);
    expect(resolveExecTarget({ host: 'my-laptop' }, plain, {})).toMatch(/host must be one of auto, sandbox/);
    expect(resolveExecTarget({ node: 'alpha' }, plain, {})).toMatch(/node is only used with host=node/);
    // elevated leaves the sandbox for the configured host path.
    expect(resolveExecTarget({ elevated: true }, sandbox, { host: 'node' })).toEqual({ host: 'node' });
    expect(resolveExecTarget({ elevated: true }, sandbox, {})).toEqual({ host: 'gateway' });
  });
});

describe('exec host=node', () => {
  it('prepare → plan → system.run with the plan; the result names the node', async () => {
    const { sent, call } = await setup({});
    const outcome = await call('exec', {
      command: 'echo hi',
      host: 'node',
      workdir: '/srv',
      timeout: 7,
      env: { FOO: 'x' },
    });
    expect(outcome.text).toBe('Node: ALPHA (alpha)\nhello from node\n');
    expect(outcome.result.details).toMatchObject({ status: 'completed', exitCode: 0, nodeId: 'alpha', cwd: '/srv' });
    expect(commandsSent(sent)).toEqual(['alpha:system.run.prepare', 'alpha:system.run']);
    const [prepare, run] = sent;
    expect(prepare!.params).toMatchObject({
      command: ['/bin/sh', '-lc', 'echo hi'],
      rawCommand: 'echo hi',
      cwd: '/srv',
      env: { FOO: 'x' },
      agentId: 'main',
      sessionKey: 'agent:main:main',
    });
    expect(run!.params).toMatchObject({
      command: ['/bin/sh', '-lc', 'echo hi'],
      rawCommand: 'echo hi',
      cwd: '/srv',
      env: { FOO: 'x' },
      timeoutMs: 7000,
      agentId: 'main',
      sessionKey: 'agent:main:main',
      systemRunPlan: { argv: ['/bin/sh', '-lc', 'echo hi'], commandText: 'echo hi', policySnapshot: { v: 1 } },
    });
    expect(run!.params.approved).toBeUndefined();
    expect(run!.params.approvalDecision).toBeUndefined();
  });

  it('picks the sole connected node that can run commands; otherwise names the choices', async () => {
    const others = [node('viewer', { commands: ['canvas.present'] }), node('gone', { connected: false })];
    const sole = await setup({}, [node('alpha'), ...others]);
    expect((await sole.call('exec', { command: 'true', host: 'node' })).text).toMatch(/^Node: ALPHA/);

    const none = await setup({}, others);
    expect((await none.call('exec', { command: 'true', host: 'node' })).text).toMatch(/none is connected/);
    expect(none.sent).toEqual([]);

    const two = await setup({}, [node('alpha'), node('beta')]);
    const ambiguous = await two.call('exec', { command: 'true', host: 'node' });
    expect(ambiguous.text).toMatch(/several connected nodes .*ALPHA \(alpha\), BETA \(beta\).*tools\.exec\.node/);
    expect((await two.call('exec', { command: 'true', host: 'node', node: 'beta' })).text).toMatch(/^Node: BETA/);
  });

  it('a bound or named node that is offline or cannot run commands is refused, never swapped', async () => {
    const nodes = [node('alpha'), node('beta', { connected: false }), node('gamma', { commands: ['device.info'] })];
    const bound = await setup({ tools: { exec: { host: 'node', node: 'beta' } } }, nodes);
    expect((await bound.call('exec', { command: 'true' })).text).toMatch(/node BETA \(beta\) is not connected/);
    expect(bound.sent).toEqual([]);
    const named = await setup({}, nodes);
    expect((await named.call('exec', { command: 'true', host: 'node', node: 'gamma' })).text).toMatch(
      /cannot run commands \(system\.run is not among/,
    );
    // A per-agent binding wins over the global one, and a call may not pick another node.
    const perAgent = await setup(
      {
        tools: { exec: { host: 'node', node: 'beta' } },
        agents: { list: [{ id: 'main', tools: { exec: { node: 'alpha' } } }] },
      },
      nodes,
    );
    expect((await perAgent.call('exec', { command: 'true' })).text).toMatch(/^Node: ALPHA/);
    expect((await perAgent.call('exec', { command: 'true', node: 'gamma' })).text).toMatch(
      /bound to node "alpha".*different node/,
    );
  });

  it('the gateway policy denies before anything reaches the node', async () => {
    const { sent, call } = await setup({ tools: { exec: { security: 'deny' } } });
    const outcome = await call('exec', { command: 'rm -rf /', host: 'node' });
    expect(outcome.blocked).toBe(true);
    expect(outcome.text).toMatch(/denies host commands, on nodes too/);
    expect(sent).toEqual([]);
    // allowlist + ask off: this gateway cannot vouch for a node that runs anything.
    const strict = await setup({ tools: { exec: { security: 'allowlist', ask: 'off' } } });
    expect((await strict.call('exec', { command: 'ls', host: 'node' })).text).toMatch(/cannot match its allowlist/);
    expect(commandsSent(strict.sent)).toEqual(['alpha:system.run.prepare']);
  });

  it('gateway ask=always: a person sees the node and the plan; the decision goes with the plan', async () => {
    const { sent, asked, call } = await setup({ tools: { exec: { ask: 'always' } } }, undefined, 'run', 'allow-always');
    const outcome = await call('exec', { command: 'uname -a', host: 'node' });
    expect(outcome.text).toContain('hello from node');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      host: 'node',
      nodeId: 'alpha',
      command: 'uname -a',
      systemRunPlan: { argv: ['/bin/sh', '-lc', 'uname -a'], commandText: 'uname -a' },
    });
    expect(asked[0].warnings[0]).toMatch(/Runs on node ALPHA \(alpha\)/);
    expect(sent[1]!.params).toMatchObject({ approved: true, approvalDecision: 'allow-always' });
    expect(commandsSent(sent)).toEqual(['alpha:system.run.prepare', 'alpha:system.run']);
  });

  it('the node asks: a person approves, and system.run goes again with the stored plan', async () => {
    const { sent, asked, call } = await setup({}, undefined, 'ask', 'allow-once');
    const outcome = await call('exec', { command: 'make deploy', host: 'node' });
    expect(outcome.text).toContain('hello from node');
    expect(commandsSent(sent)).toEqual(['alpha:system.run.prepare', 'alpha:system.run', 'alpha:system.run']);
    expect(asked).toHaveLength(1);
    expect(asked[0].warnings[0]).toMatch(/the node asks for approval/);
    const [, first, second] = sent;
    expect(second!.params.systemRunPlan).toEqual(first!.params.systemRunPlan);
    expect(second!.params).toMatchObject({ approved: true, approvalDecision: 'allow-once' });
  });

  it('the node asks and a person denies, or nobody can answer: nothing runs again', async () => {
    const denied = await setup({}, undefined, 'ask', 'deny');
    expect((await denied.call('exec', { command: 'make deploy', host: 'node' })).text).toMatch(
      /the node asks for approval, and an operator denied it/,
    );
    expect(commandsSent(denied.sent)).toEqual(['alpha:system.run.prepare', 'alpha:system.run']);
    const nobody = await setup({ tools: { exec: {} } }, undefined, 'ask');
    expect((await nobody.call('exec', { command: 'make deploy', host: 'node' })).text).toMatch(
      /no approval client is connected/,
    );
  });

  it("the node's own refusal and a node going away mid-run are clear errors, never retried", async () => {
    const denied = await setup({}, undefined, 'deny');
    const refused = await denied.call('exec', { command: 'curl evil', host: 'node' });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/node ALPHA \(alpha\) refused `curl evil` \(its own exec approvals\)/);
    const gone = await setup({}, undefined, 'vanish');
    const lost = await gone.call('exec', { command: 'long-job', host: 'node' });
    expect(lost.text).toMatch(/node ALPHA \(alpha\) went away while running `long-job`; it was not re-run/);
    expect(lost.result.details).toMatchObject({ code: 'NODE_DISCONNECTED' });
    expect(commandsSent(gone.sent)).toEqual(['alpha:system.run.prepare', 'alpha:system.run']);
  });

  it('output is masked by the kernel and kept within maxOutputChars; background is refused', async () => {
    const { state, call } = await setup({
      plugins: { entries: { 'tools-exec': { config: { maxOutputChars: 1000 } } } },
    });
    state.stdout = `token sk-ant-api03-${'A'.repeat(40)}\n${'x'.repeat(5000)}`;
    const outcome = await call('exec', { command: 'cat secrets', host: 'node' });
    expect(outcome.text).not.toContain('sk-ant-api03-AAAA');
    expect(outcome.text).toMatch(/characters omitted/);
    expect(outcome.result.details).toMatchObject({ truncated: true });
    expect((await call('exec', { command: 'sleep 1', host: 'node', background: true })).text).toMatch(
      /background is not available/,
    );
  });
});

describe('the nodes tool', () => {
  it('list, describe, notify and invoke; invoke refuses shell and approvals commands', async () => {
    const { sent, call } = await setup({}, [node('alpha'), node('beta', { connected: false })]);
    const listed = await call('nodes', { action: 'status' });
    expect((listed.result.details as { nodes: NodeInfo[] }).nodes.map((n) => n.nodeId)).toEqual(['alpha', 'beta']);
    expect((await call('nodes', { action: 'describe', node: 'beta' })).result.details).toMatchObject({
      nodeId: 'beta',
      connected: false,
    });
    expect((await call('nodes', { action: 'notify', node: 'alpha', title: 'Hi', body: 'there' })).text).toContain(
      '"ok": true',
    );
    const info = await call('nodes', {
      action: 'invoke',
      node: 'alpha',
      invokeCommand: 'device.info',
      invokeParamsJson: '{"a":1}',
    });
    expect(info.result.details).toMatchObject({ ok: true, nodeId: 'alpha', command: 'device.info' });
    expect(sent.map((s) => [s.command, s.params])).toEqual([
      ['system.notify', { title: 'Hi', body: 'there' }],
      ['device.info', { a: 1 }],
    ]);
    for (const reserved of ['system.run', 'system.run.prepare', 'system.execApprovals.set'])
      expect((await call('nodes', { action: 'invoke', node: 'alpha', invokeCommand: reserved })).text).toMatch(
        /is not available here: shell commands run through exec with host=node/,
      );
    expect(
      (await call('nodes', { action: 'invoke', node: 'alpha', invokeCommand: 'x', invokeParamsJson: '{' })).text,
    ).toMatch(/invokeParamsJson must be valid JSON/);
    expect((await call('nodes', { action: 'invoke', node: 'alpha', invokeCommand: 'camera.snap' })).text).toMatch(
      /COMMAND_NOT_ALLOWED|camera\.snap is not allowed/,
    );
    // Only the gateway's policy (here the fake's) refused camera.snap; the reserved ones never left.
    expect(sent.map((s) => s.command)).toEqual(['system.notify', 'device.info', 'camera.snap']);
  });

  it('run takes exec host=node path, with the same approvals', async () => {
    const { sent, asked, call } = await setup({}, undefined, 'ask', 'allow-once');
    const outcome = await call('nodes', { action: 'run', node: 'alpha', command: 'uptime' });
    expect(outcome.text).toBe('Node: ALPHA (alpha)\nhello from node\n');
    expect(asked).toHaveLength(1);
    expect(commandsSent(sent)).toEqual(['alpha:system.run.prepare', 'alpha:system.run', 'alpha:system.run']);
    const denied = await setup({ tools: { exec: { security: 'deny' } } });
    expect((await denied.call('nodes', { action: 'run', node: 'alpha', command: 'uptime' })).blocked).toBe(true);
    expect(denied.sent).toEqual([]);
  });

  it('is in group:nodes, so tools.deny takes it away', async () => {
    const { call } = await setup({ tools: { deny: ['group:nodes'] } });
    expect((await call('nodes', { action: 'status' })).blocked).toBe(true);
  });
});
