/**
 * Exec latency of `true` on the host vs in a warm sandbox, each measured the same way:
 * `exec` through the tool choke point (`invokeTool`: routing, policy, hooks, the tool's
 * spawn, masking) and awaited to its result. One kernel per backend with
 * `agents.defaults.sandbox.mode: "non-main"`: the agent's main session runs on the host,
 * a group session in that backend's sandbox (created before timing starts).
 */
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runtimeDepsDir } from '../../host/runtime-deps.js';
import type { SandboxBackend } from '../../sdk/index.js';
import { createTestKernel, type TestKernel } from '../../sdk/testing.js';
import type { SandboxDockerService } from '../../plugins/sandbox-docker/index.js';

const plugin = (id: string) => fileURLToPath(new URL(`../../plugins/${id}`, import.meta.url));
/** Where tests and CI keep dockerode (test/docker-helpers.ts DOCKER_DEPS_STATE). */
const DOCKER_DEPS_STATE = fileURLToPath(new URL('../../../.cache/docker-runtime-state', import.meta.url));
const WARMUP = 10;
const RUNS = 100;
const MAIN = 'agent:main:main';
const GROUP = 'agent:main:bench:group:1';

interface Backend {
  row: string;
  plugin: string;
  /** Why it cannot be measured here; undefined when it can. */
  unavailable(): string | undefined;
  prepare?(kernel: TestKernel): Promise<void>;
}

/** Slot holder → how its row is labelled and prepared. The host row comes from the first kernel's main session. */
const BACKENDS: Backend[] = [
  {
    row: 'bwrap (warm)',
    plugin: 'sandbox-bwrap',
    unavailable: () =>
      existsSync('/usr/bin/bwrap') ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)',
  },
  {
    row: 'docker (warm)',
    plugin: 'sandbox-docker',
    unavailable: () => (process.env.DOCKER_HOST ? undefined : 'DOCKER_HOST unset (eval "$(scripts/start-dockerd.sh)")'),
    async prepare(kernel) {
      // dockerode from the shared cache, the image built through the plugin's service if missing.
      mkdirSync(kernel.stateDir, { recursive: true, mode: 0o700 });
      symlinkSync(runtimeDepsDir(DOCKER_DEPS_STATE), runtimeDepsDir(kernel.stateDir));
      const backend = (await kernel.capabilities.slot('sandbox'))!;
      const status = await backend.check();
      if (!status.ok) {
        if (!/image .* is missing/.test(status.reason)) throw new Error(status.reason);
        await ((await kernel.capabilities.get('service', 'sandbox-docker')).api as SandboxDockerService).buildImage();
      }
    },
  },
];

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(kernel: TestKernel, sessionKey: string): Promise<number[]> {
  const once = async () => {
    const started = performance.now();
    const outcome = await kernel.plugins.kernelServices.tools.invoke({
      name: 'exec',
      params: { command: 'true' },
      toolCallId: 'bench',
      context: { agentId: 'main', sessionKey, workspaceDir: kernel.paths.workspaceDir },
    });
    if (outcome.result.isError)
      throw new Error(`exec failed in ${sessionKey}: ${JSON.stringify(outcome.result.content)}`);
    return performance.now() - started;
  };
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await once());
  return times;
}

type Line = (name: string, value: string, target: string, ok: boolean) => void;

function row(line: Line, name: string, times: number[]): void {
  line(
    `exec \`true\` p50 / p99, ${name}`,
    `${percentile(times, 50).toFixed(1)} / ${percentile(times, 99).toFixed(1)} ms`,
    '(info)',
    true,
  );
}

export async function sandboxExecBench(line: Line): Promise<void> {
  let hostMeasured = false;
  for (const backend of BACKENDS) {
    const missing = backend.unavailable();
    if (missing) {
      line(`exec \`true\`, ${backend.row}`, 'skipped', missing, true);
      continue;
    }
    const kernel = await createTestKernel({
      plugins: [plugin('tools-exec'), plugin('exec-approvals'), plugin(backend.plugin)],
      env: { DOCKER_HOST: process.env.DOCKER_HOST },
      config: {
        plugins: { slots: { sandbox: backend.plugin } },
        agents: {
          defaults: {
            sandbox: {
              mode: 'non-main',
              scope: 'agent',
              workspaceAccess: 'rw',
              docker: { containerPrefix: 'claw-bench-' },
            },
          },
        },
      },
    });
    try {
      mkdirSync(kernel.paths.workspaceDir, { recursive: true });
      await backend.prepare?.(kernel);
      if (!hostMeasured) (row(line, 'host', await measure(kernel, MAIN)), (hostMeasured = true));
      row(line, backend.row, await measure(kernel, GROUP));
    } finally {
      const slot: SandboxBackend | undefined = await kernel.capabilities.slot('sandbox').catch(() => undefined);
      for (const info of (await slot?.list().catch(() => [])) ?? []) await slot!.remove(info.id).catch(() => {});
      await kernel.dispose();
    }
  }
}
