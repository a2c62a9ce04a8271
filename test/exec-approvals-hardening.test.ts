/**
 * Issue 28, the approvals side: safe-bin arguments read as getopt_long reads them (a unique
 * prefix of a long option is that option, so `wc --f=-` is `wc --files0-from=-`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { resolveLongOption } from '../plugins/exec-approvals/match.js';
import { REPO, tempDir } from './helpers.js';

const EXEC = join(REPO, 'plugins', 'tools-exec');
const APPROVALS = join(REPO, 'plugins', 'exec-approvals');
const kernels: TestKernel[] = [];

async function kernelWith(config: Record<string, unknown>, allowlist: unknown[]): Promise<TestKernel> {
  const stateDir = tempDir('claw-approvals28-');
  writeFileSync(join(stateDir, 'exec-approvals.json'), JSON.stringify({ version: 1, agents: { '*': { allowlist } } }), { mode: 0o600 });
  const kernel = await createTestKernel({ stateDir, plugins: [EXEC, APPROVALS], config });
  kernels.push(kernel);
  return kernel;
}

function exec(kernel: TestKernel, command: string, workspace: string, env?: Record<string, string>) {
  return kernel.plugins.kernelServices.tools.invoke({
    name: 'exec',
    params: { command, ...(env ? { env } : {}) },
    toolCallId: `call-${Math.random()}`,
    context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: workspace },
  });
}
const text = (outcome: { message: { content: Array<{ type: string; text?: string }> } }) =>
  outcome.message.content.map((part) => part.text ?? '').join('\n');

afterAll(async () => {
  for (const kernel of kernels) await kernel.stop();
});

describe('safe bins: long options as getopt_long reads them', () => {
  it('resolves a unique prefix, refuses an ambiguous or unknown one', () => {
    expect(resolveLongOption('f', ['bytes', 'files0-from', 'lines'])).toBe('files0-from');
    expect(resolveLongOption('lines', ['lines', 'lines-extra'])).toBe('lines');
    expect(resolveLongOption('s', ['skip-fields', 'skip-chars'])).toBeUndefined();
    expect(resolveLongOption('nope', ['lines'])).toBeUndefined();
    expect(resolveLongOption('', ['lines'])).toBeUndefined();
  });

  it('a refused option cannot be reached by abbreviation: wc --f=- reads no file, tail --fo follows nothing', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'off' } } }, [{ pattern: 'printf' }]);
    const ws = tempDir();
    // wc --files0-from=- would read the file named on stdin: a file read through a "stdin-only" filter.
    const read = await exec(kernel, "printf '/etc/hostname\\0' | wc --f=-", ws);
    expect(read.blocked, text(read)).toBe(true);
    expect(text(read)).not.toMatch(/\/etc\/hostname/);
    const refused = ['tail --fo', 'tail --f', 'tail --follow=name', 'wc --files0=-', 'uniq --s 1', 'wc --lines=2', 'wc --bogus'];
    for (const command of [...refused, 'head --lines', 'cut -d']) {
      expect((await exec(kernel, `printf x | ${command}`, ws)).blocked, command).toBe(true);
    }
  });

  it('ordinary filters still run, abbreviated or bundled', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'off' } } }, [{ pattern: 'printf' }]);
    const ws = tempDir();
    const cases: Array<[string, string]> = [
      ["printf 'a\\nb\\n' | wc --l", '2'],
      ["printf 'abc' | head --by 2", 'ab'],
      ["printf 'abc' | head --bytes=1", 'a'],
      ["printf 'a b' | cut -d ' ' -f2", 'b'],
      ["printf 'x\\ny\\n' | head -1", 'x'],
      ["printf 'x\\ny\\nz\\n' | tail -n1", 'z'],
      ["printf 'aab' | tr -s a", 'ab'],
      ["printf 'a\\na\\n' | uniq -c | tr -d ' '", '2a'],
      ["printf 'a-b' | cut -d- -f1 --complement", 'b'],
    ];
    for (const [command, expected] of cases) {
      const outcome = await exec(kernel, command, ws);
      expect(outcome.blocked, `${command}: ${text(outcome)}`).toBe(false);
      expect(text(outcome).trim(), command).toBe(expected);
    }
  });

  it('a configured safe bin without a profile takes no options: sort --compress-program is not a filter', async () => {
    const config = { tools: { exec: { security: 'allowlist', ask: 'off', safeBins: ['sort'] } } };
    const kernel = await kernelWith(config, [{ pattern: 'printf' }]);
    const ws = tempDir();
    expect(text(await exec(kernel, "printf 'b\\na\\n' | sort", ws)).trim()).toBe('a\nb');
    for (const command of ['sort --compress-program=sh', 'sort --compress-prog=sh', 'sort -o out', 'sort -r']) {
      expect((await exec(kernel, `printf x | ${command}`, ws)).blocked, command).toBe(true);
    }
  });
});
