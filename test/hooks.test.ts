import { describe, expect, it } from 'vitest';
import {
  HOOK_MODES,
  HOOK_NAMES,
  LIFECYCLE_HOOKS,
  MESSAGE_HOOKS,
  type HookErrorReport,
  type HookName,
} from '../kernel/index.js';
import { HookBus } from '../sdk/index.js';
import { sleep, waitFor } from './helpers.js';

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const message = { role: 'assistant' as const, content: 'hi' };

describe('hook catalog', () => {
  it('lists the 13 message-path hooks in message-path order, then the lifecycle hooks', () => {
    expect(MESSAGE_HOOKS).toEqual([
      'message_received',
      'before_model_resolve',
      'before_prompt_build',
      'before_agent_start',
      'llm_input',
      'before_tool_call',
      'tool_result_persist',
      'after_tool_call',
      'llm_output',
      'agent_end',
      'message_sending',
      'before_message_write',
      'message_sent',
    ]);
    expect(LIFECYCLE_HOOKS).toEqual([
      'gateway_start',
      'gateway_stop',
      'session_start',
      'session_end',
      'before_compaction',
      'after_compaction',
      'before_install',
    ]);
    expect(HOOK_NAMES).toHaveLength(20);
  });

  it('gives each hook its mode', () => {
    const byMode = (mode: string) => HOOK_NAMES.filter((hook) => HOOK_MODES[hook] === mode);
    expect(byMode('sync')).toEqual(['tool_result_persist', 'before_message_write']);
    expect(byMode('void')).toEqual([
      'message_received',
      'agent_end',
      'message_sent',
      'gateway_start',
      'gateway_stop',
      'session_start',
      'session_end',
      'before_compaction',
      'after_compaction',
    ]);
  });
});

describe('hook bus', () => {
  it('fires the message path in runtime order (one turn, one tool call)', async () => {
    const bus = new HookBus();
    const seen: HookName[] = [];
    for (const hook of MESSAGE_HOOKS) bus.on(hook, () => void seen.push(hook));
    // A mock turn driven the way the agent loop drives it.
    await bus.runVoid('message_received', { channel: 'test', from: 'u', content: 'hi', timestamp: 0 });
    await bus.runModifying('before_model_resolve', { prompt: 'hi' });
    await bus.runModifying('before_prompt_build', { prompt: 'hi', messages: [] });
    await bus.runModifying('before_agent_start', { prompt: 'hi' });
    for (const toolCalls of [1, 0]) {
      await bus.runModifying('llm_input', { provider: 'p', model: 'm', systemPrompt: '', messages: [] });
      await bus.runModifying('llm_output', { provider: 'p', model: 'm', content: '', toolCalls: [] });
      for (let i = 0; i < toolCalls; i++) {
        await bus.runModifying('before_tool_call', { toolName: 't', params: {} });
        bus.runSync('tool_result_persist', { toolName: 't', message });
        await bus.runModifying('after_tool_call', { toolName: 't', params: {}, durationMs: 1 });
      }
    }
    await bus.runVoid('agent_end', { messages: [], success: true, durationMs: 1 });
    await bus.runModifying('message_sending', { to: 'u', content: 'hi' });
    bus.runSync('before_message_write', { message });
    await bus.runVoid('message_sent', { to: 'u', content: 'hi', success: true });
    expect(seen).toEqual([
      'message_received',
      'before_model_resolve',
      'before_prompt_build',
      'before_agent_start',
      'llm_input',
      'llm_output',
      'before_tool_call',
      'tool_result_persist',
      'after_tool_call',
      'llm_input',
      'llm_output',
      'agent_end',
      'message_sending',
      'before_message_write',
      'message_sent',
    ]);
  });

  it('runs higher priority first; equal priorities keep registration order; no priority means 0', async () => {
    const bus = new HookBus();
    const order: string[] = [];
    bus.on('before_agent_start', () => void order.push('p0-first'));
    bus.on('before_agent_start', () => void order.push('p10'), { priority: 10 });
    bus.on('before_agent_start', () => void order.push('p5'), { priority: 5 });
    bus.on('before_agent_start', () => void order.push('p0-second'), { priority: 0 });
    bus.on('before_agent_start', () => void order.push('p-3'), { priority: -3 });
    await bus.runModifying('before_agent_start', { prompt: '' });
    expect(order).toEqual(['p10', 'p5', 'p0-first', 'p0-second', 'p-3']);
    expect(bus.list('before_agent_start').map((entry) => entry.priority)).toEqual([10, 5, 0, 0, -3]);
  });

  it('merges modifying results: undefined leaves the value, later handlers see earlier changes', async () => {
    const bus = new HookBus();
    const seenByLast: unknown[] = [];
    bus.on('llm_input', () => undefined);
    bus.on('llm_input', () => ({ systemPrompt: 'A' }));
    bus.on('llm_input', (event) => {
      seenByLast.push(event.systemPrompt);
      return { messages: [message] };
    });
    const result = await bus.runModifying('llm_input', {
      provider: 'p',
      model: 'm',
      systemPrompt: 'orig',
      messages: [],
    });
    expect(result).toEqual({ systemPrompt: 'A', messages: [message] });
    expect(seenByLast).toEqual(['A']);
  });

  it('before_tool_call: last params win; block stops the chain with its reason', async () => {
    const bus = new HookBus();
    const reached: string[] = [];
    bus.on('before_tool_call', () => ({ params: { a: 1 } }), { priority: 3 });
    bus.on(
      'before_tool_call',
      (event) => {
        reached.push(`second saw ${JSON.stringify(event.params)}`);
        return { params: { a: 2 } };
      },
      { priority: 2 },
    );
    const unblocked = await bus.runModifying('before_tool_call', { toolName: 'exec', params: { a: 0 } });
    expect(unblocked).toEqual({ params: { a: 2 } });
    expect(reached).toEqual(['second saw {"a":1}']);

    const blocking = new HookBus();
    blocking.on('before_tool_call', () => ({ block: true, blockReason: 'no exec' }), { priority: 1 });
    blocking.on('before_tool_call', () => {
      reached.push('after block');
      return { params: { evil: true } };
    });
    const blocked = await blocking.runModifying('before_tool_call', { toolName: 'exec', params: {} });
    expect(blocked).toEqual({ block: true, blockReason: 'no exec' });
    expect(reached).not.toContain('after block');
  });

  it('message_sending: last content wins; cancel stops the chain', async () => {
    const bus = new HookBus();
    bus.on('message_sending', (event) => ({ content: `${event.content}!` }));
    bus.on('message_sending', (event) => ({ content: `${event.content}?` }));
    expect(await bus.runModifying('message_sending', { to: 'u', content: 'hi' })).toEqual({ content: 'hi!?' });

    const cancelling = new HookBus();
    let after = false;
    cancelling.on('message_sending', () => ({ cancel: true }), { priority: 1 });
    cancelling.on('message_sending', () => {
      after = true;
      return { content: 'sent anyway' };
    });
    expect(await cancelling.runModifying('message_sending', { to: 'u', content: 'hi' })).toEqual({ cancel: true });
    expect(after).toBe(false);
  });

  it('before_model_resolve: the first override wins', async () => {
    const bus = new HookBus();
    bus.on('before_model_resolve', () => ({ modelOverride: 'first-model' }), { priority: 2 });
    bus.on('before_model_resolve', () => ({ modelOverride: 'second-model', providerOverride: 'second-provider' }), {
      priority: 1,
    });
    bus.on('before_model_resolve', () => ({ providerOverride: 'third-provider' }));
    expect(await bus.runModifying('before_model_resolve', { prompt: '' })).toEqual({
      modelOverride: 'first-model',
      providerOverride: 'second-provider',
    });
  });

  it('before_prompt_build: the first systemPrompt wins; prependContext and appendSystemContext concatenate', async () => {
    const bus = new HookBus();
    bus.on('before_prompt_build', () => ({ systemPrompt: 'S1', prependContext: 'P1' }), { priority: 2 });
    bus.on('before_prompt_build', () => ({ systemPrompt: 'S2', prependContext: 'P2', appendSystemContext: 'A2' }), {
      priority: 1,
    });
    bus.on('before_prompt_build', () => ({ appendSystemContext: 'A3' }));
    expect(await bus.runModifying('before_prompt_build', { prompt: '', messages: [] })).toEqual({
      systemPrompt: 'S1',
      prependContext: 'P1\n\nP2',
      appendSystemContext: 'A2\n\nA3',
    });
  });

  it('merges plain results key by key for hooks without a special rule', async () => {
    const bus = new HookBus();
    bus.on('after_tool_call', () => ({ result: 'a' }));
    bus.on('after_tool_call', (event) => ({ result: `${String(event.result)}b` }));
    expect(await bus.runModifying('after_tool_call', { toolName: 't', params: {}, result: '', durationMs: 0 })).toEqual(
      { result: 'ab' },
    );
  });

  it('runs void handlers in parallel and ignores what they return', async () => {
    const bus = new HookBus();
    // Both handlers hold until the test opens the gate: they can only both be running if they run at once.
    const { opened, open } = gate();
    const started: string[] = [];
    const finished: string[] = [];
    bus.on('agent_end', async () => {
      started.push('a');
      await opened;
      finished.push('a');
      return { ignored: true } as never;
    });
    bus.on('agent_end', async () => {
      started.push('b');
      await opened;
      finished.push('b');
    });
    let settled = false;
    const run = bus
      .runVoid('agent_end', { messages: [], success: true, durationMs: 0 })
      .finally(() => (settled = true));
    await waitFor(() => started.length === 2, { what: 'both handlers to be running at once' });
    expect(settled).toBe(false);
    open();
    expect(await run).toBeUndefined();
    // runVoid waited for both.
    expect(finished.sort()).toEqual(['a', 'b']);
  });

  it('never awaits sync hooks: a promise-returning handler is reported and its result ignored', () => {
    const reports: HookErrorReport[] = [];
    const bus = new HookBus({ onError: (report) => reports.push(report) });
    bus.on('tool_result_persist', async () => ({ message: { role: 'toolResult', content: 'from async' } }), {
      pluginId: 'slowpoke',
    });
    bus.on('tool_result_persist', (event) => ({ message: { ...event.message, content: 'rewritten' } }), {
      pluginId: 'fast',
    });
    const result = bus.runSync('tool_result_persist', {
      toolName: 't',
      message: { role: 'toolResult', content: 'orig' },
    });
    expect(result).toEqual({ message: { role: 'toolResult', content: 'rewritten' } });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ hook: 'tool_result_persist', pluginId: 'slowpoke', kind: 'async-in-sync' });
    expect(reports[0]!.message).toContain('Async in sync hook');
  });

  it('before_message_write: block stops the chain', () => {
    const bus = new HookBus();
    let after = false;
    bus.on('before_message_write', () => ({ block: true }), { priority: 1 });
    bus.on('before_message_write', () => {
      after = true;
    });
    expect(bus.runSync('before_message_write', { message })).toEqual({ block: true });
    expect(after).toBe(false);
  });

  it('isolates throwing handlers: reported with the plugin id, the chain goes on', async () => {
    const reports: HookErrorReport[] = [];
    const bus = new HookBus({ onError: (report) => reports.push(report) });
    bus.on(
      'message_sending',
      () => {
        throw new Error('sync failure');
      },
      { pluginId: 'thrower', priority: 3 },
    );
    bus.on(
      'message_sending',
      async () => {
        throw new Error('async failure');
      },
      { pluginId: 'rejecter', priority: 2 },
    );
    bus.on('message_sending', () => ({ content: 'still works' }), { pluginId: 'good', priority: 1 });
    bus.on(
      'message_received',
      () => {
        throw new Error('void failure');
      },
      { pluginId: 'void-thrower' },
    );
    bus.on(
      'before_message_write',
      () => {
        throw new Error('sync hook failure');
      },
      { pluginId: 'sync-thrower' },
    );
    bus.on('message_sending', () => 'not an object' as never, { pluginId: 'wrong-shape' });

    expect(await bus.runModifying('message_sending', { to: 'u', content: 'x' })).toEqual({ content: 'still works' });
    await bus.runVoid('message_received', { channel: 'c', from: 'u', content: 'x', timestamp: 0 });
    expect(bus.runSync('before_message_write', { message })).toEqual({});
    expect(reports.map((report) => [report.pluginId, report.hook, report.kind])).toEqual([
      ['thrower', 'message_sending', 'threw'],
      ['rejecter', 'message_sending', 'threw'],
      ['wrong-shape', 'message_sending', 'threw'],
      ['void-thrower', 'message_received', 'threw'],
      ['sync-thrower', 'before_message_write', 'threw'],
    ]);
    expect(reports[0]!.message).toContain('thrower');
    expect(reports[0]!.message).toContain('sync failure');
  });

  it('passes context with the handler plugin id, and removes handlers', async () => {
    const bus = new HookBus();
    const ids: Array<string | undefined> = [];
    const off = bus.on('session_start', (_event, ctx) => void ids.push(`${ctx.pluginId}:${ctx.sessionKey}`), {
      pluginId: 'a',
    });
    bus.on('session_start', (_event, ctx) => void ids.push(`${ctx.pluginId}:${ctx.sessionKey}`), { pluginId: 'b' });
    await bus.runVoid('session_start', { sessionId: 's' }, { sessionKey: 'agent:main:main' });
    off();
    expect(bus.removePlugin('b')).toBe(1);
    await bus.runVoid('session_start', { sessionId: 's' }, { sessionKey: 'k' });
    expect(ids).toEqual(['a:agent:main:main', 'b:agent:main:main']);
    expect(bus.has('session_start')).toBe(false);
  });

  it('refuses unknown hook names and bad handlers', () => {
    const bus = new HookBus();
    expect(() => bus.on('before_everything' as HookName, () => {})).toThrow('unknown hook "before_everything"');
    expect(() => bus.on('agent_end', 'nope' as never)).toThrow(/must be a function/);
    expect(() => bus.on('agent_end', () => {}, { priority: Number.NaN })).toThrow(/finite/);
  });

  it('asks prepare() before async hooks so lazily loaded plugins can register first', async () => {
    const prepared: string[] = [];
    const bus: HookBus = new HookBus({
      prepare: (hook) => {
        prepared.push(hook);
        if (hook !== 'gateway_start' || bus.has('gateway_start')) return undefined;
        return sleep(5).then(() => void bus.on('gateway_start', () => void prepared.push('late handler ran')));
      },
    });
    await bus.runVoid('gateway_start', { port: 1, host: 'h' });
    expect(prepared).toEqual(['gateway_start', 'late handler ran']);
  });
});

describe('hook timeouts and the run signal', () => {
  const never = () => new Promise<never>(() => {});

  it('cuts a handler off at its timeoutMs: reported with plugin id and hook, the chain goes on', async () => {
    const reports: HookErrorReport[] = [];
    const bus = new HookBus({ onError: (report) => reports.push(report) });
    bus.on('message_sending', never, { pluginId: 'stuck', priority: 2, timeoutMs: 30 });
    bus.on('message_sending', (event) => ({ content: `${event.content}!` }), { pluginId: 'next', priority: 1 });
    const started = Date.now();
    expect(await bus.runModifying('message_sending', { to: 'u', content: 'hi' })).toEqual({ content: 'hi!' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(reports).toEqual([
      expect.objectContaining({
        hook: 'message_sending',
        pluginId: 'stuck',
        kind: 'timeout',
        message: 'hook "message_sending" handler from plugin "stuck" timed out after 30 ms',
      }),
    ]);
  });

  it('a late result of a timed-out handler is ignored; a fast one is kept', async () => {
    const bus = new HookBus();
    // The slow handler answers only after its 10 ms are up and the hook has returned without it.
    const { opened, open } = gate();
    let lateAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (lateAnswered = resolve));
    bus.on('llm_output', () => opened.then(() => (lateAnswered(), { content: 'late' })), {
      pluginId: 'slow',
      timeoutMs: 10,
    });
    bus.on('before_model_resolve', () => sleep(1).then(() => ({ modelOverride: 'm' })), {
      pluginId: 'fast',
      timeoutMs: 500,
    });
    expect(await bus.runModifying('llm_output', { provider: 'p', model: 'm', content: 'orig', toolCalls: [] })).toEqual(
      {},
    );
    open();
    // The late answer arrives inside this test, so anything it upset would fail here, not in a later test.
    await answered;
    expect(await bus.runModifying('before_model_resolve', { prompt: 'x' })).toEqual({ modelOverride: 'm' });
  });

  it('void hooks stop waiting at the timeout too', async () => {
    const reports: HookErrorReport[] = [];
    const bus = new HookBus({ onError: (report) => reports.push(report) });
    bus.on('agent_end', never, { pluginId: 'observer', timeoutMs: 20 });
    await bus.runVoid('agent_end', { messages: [], success: true, durationMs: 1 });
    expect(reports.map((report) => [report.pluginId, report.kind, report.message])).toEqual([
      ['observer', 'timeout', 'hook "agent_end" handler from plugin "observer" timed out after 20 ms'],
    ]);
  });

  it('defaults: 15 s for prompt building, 30 s for other async hooks, none for sync hooks; 0 waits forever', () => {
    const bus = new HookBus();
    bus.on('before_prompt_build', () => {}, { pluginId: 'a' });
    bus.on('message_sending', () => {}, { pluginId: 'a' });
    bus.on('agent_end', () => {}, { pluginId: 'a' });
    bus.on('tool_result_persist', () => {}, { pluginId: 'a' });
    bus.on('llm_input', () => {}, { pluginId: 'a', timeoutMs: 0 });
    expect(Object.fromEntries(bus.list().map((info) => [info.hook, info.timeoutMs]))).toEqual({
      before_prompt_build: 15_000,
      message_sending: 30_000,
      agent_end: 30_000,
      tool_result_persist: 0,
      llm_input: 0,
    });
    expect(() => bus.on('agent_end', () => {}, { timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => bus.on('agent_end', () => {}, { timeoutMs: Number.NaN })).toThrow(/timeoutMs/);
  });

  it('the run signal cuts a hung modifying hook (rejects with the reason) and a void hook (resolves)', async () => {
    const reports: HookErrorReport[] = [];
    const bus = new HookBus({ onError: (report) => reports.push(report) });
    const seen: Array<AbortSignal | undefined> = [];
    bus.on(
      'message_sending',
      (_event, ctx) => {
        seen.push(ctx.signal);
        return never();
      },
      { pluginId: 'stuck', timeoutMs: 0 },
    );
    let voidStarted = false;
    bus.on('message_received', () => ((voidStarted = true), never()), { pluginId: 'stuck', timeoutMs: 0 });
    const controller = new AbortController();
    const sending = bus.runModifying('message_sending', { to: 'u', content: 'x' }, { signal: controller.signal });
    const received = bus.runVoid(
      'message_received',
      { channel: 'c', from: 'u', content: 'x', timestamp: 0 },
      { signal: controller.signal },
    );
    // Abort only once both handlers are hung inside, so the signal is what ends them.
    await waitFor(() => seen.length === 1 && voidStarted, { what: 'both handlers to start' });
    controller.abort('stopped');
    await expect(sending).rejects.toBe('stopped');
    await expect(received).resolves.toBeUndefined();
    // Handlers get the signal for their own I/O; an abort is not the plugin's failure.
    expect(seen).toEqual([controller.signal]);
    expect(reports).toEqual([]);
    // Already aborted: no handler starts.
    await expect(
      bus.runModifying('message_sending', { to: 'u', content: 'x' }, { signal: controller.signal }),
    ).rejects.toBe('stopped');
    expect(seen).toHaveLength(1);
  });

  it("sync hooks cannot be timed out: they finish on the caller's stack", () => {
    const bus = new HookBus();
    bus.on('before_message_write', () => ({ block: true }), { pluginId: 'a', timeoutMs: 1 });
    expect(bus.runSync('before_message_write', { message })).toEqual({ block: true });
  });
});
