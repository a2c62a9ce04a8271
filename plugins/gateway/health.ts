/**
 * The health snapshot of a running gateway (the `health` method and event, hello-ok):
 * plugins, open connections, memory, event-loop delay, and whether the default
 * agent has a usable model.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { KernelServices } from '../../sdk/index.js';
import type { Connection } from './connection.js';
import type { ModelStatus } from './model-status.js';

let monitor: IntervalHistogram | undefined;

/**
 * The process's one event-loop delay monitor, shared by claw's health and OpenClaw's
 * `eventLoop` reading: each monitor holds ≈ 370 KB of native histogram.
 */
export function eventLoopDelayMonitor(): IntervalHistogram {
  monitor ??= monitorEventLoopDelay({ resolution: 20 });
  return monitor;
}

export class GatewayHealth {
  /** The default agent's model readiness, as last read (model-status.ts); absent without the models plugin. */
  model?: ModelStatus;
  private readonly eventLoop = eventLoopDelayMonitor();
  private cache?: { at: number; value: ReturnType<GatewayHealth['compute']> };

  constructor(
    private readonly kernel: KernelServices,
    private readonly version: string,
    private readonly startedAt: number,
    private readonly connections: ReadonlyMap<string, Connection>,
  ) {}

  /** Measures event-loop delay while the gateway listens. */
  enable(): void {
    this.eventLoop.enable();
  }

  disable(): void {
    this.eventLoop.disable();
  }

  /** Health changes slowly and is costly to read (memoryUsage walks the heap): cached for a second. */
  snapshot() {
    const now = Date.now();
    if (!this.cache || now - this.cache.at >= 1000) this.cache = { at: now, value: this.compute() };
    return {
      ...this.cache.value,
      ts: now,
      uptimeMs: now - this.startedAt,
      connections: this.openConnections(),
      ...(this.model ? { model: this.model } : {}),
    };
  }

  private openConnections(): number {
    let open = 0;
    for (const conn of this.connections.values()) if (conn.state === 'open') open++;
    return open;
  }

  private compute() {
    const records = this.kernel.plugins();
    const failed = records.filter((record) => record.status === 'failed');
    const memory = process.memoryUsage();
    const delay = this.eventLoop.percentile(99);
    return {
      ok: true,
      status: failed.length > 0 ? 'degraded' : 'ok',
      ts: Date.now(),
      uptimeMs: Date.now() - this.startedAt,
      version: this.version,
      connections: this.openConnections(),
      plugins: {
        total: records.length,
        enabled: records.filter((record) => record.enabled).length,
        loaded: records.filter((record) => record.status === 'active').length,
        failed: failed.map((record) => ({ id: record.id, error: record.error ?? '' })),
      },
      memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
      eventLoopDelayMs: Number.isFinite(delay) ? Math.round(delay / 1e4) / 100 : 0,
    };
  }
}
