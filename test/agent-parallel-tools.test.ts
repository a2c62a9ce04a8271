/**
 * The tool calls of one assistant message run together (at most four at a time) through
 * a real gateway: overlapping execution is observed, results reach the transcript and the
 * next model request in call order whatever order they finish in, and every call has its
 * own before/after hooks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin, textResult } from '../sdk/index.js';
import { agentEvents, runAgent, startAgent, type AgentHarness } from './agent-helpers.js';

interface Span {
  id: string;
  start: number;
  end?: number;
}

let h: AgentHarness;
const spans: Span[] = [];
const hookCalls: string[] = [];
let running = 0;
let maxRunning = 0;

const timedTool = definePlugin({
  id: 'test-timed-tool',
  register(api) {
    api.registerTool({
      name: 'sleep_echo',
      description: 'Waits `ms` milliseconds, then returns `text`.',
      parameters: {
        type: 'object',
        properties: { ms: { type: 'integer' }, text: { type: 'string' } },
        required: ['ms', 'text'],
        additionalProperties: false,
      },
      execute: async (params: { ms: number; text: string }, ctx) => {
        const span: Span = { id: ctx.toolCallId, start: performance.now() };
        spans.push(span);
        maxRunning = Math.max(maxRunning, ++running);
        await new Promise((resolve) => setTimeout(resolve, params.ms));
        running--;
        span.end = performance.now();
        return textResult(params.text);
      },
    });
    api.on('before_tool_call', (event) => void hookCalls.push(`before:${event.toolCallId}`));
    api.on('after_tool_call', (event) => void hookCalls.push(`after:${event.toolCallId}`));
  },
});

beforeAll(async () => {
  h = await startAgent({ plugins: [timedTool] });
});
afterAll(() => h?.stop());
beforeEach(() => {
  h.fake.reset();
  spans.length = 0;
  hookCalls.length = 0;
  running = 0;
  maxRunning = 0;
});

function transcriptMessages(key = 'agent:main:main'): any[] {
  const sessions = JSON.parse(readFileSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'));
  return readFileSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', `${sessions[key].sessionId}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((line) => line.type === 'message')
    .map((line) => line.message);
}

describe('parallel tool calls', () => {
  it('run together, and their results come back in call order, each call with its own hooks', async () => {
    const call = (id: string, ms: number, text: string) => ({ id, name: 'sleep_echo', arguments: { ms, text } });
    // The first call is the slowest: finishing order is b, c, a.
    h.fake.script(
      { toolCalls: [call('call_a', 400, 'alpha'), call('call_b', 50, 'bravo'), call('call_c', 200, 'charlie')] },
      { text: 'all three done' },
    );
    const { ack, final } = await runAgent(h.client, { message: 'run three tools' });
    expect(final).toMatchObject({ status: 'ok', summary: 'all three done' });

    // Overlap: every call started before the first one finished.
    expect(spans.map((span) => span.id)).toEqual(['call_a', 'call_b', 'call_c']);
    const firstEnd = Math.min(...spans.map((span) => span.end!));
    for (const span of spans) expect(span.start).toBeLessThan(firstEnd);
    expect(maxRunning).toBe(3);
    expect(spans.find((span) => span.id === 'call_b')!.end).toBeLessThan(
      spans.find((span) => span.id === 'call_a')!.end!,
    );

    // Results in call order: in the transcript and in the request that carries them back.
    const results = transcriptMessages().filter((message) => message.role === 'toolResult');
    expect(results.map((message) => [message.toolCallId, message.content[0].text])).toEqual([
      ['call_a', 'alpha'],
      ['call_b', 'bravo'],
      ['call_c', 'charlie'],
    ]);
    const sent = h.fake.requests[1]!.body.messages.filter((message: any) => message.role === 'tool');
    expect(sent.map((message: any) => [message.tool_call_id, message.content])).toEqual([
      ['call_a', 'alpha'],
      ['call_b', 'bravo'],
      ['call_c', 'charlie'],
    ]);

    // Hooks per call: each call's before_tool_call precedes its own after_tool_call.
    for (const id of ['call_a', 'call_b', 'call_c']) {
      expect(hookCalls.filter((entry) => entry.endsWith(id))).toEqual([`before:${id}`, `after:${id}`]);
    }
    expect(hookCalls.slice(0, 3)).toEqual(['before:call_a', 'before:call_b', 'before:call_c']);

    // Tool events: three starts in call order, ends as each finished.
    const tools = agentEvents(h.events, ack.runId).filter((event) => event.stream === 'tool');
    expect(tools.filter((event) => event.data.phase === 'start').map((event) => event.data.toolCallId)).toEqual([
      'call_a',
      'call_b',
      'call_c',
    ]);
    expect(tools.filter((event) => event.data.phase !== 'start').map((event) => event.data.toolCallId)).toEqual([
      'call_b',
      'call_c',
      'call_a',
    ]);
  });

  it('runs at most four at a time; the rest start as slots free up', async () => {
    const calls = [1, 2, 3, 4, 5, 6].map((n) => ({
      id: `call_${n}`,
      name: 'sleep_echo',
      arguments: { ms: 100, text: `r${n}` },
    }));
    h.fake.script({ toolCalls: calls }, { text: 'six done' });
    const { final } = await runAgent(h.client, { message: 'run six tools', sessionKey: 'agent:main:six' });
    expect(final).toMatchObject({ status: 'ok', summary: 'six done' });
    expect(maxRunning).toBe(4);
    // The fifth and sixth started only after one of the first four had finished.
    const firstEnd = Math.min(...spans.slice(0, 4).map((span) => span.end!));
    expect(spans[4]!.start).toBeGreaterThanOrEqual(firstEnd);
    const results = transcriptMessages('agent:main:six').filter((message) => message.role === 'toolResult');
    expect(results.map((message) => message.content[0].text)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
  });
});
