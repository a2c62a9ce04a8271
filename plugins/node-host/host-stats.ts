/**
 * `node.host.stats`, the `node.event` a node host sends on connect and every 60 s (OpenClaw's
 * payload): CPU count, load average (when the OS reports one), memory and the disk of the
 * home directory.
 */
import { statfsSync } from 'node:fs';
import { cpus, freemem, homedir, loadavg, totalmem } from 'node:os';

export const HOST_STATS_EVENT = 'node.host.stats';
export const HOST_STATS_INTERVAL_MS = 60_000;

const bounded = (value: number, max = Number.MAX_SAFE_INTEGER) =>
  Number.isFinite(value) ? Math.max(0, Math.min(max, value)) : 0;

export function sampleHostStats(): Record<string, unknown> {
  const memoryTotalBytes = Math.round(bounded(totalmem()));
  const loads = loadavg().map((load) => bounded(load, 100_000));
  let disk: { diskTotalBytes: number; diskAvailableBytes: number } | undefined;
  try {
    const fs = statfsSync(homedir());
    const total = Math.round(bounded(fs.blocks * fs.bsize));
    disk = { diskTotalBytes: total, diskAvailableBytes: Math.round(bounded(fs.bavail * fs.bsize, total)) };
  } catch {
    // No disk figures on this platform.
  }
  return {
    cpuCount: Math.max(1, Math.min(4096, cpus().length)),
    ...(loads.some((load) => load !== 0) ? { loadAverage: loads } : {}),
    memoryTotalBytes,
    memoryFreeBytes: Math.round(bounded(freemem(), memoryTotalBytes)),
    ...disk,
  };
}
