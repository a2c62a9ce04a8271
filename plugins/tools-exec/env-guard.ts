/**
 * Environment overrides a model may not pass to exec: they would change which binary runs
 * (PATH) or inject code into whatever runs (dynamic loader, interpreter start-up hooks).
 * OpenClaw refuses PATH and LD_* / DYLD_* for host execution; the interpreter variables below
 * do the same job for shells, Node, Python, Perl, Ruby and the JVM.
 */
const BLOCKED_NAMES = new Set([
  'PATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'IFS',
  'PROMPT_COMMAND',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONSTARTUP',
  'PERL5LIB',
  'PERL5OPT',
  'PERLLIB',
  'RUBYLIB',
  'RUBYOPT',
  'GCONV_PATH',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'GIT_EXEC_PATH',
  'GIT_SSH_COMMAND',
]);
const BLOCKED_PREFIXES = ['LD_', 'DYLD_'];

/** The names in `env` that exec refuses (compared without regard to case). */
export function blockedEnvNames(env: Record<string, string> | undefined): string[] {
  if (!env) return [];
  return Object.keys(env).filter((name) => {
    const upper = name.toUpperCase();
    return BLOCKED_NAMES.has(upper) || BLOCKED_PREFIXES.some((prefix) => upper.startsWith(prefix));
  });
}
