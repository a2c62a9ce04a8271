/**
 * Sub-agent benchmarks, with an in-process model that answers at once (no HTTP):
 *
 *   subagent-announce  sessions_spawn → the child's turn → the announce turn in the parent
 *                      session, end to end (registry writes included), p50/p99; and the part
 *                      of it that is sub-agent machinery: minus two plain turns' p50
 *   subagent-fanout    50 children spawned at once (10 parent sessions × 5): the `subagent`
 *                      lane cap (agents.defaults.subagents.maxConcurrent, 8) holds, all 50
 *                      announce, total time
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelRequest, ModelStreamEvent } from '../../sdk/index.js';
import { definePlugin } from '../../sdk/index.js';
import { agentStackDirs, bundledPluginDir, createTestKernel } from '../../sdk/testing.js';
import type { AgentService } from '../../sdk/agent/index.js';
import { useService } from '../../sdk/services.js';
import type { SubagentService } from '../../plugins/subagents/service.js';
import { instantModel } from './agent.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

/** `bench/slow` holds each answer 20 ms and records how many answers were in flight at once. */
function slowModel(stats: { active: number; peak: number }) {
  return definePlugin({
    id: 'bench-slow-model',
    register(api) {
      api.registerProvider({
        id: 'benchslow',
        requiresKey: false,
        async *stream(_request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
          stats.active++;
          stats.peak = Math.max(stats.peak, stats.active);
          await new Promise((resolve) => setTimeout(resolve, 20));
          stats.active--;
          yield { type: 'text_delta', delta: 'child done' };
          yield { type: 'done', stopReason: 'stop', usage: { input: 10, output: 2 } };
        },
      });
    },
  });
}

async function boot(config: Record<string, unknown>, extra: ReturnType<typeof definePlugin>[] = []) {
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-subagents-'));
  const kernel = await createTestKernel({
    stateDir,
    plugins: [...agentStackDirs(), bundledPluginDir('subagents'), instantModel, ...extra],
    config: { agents: { defaults: { model: 'bench/text', ...config } }, messages: { queue: { debounceMs: 0 } } },
  });
  const agent = (await useService<AgentService>(kernel, 'agent'))!;
  const subagents = (await useService<{ service: SubagentService }>(kernel, 'subagents'))!.service;
  const ended = new Map<string, () => void>();
  subagents.hooks.on('subagent_ended', (event) => ended.get(event.runId)?.());
  /** Spawn and resolve when the announce has gone into the parent session. */
  const spawnAndWait = async (sessionKey: string, model?: string) => {
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const outcome = await subagents.spawn({ sessionKey }, { task: 'do it', ...(model ? { model } : {}) });
    if (outcome.status !== 'accepted') throw new Error(`spawn refused: ${outcome.error}`);
    ended.set(outcome.runId, done);
    await finished;
  };
  return {
    agent,
    spawnAndWait,
    async close() {
      await subagents.idle();
      await kernel.dispose();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

export async function subagentAnnounceBench(line: Line, quick = false): Promise<void> {
  const runs = quick ? 100 : 300;
  const bench = await boot({});
  try {
    const plain: number[] = [];
    for (let i = 0; i < 50; i++) await bench.spawnAndWait(`agent:main:warm-${i % 10}`);
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await (
        await bench.agent.dispatch({ sessionKey: `agent:main:plain-${i % 10}`, message: 'hello' })
      ).done;
      plain.push(performance.now() - start);
    }
    const total: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await bench.spawnAndWait(`agent:main:p-${i % 10}`);
      total.push(performance.now() - start);
    }
    const pct = (values: number[], p: number) =>
      [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
    const p50 = pct(total, 0.5);
    const overhead = p50 - 2 * pct(plain, 0.5);
    line('subagent: spawn → announce, instant model p50', `${p50.toFixed(2)} ms`, '(info)', true);
    line('  p99', `${pct(total, 0.99).toFixed(2)} ms`, '(info)', true);
    // Mostly the one fsync of runs.json before the spawn is acknowledged (disk-bound).
    line('  sub-agent machinery (p50 − 2 plain turns)', `${overhead.toFixed(2)} ms`, '(info)', true);
  } finally {
    await bench.close();
  }
}

export async function subagentFanoutBench(line: Line): Promise<void> {
  const stats = { active: 0, peak: 0 };
  const bench = await boot({ subagents: { maxConcurrent: 8 } }, [slowModel(stats)]);
  try {
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => bench.spawnAndWait(`agent:main:fan-${i % 10}`, 'benchslow/child')),
    );
    const ms = performance.now() - start;
    line(
      'subagent: 50 concurrent children, peak running',
      `${stats.peak}`,
      '≤ 8 (lane cap)',
      stats.peak <= 8 && stats.peak > 1,
    );
    line('  all 50 spawned, run (20 ms model) and announced', `${ms.toFixed(0)} ms`, '(info)', true);
  } finally {
    await bench.close();
  }
}
