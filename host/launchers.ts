/**
 * Launchers: programs whose job includes running other programs or code they are given —
 * interpreters, shells, build tools, package managers, git, wrappers like env/xargs/find.
 * Allowing one on the host without a sandbox allows far more than the command line shows
 * (`git` runs hooks, pagers and aliases; `npm` runs package scripts; `make` runs recipes;
 * `find -exec`, `awk 'system()'`…), so approvals flag them and `claw security audit` can too.
 * The audit reads this file; the approver (a plugin) asks the host's "launchers" service.
 */
import { basename } from 'node:path';
import type { Launchers } from '../sdk/exec/index.js';

/** Every launcher by name (versioned interpreter names aside, see VERSIONED). */
export const LAUNCHER_NAMES: ReadonlySet<string> = new Set([
  // Shells and shell-like wrappers.
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'fish',
  'csh',
  'tcsh',
  'busybox',
  'toybox',
  'env',
  'xargs',
  'find',
  'nohup',
  'timeout',
  'nice',
  'ionice',
  'stdbuf',
  'setsid',
  'time',
  'watch',
  'flock',
  'sudo',
  'su',
  'doas',
  'pkexec',
  'chroot',
  'unshare',
  'nsenter',
  'systemd-run',
  'dbus-run-session',
  'script',
  'expect',
  'parallel',
  'tmux',
  'screen',
  'strace',
  'ltrace',
  'gdb',
  'valgrind',
  'entr',
  'at',
  'batch',
  'crontab',
  // Text tools that can run commands (sqlite3's .shell), or read any file their options name (jq --rawfile).
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'sed',
  'vi',
  'vim',
  'nvim',
  'view',
  'ex',
  'emacs',
  'less',
  'more',
  'man',
  'sqlite3',
  'jq',
  // Interpreters and runtimes.
  'node',
  'nodejs',
  'deno',
  'bun',
  'bunx',
  'python',
  'pypy',
  'perl',
  'ruby',
  'irb',
  'php',
  'lua',
  'luajit',
  'R',
  'Rscript',
  'java',
  'jshell',
  'groovy',
  'scala',
  'kotlin',
  'dotnet',
  'pwsh',
  'powershell',
  'tclsh',
  'wish',
  'guile',
  'racket',
  'sbcl',
  'erl',
  'elixir',
  'iex',
  'julia',
  'swift',
  'osascript',
  // Package managers and build tools: they run project scripts, hooks and recipes.
  'npm',
  'npx',
  'pnpm',
  'pnpx',
  'yarn',
  'corepack',
  'pip',
  'pipx',
  'uv',
  'uvx',
  'poetry',
  'pipenv',
  'conda',
  'gem',
  'bundle',
  'bundler',
  'rake',
  'composer',
  'cargo',
  'rustup',
  'go',
  'make',
  'gmake',
  'cmake',
  'ninja',
  'meson',
  'gradle',
  'gradlew',
  'mvn',
  'mvnw',
  'ant',
  'sbt',
  'bazel',
  'just',
  'task',
  // Version control, remote and container tools that run configured or remote commands.
  'git',
  'hg',
  'svn',
  'ssh',
  'scp',
  'sftp',
  'rsync',
  'tar',
  'zip',
  'docker',
  'podman',
  'kubectl',
  'helm',
  'terraform',
  'ansible',
  'ansible-playbook',
  'xdg-open',
  'open',
]);

/** Versioned interpreter names: python3, python3.11, perl5.36, node20, php8.2, ruby3.1, pip3, lua5.4. */
const VERSIONED = /^(python|pypy|pip|perl|ruby|php|node|lua|tclsh|wish|guile|java)[0-9][0-9.]*$/;

/** Is this program (a bare name or a path; the last path part counts) a launcher? */
export function isLauncherBinary(nameOrPath: string): boolean {
  const name = basename(nameOrPath);
  return LAUNCHER_NAMES.has(name) || VERSIONED.test(name);
}

/** What an approval prompt or audit says about allowing a launcher on the host. */
export function launcherWarning(nameOrPath: string): string {
  const name = basename(nameOrPath);
  return (
    `${name} is a launcher: it can run other programs or code (scripts, hooks, aliases, recipes, subcommands), ` +
    'so allowing it on the host without a sandbox allows more than this command line shows'
  );
}

/** The host's "launchers" service. */
export const launchersService: Launchers = { isLauncher: isLauncherBinary, warning: launcherWarning };
