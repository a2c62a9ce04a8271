/**
 * The parts of OpenClaw's health and status answers claw's own snapshot lacks: the session
 * store summary, event-loop and process-memory readings, and the sections for machinery claw
 * does not have (background task ledger, worker pools, hosted desktop, secret owners), which
 * answer OpenClaw's empty values so its CLI and Control UI find every key they read.
 */
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import type { PluginApi } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import type { SessionService } from '../../sdk/sessions/index.js';
import { eventLoopDelayMonitor } from './health.js';

let lastUtilization = performance.eventLoopUtilization();
let lastCpu = process.cpuUsage();
let lastAt = Date.now();

/**
 * Load since the previous reading; the delay figures come from the gateway's one monitor, so
 * they cover the time since the gateway started listening (a reading does not reset them).
 */
export function eventLoopReading() {
  const histogram = eventLoopDelayMonitor();
  const utilization = performance.eventLoopUtilization(lastUtilization);
  const cpu = process.cpuUsage(lastCpu);
  const now = Date.now();
  const intervalMs = Math.max(1, now - lastAt);
  const cores = availableParallelism();
  const mainThreadCoreRatio = (cpu.user + cpu.system) / 1000 / intervalMs;
  const reading = {
    degraded: false,
    degradedSinceMs: null,
    reasons: [],
    intervalMs,
    delayP99Ms: Math.round(histogram.percentile(99) / 1e6),
    delayMaxMs: Math.round(histogram.max / 1e6),
    utilization: Math.round(utilization.utilization * 1000) / 1000,
    cpuCoreRatio: Math.round(mainThreadCoreRatio * 1000) / 1000,
    cpuBreakdown: { mainThreadCoreRatio: Math.round(mainThreadCoreRatio * 1000) / 1000, hostCpuCount: cores },
  };
  lastUtilization = performance.eventLoopUtilization();
  lastCpu = process.cpuUsage();
  lastAt = now;
  return reading;
}

/** Each agent's session store: its file, how many sessions, the most recent ones. */
export async function sessionStores(kernel: PluginApi['kernel']) {
  const sessions = await useService<SessionService>(kernel, 'sessions');
  const now = Date.now();
  const agents = sessions?.knownAgents() ?? [];
  return Promise.all(
    agents.map(async (agentId) => {
      const store = sessions!.store(agentId);
      const rows = await store.list();
      return {
        agentId,
        path: store.file,
        count: rows.length,
        recent: rows
          .slice(0, 5)
          .map(({ key, entry }) => ({ key, updatedAt: entry.updatedAt, age: now - entry.updatedAt })),
      };
    }),
  );
}

/** The fields of OpenClaw's `health` answer that claw's snapshot does not carry. */
export async function openclawHealthFields(kernel: PluginApi['kernel'], defaultAgentId: string, started: number) {
  const stores = await sessionStores(kernel);
  const own = stores.find((store) => store.agentId === defaultAgentId) ?? stores[0];
  const sessions = { path: own?.path ?? null, count: own?.count ?? 0, recent: own?.recent ?? [] };
  return {
    durationMs: Date.now() - started,
    configReload: { hotReloadStatus: 'active' },
    channels: {},
    channelOrder: [],
    channelLabels: {},
    heartbeatSeconds: null,
    defaultAgentId,
    agents: stores.map((store) => ({
      agentId: store.agentId,
      isDefault: store.agentId === defaultAgentId,
      heartbeat: null,
      sessions: { path: store.path, count: store.count, recent: store.recent },
    })),
    sessions,
    modelRuntime: { degraded: false, pendingAgents: [] },
    eventLoop: eventLoopReading(),
  };
}

/** The fields of OpenClaw's `status` answer that claw's own status does not carry. */
export async function openclawStatusFields(kernel: PluginApi['kernel'], version: string, defaultAgentId: string) {
  const stores = await sessionStores(kernel);
  const memory = process.memoryUsage();
  return {
    runtimeVersion: version,
    hostDesktop: { enabled: false, state: 'disabled', port: null },
    heartbeat: { defaultAgentId, agents: [] },
    channelSummary: [],
    queuedSystemEvents: [],
    degradedSecretOwners: [],
    degradedPlugins: [],
    tasks: { total: 0, active: 0, terminal: 0, failures: 0, byStatus: {}, byRuntime: {} },
    taskAudit: { total: 0, warnings: 0, errors: 0, byCode: {} },
    sessions: {
      paths: stores.map((store) => store.path),
      count: stores.reduce((sum, store) => sum + store.count, 0),
      defaults: {},
      recent: stores.flatMap((store) => store.recent.map((row) => ({ agentId: store.agentId, ...row }))),
      byAgent: stores,
    },
    modelRuntime: { degraded: false, pendingAgents: [] },
    eventLoop: eventLoopReading(),
    processMemory: {
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      externalBytes: memory.external,
      arrayBuffersBytes: memory.arrayBuffers,
    },
    workerPools: { transcriptReconciliation: null, modelCatalog: null },
    shutdownBudget: { timeoutMs: null, reserveMs: null, nativeStopBudget: null, activeWork: [], writeCustody: [] },
  };
}
