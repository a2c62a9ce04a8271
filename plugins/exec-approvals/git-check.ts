/**
 * Git segments, judged before an allowlist may cover them. On the host, exec runs git with
 * the fixed-name keys that run programs turned off (tools-exec's git.ts); what is left is asked
 * of git itself, in the directory the command runs in and with the options it was given:
 *   - the subcommand must be one of git's own commands, never an alias or a git-<name> found
 *     on PATH (git tries those only for names that are not its own);
 *   - the repository's own config (local and worktree scopes, includes resolved) must hold
 *     only keys known to run nothing — a `filter.<driver>.clean`, `diff.<driver>.textconv`,
 *     `credential.helper` or `core.sshCommand` written by a model with the file tools would
 *     otherwise run as soon as an allowed `git status` or `git fetch` needs it.
 * Git reads the config, not us, so repository discovery (`.git` files, `-C`, `--git-dir`,
 * worktrees) is exactly what the command would get.
 */
import { execFile } from 'node:child_process';
import { basename } from 'node:path';
import type { ExecEnvService } from '../../sdk/exec/index.js';
import type { Segment } from './match.js';

const TIMEOUT_MS = 10_000;
/** git --list-cmds per git binary: the list only changes when git is replaced. */
const commandLists = new Map<string, Promise<Set<string> | undefined>>();

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, env, timeout: TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr: stderr || (error && typeof error.code !== 'number' ? error.message : '') });
      },
    );
  });
}

function gitCommands(git: string, env: Record<string, string>): Promise<Set<string> | undefined> {
  let list = commandLists.get(git);
  if (!list) {
    // From "/", outside any repository: the list of builtins and programs in git's exec path.
    list = run(git, ['--list-cmds=builtins,main'], '/', env).then((ran) =>
      ran.code === 0 ? new Set(ran.stdout.split('\n').filter(Boolean)) : undefined,
    );
    commandLists.set(git, list);
  }
  return list;
}

/** Git's own options before the subcommand: those that take the next word as their value. */
const GLOBAL_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--config-env',
]);
/** Options that also come as `--name=value`. */
const GLOBAL_EQUALS = [
  '--git-dir=',
  '--work-tree=',
  '--namespace=',
  '--super-prefix=',
  '--config-env=',
  '--exec-path=',
  '--list-cmds=',
];
const GLOBAL_FLAGS = new Set([
  '-p',
  '--paginate',
  '-P',
  '--no-pager',
  '--no-replace-objects',
  '--bare',
  '--literal-pathspecs',
  '--no-literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--no-optional-locks',
  '--exec-path',
  '--html-path',
  '--man-path',
  '--info-path',
]);

interface GitInvocation {
  /** Git's own options, as given (they decide which repository and config apply). */
  globals: string[];
  /** The command git runs: a builtin, a git-<name> program or an alias; undefined for `git --version` alone. */
  subcommand?: string;
}

/** Split git's arguments into its own options and the subcommand; undefined when an option is unknown. */
function gitInvocation(args: readonly string[]): GitInvocation | undefined {
  const globals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('-')) return { globals, subcommand: arg };
    // `git --help x` is `git help x`, `git --version` is `git version`.
    if (arg === '-h' || arg === '--help') return { globals, subcommand: 'help' };
    if (arg === '-v' || arg === '--version') return { globals, subcommand: 'version' };
    if (GLOBAL_WITH_VALUE.has(arg)) {
      if (i + 1 >= args.length) return undefined;
      globals.push(arg, args[++i]!);
    } else if (GLOBAL_FLAGS.has(arg) || GLOBAL_EQUALS.some((prefix) => arg.startsWith(prefix))) {
      globals.push(arg);
    } else {
      return undefined;
    }
  }
  return { globals };
}

const firstLine = (text: string) => text.trim().split('\n')[0] || 'no output';

/** Why an allowlist may not cover this git segment, or undefined when it may. Other programs: undefined. */
export async function gitProblem(
  segment: Segment,
  cwd: string,
  env: Record<string, string>,
  execEnv: Pick<ExecEnvService, 'riskyGitConfig'>,
): Promise<string | undefined> {
  const git = segment.resolvedPath;
  if (!git || basename(git) !== 'git') return undefined;
  const invocation = gitInvocation(segment.argv.slice(1));
  if (!invocation)
    return `git ${segment.argv.slice(1).join(' ')}: it uses an option of git's own that this check does not know`;
  if (invocation.subcommand !== undefined) {
    const commands = await gitCommands(git, env);
    if (!commands) return `could not list git's own commands (${git} --list-cmds failed)`;
    if (!commands.has(invocation.subcommand)) {
      return (
        `"git ${invocation.subcommand}" is not one of git's own commands: git would run an alias from the repository's config ` +
        `or a git-${invocation.subcommand} program from PATH, which no allowlist entry can vouch for`
      );
    }
  }
  const listed = await run(
    git,
    [...invocation.globals, 'config', '--list', '--show-scope', '--name-only', '-z'],
    cwd,
    env,
  );
  if (listed.code !== 0) return `could not read the git config this command would use (${firstLine(listed.stderr)})`;
  const risky = execEnv.riskyGitConfig(listed.stdout);
  if (risky.length === 0) return undefined;
  const shown = risky.slice(0, 5).join(', ') + (risky.length > 5 ? ` and ${risky.length - 5} more` : '');
  return (
    `the repository's own git config sets ${shown}, which can make git run other programs; ` +
    'anything that can write files in the workspace could have put it there'
  );
}
