/**
 * The audit's view of launchers (host/launchers.ts decides what one is): binaries that
 * run other programs, or code taken from their arguments, environment or the files around
 * them. Allowlisting one for host exec hands the model a general-purpose launcher: `env sh
 * -c …`, `find -exec`, `xargs`, `git -c core.pager=…`, `npm run`, a Makefile in the working
 * directory. Interpreters (code after `-c`/`-e`, or a script) are told apart, for the
 * inline-eval check.
 */
import { isLauncherBinary as launcherByExecPolicy, LAUNCHER_NAMES } from '../../../../host/launchers.js';

/** Interpreters and shells: anything after `-c`/`-e` (or a script file) is code. */
const INTERPRETERS: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'fish',
  'csh',
  'tcsh',
  'busybox',
  'python',
  'python2',
  'python3',
  'pypy',
  'pypy3',
  'node',
  'nodejs',
  'deno',
  'bun',
  'perl',
  'ruby',
  'irb',
  'php',
  'lua',
  'luajit',
  'tclsh',
  'wish',
  'rscript',
  'julia',
  'osascript',
  'pwsh',
  'powershell',
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'expect',
]);

export type LauncherKind = 'interpreter' | 'launcher';

/** What `name` (a bare command name, lower case) is, if it runs other code. */
export function isLauncherBinary(name: string): LauncherKind | undefined {
  if (INTERPRETERS.has(name)) return 'interpreter';
  // By exact name: a versioned one (python3.12) is judged by launchersMatching as the name without its version.
  if (LAUNCHER_NAMES.has(name) && launcherByExecPolicy(name)) return 'launcher';
  return undefined;
}

const KNOWN = [...new Set([...INTERPRETERS, ...[...LAUNCHER_NAMES].map((name) => name.toLowerCase())])];

/** `python3.12` is python3, `node20` is node: the name with version suffixes taken off one by one. */
function versionless(name: string): string[] {
  const names = [name];
  const shorter = (value: string) => value.replace(/[-.]?\d+$/, '');
  for (let next = shorter(name); next.length >= 2 && next !== names.at(-1); next = shorter(next)) names.push(next);
  return names;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

/**
 * The launchers an allowlist pattern or safe-bin name lets through, by command name: a path
 * counts by its last part, and a glob (`/usr/bin/*`, `py*`) by every known name it matches.
 */
export function launchersMatching(pattern: string): Array<{ name: string; kind: LauncherKind }> {
  const last = pattern.trim().toLowerCase().replace(/\\/g, '/').split('/').pop() ?? '';
  const base = last.endsWith('.exe') ? last.slice(0, -4) : last;
  if (base === '') return [];
  let names: string[];
  if (/[*?[]/.test(base)) {
    let glob: RegExp;
    try {
      glob = globToRegExp(base);
    } catch {
      // A bracket expression this simple translation cannot express: judge it as "*".
      glob = /.*/;
    }
    names = KNOWN.filter((name) => glob.test(name));
  } else {
    // The most specific known name: python3.12 is reported as python3, not also as python.
    names = versionless(base)
      .filter((name) => isLauncherBinary(name))
      .slice(0, 1);
  }
  return names.flatMap((name) => {
    const kind = isLauncherBinary(name);
    return kind ? [{ name, kind }] : [];
  });
}
