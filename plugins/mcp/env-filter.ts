/**
 * The environment a stdio MCP server starts with. A server's `env` block cannot carry
 * variables that make an interpreter run extra code at start-up, swap the dynamic linker's
 * libraries or inject shell functions (OpenClaw's stdio env safety filter): those are dropped
 * and reported. Ordinary credentials servers need (GITHUB_TOKEN, DATABASE_URL, *_API_KEY, …)
 * pass. The gateway's own environment is not handed over: only the few variables a program
 * needs to run, so the gateway's provider keys never reach a third-party server.
 */

/** Credential-carrying names that a prefix rule below would otherwise catch (OpenClaw's allowlist). */
const ALLOWED = new Set([
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GITLAB_TOKEN',
  'NPM_TOKEN',
  'NODE_AUTH_TOKEN',
  'DATABASE_URL',
  'MONGODB_URI',
  'REDIS_URL',
  'AMQP_URL',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AZURE_CLIENT_ID',
  'AZURE_CLIENT_SECRET',
]);

/** Interpreter start-up hooks, debuggers and shell-init files. */
const BLOCKED = new Set([
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONINSPECT',
  'PYTHONBREAKPOINT',
  'PERL5OPT',
  'PERL5LIB',
  'PERL5DB',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  'BASHOPTS',
  'SHELLOPTS',
  'BASH_ENV',
  'ENV',
  'KSH_ENV',
  'ZDOTDIR',
  'PROMPT_COMMAND',
  'IFS',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'CLASSPATH',
  'DOTNET_STARTUP_HOOKS',
  'GCONV_PATH',
  'MALLOC_CHECK_',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'RES_OPTIONS',
  'GIT_SSH_COMMAND',
  'GIT_EXEC_PATH',
  'SSL_CERT_FILE',
  'OPENSSL_CONF',
  'PATH',
]);

/** Loader hijacks, injected shell functions, and families that point at files or programs to load. */
const BLOCKED_PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_', 'AWS_', 'GIT_CONFIG_', 'NPM_CONFIG_', 'PYTHON', 'NODE_'];

/** What a child needs from the gateway's environment to find programs and a home. */
const INHERITED = ['HOME', 'LOGNAME', 'USER', 'PATH', 'SHELL', 'TERM', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];

/** Why `name` may not be set through a server's env, or undefined when it may. */
export function blockedEnvReason(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return 'not a plain variable name';
  const upper = name.toUpperCase();
  if (ALLOWED.has(upper)) return undefined;
  if (BLOCKED.has(upper)) return 'changes what runs when the server starts';
  const prefix = BLOCKED_PREFIXES.find((item) => upper.startsWith(item));
  return prefix ? `${prefix}* variables change how programs load or what they run` : undefined;
}

/** The server's environment and the names dropped from its `env` (each with why). */
export function serverEnvironment(
  configured: Record<string, string>,
  hostEnv: Readonly<Record<string, string | undefined>>,
): { env: Record<string, string>; dropped: Array<{ name: string; reason: string }> } {
  const env: Record<string, string> = {};
  for (const name of INHERITED) if (hostEnv[name] !== undefined) env[name] = hostEnv[name]!;
  const dropped: Array<{ name: string; reason: string }> = [];
  for (const [name, value] of Object.entries(configured)) {
    const reason = blockedEnvReason(name);
    if (reason) dropped.push({ name, reason });
    else env[name] = value;
  }
  return { env, dropped };
}
