/**
 * What OpenClaw's Control UI asks the gateway about its host and itself on every tab:
 * update.status, system.info, diagnostics.lanes and diagnostics.stability, in OpenClaw's
 * payload shapes. Fields claw has no data for carry OpenClaw's empty value; tasks.list and
 * environments.list answer OpenClaw's empty lists, as claw has neither a task ledger nor
 * remote execution environments.
 */
import { randomUUID } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { arch, cpus, freemem, hostname, loadavg, platform, release, totalmem, type } from 'node:os';
import { clawVersion, ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import type { GatewayRuntime } from './runtime.js';

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
const ANY_PARAMS: JsonSchema = { type: 'object' };

/** One id per gateway process, so clients can tell a restart from a reconnect. */
const PROCESS_INSTANCE_ID = randomUUID();

function diskOf(path: string): { path: string; totalBytes: number; availableBytes: number } | undefined {
  try {
    const stats = statfsSync(path);
    const totalBytes = stats.blocks * stats.bsize;
    return totalBytes > 0 ? { path, totalBytes, availableBytes: stats.bavail * stats.bsize } : undefined;
  } catch {
    return undefined;
  }
}

export function registerHostMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;

  api.registerGatewayMethod('update.status', {
    params: ANY_PARAMS,
    scope: 'operator.admin',
    description:
      "Update state in OpenClaw's shape: no restart sentinel, no update known to the gateway (it never checks the network; `claw update status` does), plus claw's currentVersion.",
    handler: () => ({ sentinel: null, updateAvailable: null, currentVersion: clawVersion() }),
  });

  api.registerGatewayMethod('system.info', {
    params: ANY_PARAMS,
    scope: 'operator.read',
    description: 'The gateway host: OS, CPUs, memory, load, the state directory disk, process identity and uptime.',
    handler: () => {
      const cores = cpus();
      const loadAverage = loadavg();
      const disk = diskOf(kernel.paths.stateDir);
      const port = runtime.server?.address?.port;
      const memory = process.memoryUsage();
      return {
        machineName: hostname(),
        hostname: hostname(),
        platform: platform(),
        release: release(),
        arch: arch(),
        osLabel: `${type()} ${release()}`,
        ...(port !== undefined ? { port } : {}),
        nodeVersion: process.version,
        pid: process.pid,
        processInstanceId: PROCESS_INSTANCE_ID,
        uptimeMs: Math.round(process.uptime() * 1000),
        cpuCount: cores.length,
        ...(cores[0]?.model.trim() ? { cpuModel: cores[0].model.trim() } : {}),
        ...(loadAverage.some((value) => value !== 0) ? { loadAverage } : {}),
        memoryTotalBytes: totalmem(),
        memoryFreeBytes: freemem(),
        processMemory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, heapTotalBytes: memory.heapTotal },
        ...(disk
          ? {
              disks: [disk],
              diskTotalBytes: disk.totalBytes,
              diskAvailableBytes: disk.availableBytes,
              diskPath: disk.path,
            }
          : {}),
        // OpenClaw's utility model (a cheap model for titles and summaries) has no counterpart in claw.
        defaultAgentUtilityModel: { status: 'unavailable' },
      };
    },
  });

  api.registerGatewayMethod('diagnostics.lanes', {
    params: ANY_PARAMS,
    scope: 'operator.read',
    description:
      "The kernel's lane scheduler in OpenClaw's shape: the global lanes one by one, per-session lanes summed under dynamic.",
    handler: () => {
      const stats = kernel.lanes.allStats();
      const isSession = (lane: string) => lane.startsWith('session:');
      const lanes = stats
        .filter((lane) => !isSession(lane.lane))
        .toSorted((a, b) => a.lane.localeCompare(b.lane))
        .map((lane) => ({
          lane: lane.lane,
          queuedCount: lane.queued,
          activeCount: lane.active,
          maxConcurrent: lane.max,
          draining: false,
          generation: 0,
          blockedBy: null,
          // claw's scheduler also counts work done and waits: kept beside OpenClaw's fields.
          oldestQueuedMs: lane.oldestQueuedMs,
          longestWaitMs: lane.longestWaitMs,
          completed: lane.completed,
          failed: lane.failed,
        }));
      const sessions = stats.filter((lane) => isSession(lane.lane));
      const dynamic =
        sessions.length === 0
          ? null
          : {
              laneCount: sessions.length,
              activeCount: sessions.reduce((sum, lane) => sum + lane.active, 0),
              queuedCount: sessions.reduce((sum, lane) => sum + lane.queued, 0),
              queuedLaneCount: sessions.filter((lane) => lane.queued > 0).length,
            };
      return { ts: Date.now(), lanes, dynamic };
    },
  });

  api.registerGatewayMethod('diagnostics.stability', {
    params: ANY_PARAMS,
    scope: 'operator.read',
    description:
      "OpenClaw's stability recorder, empty: claw records no diagnostic events (its health and status carry memory and event-loop figures).",
    handler: () => ({
      generatedAt: new Date().toISOString(),
      capacity: 0,
      count: 0,
      dropped: 0,
      events: [],
      summary: { byType: {} },
    }),
  });

  api.registerGatewayMethod('tasks.list', {
    params: ANY_PARAMS,
    scope: 'operator.read',
    description:
      "OpenClaw's background task ledger, empty: claw's cron runs and subagents are listed by cron.* and sessions.*.",
    handler: () => ({ tasks: [] }),
  });

  api.registerGatewayMethod('environments.list', {
    params: ANY_PARAMS,
    scope: 'operator.read',
    description: 'Execution environments, empty: claw runs tools on the gateway host (or its sandboxes) only.',
    // As OpenClaw: naming a runtime asks to prepare it, which needs write.
    handler: (params: { runtimeId?: unknown }, ctx) => {
      const scopes = ctx.scopes ?? [];
      if (
        typeof params.runtimeId === 'string' &&
        params.runtimeId &&
        !scopes.includes('operator.write') &&
        !scopes.includes('operator.admin')
      )
        throw new ProtocolError(ErrorCodes.FORBIDDEN, 'missing scope: operator.write');
      return { environments: [] };
    },
  });
}
