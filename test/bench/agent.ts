/**
 * Agent-loop framework overhead: what a turn costs claw itself when the model answers in
 * zero time. An in-process provider answers instantly (no HTTP), so the figures are the
 * loop's own work: session resolution and store writes, transcript appends, prompt
 * assembly, hooks, tool policy and the tool-call path, events.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelRequest, ModelStreamEvent } from '../../sdk/index.js';
import { definePlugin, textResult } from '../../sdk/index.js';
import { createTestKernel } from '../../sdk/testing.js';
import type { AgentService } from '../../sdk/agent/index.js';
import { useService } from '../../sdk/services.js';
import { agentStackDirs } from '../../sdk/testing.js';

/** Answers at once: "tool" models call `noop` once, then answer; others answer straight away. */
export const instantModel = definePlugin({
  id: 'bench-model',
  register(api) {
    api.registerProvider({
      id: 'bench',
      requiresKey: false,
      async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
        const last = request.messages[request.messages.length - 1];
        if (request.model === 'tool' && last?.role === 'user') {
          yield {
            type: 'tool_call',
            id: `call_${Math.random().toString(36).slice(2, 10)}`,
            name: 'noop',
            arguments: { n: 1 },
          };
          yield { type: 'done', stopReason: 'toolUse', usage: { input: 10, output: 2 } };
          return;
        }
        yield { type: 'text_delta', delta: 'ok' };
        yield { type: 'done', stopReason: 'stop', usage: { input: 10, output: 1 } };
      },
    });
    api.registerTool({
      name: 'noop',
      description: 'Does nothing.',
      parameters: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
      execute: () => textResult('done'),
    });
  },
});

/**
 * `intake`: open the intake journal as the gateway does, so every message is written and
 * fsync'd before its acknowledgment (the turn starts meanwhile); without it, as embedded
 * CLI runs go.
 */
export async function bootAgent(model: string, intake = true) {
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-agent-'));
  const kernel = await createTestKernel({
    stateDir,
    plugins: [...agentStackDirs(), instantModel],
    config: { agents: { defaults: { model } }, messages: { queue: { debounceMs: 0 } } },
  });
  const slot = (await useService<AgentService>(kernel, 'agent'))!;
  if (intake) await (slot as AgentService & { runtime: { openIntake(): Promise<void> } }).runtime.openIntake();
  const turn = async (sessionKey: string) => {
    const handle = await slot.dispatch({ sessionKey, message: 'hello' });
    const result = await handle.done;
    if (result.status !== 'ok') throw new Error(`bench turn failed: ${result.error}`);
  };
  return {
    turn,
    async close() {
      await kernel.dispose();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

export interface TurnLatency {
  p50: number;
  p99: number;
  turns: number;
}

/** Sequential turns, spread over 20 sessions (each grows to turns/20 exchanges). */
export async function turnLatency(
  model: 'bench/text' | 'bench/tool',
  turns = 2000,
  intake = true,
): Promise<TurnLatency> {
  const agent = await bootAgent(model, intake);
  try {
    for (let i = 0; i < 200; i++) await agent.turn(`agent:main:warm-${i % 20}`);
    const latencies: number[] = [];
    for (let i = 0; i < turns; i++) {
      const start = performance.now();
      await agent.turn(`agent:main:s-${i % 20}`);
      latencies.push(performance.now() - start);
    }
    latencies.sort((a, b) => a - b);
    return { p50: latencies[latencies.length >> 1]!, p99: latencies[Math.floor(latencies.length * 0.99)]!, turns };
  } finally {
    await agent.close();
  }
}

/** 50 sessions each sending turns back to back; total turns per second. */
export async function turnThroughput(sessions = 50, turnsPerSession = 60): Promise<{ perSec: number; turns: number }> {
  const agent = await bootAgent('bench/text');
  try {
    await Promise.all(Array.from({ length: sessions }, (_, s) => agent.turn(`agent:main:warm-${s}`)));
    const start = performance.now();
    await Promise.all(
      Array.from({ length: sessions }, async (_, s) => {
        for (let i = 0; i < turnsPerSession; i++) await agent.turn(`agent:main:t-${s}`);
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    return { perSec: (sessions * turnsPerSession) / seconds, turns: sessions * turnsPerSession };
  } finally {
    await agent.close();
  }
}
