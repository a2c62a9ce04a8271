/** `claw logs` over a running gateway's logs.tail, and `claw gateway status` probing it. */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, claw, startCliGateway, tempDir, waitFor } from './helpers.js';

describe('claw logs', () => {
  it('shows, filters and follows the gateway log; gateway status finds the gateway', async () => {
    const stateDir = tempDir('claw-logs-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const gw = await startCliGateway(env);
    try {
      const human = await claw(['logs', '--limit', '50'], env);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/^\d\d:\d\d:\d\d INFO {2}.*gateway listening/m);
      // The fields added for OpenClaw's readers are not repeated on a readable line.
      expect(human.stdout).not.toContain('_meta=');

      const json = await claw(['logs', '--json', '--limit', '50'], env);
      expect(json.code, json.stderr).toBe(0);
      const records = json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { msg?: string; level: number });
      expect(records.some((record) => record.msg?.startsWith('gateway listening'))).toBe(true);
      const warnings = await claw(['logs', '--json', '--level', 'warn'], env);
      expect(warnings.code, warnings.stderr).toBe(0);
      for (const line of warnings.stdout.trim().split('\n').filter(Boolean))
        expect(JSON.parse(line).level).toBeGreaterThanOrEqual(40);
      const badLevel = await claw(['logs', '--level', 'loud'], env);
      expect(badLevel).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('--level must be debug, info, warn or error'),
      });

      const status = await claw(['gateway', 'status', '--json'], env);
      const report = JSON.parse(status.stdout);
      expect(report.lock).toMatchObject({ pid: gw.child.pid, port: gw.port });
      expect(report.probe).toMatchObject({ ok: true, url: `ws://127.0.0.1:${gw.port}` });

      // --follow prints what is there, then each new line, until Ctrl-C.
      const follower = spawn(process.execPath, [CLI, 'logs', '--follow', '--json', '--interval', '100'], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      follower.stdout.on('data', (chunk) => (out += chunk));
      const exited = new Promise<number | null>((resolve) => follower.on('exit', (code) => resolve(code)));
      await waitFor(() => out.includes('gateway listening'), { timeoutMs: 30_000, what: 'the first page' });
      const marker = `follow-marker-${Date.now()}`;
      appendFileSync(
        join(stateDir, 'logs', 'gateway.log'),
        `${JSON.stringify({ level: 30, time: Date.now(), pid: 1, msg: marker })}\n`,
      );
      await waitFor(() => out.includes(marker), { timeoutMs: 30_000, what: 'the appended line' });
      follower.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  }, 120_000);
});
