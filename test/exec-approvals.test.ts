/**
 * Exec approvals end to end: the kernel's approval step asks the exec-approvals plugin for
 * every host `exec`, through the one tool choke point. Real commands run (or do not: a
 * marker file tells), real approvals documents are written, and the CLI test drives a real
 * `claw approvals` process against a running gateway.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventFrame } from '../sdk/generated/protocol.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import type { SessionService } from '../sdk/sessions/index.js';
import { useService } from '../sdk/services.js';
import { definePlugin } from '../sdk/index.js';
import { parseCommand } from '../plugins/exec-approvals/match.js';
import { client, startGateway, TEST_TOKEN } from './gateway-helpers.js';
import { claw, REPO, tempDir } from './helpers.js';

const EXEC = join(REPO, 'plugins', 'tools-exec');
const APPROVALS = join(REPO, 'plugins', 'exec-approvals');
/** Exec approvals read a session's ancestors and elevated settings from the sessions plugin's stores (which list models). */
const SESSIONS = ['models', 'sessions'].map((id) => join(REPO, 'plugins', id));
const kernels: TestKernel[] = [];

async function kernelWith(
  config: Record<string, unknown>,
  extra: Array<string | ReturnType<typeof definePlugin>> = [],
  approvals?: unknown,
): Promise<TestKernel> {
  const stateDir = tempDir('claw-approvals-');
  if (approvals) writeFileSync(join(stateDir, 'exec-approvals.json'), JSON.stringify(approvals), { mode: 0o600 });
  const kernel = await createTestKernel({ stateDir, plugins: [EXEC, APPROVALS, ...SESSIONS, ...extra], config });
  kernels.push(kernel);
  return kernel;
}

function exec(kernel: TestKernel, command: string, workspace: string, sessionKey = 'agent:main:main') {
  const agentId = sessionKey.split(':')[1]!;
  return kernel.plugins.kernelServices.tools.invoke({
    name: 'exec',
    params: { command },
    toolCallId: `call-${Math.random()}`,
    context: { agentId, sessionKey, workspaceDir: workspace },
  });
}

const text = (outcome: { message: { content: Array<{ type: string; text?: string }> } }) =>
  outcome.message.content.map((part) => part.text ?? '').join('\n');

afterAll(async () => {
  for (const kernel of kernels) await kernel.stop();
});

describe('exec approvals through the tool choke point', () => {
  it('deny: tools.exec.security deny refuses every host command before it runs', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'deny' } } });
    const ws = tempDir();
    const outcome = await exec(kernel, 'touch ran', ws);
    expect(outcome.blocked).toBe(true);
    expect(text(outcome)).toMatch(/exec was not approved: the exec policy/);
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('the approvals document can tighten config but never loosen it', async () => {
    // Config says full; the document says deny for main: denied.
    const tightened = await kernelWith({}, [], { version: 1, agents: { main: { security: 'deny' } } });
    const ws = tempDir();
    expect((await exec(tightened, 'touch ran', ws)).blocked).toBe(true);
    // Config says deny; the document says full: still denied.
    const loosened = await kernelWith({ tools: { exec: { security: 'deny' } } }, [], {
      version: 1,
      defaults: { security: 'full', ask: 'off', askFallback: 'full' },
    });
    expect((await exec(loosened, 'touch ran', ws)).blocked).toBe(true);
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('fails closed when no approver service is enabled', async () => {
    const kernel = await createTestKernel({ plugins: [EXEC] });
    kernels.push(kernel);
    const ws = tempDir();
    const outcome = await exec(kernel, 'touch ran', ws);
    expect(text(outcome)).toMatch(/needs approval and no approver is available .*"exec-approvals"/);
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('allowlist: a hit runs without asking, a miss is refused (ask off)', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'off' } } }, [], {
      version: 1,
      agents: { main: { allowlist: [{ pattern: 'touch' }, { pattern: '/usr/bin/printf', argPattern: '^ok$' }] } },
    });
    const ws = tempDir();
    expect((await exec(kernel, 'touch hit', ws)).blocked).toBe(false);
    expect(existsSync(join(ws, 'hit'))).toBe(true);
    expect(text(await exec(kernel, '/usr/bin/printf ok', ws))).toContain('ok');
    // argPattern: other arguments are a miss.
    expect((await exec(kernel, '/usr/bin/printf nope', ws)).blocked).toBe(true);
    // Every segment must be covered; substitution cannot be judged and is a miss.
    expect((await exec(kernel, 'touch a && rm hit', ws)).blocked).toBe(true);
    expect((await exec(kernel, 'touch $(rm hit)', ws)).blocked).toBe(true);
    expect(existsSync(join(ws, 'hit'))).toBe(true);
    // A bare name covers PATH lookups only, not a copy elsewhere.
    expect((await exec(kernel, './touch x', ws)).blocked).toBe(true);
  });

  it('safe bins: stdin-only filters run in allowlist mode; file operands and denied flags do not', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'off' } } }, [], {
      version: 1,
      agents: { '*': { allowlist: [{ pattern: 'printf' }] } },
    });
    const ws = tempDir();
    const counted = await exec(kernel, "printf 'a b c' | wc -w | tr -d ' '", ws);
    expect(counted.blocked).toBe(false);
    expect(text(counted).trim()).toBe('3');
    expect(text(await exec(kernel, "printf 'x\\ny\\n' | head -n 1", ws)).trim()).toBe('x');
    expect((await exec(kernel, 'wc -l /etc/passwd', ws)).blocked).toBe(true);
    expect((await exec(kernel, 'tail -f log', ws)).blocked).toBe(true);
    expect((await exec(kernel, 'head secret.txt', ws)).blocked).toBe(true);
    // Only the configured list counts.
    const narrowed = await kernelWith({ tools: { exec: { security: 'allowlist', safeBins: ['head'] } } }, [], {
      version: 1,
      agents: { '*': { allowlist: [{ pattern: 'printf' }] } },
    });
    expect((await exec(narrowed, 'printf a | wc -c', ws)).blocked).toBe(true);
    expect((await exec(narrowed, 'printf a | head -c 1', ws)).blocked).toBe(false);
  });

  it('ask with no client that could answer: askFallback applies at once (deny by default, allowlist when set)', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'on-miss' } } });
    const ws = tempDir();
    const started = Date.now();
    const outcome = await exec(kernel, 'touch ran', ws);
    expect(text(outcome)).toMatch(/no approval client is connected to ask \(askFallback: deny\)/);
    expect(Date.now() - started).toBeLessThan(2000);
    const allowlistFallback = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'on-miss' } } }, [], {
      version: 1,
      defaults: { askFallback: 'allowlist' },
      agents: { main: { allowlist: [{ pattern: 'touch' }] } },
    });
    // An allowlist hit needs no prompt anyway; a miss falls back to allowlist: refused.
    expect((await exec(allowlistFallback, 'touch ok', ws)).blocked).toBe(false);
    expect((await exec(allowlistFallback, 'rm ok', ws)).blocked).toBe(true);
    expect(existsSync(join(ws, 'ok'))).toBe(true);
  });

  it('ask → timeout → denied, with requested and resolved events', async () => {
    const kernel = await kernelWith({
      tools: { exec: { ask: 'always' } },
      plugins: { entries: { 'exec-approvals': { config: { timeoutMs: 300 } } } },
    });
    const events: Array<{ event: string; payload: any }> = [];
    kernel.plugins.kernelServices.protocol.onEmit(
      (emitted) => void events.push({ event: emitted.event, payload: emitted.payload }),
    );
    const ws = tempDir();
    const outcome = await exec(kernel, 'touch late', ws);
    expect(text(outcome)).toMatch(/no one approved it in time \(askFallback: deny\)/);
    expect(existsSync(join(ws, 'late'))).toBe(false);
    expect(events.map((e) => e.event)).toEqual(['exec.approval.requested', 'exec.approval.resolved']);
    expect(events[0]!.payload).toMatchObject({
      request: { command: 'touch late', cwd: ws, agentId: 'main', sessionKey: 'agent:main:main', host: 'gateway' },
    });
    expect(events[0]!.payload.expiresAtMs - events[0]!.payload.createdAtMs).toBe(300);
    expect(events[1]!.payload).toMatchObject({ id: events[0]!.payload.id, decision: 'deny', reason: 'timeout' });
    // An expired id cannot be approved afterwards.
    const service = (await kernel.plugins.kernelServices.capabilities.find('service', 'exec-approvals'))!.api as {
      resolve(id: string, d: string): string;
    };
    expect(service.resolve(events[0]!.payload.id, 'allow-once')).toBe('expired');
  });

  it('approve once runs once; allow-always remembers this argv in this directory (0600 file)', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'on-miss' } } });
    const service = (await kernel.plugins.kernelServices.capabilities.find('service', 'exec-approvals'))!.api as {
      resolve(id: string, d: string): string;
      list(): unknown[];
    };
    let answer = 'allow-once';
    const asked: string[] = [];
    kernel.plugins.kernelServices.protocol.onEmit((emitted) => {
      if (emitted.event !== 'exec.approval.requested') return;
      const { id, request } = emitted.payload as { id: string; request: { command: string } };
      asked.push(request.command);
      setTimeout(() => service.resolve(id, answer), 10);
    });
    const ws = tempDir();
    expect((await exec(kernel, 'touch once', ws)).blocked).toBe(false);
    expect(existsSync(join(ws, 'once'))).toBe(true);
    expect((await exec(kernel, 'touch once', ws)).blocked).toBe(false);
    expect(asked).toEqual(['touch once', 'touch once']);
    answer = 'allow-always';
    expect((await exec(kernel, 'touch always', ws)).blocked).toBe(false);
    expect((await exec(kernel, 'touch always', ws)).blocked).toBe(false);
    expect(asked).toHaveLength(3);
    // The call's own ask can harden the policy (a prompt despite the remembered entry)...
    const call = (command: string, ask: string) =>
      kernel.plugins.kernelServices.tools.invoke({
        name: 'exec',
        params: { command, ask },
        toolCallId: `ask-${ask}`,
        context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: ws },
      });
    answer = 'allow-once';
    expect((await call('touch always', 'always')).blocked).toBe(false);
    expect(asked).toHaveLength(4);
    // ...but never soften it: a miss is still asked about.
    expect((await call('touch soft', 'off')).blocked).toBe(false);
    expect(asked).toHaveLength(5);
    asked.splice(3);
    // Another directory, or other arguments: asked again.
    const other = tempDir();
    answer = 'deny';
    expect(text(await exec(kernel, 'touch always', other))).toMatch(/an operator denied it/);
    expect((await exec(kernel, 'touch different', ws)).blocked).toBe(true);
    expect(asked).toHaveLength(5);
    const file = join(kernel.paths.stateDir, 'exec-approvals.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    expect(doc.agents.main.allowlist).toEqual([
      expect.objectContaining({
        pattern: expect.stringMatching(/\/touch$/),
        argPattern: '^always$',
        cwd: ws,
        source: 'allow-always',
      }),
    ]);
    expect(service.list()).toEqual([]);
  });

  it('a child session cannot loosen its parent policy', async () => {
    const kernel = await kernelWith(
      {
        agents: {
          list: [
            { id: 'main', tools: { exec: { security: 'deny' } } },
            { id: 'helper', tools: { exec: { security: 'full', ask: 'off' } } },
          ],
        },
      },
      [],
      {
        version: 1,
        agents: { helper: { security: 'full', ask: 'off' } },
      },
    );
    const ws = tempDir();
    const sessions = (await useService<SessionService>(kernel.plugins.kernelServices, 'sessions'))!;
    await sessions.store('helper').upsert('agent:helper:child', { spawnedBy: 'agent:main:main' });
    await sessions.store('helper').upsert('agent:helper:grandchild', { spawnedBy: 'agent:helper:child' });
    // The helper agent on its own may run commands...
    expect((await exec(kernel, 'touch own', ws, 'agent:helper:solo')).blocked).toBe(false);
    // ...but not in a session spawned (directly or not) by a session whose policy denies them.
    expect(text(await exec(kernel, 'touch child', ws, 'agent:helper:child'))).toMatch(/exec was not approved/);
    expect((await exec(kernel, 'touch grandchild', ws, 'agent:helper:grandchild')).blocked).toBe(true);
    expect(existsSync(join(ws, 'child'))).toBe(false);
    expect(existsSync(join(ws, 'grandchild'))).toBe(false);
  });

  it('the approval covers the params after before_tool_call rewrites them', async () => {
    const rewrite = definePlugin({
      id: 'rewriter',
      register(api) {
        api.on('before_tool_call', (event) => {
          const command = String(event.params.command);
          if (command === 'touch innocent') return { params: { ...event.params, command: 'touch evil' } };
          if (command === 'make-it-safe') return { params: { ...event.params, command: 'touch innocent' } };
          return undefined;
        });
      },
    });
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'off' } } }, [rewrite], {
      version: 1,
      agents: { main: { allowlist: [{ pattern: 'touch', argPattern: '^innocent$' }] } },
    });
    const ws = tempDir();
    // The model asked for an allowlisted command; a hook turned it into another: refused.
    const rewritten = await exec(kernel, 'touch innocent', ws);
    expect(rewritten.blocked).toBe(true);
    expect(rewritten.params.command).toBe('touch evil');
    expect(existsSync(join(ws, 'evil'))).toBe(false);
    // And the other way: what runs is what is judged.
    expect((await exec(kernel, 'make-it-safe', ws)).blocked).toBe(false);
    expect(existsSync(join(ws, 'innocent'))).toBe(true);
  });

  it('elevated: a sandboxed call escapes to the host only when tools.elevated lets it, and approvals still apply', async () => {
    // Sandbox routing puts the instance on the context; a stand-in is enough to mark the call sandboxed.
    const sandboxed = (kernel: TestKernel, command: string, ws: string, sessionKey: string, elevated: boolean) =>
      kernel.plugins.kernelServices.tools.invoke({
        name: 'exec',
        params: { command, elevated },
        toolCallId: `e-${Math.random()}`,
        context: { agentId: 'main', sessionKey, workspaceDir: ws, sandbox: { id: 'stand-in' } } as never,
      });
    const ws = tempDir();
    const off = await kernelWith({});
    expect(text(await sandboxed(off, 'touch x', ws, 'agent:main:main', true))).toMatch(
      /elevated mode is off \(tools\.elevated\.enabled\)/,
    );
    const on = await kernelWith(
      {
        tools: { exec: { security: 'allowlist' }, elevated: { enabled: true, allowFrom: { telegram: ['id:42'] } } },
      },
      [],
      { version: 1, agents: { main: { allowlist: [{ pattern: 'touch' }] } } },
    );
    const sessions = (await useService<SessionService>(on.plugins.kernelServices, 'sessions'))!;
    await sessions
      .store('main')
      .upsert('agent:main:telegram:direct:42', { origin: { provider: 'telegram', from: '42' } });
    await sessions
      .store('main')
      .upsert('agent:main:telegram:direct:7', { origin: { provider: 'telegram', from: '7' } });
    await sessions.store('main').upsert('agent:main:quiet', { elevatedLevel: 'off' });
    expect((await sandboxed(on, 'touch allowed', ws, 'agent:main:telegram:direct:42', true)).blocked).toBe(false);
    expect(text(await sandboxed(on, 'touch stranger', ws, 'agent:main:telegram:direct:7', true))).toMatch(
      /not on tools\.elevated\.allowFrom\.telegram/,
    );
    expect(text(await sandboxed(on, 'touch quiet', ws, 'agent:main:quiet', true))).toMatch(/\/elevated off/);
    // Elevated is not a way around the host policy: a miss is still refused.
    expect(text(await sandboxed(on, 'rm allowed', ws, 'agent:main:telegram:direct:42', true))).toMatch(/exec policy/);
    // Without elevated, a sandboxed call needs no host approval at all.
    expect((await sandboxed(off, 'true', ws, 'agent:main:main', false)).blocked).toBe(false);
    expect(existsSync(join(ws, 'allowed'))).toBe(true);
    expect(existsSync(join(ws, 'stranger'))).toBe(false);
  });

  it('bad approvals documents are refused with what is wrong, never treated as no policy', async () => {
    const kernel = await kernelWith({}, [], { version: 1, defaults: { security: 'sometimes' } });
    const ws = tempDir();
    const outcome = await exec(kernel, 'touch ran', ws);
    expect(text(outcome)).toMatch(
      /approver failed .*exec-approvals\.json is not an exec approvals document: \/defaults\/security/,
    );
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('parses only what it can judge', () => {
    expect(parseCommand("git log --oneline | head -n 5 && echo 'a b'")).toEqual([
      ['git', 'log', '--oneline'],
      ['head', '-n', '5'],
      ['echo', 'a b'],
    ]);
    for (const unjudgeable of [
      'echo $HOME',
      'echo `id`',
      'cat < x',
      'ls > y',
      'ls *',
      'FOO=1 ls',
      'echo "$(id)"',
      '(ls)',
      'ls &',
    ])
      expect(parseCommand(unjudgeable)).toBeUndefined();
  });
});

describe('approvals over the gateway and the claw approvals CLI', () => {
  it('ask → approve from a real `claw approvals` process; pending lists it; a repeat resolve is idempotent, a conflicting one fails', async () => {
    const gw = await startGateway({
      plugins: [EXEC, APPROVALS, ...SESSIONS],
      config: { tools: { exec: { security: 'allowlist', ask: 'on-miss' } } },
    });
    kernels.push(gw.kernel);
    // Nobody connected who could answer: askFallback at once, not after the timeout.
    const ws0 = tempDir();
    const started = Date.now();
    expect(text(await exec(gw.kernel, 'touch unseen', ws0))).toMatch(/no approval client is connected to ask/);
    expect(Date.now() - started).toBeLessThan(2000);
    const requested: EventFrame[] = [];
    const operator = await client(gw.url, {
      scopes: ['operator.read', 'operator.approvals', 'operator.admin'],
      onEvent: (frame) => void (frame.event === 'exec.approval.requested' && requested.push(frame)),
    });
    const env = { OPENCLAW_STATE_DIR: gw.stateDir, OPENCLAW_GATEWAY_URL: gw.url, OPENCLAW_GATEWAY_TOKEN: TEST_TOKEN };
    const ws = tempDir();
    const running = exec(gw.kernel, 'touch approved', ws);
    await expect.poll(() => requested.length, { timeout: 5000 }).toBe(1);
    const id = (requested[0]!.payload as { id: string }).id;
    const pending = await claw(['approvals', 'pending', '--json'], env);
    expect(pending.code, pending.stderr).toBe(0);
    expect(JSON.parse(pending.stdout).approvals).toEqual([
      expect.objectContaining({ id, request: expect.objectContaining({ command: 'touch approved', cwd: ws }) }),
    ]);
    const human = await claw(['approvals', 'pending'], env);
    expect(human.stdout).toContain(id);
    expect(existsSync(join(ws, 'approved'))).toBe(false);
    const resolved = await claw(['approvals', 'resolve', id, 'allow-once'], env);
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toContain(`Resolved ${id}: allow-once`);
    expect((await running).blocked).toBe(false);
    expect(existsSync(join(ws, 'approved'))).toBe(true);
    const same = await claw(['approvals', 'resolve', id, 'allow-once'], env);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toContain('already resolved (same decision)');
    const conflicting = await claw(['approvals', 'resolve', id, 'deny'], env);
    expect(conflicting.code).not.toBe(0);
    expect(conflicting.stderr).toMatch(/already resolved as allow-once/);
    const unknown = await claw(['approvals', 'resolve', 'no-such-id', 'deny'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no pending exec approval "no-such-id"/);
    const bad = await claw(['approvals', 'resolve', id, 'maybe'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/allow-once\|allow-always\|deny/);
    // The document over the gateway: allowlist add, then the command runs without asking.
    const added = await claw(['approvals', 'allowlist', 'add', 'printf', '--agent', 'main', '--gateway'], env);
    expect(added.code, added.stderr).toBe(0);
    expect(text(await exec(gw.kernel, 'printf listed', ws))).toContain('listed');
    expect(requested).toHaveLength(1);
    const shown = JSON.parse((await claw(['approvals', 'get', '--gateway', '--json'], env)).stdout);
    expect(shown.effective.main).toMatchObject({
      security: 'allowlist',
      ask: 'on-miss',
      askFallback: 'deny',
      allowlist: ['printf'],
    });
    // OpenClaw's snapshot fields beside claw's: what `openclaw approvals get --gateway` reads.
    const onDisk = readFileSync(join(gw.stateDir, 'exec-approvals.json'), 'utf8');
    const snapshot: any = await operator.request('exec.approvals.get', {});
    expect(snapshot).toMatchObject({
      path: join(gw.stateDir, 'exec-approvals.json'),
      exists: true,
      hash: createHash('sha256').update(onDisk).digest('hex'),
      file: { version: 1, agents: { main: { allowlist: [expect.objectContaining({ pattern: 'printf' })] } } },
      resolvedDefaults: { security: 'full', ask: 'off', askFallback: 'deny' },
    });
    // exec.approvals.set with OpenClaw's baseHash: a stale one is refused, the current one writes.
    const next = { ...snapshot.file, defaults: { askFallback: 'allowlist' } };
    await expect(operator.request('exec.approvals.set', { file: next, baseHash: 'f'.repeat(64) })).rejects.toThrow(
      /exec approvals changed since last load/,
    );
    const written: any = await operator.request('exec.approvals.set', { file: next, baseHash: snapshot.hash });
    expect(written).toMatchObject({ ok: true, exists: true, resolvedDefaults: { askFallback: 'allowlist' } });
    expect(written.hash).not.toBe(snapshot.hash);
    await operator.close();
  }, 90_000);

  it('claw approvals set / allowlist edit the local document (JSON5, atomic, 0600) and reject bad input', async () => {
    const stateDir = tempDir('claw-approvals-cli-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const file = join(stateDir, 'in.json5');
    writeFileSync(file, '{ version: 1, defaults: { security: "allowlist", ask: "on-miss" } }');
    const set = await claw(['approvals', 'set', '--file', file], env);
    expect(set.code, set.stderr).toBe(0);
    const target = join(stateDir, 'exec-approvals.json');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect((await claw(['approvals', 'allowlist', 'add', '/usr/bin/rg'], env)).code).toBe(0);
    const noop = await claw(['approvals', 'allowlist', 'add', '/usr/bin/rg'], env);
    expect(noop.stdout).toMatch(/Nothing to change/);
    const got = JSON.parse((await claw(['exec-approvals', 'get', '--json'], env)).stdout);
    expect(got.file).toMatchObject({
      version: 1,
      defaults: { security: 'allowlist', ask: 'on-miss' },
      agents: { '*': { allowlist: [expect.objectContaining({ pattern: '/usr/bin/rg' })] } },
    });
    expect(got.effective.main).toMatchObject({ security: 'allowlist', ask: 'on-miss' });
    expect((await claw(['approvals', 'allowlist', 'remove', '/usr/bin/rg'], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(target, 'utf8')).agents['*'].allowlist).toEqual([]);
    writeFileSync(file, '{ version: 1, defaults: { ask: "sometimes" } }');
    const bad = await claw(['approvals', 'set', '--file', file], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/not an exec approvals document: \/defaults\/ask/);
    writeFileSync(file, '{ version: 1, defaults: { autoAllowSkills: true } }');
    expect((await claw(['approvals', 'set', '--file', file], env)).stderr).toMatch(
      /\/defaults has "autoAllowSkills", which claw does not support/,
    );
    const both = await claw(['approvals', 'set'], env);
    expect(both.stderr).toMatch(/exactly one of --file <path> or --stdin/);
  }, 90_000);
});
