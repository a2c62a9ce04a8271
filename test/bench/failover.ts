/**
 * failover: how long `claw agent --local` takes to answer when its primary model fails and a
 * fallback is configured — a primary that always answers 500, one that hangs past its
 * `timeoutSeconds` (5), and one whose stream is cut part-way every time — against the fake
 * LLM server on 127.0.0.1. Also counts how often the cut stream's partial text was printed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeLlm, type RecordedRequest, type ScriptStep } from '../fakes/llm-server.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

interface Scenario {
  label: string;
  primary: string;
  step: () => ScriptStep;
  target: number;
}

const SCENARIOS: Scenario[] = [
  {
    label: 'always-500 primary',
    primary: 'openai/broken',
    step: () => ({ error: { status: 500, message: 'The server had an error while processing your request.' } }),
    target: 10_000,
  },
  { label: 'hung primary (timeoutSeconds 5)', primary: 'slow/hung', step: () => ({ hang: true }), target: 10_000 },
  {
    label: 'stream cut every time',
    primary: 'openai/cut',
    step: () => ({ text: 'PARTIAL-', cut: true }),
    target: 10_000,
  },
];

function run(cli: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'agent', '--local', '-m', 'hello'], { env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ stdout, stderr, code }));
  });
}

export async function failoverBench(cli: string, line: Line): Promise<void> {
  const fake = await startFakeLlm();
  try {
    for (const scenario of SCENARIOS) {
      const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-failover-'));
      const config = {
        agents: { defaults: { model: { primary: scenario.primary, fallbacks: ['openai/fallback'] } } },
        models: {
          providers: {
            openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-bench' },
            slow: { baseUrl: fake.openaiBaseUrl, api: 'openai-completions', timeoutSeconds: 5 },
          },
        },
      };
      writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config));
      fake.reset();
      fake.respond((request: RecordedRequest) =>
        request.body.model === 'fallback' ? { text: 'Answered by the fallback.' } : scenario.step(),
      );
      const started = performance.now();
      const result = await run(cli, { ...process.env, OPENCLAW_STATE_DIR: stateDir });
      const elapsed = performance.now() - started;
      const answered = result.code === 0 && result.stdout.includes('Answered by the fallback.');
      const primaryRequests = fake.requests.filter((request) => request.body.model !== 'fallback').length;
      line(
        `failover: ${scenario.label}`,
        answered ? `${(elapsed / 1000).toFixed(2)} s` : 'no answer',
        `≤ ${scenario.target / 1000} s`,
        answered && elapsed <= scenario.target,
      );
      line('  requests to the primary', String(primaryRequests), '(info)', true);
      if ('cut' in scenario.step()) {
        const printed = result.stdout.split('PARTIAL-').length - 1;
        line('  partial text printed', `${printed}×`, '≤ 1×', printed <= 1);
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
  } finally {
    await fake.close();
  }
}
