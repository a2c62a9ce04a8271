/**
 * Sandbox exec latency, warm: the same `exec true` through the tool choke point on the host
 * (the agent's main session) and inside a sandbox (a group session, mode "non-main"), the
 * sandbox already created. Other backends add themselves to BACKENDS.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTestKernel, type TestKernel } from '../../sdk/testing.js';

const plugin = (id: string) => fileURLToPath(new URL(`../../plugins/${id}`, import.meta.url));
const RUNS = 40;

interface Variant {
  name: string;
  sessionKey: string;
}

/** Slot holder → the sessions measured with it. */
const BACKENDS: Record<string, Variant[]> = {
  'sandbox-bwrap': [
    { name: 'host', sessionKey: 'agent:main:main' },
    { name: 'bwrap', sessionKey: 'agent:main:bench:group:1' },
  ],
};

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
    if (outcome.result.isError) throw new Error(`exec failed in ${sessionKey}: ${JSON.stringify(outcome.result.content)}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 5; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await once());
  return times;
}

export async function sandboxExecBench(line: (name: string, value: string, target: string, ok: boolean) => void): Promise<void> {
  for (const [backend, variants] of Object.entries(BACKENDS)) {
    const kernel = await createTestKernel({
      plugins: [plugin('tools-exec'), plugin('exec-approvals'), plugin(backend)],
      config: { plugins: { slots: { sandbox: backend } }, agents: { defaults: { sandbox: { mode: 'non-main', scope: 'agent', workspaceAccess: 'rw' } } } },
    });
    try {
      mkdirSync(kernel.paths.workspaceDir, { recursive: true });
      for (const variant of variants) {
        const times = await measure(kernel, variant.sessionKey);
        line(`sandbox exec \`true\` warm, ${variant.name} (p50 / p95)`, `${percentile(times, 50).toFixed(1)} / ${percentile(times, 95).toFixed(1)} ms`, 'recorded', true);
      }
    } finally {
      await kernel.dispose();
    }
  }
}
