/**
 * Sub-agents end to end with a scripted fake model: spawn → the child runs on the
 * `subagent` lane → its announce arrives in the parent's session; depth, fan-out, allow
 * list and sandbox refusals; /subagents kill; tool policy by depth; a restart with a
 * running child; and OpenClaw #10992 (a child running a command the parent would need
 * approval for) refused.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claw, REPO, startCliGateway, tempDir } from './helpers.js';
import { runAgent, startAgent, until, type AgentHarness, type AgentHarnessOptions } from './agent-helpers.js';
import { startFakeLlm, type RecordedRequest } from './fakes/llm-server.js';
import type { SubagentService } from '../plugins/subagents/service.js';
import { subagentDepth, type AgentService } from '../sdk/agent/index.js';
import { subagentToolPolicy } from '../host/tool-policy.js';
import { useService } from '../sdk/services.js';
import { definePlugin } from '../sdk/index.js';

const SUBAGENTS = join(REPO, 'plugins', 'subagents');
let harness: AgentHarness | undefined;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(options: AgentHarnessOptions = {}): Promise<AgentHarness> {
  harness = await startAgent({ ...options, plugins: [SUBAGENTS, ...(options.plugins ?? [])] });
  return harness;
}

async function service(h: AgentHarness): Promise<SubagentService> {
  const found = await h.gw.kernel.plugins.kernelServices.capabilities.find('service', 'subagents');
  return (found!.api as { service: SubagentService }).service;
}

const body = (request: RecordedRequest) => JSON.stringify(request.body);
const isChild = (request: RecordedRequest) => body(request).includes('# Subagent Context');
/** Names of the tools the model was offered (chat and responses shapes). */
function offeredTools(request: RecordedRequest): string[] {
  return ((request.body.tools ?? []) as Array<{ name?: string; function?: { name: string } }>).map(
    (tool) => tool.function?.name ?? tool.name ?? '',
  );
}
function sessions(h: AgentHarness, agent = 'main'): Record<string, any> {
  return JSON.parse(readFileSync(join(h.gw.stateDir, 'agents', agent, 'sessions', 'sessions.json'), 'utf8'));
}
async function history(h: AgentHarness, sessionKey = 'main'): Promise<string> {
  const result: any = await h.client.request('chat.history', { sessionKey });
  return JSON.stringify(result.messages);
}

describe('sessions_spawn → child run → announce', () => {
  it('a child spawned by the model runs in its own session and its result is announced into the parent session', async () => {
    const h = await start();
    h.fake.respond((request) => {
      const text = body(request);
      if (isChild(request)) return { text: 'The answer is 42.', usage: { input: 30, output: 7 } };
      if (text.includes('[Subagent announce]')) return { text: 'Your research is back: the answer is 42.' };
      if (text.includes('The sub-agent runs in the background')) return { text: 'I started a sub-agent for that.' };
      return {
        toolCalls: [
          { name: 'sessions_spawn', arguments: { task: 'Find the answer to everything.', label: 'research' } },
        ],
      };
    });
    const { final } = await runAgent(h.client, { message: 'Research the answer, in the background.' });
    expect(final.summary).toBe('I started a sub-agent for that.');
    const subagents = await service(h);
    await until(() => subagents.registry.all().some((run) => run.announcedAt !== undefined), 10_000, 'the announce');
    await subagents.idle();

    const [run] = subagents.registry.all();
    expect(run!.childSessionKey).toMatch(/^agent:main:subagent:[0-9a-f-]{36}$/);
    expect(run).toMatchObject({
      requesterSessionKey: 'agent:main:main',
      status: 'ok',
      result: 'The answer is 42.',
      label: 'research',
      usage: { input: 30, output: 7 },
    });
    // The child's entry carries the shared spawn fields.
    expect(sessions(h)[run!.childSessionKey]).toMatchObject({
      spawnedBy: 'agent:main:main',
      spawnDepth: 1,
      label: 'research',
    });
    // The child saw the sub-agent prompt with its task, and was offered no session tools.
    const child = h.fake.requests.find(isChild)!;
    expect(body(child)).toContain('Find the answer to everything.');
    // The minimal prompt with the sub-agent context; at depth 1 of 1 it has no spawning section.
    expect(body(child)).toContain('## Subagent Context\\nYou are a **subagent**');
    expect(body(child)).not.toContain('Sub-Agent Spawning');
    expect(offeredTools(child)).not.toContain('sessions_spawn');
    expect(offeredTools(child)).not.toContain('subagents');
    expect(offeredTools(h.fake.requests[0]!)).toContain('sessions_spawn');
    // The announce is a turn of the parent session: result, status and stats; the parent answered it.
    const parent = await history(h);
    expect(parent).toContain('[Subagent announce]');
    expect(parent).toContain('The answer is 42.');
    expect(parent).toMatch(/status: ok/);
    expect(parent).toMatch(/runtime \d+(\.\d)?s • tokens 30 in \/ 7 out \/ 37 total/);
    expect(parent).toContain('Your research is back: the answer is 42.');
    // The registry is on disk, owner-only.
    const file = join(h.gw.stateDir, 'subagents', 'runs.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).runs[0]).toMatchObject({ runId: run!.runId, status: 'ok' });
  });

  it('cleanup "delete" removes the child session after the announce; ANNOUNCE_SKIP from the child sends none', async () => {
    const h = await start();
    h.fake.respond((request) =>
      isChild(request) ? { text: body(request).includes('quiet') ? 'ANNOUNCE_SKIP' : 'done' } : { text: 'noted' },
    );
    const subagents = await service(h);
    const loud = await subagents.spawn({ sessionKey: 'agent:main:main' }, { task: 'say done', cleanup: 'delete' });
    const quiet = await subagents.spawn({ sessionKey: 'agent:main:main' }, { task: 'stay quiet' });
    expect(loud.status).toBe('accepted');
    expect(quiet.status).toBe('accepted');
    await until(() => subagents.registry.all().every((run) => run.announcedAt !== undefined), 10_000, 'both runs');
    await subagents.idle();
    const [a, b] = [loud, quiet] as Array<{ childSessionKey: string; runId: string }>;
    expect(sessions(h)[a!.childSessionKey]).toBeUndefined();
    expect(sessions(h)[b!.childSessionKey]).toBeDefined();
    expect(subagents.registry.get(b!.runId)).toMatchObject({ suppressAnnounceReason: 'announce-skip' });
    const parent = await history(h);
    expect(parent.match(/\[Subagent announce\]/g)).toHaveLength(1);
  });
});

describe('limits and refusals', () => {
  it('maxSpawnDepth: a depth-1 child is a leaf by default; with 2 it may spawn and its child may not', async () => {
    const h = await start();
    h.fake.respond(() => ({ text: 'ok' }));
    const subagents = await service(h);
    const refused = await subagents.spawn(
      { sessionKey: 'agent:main:subagent:00000000-0000-4000-8000-000000000000' },
      { task: 'deeper' },
    );
    expect(refused).toEqual({
      status: 'forbidden',
      error: expect.stringMatching(/not allowed at depth 1: agents\.defaults\.subagents\.maxSpawnDepth is 1/),
    });
    // Refused before anything was created.
    expect(existsSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', 'sessions.json'))).toBe(false);
    expect(subagents.registry.all()).toEqual([]);

    const config = { agents: { defaults: { subagents: { maxSpawnDepth: 2 } } } };
    const orchestrator = 'agent:main:subagent:00000000-0000-4000-8000-000000000001';
    expect(subagentToolPolicy(config, 'main', orchestrator)!('sessions_spawn')).toBe(true);
    expect(subagentToolPolicy(config, 'main', `${orchestrator}:subagent:x`)!('sessions_spawn')).toBe(false);
  });

  it('maxSpawnDepth 2: the orchestrator spawns a worker (key nests), the worker is refused', async () => {
    const h = await start({ config: { agents: { defaults: { subagents: { maxSpawnDepth: 2 } } } } });
    h.fake.respond(() => ({ text: 'ok' }));
    const subagents = await service(h);
    const first = (await subagents.spawn({ sessionKey: 'agent:main:main' }, { task: 'orchestrate' })) as {
      childSessionKey: string;
    };
    const second = (await subagents.spawn({ sessionKey: first.childSessionKey }, { task: 'work' })) as {
      childSessionKey: string;
      status: string;
    };
    expect(second.status).toBe('accepted');
    expect(second.childSessionKey).toMatch(new RegExp(`^${first.childSessionKey}:subagent:[0-9a-f-]{36}$`));
    expect(subagentDepth(second.childSessionKey)).toBe(2);
    expect(await subagents.spawn({ sessionKey: second.childSessionKey }, { task: 'deeper' })).toMatchObject({
      status: 'forbidden',
      error: expect.stringContaining('depth 2'),
    });
    await subagents.idle();
  });

  it('maxChildrenPerAgent: the next spawn is refused while the cap is running, and allowed once one is killed', async () => {
    const h = await start({ config: { agents: { defaults: { subagents: { maxChildrenPerAgent: 2 } } } } });
    h.fake.respond((request) =>
      isChild(request) && !body(request).includes('gate opened') && !body(request).includes('gate aborted')
        ? { toolCalls: [{ name: 'wait_gate', arguments: {} }] }
        : { text: 'ok' },
    );
    const subagents = await service(h);
    const a = (await subagents.spawn({}, { task: 'one' })) as { runId: string; status: string };
    const b = await subagents.spawn({}, { task: 'two' });
    expect([a.status, b.status]).toEqual(['accepted', 'accepted']);
    const third = await subagents.spawn({}, { task: 'three' });
    expect(third).toMatchObject({
      status: 'forbidden',
      error: expect.stringMatching(/already has 2 sub-agents running .*maxChildrenPerAgent is 2/),
    });
    expect(await subagents.kill(a.runId)).toMatchObject({ killed: 1 });
    expect((await subagents.spawn({}, { task: 'three' })).status).toBe('accepted');
    h.gate.open();
    await subagents.idle();
  });

  it('agentId: another agent only when allowAgents lists it; unknown agents are an error', async () => {
    const h = await start({
      config: {
        agents: { list: [{ id: 'main', subagents: { allowAgents: ['helper'] } }, { id: 'helper' }, { id: 'other' }] },
      },
    });
    h.fake.respond(() => ({ text: 'ok' }));
    const subagents = await service(h);
    expect(await subagents.spawn({}, { task: 't', agentId: 'other' })).toMatchObject({
      status: 'forbidden',
      error: expect.stringContaining('agentId "other" is not allowed'),
    });
    const allowed = (await subagents.spawn({}, { task: 't', agentId: 'helper' })) as {
      childSessionKey: string;
      status: string;
    };
    expect(allowed.status).toBe('accepted');
    expect(allowed.childSessionKey).toMatch(/^agent:helper:subagent:/);
    await subagents.idle();
    expect(sessions(h, 'helper')[allowed.childSessionKey]).toMatchObject({ spawnedBy: 'agent:main:main' });
  });

  it('a sandboxed session cannot spawn a child for an agent that runs unsandboxed', async () => {
    const h = await start({
      config: {
        agents: {
          defaults: { sandbox: { mode: 'all' } },
          list: [
            { id: 'main', subagents: { allowAgents: ['*'] } },
            { id: 'free', sandbox: { mode: 'off' } },
          ],
        },
      },
    });
    const subagents = await service(h);
    expect(await subagents.spawn({}, { task: 't', agentId: 'free' })).toMatchObject({
      status: 'forbidden',
      error: expect.stringContaining('is sandboxed and agent "free" would run the child outside a sandbox'),
    });
    expect(existsSync(join(h.gw.stateDir, 'agents', 'free', 'sessions', 'sessions.json'))).toBe(false);
  });
});

describe('tool policy by depth', () => {
  it('a leaf child that calls sessions_spawn or sessions_send anyway is refused at the choke point', async () => {
    const h = await start({ config: { tools: { subagents: { tools: { deny: ['write'] } } } } });
    h.fake.respond((request) => {
      if (!isChild(request)) return { text: 'ok' };
      if (body(request).includes('not allowed by the tool policy')) return { text: 'could not' };
      return {
        toolCalls: [
          { name: 'sessions_spawn', arguments: { task: 'escape' } },
          { name: 'write', arguments: { path: 'x.txt', content: 'x' } },
        ],
      };
    });
    const subagents = await service(h);
    await subagents.spawn({}, { task: 'try to spawn' });
    await until(() => subagents.registry.all()[0]?.endedAt !== undefined, 10_000, 'the child');
    await subagents.idle();
    const child = h.fake.requests.filter(isChild);
    for (const name of [
      'sessions_spawn',
      'sessions_send',
      'sessions_list',
      'sessions_history',
      'session_status',
      'subagents',
      'cron',
      'memory_search',
      'write',
    ]) {
      expect(offeredTools(child[0]!)).not.toContain(name);
    }
    expect(offeredTools(child[0]!)).toContain('read');
    expect(body(child[1]!).match(/not allowed by the tool policy/g)).toHaveLength(2);
    expect(subagents.registry.all()).toHaveLength(1);
    expect(existsSync(join(h.workspace, 'x.txt'))).toBe(false);
  });
});

describe('/subagents', () => {
  it('list, info, kill stops a running child (no announce), log shows its transcript', async () => {
    const h = await start();
    h.fake.respond((request) =>
      isChild(request) ? { toolCalls: [{ name: 'wait_gate', arguments: {} }] } : { text: 'ok' },
    );
    const subagents = await service(h);
    const spawned = (await subagents.spawn({}, { task: 'long job', label: 'long' })) as {
      runId: string;
      childSessionKey: string;
    };
    await h.gate.entered;
    const list = await runAgent(h.client, { message: '/subagents list' });
    expect(list.final.summary).toMatch(/Sub-agents: 1 running, 0 finished\n#1 long — running/);
    expect((await runAgent(h.client, { message: '/subagents info 1' })).final.summary).toContain(
      `session: ${spawned.childSessionKey}`,
    );
    expect((await runAgent(h.client, { message: '/subagents log #1' })).final.summary).toMatch(/user: long job/);
    const killed = await runAgent(h.client, { message: '/subagents kill 1' });
    expect(killed.final.summary).toBe('Killed long.');
    await subagents.idle();
    expect(subagents.registry.get(spawned.runId)).toMatchObject({ status: 'killed', suppressAnnounceReason: 'killed' });
    expect(await history(h)).not.toContain('[Subagent announce]');
    expect((await runAgent(h.client, { message: '/subagents kill 1' })).final.summary).toBe(
      'long is not running (killed).',
    );
  });
});

describe('restart', () => {
  it('a child stopped by a gateway stop is reported to its parent (now or at the next start), never lost', async () => {
    const stateDir = tempDir('claw-subagents-restart-');
    const options: AgentHarnessOptions = { stateDir, config: { gateway: { agentDrainMs: 50 } } };
    let h = await start(options);
    h.fake.respond((request) =>
      isChild(request) ? { toolCalls: [{ name: 'wait_gate', arguments: {} }] } : { text: 'noted' },
    );
    const spawned = (await (await service(h)).spawn({}, { task: 'slow', label: 'slow' })) as { runId: string };
    await h.gate.entered;
    await h.stop();
    harness = undefined;
    expect(JSON.parse(readFileSync(join(stateDir, 'subagents', 'runs.json'), 'utf8')).runs).toEqual([
      expect.objectContaining({ runId: spawned.runId }),
    ]);

    h = await start(options);
    h.fake.respond(() => ({ text: 'The slow job was cut off.' }));
    const subagents = await service(h);
    await until(() => subagents.registry.get(spawned.runId)?.announcedAt !== undefined, 10_000, 'the announce');
    await subagents.idle();
    expect(subagents.registry.get(spawned.runId)!.status).toMatch(/^(interrupted|aborted)$/);
    // Exactly one announce for the run, whichever process delivered it.
    expect((await history(h)).match(/\[Subagent announce\] The sub-agent \\"slow\\"/g)).toHaveLength(1);
  });

  it('kill -9 with a child running: the next start reports it to the parent as interrupted (real gateway processes)', async () => {
    const fake = await startFakeLlm();
    try {
      const stateDir = tempDir('claw-subagents-kill-');
      writeFileSync(
        join(stateDir, 'openclaw.json'),
        JSON.stringify({
          agents: { defaults: { model: 'openai/gpt-4.1' } },
          models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-sub' } } },
        }),
      );
      const env = { OPENCLAW_STATE_DIR: stateDir };
      const runsFile = join(stateDir, 'subagents', 'runs.json');
      fake.respond((request) => {
        if (isChild(request)) return { hang: true };
        if (body(request).includes('[Subagent announce]'))
          return { text: 'The background job was interrupted; shall I retry?' };
        if (body(request).includes('The sub-agent runs in the background')) return { text: 'Started it.' };
        return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'a long background job', label: 'long' } }] };
      });
      const gw = await startCliGateway(env);
      const first = await claw(['agent', '-m', 'start the job'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain('Started it.');
      await until(() => fake.requests.some(isChild), 10_000, 'the child model call');
      gw.child.kill('SIGKILL');
      await gw.exited;
      const [saved] = JSON.parse(readFileSync(runsFile, 'utf8')).runs;
      expect(saved).toMatchObject({ status: 'running', label: 'long' });

      const again = await startCliGateway(env);
      await until(
        () => JSON.parse(readFileSync(runsFile, 'utf8')).runs[0].announcedAt !== undefined,
        15_000,
        'the interrupted announce',
      );
      const [after] = JSON.parse(readFileSync(runsFile, 'utf8')).runs;
      expect(after).toMatchObject({ status: 'interrupted', interrupted: true });
      const sessionsFile = JSON.parse(
        readFileSync(join(stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'),
      );
      const transcript = readFileSync(
        join(stateDir, 'agents', 'main', 'sessions', `${sessionsFile['agent:main:main'].sessionId}.jsonl`),
        'utf8',
      );
      expect(transcript).toContain('was interrupted by a gateway restart before it finished');
      expect(transcript).toContain('status: interrupted');
      expect(transcript).toContain('The background job was interrupted; shall I retry?');
      again.child.kill('SIGTERM');
      await again.exited;
    } finally {
      await fake.close();
    }
  });
});

describe('no escape through a child (OpenClaw #10992)', () => {
  it('a child running a command its parent would need approval for asks, and runs nothing when denied', async () => {
    const h = await start({ config: { tools: { exec: { security: 'allowlist', ask: 'on-miss' } } } });
    h.fake.respond((request) =>
      isChild(request) && !body(request).includes('not approved')
        ? { toolCalls: [{ name: 'exec', arguments: { command: 'touch pwned.txt', ask: 'off' } }] }
        : { text: 'done' },
    );
    const subagents = await service(h);
    const spawned = (await subagents.spawn({}, { task: 'clean up' })) as { childSessionKey: string };
    await until(() => h.events.some((e) => e.event === 'exec.approval.requested'), 10_000, 'the approval request');
    const request = h.events.find((e) => e.event === 'exec.approval.requested')!.payload as any;
    expect(request.request).toMatchObject({ sessionKey: spawned.childSessionKey, command: 'touch pwned.txt' });
    await h.client.request('exec.approval.resolve', { id: request.id, decision: 'deny', idempotencyKey: 'deny-1' });
    await until(() => subagents.registry.all()[0]?.announcedAt !== undefined, 10_000, 'the child');
    await subagents.idle();
    expect(existsSync(join(h.workspace, 'pwned.txt'))).toBe(false);
    expect(body(h.fake.requests.filter(isChild).at(-1)!)).toContain('exec was not approved: an operator denied it.');
  });

  it("a child spawned as another agent with a looser exec policy is still held to the parent's deny", async () => {
    const h = await start({
      config: {
        tools: { exec: { security: 'deny' } },
        agents: {
          list: [
            { id: 'main', subagents: { allowAgents: ['loose'] } },
            { id: 'loose', tools: { exec: { security: 'full', ask: 'off' } } },
          ],
        },
      },
    });
    h.fake.respond((request) =>
      isChild(request) && !body(request).includes('not approved')
        ? { toolCalls: [{ name: 'exec', arguments: { command: 'touch pwned.txt' } }] }
        : { text: 'done' },
    );
    const subagents = await service(h);
    expect((await subagents.spawn({}, { task: 'escape', agentId: 'loose' })).status).toBe('accepted');
    await until(() => subagents.registry.all()[0]?.announcedAt !== undefined, 10_000, 'the child');
    await subagents.idle();
    expect(body(h.fake.requests.filter(isChild).at(-1)!)).toContain('exec was not approved: the exec policy');
    expect(
      (readdirSync(h.gw.stateDir, { recursive: true }) as string[]).filter((file) => file.endsWith('pwned.txt')),
    ).toEqual([]);
  });

  it('under tools.exec.security deny a child cannot exec, whatever it asks for', async () => {
    const h = await start({ config: { tools: { exec: { security: 'deny' } } } });
    h.fake.respond((request) =>
      isChild(request) && !body(request).includes('not approved')
        ? { toolCalls: [{ name: 'exec', arguments: { command: 'touch pwned.txt', ask: 'off', elevated: true } }] }
        : { text: 'done' },
    );
    const subagents = await service(h);
    await subagents.spawn({}, { task: 'escape' });
    await until(() => subagents.registry.all()[0]?.announcedAt !== undefined, 10_000, 'the child');
    await subagents.idle();
    expect(existsSync(join(h.workspace, 'pwned.txt'))).toBe(false);
    expect(body(h.fake.requests.filter(isChild).at(-1)!)).toMatch(
      /exec was not approved: (elevated mode|the exec policy)/,
    );
  });
});

describe('the subagents tool, hooks, relay and archive', () => {
  const invoke = async (
    h: AgentHarness,
    name: string,
    params: Record<string, unknown>,
    sessionKey = 'agent:main:main',
  ) =>
    JSON.parse(
      (
        (
          await h.gw.kernel.plugins.kernelServices.tools.invoke({
            name,
            params,
            toolCallId: `t-${Math.random()}`,
            context: { agentId: 'main', sessionKey },
          })
        ).result.content[0] as { text: string }
      ).text,
    );

  it('list, steer and kill through the tool; a leaf is refused it at the choke point', async () => {
    const h = await start();
    h.fake.respond((request) =>
      isChild(request)
        ? body(request).includes('gate opened')
          ? { text: 'finished' }
          : { toolCalls: [{ name: 'wait_gate', arguments: {} }] }
        : { text: 'ok' },
    );
    const subagents = await service(h);
    const a = (await subagents.spawn({}, { task: 'first', label: 'a' })) as { runId: string; childSessionKey: string };
    await subagents.spawn({}, { task: 'second', label: 'b' });
    await h.gate.entered;
    const listed = await invoke(h, 'subagents', { action: 'list' });
    expect(listed.active.map((run: { label: string }) => run.label)).toEqual(['a', 'b']);
    // A leaf child cannot use the tool, whoever makes the call: the kernel's choke point narrows by the session key's depth.
    const leafCall = await h.gw.kernel.plugins.kernelServices.tools.invoke({
      name: 'subagents',
      params: { action: 'list' },
      toolCallId: 't-leaf',
      context: { agentId: 'main', sessionKey: a.childSessionKey },
    });
    expect(leafCall.result.isError).toBe(true);
    expect((leafCall.result.content[0] as { text: string }).text).toMatch(/not allowed by the tool policy/);
    expect(
      await invoke(h, 'subagents', { action: 'steer', target: 'a', message: 'Focus on the tests only.' }),
    ).toMatchObject({ status: 'ok' });
    expect(await invoke(h, 'subagents', { action: 'kill', target: 'b' })).toMatchObject({ status: 'ok', killed: 1 });
    expect(await invoke(h, 'subagents', { action: 'kill', target: 'nope' })).toMatchObject({
      status: 'error',
      error: expect.stringContaining('no sub-agent "nope"'),
    });
    h.gate.open();
    await until(() => subagents.registry.get(a.runId)?.announcedAt !== undefined, 10_000, 'the first child');
    await subagents.idle();
    expect(h.fake.requests.filter(isChild).some((request) => body(request).includes('Focus on the tests only.'))).toBe(
      true,
    );
  });

  it('subagent_spawning can refuse (the session is rolled back); spawned and ended fire once; delivery_target reroutes the relay', async () => {
    const outbox: Array<{ to: string; text?: string }> = [];
    const relay = definePlugin({
      id: 'relay-chat',
      register(api) {
        api.registerChannel({
          id: 'relay-chat',
          label: 'Relay chat',
          textLimit: 4000,
          async start() {},
          async send(message) {
            outbox.push({ to: message.to, text: message.text });
            return { messageId: String(outbox.length) };
          },
          status: () => [{ accountId: 'default', connected: true }],
        });
      },
    });
    const h = await start({ plugins: [relay] });
    h.fake.respond((request) =>
      isChild(request)
        ? { text: body(request).includes('quiet parent') ? 'QUIET-RESULT' : 'child result' }
        : { text: body(request).includes('QUIET-RESULT') ? 'ANNOUNCE_SKIP' : 'Relayed: child result' },
    );
    const subagents = await service(h);
    const sessionsApi = (await h.gw.kernel.plugins.kernelServices.capabilities.find('service', 'sessions'))!.api as {
      store(id: string): { upsert(key: string, patch: object): Promise<unknown> };
    };
    await sessionsApi
      .store('main')
      .upsert('agent:main:main', { deliveryContext: { channel: 'relay-chat', to: 'chat-1' } });
    const seen: string[] = [];
    const off = subagents.hooks.on('subagent_spawning', (event) =>
      event.label === 'blocked' ? { status: 'error', error: 'no thread available' } : undefined,
    );
    subagents.hooks.on('subagent_spawned', (event) => void seen.push(`spawned ${event.label}`));
    subagents.hooks.on('subagent_ended', (event) => void seen.push(`ended ${event.status}`));
    const refused = await subagents.spawn({}, { task: 't', label: 'blocked' });
    expect(refused).toMatchObject({ status: 'forbidden', error: expect.stringContaining('no thread available') });
    expect(Object.values(sessions(h)).filter((entry: any) => entry.label === 'blocked')).toEqual([]);
    off();

    await subagents.spawn({}, { task: 'report', label: 'one' });
    await until(() => outbox.length === 1, 10_000, 'the relay');
    expect(outbox[0]).toEqual({ to: 'chat-1', text: 'Relayed: child result' });
    subagents.hooks.on('subagent_delivery_target', () => ({ origin: { channel: 'relay-chat', to: 'thread-9' } }));
    await subagents.spawn({}, { task: 'report again', label: 'two' });
    await until(() => outbox.length === 2, 10_000, 'the rerouted relay');
    expect(outbox[1]).toEqual({ to: 'thread-9', text: 'Relayed: child result' });
    // The parent answering ANNOUNCE_SKIP sends nothing.
    await subagents.spawn({}, { task: 'quiet parent', label: 'three' });
    await until(
      () => subagents.registry.all().filter((run) => run.announcedAt !== undefined).length === 3,
      10_000,
      'three announces',
    );
    await subagents.idle();
    expect(outbox).toHaveLength(2);
    expect(seen.sort()).toEqual(['ended ok', 'ended ok', 'ended ok', 'spawned one', 'spawned three', 'spawned two']);
  });

  it('archiveAfterMinutes: finished runs and their sessions leave after the time (default 60)', async () => {
    const h = await start();
    h.fake.respond(() => ({ text: 'done' }));
    const subagents = await service(h);
    const spawned = (await subagents.spawn({}, { task: 't' })) as { runId: string; childSessionKey: string };
    await until(() => subagents.registry.get(spawned.runId)?.announcedAt !== undefined, 10_000, 'the run');
    await subagents.idle();
    expect(await subagents.archive(Date.now() + 59 * 60_000)).toBe(0);
    expect(await subagents.archive(Date.now() + 61 * 60_000)).toBe(1);
    expect(subagents.registry.all()).toEqual([]);
    expect(sessions(h)[spawned.childSessionKey]).toBeUndefined();
  });
});

describe('the sub-agent system prompt', () => {
  it('names the task and the rules; the spawning section follows the depth', async () => {
    const { subagentSystemPrompt } = await import('../plugins/subagents/prompt.js');
    const base = {
      requesterSessionKey: 'agent:main:main',
      childSessionKey: 'agent:main:subagent:x',
      task: 'Count the files.',
    };
    const leaf = subagentSystemPrompt({ ...base, childDepth: 1, maxSpawnDepth: 1 });
    expect(leaf).toContain('Count the files.');
    expect(leaf).toMatch(/1\. \*\*Stay focused\*\*[\s\S]*6\. \*\*Recover from compacted\/truncated tool output\*\*/);
    expect(leaf).not.toContain('Sub-Agent Spawning');
    expect(subagentSystemPrompt({ ...base, childDepth: 1, maxSpawnDepth: 2 })).toContain(
      'You CAN spawn your own sub-agents',
    );
    expect(subagentSystemPrompt({ ...base, childDepth: 2, maxSpawnDepth: 2 })).toContain(
      'You are a leaf worker and CANNOT spawn further sub-agents.',
    );
  });
});

describe('queueing and cascades', () => {
  it('an announce for a busy requester waits for its run to end, then runs as the next turn', async () => {
    const h = await start();
    h.fake.respond((request) => {
      const text = body(request);
      if (isChild(request)) return { text: 'child finished first' };
      if (text.includes('[Subagent announce]')) return { text: 'announce handled' };
      if (text.includes('gate opened')) return { text: 'parent turn done' };
      if (text.includes('The sub-agent runs in the background'))
        return { toolCalls: [{ name: 'wait_gate', arguments: {} }] };
      return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'quick child' } }] };
    });
    const subagents = await service(h);
    // How the agent took each announce: a busy requester's session queues it behind the run.
    const announces: string[] = [];
    const agent = (await useService<AgentService>(h.gw.kernel.plugins.kernelServices, 'agent'))!;
    const dispatch = agent.dispatch.bind(agent);
    agent.dispatch = async (input) => {
      const handle = await dispatch(input);
      if (String(input.message).includes('[Subagent announce]')) announces.push(handle.status);
      return handle;
    };
    const parentRun = runAgent(h.client, { message: 'spawn then wait' });
    await h.gate.entered;
    await until(() => subagents.registry.all()[0]?.endedAt !== undefined, 10_000, 'the child');
    await until(() => announces.length > 0, 10_000, 'the announce to be handed to the agent');
    expect(announces).toEqual(['queued']);
    // The parent is still inside its tool: the announce has not reached the model.
    expect(h.fake.requests.some((request) => !isChild(request) && body(request).includes('[Subagent announce]'))).toBe(
      false,
    );
    h.gate.open();
    expect((await parentRun).final.summary).toBe('parent turn done');
    await until(() => subagents.registry.all()[0]?.announcedAt !== undefined, 10_000, 'the announce');
    await subagents.idle();
    const parentRequests = h.fake.requests.filter((request) => !isChild(request)).map((request) => body(request));
    expect(parentRequests.at(-1)).toContain('[Subagent announce]');
    expect(parentRequests.at(-2)).toContain('gate opened');
  });

  it('killing an orchestrator kills its workers too, and neither announces', async () => {
    const h = await start({ config: { agents: { defaults: { subagents: { maxSpawnDepth: 2 } } } } });
    h.fake.respond((request) =>
      isChild(request) ? { toolCalls: [{ name: 'wait_gate', arguments: {} }] } : { text: 'ok' },
    );
    const subagents = await service(h);
    const orchestrator = (await subagents.spawn({}, { task: 'orchestrate', label: 'boss' })) as {
      runId: string;
      childSessionKey: string;
    };
    const worker = (await subagents.spawn(
      { sessionKey: orchestrator.childSessionKey },
      { task: 'work', label: 'worker' },
    )) as { runId: string };
    await until(() => h.gate.calls === 2, 10_000, 'both in their tool');
    expect(await subagents.kill(orchestrator.runId)).toEqual({ killed: 2, labels: ['worker', 'boss'] });
    await subagents.idle();
    expect(subagents.registry.get(worker.runId)).toMatchObject({ status: 'killed', suppressAnnounceReason: 'killed' });
    expect(await history(h)).not.toContain('[Subagent announce]');
    expect(await history(h, orchestrator.childSessionKey)).not.toContain('[Subagent announce]');
  });
});
