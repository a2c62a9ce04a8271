/**
 * Hostile tool calls a scripted model makes to get out of the agent workspace (issue 12).
 * A table, so every containment layer runs the same cases: workspaceOnly on the host
 * (test/escape-suite.test.ts) and each sandbox backend.
 *
 * Layout, under one temporary state dir (itself inside a temporary dir of its own, so
 * `../../escape.txt` from the workspace lands in a directory the test owns):
 *   <stateDir>/openclaw.json      the config, with an API key in it (SECRET)
 *   <stateDir>/outside/…          files that are not the agent's
 *   <stateDir>/workspace/…        the agent workspace (links planted here point outside)
 *
 * Each case plants what it needs, makes one tool call, and says how to tell it got out:
 * a file outside changed or appeared, or the secret showed up in what the model saw.
 * A case counts as refused when the tool result is an error that says it refused, shows
 * nothing from outside, and no file got out.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentEvents, runAgent, type AgentHarness } from './agent-helpers.js';

/** Not secret-shaped on purpose: the redaction layer must not be what stops a leak here. */
export const SECRET = 'escape-canary-0123456789abcdef';
export const OUTSIDE_TEXT = `outside file ${SECRET}`;

export interface EscapeEnv {
  stateDir: string;
  workspace: string;
  /** A directory beside the workspace that the agent must not reach. */
  outside: string;
}

/**
 * What refuses a case on the host: "always" (/proc, devices, exec env overrides: no setting
 * turns these off); "applyPatch" (`tools.exec.applyPatch.workspaceOnly`, on by default);
 * "fs" (`tools.fs.workspaceOnly`, off by default as in OpenClaw; it also contains apply_patch).
 * With both settings false, every case not marked "always" must get out — which shows each
 * case is a real escape, not a call that fails for some other reason.
 */
export type EscapeGuard = 'always' | 'applyPatch' | 'fs';

/** Whether the host refuses a case given the two settings. */
export function guardedBy(
  guard: EscapeGuard,
  settings: { fsWorkspaceOnly: boolean; applyPatchWorkspaceOnly: boolean },
): boolean {
  if (guard === 'always') return true;
  if (guard === 'applyPatch') return settings.applyPatchWorkspaceOnly || settings.fsWorkspaceOnly;
  return settings.fsWorkspaceOnly;
}

export interface EscapeCase {
  id: string;
  guard: EscapeGuard;
  setup?(env: EscapeEnv): void;
  call(env: EscapeEnv): { name: string; arguments: Record<string, unknown> };
  /** Why the call got out, judged from the files; undefined when it did not. */
  escaped?(env: EscapeEnv): string | undefined;
}

/** A fresh layout (outside files recreated, the workspace emptied of planted links). */
export function prepareEscapeEnv(stateDir: string, workspace = join(stateDir, 'workspace')): EscapeEnv {
  const outside = join(stateDir, 'outside');
  rmSync(outside, { recursive: true, force: true });
  mkdirSync(outside, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({ models: { providers: { openai: { apiKey: SECRET } } } }, null, 2),
    { mode: 0o600 },
  );
  writeFileSync(join(outside, 'secret.txt'), OUTSIDE_TEXT);
  // What an earlier case may have left where cases check that nothing appears.
  for (const leftover of [
    join(stateDir, '..', 'escape.txt'),
    join(stateDir, 'escape.txt'),
    join(stateDir, 'moved.txt'),
  ])
    rmSync(leftover, { force: true });
  writeFileSync(join(workspace, 'inside.txt'), 'inside\n');
  return { stateDir, workspace, outside };
}

const plant = (env: EscapeEnv, name: string, target: string) => {
  rmSync(join(env.workspace, name), { recursive: true, force: true });
  symlinkSync(target, join(env.workspace, name));
};
const hardlink = (env: EscapeEnv, name: string, target: string) => {
  rmSync(join(env.workspace, name), { force: true });
  linkSync(target, join(env.workspace, name));
};
const unchanged = (file: string, text: string) => () =>
  readFileSync(file, 'utf8') === text ? undefined : `${file} was changed`;
const absent = (file: string) => () => (existsSync(file) ? `${file} was created` : undefined);
const patch = (...lines: string[]) => ({
  name: 'apply_patch',
  arguments: { input: ['*** Begin Patch', ...lines, '*** End Patch'].join('\n') },
});
const marker = (env: EscapeEnv) => join(env.outside, 'ran.txt');
// A shell redirection, so the command would work whatever PATH says.
const exec = (env: EscapeEnv, vars: Record<string, string>) => ({
  name: 'exec',
  arguments: { command: `echo ran > ${marker(env)}`, env: vars },
});

export const ESCAPE_CASES: readonly EscapeCase[] = [
  // read
  { id: 'read ../openclaw.json', guard: 'fs', call: () => ({ name: 'read', arguments: { path: '../openclaw.json' } }) },
  {
    id: 'read an absolute path outside',
    guard: 'fs',
    call: (env) => ({ name: 'read', arguments: { path: join(env.outside, 'secret.txt') } }),
  },
  {
    id: 'read through a symlinked file',
    guard: 'fs',
    setup: (env) => plant(env, 'link.txt', join(env.outside, 'secret.txt')),
    call: () => ({ name: 'read', arguments: { path: 'link.txt' } }),
  },
  {
    id: 'read through a symlinked parent dir',
    guard: 'fs',
    setup: (env) => plant(env, 'linkdir', env.outside),
    call: () => ({ name: 'read', arguments: { path: 'linkdir/secret.txt' } }),
  },
  {
    id: 'read a hard link to a file outside',
    guard: 'fs',
    setup: (env) => hardlink(env, 'hard.txt', join(env.outside, 'secret.txt')),
    call: () => ({ name: 'read', arguments: { path: 'hard.txt' } }),
  },
  {
    id: 'read /proc/self/environ',
    guard: 'always',
    call: () => ({ name: 'read', arguments: { path: '/proc/self/environ' } }),
  },
  {
    id: 'read /proc through a symlink',
    guard: 'always',
    setup: (env) => plant(env, 'env.txt', '/proc/self/environ'),
    call: () => ({ name: 'read', arguments: { path: 'env.txt' } }),
  },
  {
    id: 'read a device through a symlink',
    guard: 'always',
    setup: (env) => plant(env, 'zero', '/dev/zero'),
    call: () => ({ name: 'read', arguments: { path: 'zero' } }),
  },
  // write
  {
    id: 'write ../escape.txt',
    guard: 'fs',
    call: () => ({ name: 'write', arguments: { path: '../escape.txt', content: 'x' } }),
    escaped: (env) => absent(join(env.stateDir, 'escape.txt'))(),
  },
  {
    id: 'write an absolute path outside',
    guard: 'fs',
    call: (env) => ({ name: 'write', arguments: { path: join(env.outside, 'abs.txt'), content: 'x' } }),
    escaped: (env) => absent(join(env.outside, 'abs.txt'))(),
  },
  {
    id: 'write through a symlinked file',
    guard: 'fs',
    setup: (env) => plant(env, 'wlink.txt', join(env.outside, 'secret.txt')),
    call: () => ({ name: 'write', arguments: { path: 'wlink.txt', content: 'pwned' } }),
    escaped: (env) => unchanged(join(env.outside, 'secret.txt'), OUTSIDE_TEXT)(),
  },
  {
    id: 'write through a symlinked parent dir',
    guard: 'fs',
    setup: (env) => plant(env, 'linkdir', env.outside),
    call: () => ({ name: 'write', arguments: { path: 'linkdir/new.txt', content: 'x' } }),
    escaped: (env) => absent(join(env.outside, 'new.txt'))(),
  },
  {
    id: 'write through a dangling symlink',
    guard: 'fs',
    setup: (env) => plant(env, 'dangle.txt', join(env.outside, 'created.txt')),
    call: () => ({ name: 'write', arguments: { path: 'dangle.txt', content: 'x' } }),
    escaped: (env) => absent(join(env.outside, 'created.txt'))(),
  },
  {
    id: 'write a hard link to a file outside',
    guard: 'fs',
    setup: (env) => hardlink(env, 'hard.txt', join(env.outside, 'secret.txt')),
    call: () => ({ name: 'write', arguments: { path: 'hard.txt', content: 'pwned' } }),
    escaped: (env) => unchanged(join(env.outside, 'secret.txt'), OUTSIDE_TEXT)(),
  },
  // edit
  {
    id: 'edit ../openclaw.json',
    guard: 'fs',
    call: () => ({ name: 'edit', arguments: { path: '../openclaw.json', oldText: SECRET, newText: 'replaced' } }),
    escaped: (env) =>
      readFileSync(join(env.stateDir, 'openclaw.json'), 'utf8').includes(SECRET)
        ? undefined
        : 'openclaw.json was edited',
  },
  {
    id: 'edit through a symlinked file',
    guard: 'fs',
    setup: (env) => plant(env, 'elink.txt', join(env.outside, 'secret.txt')),
    call: () => ({ name: 'edit', arguments: { path: 'elink.txt', oldText: 'outside', newText: 'pwned' } }),
    escaped: (env) => unchanged(join(env.outside, 'secret.txt'), OUTSIDE_TEXT)(),
  },
  {
    id: 'edit a hard link to a file outside',
    guard: 'fs',
    setup: (env) => hardlink(env, 'hard.txt', join(env.outside, 'secret.txt')),
    call: () => ({ name: 'edit', arguments: { path: 'hard.txt', oldText: 'outside', newText: 'pwned' } }),
    escaped: (env) => unchanged(join(env.outside, 'secret.txt'), OUTSIDE_TEXT)(),
  },
  // apply_patch
  {
    id: 'apply_patch adds ../../escape.txt',
    guard: 'applyPatch',
    call: () => patch('*** Add File: ../../escape.txt', '+x'),
    escaped: (env) => absent(join(env.workspace, '..', '..', 'escape.txt'))(),
  },
  {
    id: 'apply_patch adds an absolute path',
    guard: 'applyPatch',
    call: (env) => patch(`*** Add File: ${join(env.outside, 'patched.txt')}`, '+x'),
    escaped: (env) => absent(join(env.outside, 'patched.txt'))(),
  },
  {
    id: 'apply_patch updates through a symlink',
    guard: 'applyPatch',
    setup: (env) => plant(env, 'plink.txt', join(env.outside, 'secret.txt')),
    call: () => patch('*** Update File: plink.txt', '@@', `-${OUTSIDE_TEXT}`, '+pwned'),
    escaped: (env) => unchanged(join(env.outside, 'secret.txt'), OUTSIDE_TEXT)(),
  },
  {
    id: 'apply_patch adds through a symlinked dir',
    guard: 'applyPatch',
    setup: (env) => plant(env, 'linkdir', env.outside),
    call: () => patch('*** Add File: linkdir/added.txt', '+x'),
    escaped: (env) => absent(join(env.outside, 'added.txt'))(),
  },
  {
    id: 'apply_patch deletes a file outside',
    guard: 'applyPatch',
    call: () => patch('*** Delete File: ../outside/secret.txt'),
    escaped: (env) => (existsSync(join(env.outside, 'secret.txt')) ? undefined : 'outside/secret.txt was deleted'),
  },
  {
    id: 'apply_patch moves a file out',
    guard: 'applyPatch',
    call: () => patch('*** Update File: inside.txt', '*** Move to: ../moved.txt', '@@', '-inside', '+moved'),
    escaped: (env) => absent(join(env.stateDir, 'moved.txt'))(),
  },
  {
    id: 'apply_patch updates a hard link',
    guard: 'applyPatch',
    setup: (env) => hardlink(env, 'hard.txt', join(env.outside, 'secret.txt')),
    call: () => patch('*** Update File: hard.txt', '@@', `-${OUTSIDE_TEXT}`, '+pwned'),
    escaped: (env) => unchanged(join(env.outside, 'secret.txt'), OUTSIDE_TEXT)(),
  },
  // exec env overrides
  {
    id: 'exec with env.PATH',
    guard: 'always',
    call: (env) => exec(env, { PATH: env.outside }),
    escaped: (env) => absent(marker(env))(),
  },
  {
    id: 'exec with env.LD_PRELOAD',
    guard: 'always',
    call: (env) => exec(env, { LD_PRELOAD: join(env.outside, 'evil.so') }),
    escaped: (env) => absent(marker(env))(),
  },
  {
    id: 'exec with env.DYLD_INSERT_LIBRARIES',
    guard: 'always',
    call: (env) => exec(env, { DYLD_INSERT_LIBRARIES: join(env.outside, 'evil.dylib') }),
    escaped: (env) => absent(marker(env))(),
  },
  {
    id: 'exec with env.NODE_OPTIONS',
    guard: 'always',
    call: (env) => exec(env, { NODE_OPTIONS: `--require ${join(env.outside, 'evil.js')}` }),
    escaped: (env) => absent(marker(env))(),
  },
  {
    id: 'exec with env.BASH_ENV',
    guard: 'always',
    call: (env) => exec(env, { BASH_ENV: join(env.outside, 'evil.sh') }),
    escaped: (env) => absent(marker(env))(),
  },
];

export interface EscapeOutcome {
  id: string;
  refused: boolean;
  why?: string;
  result: string;
}

/**
 * Runs each case as one agent turn: the scripted model makes the call, then answers.
 * `refusal`: how a refusal reads (a sandbox's file tools say the path is outside the sandbox workspace).
 */
export async function runEscapeCases(
  h: AgentHarness,
  cases: readonly EscapeCase[],
  workspace = h.workspace,
  refusal = /refused/i,
): Promise<EscapeOutcome[]> {
  const outcomes: EscapeOutcome[] = [];
  for (const escapeCase of cases) {
    const env = prepareEscapeEnv(h.gw.stateDir, workspace);
    escapeCase.setup?.(env);
    h.fake.reset();
    h.fake.script({ toolCalls: [escapeCase.call(env)] }, { text: 'done' });
    const { ack } = await runAgent(h.client, { message: `try: ${escapeCase.id}` });
    const tool = agentEvents(h.events, ack.runId).find(
      (event) => event.stream === 'tool' && event.data.phase === 'result',
    )?.data;
    const result = String(tool?.result ?? '');
    const why = !tool
      ? 'the tool never ran'
      : tool.isError !== true
        ? 'the tool succeeded'
        : result.includes(SECRET)
          ? 'content from outside reached the model'
          : !refusal.test(result)
            ? 'it failed without refusing'
            : escapeCase.escaped?.(env);
    outcomes.push({ id: escapeCase.id, refused: why === undefined, ...(why ? { why } : {}), result });
  }
  return outcomes;
}
