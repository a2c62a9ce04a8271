/**
 * Everything claw creates under the state dir is owner-only (directories 0700, files 0600),
 * whatever the umask: the flows that create state run against a fresh state dir with the
 * common umask 022, then the whole tree is walked.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelAccess } from '../plugins/channels/access.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { claw, startCliGateway, tempDir, writePlugin } from './helpers.js';

let fake: FakeLlm;
let umask: number;
beforeAll(async () => {
  // Children inherit it: every claw process below starts with 022, so only explicit modes protect.
  umask = process.umask(0o022);
  fake = await startFakeLlm();
});
afterAll(async () => {
  process.umask(umask);
  await fake.close();
});

/** Every entry under `root` (root included) whose mode is not 0700 (dirs) / 0600 (files). */
function notPrivate(root: string): string[] {
  const out: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const want = stat.isDirectory() ? 0o700 : 0o600;
    const mode = stat.mode & 0o777;
    if (mode !== want) out.push(`${relative(root, path) || '.'} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return out;
}

function listTree(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      out.push(relative(root, path));
      if (lstatSync(path).isDirectory()) visit(path);
    }
  };
  visit(root);
  return out;
}

describe('state dir permissions', () => {
  it('creates every directory 0700 and every file 0600 under umask 022', async () => {
    // The state dir does not exist yet: claw creates it, too.
    const stateDir = join(tempDir('claw-perms-'), 'state');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const ok = async (args: string[], extraEnv: Record<string, string> = {}) => {
      const result = await claw(args, { ...env, ...extraEnv });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      return result;
    };

    // Config and workspace templates, then config edits (with a .bak of the previous file).
    await ok(['setup']);
    await ok(['config', 'set', 'agents.defaults.model', 'openai/gpt-4.1']);
    await ok([
      'config',
      'set',
      'models.providers.openai',
      JSON.stringify({ baseUrl: fake.openaiBaseUrl, apiKey: 'sk-perms' }),
    ]);

    // An agent turn: session store, transcript, auth-profile usage.
    fake.script({ text: 'Hello.' });
    await ok(['agent', '--local', '--message', 'hi']);

    // The memory index (SQLite) over a note the user wrote (their file, their mode).
    writeFileSync(join(stateDir, 'workspace', 'memory', '2025-01-01.md'), '# Notes\n\nThe garden needs water.\n', {
      mode: 0o600,
    });
    await ok(['memory', 'index']);

    // Channel pairing: a request from a stranger, approved from the command line.
    const request = new ChannelAccess(stateDir).requestPairing('telegram', 'default', { id: '4242' });
    await ok(['pairing', 'approve', 'telegram', request!.code]);

    // The operator's device identity (created even when no gateway answers).
    expect((await claw(['health'], env)).code).toBe(1);

    // A TypeScript plugin: installed (staged copy, validator cache) and loaded (jiti cache).
    const source = writePlugin(join(tempDir(), 'greeter'), {
      manifest: {
        id: 'greeter',
        version: '1.0.0',
        tools: ['greet'],
        configSchema: {
          type: 'object',
          additionalProperties: false,
          properties: { greeting: { type: 'string', default: 'hello' } },
        },
      },
      entryFile: 'index.ts',
      code: `import { definePlugin, textResult } from 'claw/sdk';
        export default definePlugin<{ greeting: string }>({ id: 'greeter', register(api) {
          api.registerTool({ name: 'greet', description: 'Greets', parameters: { type: 'object' }, execute: () => textResult(api.config.greeting) });
        } });`,
      files: { 'lib/extra.txt': 'data\n' },
    });
    await ok(['plugins', 'install', source]);
    const doctor = await ok(['plugins', 'doctor']);
    expect(doctor.stdout).toContain('0 failed');

    const tree = listTree(stateDir);
    for (const made of [
      'openclaw.json',
      'openclaw.json.bak',
      'workspace/AGENTS.md',
      'agents/main/sessions/sessions.json',
      'agents/main/agent/auth-profiles.json',
      'memory/main.sqlite',
      'credentials/telegram-allowFrom.json',
      'identity/device.json',
      'extensions/greeter/lib/extra.txt',
      'cache/validators',
      'cache/jiti',
    ]) {
      expect(tree, made).toContain(made);
    }
    expect(tree.some((path) => /^agents\/main\/sessions\/.+\.jsonl$/.test(path))).toBe(true);
    expect(readdirSync(join(stateDir, 'cache', 'jiti')).length).toBeGreaterThan(0);
    expect(readdirSync(join(stateDir, 'cache', 'validators')).length).toBeGreaterThan(0);
    expect(notPrivate(stateDir)).toEqual([]);
  });

  it('tightens a pre-existing 0755 state dir to 0700 at gateway start, and says so in the log', async () => {
    const stateDir = tempDir('claw-perms-');
    chmodSync(stateDir, 0o755);
    const gateway = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    expect(lstatSync(stateDir).mode & 0o777).toBe(0o700);
    const line = `state dir ${stateDir} was 0755 (other users could read what is in it): tightened to 0700`;
    expect(gateway.stdout()).toContain(line);
    // Its signal handlers are installed once start-up is over, which a first request waits for.
    expect((await claw(['health'], { OPENCLAW_STATE_DIR: stateDir })).code).toBe(0);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(readFileSync(join(stateDir, 'logs', 'gateway.log'), 'utf8')).toContain(line);
  });

  it('tightens a loose state dir where the CLI opens it; audit and doctor see it as it is; /tmp-like dirs stay', async () => {
    const stateDir = tempDir('claw-perms-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    // The audit and doctor report a loose state dir, so they must not change it first.
    chmodSync(stateDir, 0o775);
    const audit = await claw(['security', 'audit', '--json'], env);
    const checkIds = JSON.parse(audit.stdout).findings.map((finding: { checkId: string }) => finding.checkId);
    expect(checkIds).toContain('fs.state_dir.perms_group_writable');
    await claw(['doctor'], env);
    expect(lstatSync(stateDir).mode & 0o777).toBe(0o775);

    const listed = await claw(['plugins', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(lstatSync(stateDir).mode & 0o777).toBe(0o700);
    const warning = `warning: state dir ${stateDir} was 0775 (other users could change what is in it): tightened to 0700\n`;
    expect(listed.stderr).toContain(warning);
    // Once tight, nothing more is said.
    expect((await claw(['plugins', 'list', '--json'], env)).stderr).not.toContain('state dir');

    // A sticky dir (OPENCLAW_STATE_DIR=/tmp by mistake) belongs to everyone: never tightened.
    const shared = join(tempDir('claw-perms-'), 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const inShared = await claw(['plugins', 'list', '--json'], { OPENCLAW_STATE_DIR: shared });
    expect(inShared.code, inShared.stderr).toBe(0);
    expect(lstatSync(shared).mode & 0o7777).toBe(0o1777);
  });

  it('leaves an existing directory with its own mode (the audit reports it instead)', async () => {
    const stateDir = tempDir('claw-perms-');
    mkdirSync(join(stateDir, 'agents'), { mode: 0o755 });
    writeFileSync(join(stateDir, 'openclaw.json'), '{}\n', { mode: 0o644 });
    const result = await claw(['config', 'set', 'agents.defaults.timeoutSeconds', '60'], {
      OPENCLAW_STATE_DIR: stateDir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(lstatSync(join(stateDir, 'agents')).mode & 0o777).toBe(0o755);
    // The config is written anew, and its backup is a new file too: both 0600.
    expect(lstatSync(join(stateDir, 'openclaw.json')).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(stateDir, 'openclaw.json.bak')).mode & 0o777).toBe(0o600);
  });
});
