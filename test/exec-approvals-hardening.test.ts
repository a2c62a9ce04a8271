/**
 * Issue 28, the approvals side: safe-bin arguments read as getopt_long reads them (a unique
 * prefix of a long option is that option, so `wc --f=-` is `wc --files0-from=-`), launchers
 * and a repository config that runs programs flagged in the approval prompt, the call's env
 * shown there (secrets masked), and `claw approvals allowlist add` warning about launchers.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { resolveLongOption } from '../plugins/exec-approvals/match.js';
import { claw, REPO, tempDir } from './helpers.js';

const EXEC = join(REPO, 'plugins', 'tools-exec');
const APPROVALS = join(REPO, 'plugins', 'exec-approvals');
/** Exec approvals read the calling session from the sessions plugin's stores (which list models). */
const SESSIONS = ['models', 'sessions'].map((id) => join(REPO, 'plugins', id));
const kernels: TestKernel[] = [];

async function kernelWith(config: Record<string, unknown>, allowlist: unknown[]): Promise<TestKernel> {
  const stateDir = tempDir('claw-approvals28-');
  writeFileSync(join(stateDir, 'exec-approvals.json'), JSON.stringify({ version: 1, agents: { '*': { allowlist } } }), {
    mode: 0o600,
  });
  const kernel = await createTestKernel({ stateDir, plugins: [EXEC, APPROVALS, ...SESSIONS], config });
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
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'off' } } }, [
      { pattern: 'printf' },
    ]);
    const ws = tempDir();
    // wc --files0-from=- would read the file named on stdin: a file read through a "stdin-only" filter.
    const read = await exec(kernel, "printf '/etc/hostname\\0' | wc --f=-", ws);
    expect(read.blocked, text(read)).toBe(true);
    expect(text(read)).not.toMatch(/\/etc\/hostname/);
    const refused = [
      'tail --fo',
      'tail --f',
      'tail --follow=name',
      'wc --files0=-',
      'uniq --s 1',
      'wc --lines=2',
      'wc --bogus',
    ];
    for (const command of [...refused, 'head --lines', 'cut -d']) {
      expect((await exec(kernel, `printf x | ${command}`, ws)).blocked, command).toBe(true);
    }
  });

  it('ordinary filters still run, abbreviated or bundled', async () => {
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'off' } } }, [
      { pattern: 'printf' },
    ]);
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

describe('what the person asked sees', () => {
  it('the call’s env (secrets masked), a launcher, and a repository config that runs programs', async () => {
    const allowlist = [{ pattern: 'git', argPattern: '^status$' }];
    const kernel = await kernelWith({ tools: { exec: { security: 'allowlist', ask: 'on-miss' } } }, allowlist);
    const found = await kernel.plugins.kernelServices.capabilities.find('service', 'exec-approvals');
    const service = found!.api as { resolve(id: string, d: string): string };
    const asked: any[] = [];
    kernel.plugins.kernelServices.protocol.onEmit((emitted) => {
      if (emitted.event !== 'exec.approval.requested') return;
      const payload = emitted.payload as { id: string; request: unknown };
      asked.push(payload.request);
      queueMicrotask(() => service.resolve(payload.id, 'deny'));
    });
    const ws = tempDir();
    execFileSync('git', ['init', '-q'], { cwd: ws });
    // Not allowlisted (argPattern): asked, with the launcher named.
    const denied = await exec(kernel, 'git log', ws, { GREETING: 'hi', SERVICE_TOKEN: 'tok-6d2f9a41c7e8' });
    expect(text(denied)).toMatch(/an operator denied it/);
    expect(asked[0]).toMatchObject({ command: 'git log', env: { GREETING: 'hi', SERVICE_TOKEN: '***' } });
    expect(asked[0].warnings).toEqual([expect.stringMatching(/^git is a launcher: it can run other programs/)]);
    expect(JSON.stringify(asked)).not.toContain('tok-6d2f9a41c7e8');
    // Allowlisted, but the repository's own config names a program: asked, and told why.
    execFileSync('git', ['config', 'core.sshCommand', 'touch pwned; ssh'], { cwd: ws });
    expect((await exec(kernel, 'git status', ws)).blocked).toBe(true);
    expect(asked).toHaveLength(2);
    const planted = expect.stringMatching(/repository's own git config sets core\.sshcommand/);
    expect(asked[1].warnings).toEqual([expect.stringMatching(/launcher/), planted]);
    // A refused env key: refused at once, no one is asked.
    expect(text(await exec(kernel, 'git status', ws, { GIT_DIR: '/tmp/elsewhere' }))).toMatch(
      /env may not set GIT_DIR \(/,
    );
    expect(asked).toHaveLength(2);
  });

  it('claw approvals allowlist add warns about a launcher (or a glob that matches one), not about other programs', async () => {
    const env = { OPENCLAW_STATE_DIR: tempDir('claw-approvals28-cli-') };
    const git = await claw(['approvals', 'allowlist', 'add', 'git'], env);
    expect(git.code, git.stderr).toBe(0);
    expect(git.stderr).toMatch(/^Warning: git is a launcher: .*sandbox/m);
    const glob = await claw(['approvals', 'allowlist', 'add', '/usr/bin/*'], env);
    expect(glob.stderr).toMatch(/\/usr\/bin\/\* also matches launchers/);
    const rg = await claw(['approvals', 'allowlist', 'add', '/usr/bin/rg'], env);
    expect(rg).toMatchObject({ code: 0, stderr: '' });
  });
});
