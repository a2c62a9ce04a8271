/**
 * Exec latency of one trivial command (`true`), started and awaited to its exit status:
 * on the host (a `sh -c` child, what tools-exec does) and in a warm Docker sandbox (exec
 * create + start + inspect through the Engine API, what sandbox-docker does).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerSandboxBackend } from '../../plugins/sandbox-docker/backend.js';

export interface LatencyRow {
  label: string;
  p50: number;
  p99: number;
}

const RUNS = 100;
const WARMUP = 10;

async function measure(label: string, once: () => Promise<void>): Promise<LatencyRow> {
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await once();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { label, p50: times[Math.floor(RUNS * 0.5)]!, p99: times[Math.floor(RUNS * 0.99)]! };
}

export function hostExecLatency(): Promise<LatencyRow> {
  return measure('host (sh -c)', () => new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    child.on('error', reject);
    child.on('close', () => resolve());
  }));
}

/** undefined reason: measured; otherwise why Docker could not be measured. */
export async function dockerExecLatency(depsStateDir: string): Promise<LatencyRow | { skipped: string }> {
  if (!process.env.DOCKER_HOST) return { skipped: 'DOCKER_HOST unset (eval "$(scripts/start-dockerd.sh)")' };
  const backend = new DockerSandboxBackend({ env: process.env, deps: { stateDir: depsStateDir }, containerPrefix: 'claw-bench-' });
  const status = await backend.check();
  if (!status.ok) {
    if (!/image .* is missing/.test(status.reason)) return { skipped: status.reason };
    await backend.buildImage();
  }
  const workspace = mkdtempSync(join(tmpdir(), 'claw-bench-sbx-'));
  const sandbox = await backend.ensure({
    scopeKey: 'bench', scope: 'shared', agentId: 'main', sessionKey: 'bench', workspaceRoot: workspace, workspaceAccess: 'rw',
    workdir: '/workspace', network: 'none', binds: [], env: {}, limits: {}, configHash: 'bench',
  });
  try {
    return await measure('docker (warm container)', async () => {
      const result = await sandbox.exec({ command: ['true'] });
      if (result.exitCode !== 0) throw new Error(`sandbox exec failed: ${result.stderr}`);
    });
  } finally {
    await backend.remove(sandbox.id);
    rmSync(workspace, { recursive: true, force: true });
  }
}
