/**
 * What a model-supplied `env` may set for a command it runs — one policy for every exec path
 * (host, sandbox, elevated), and the approver's too (it asks through the "exec-env" service,
 * see index.ts). It is allowlist-first: a name
 * passes only when it is a plain identifier that belongs to no family of variables that
 * changes which program runs, how a program is configured, or what code it loads.
 *
 * The order matters and is the whole design:
 *   1. the name must be a plain identifier (`BASH_FUNC_x%%` and `A=B` are not);
 *   2. a short list of ordinary names passes even though a family rule below would catch it
 *      (`GIT_AUTHOR_NAME`, `NODE_ENV`, `AWS_REGION`, …);
 *   3. families are refused: exact names (shell start-up files, build tools' programs, and the
 *      credentials and service addresses OpenClaw keeps the model from swapping: GITHUB_TOKEN,
 *      DATABASE_URL …), prefixes (a tool's or runtime's whole namespace: `GIT_`, `NPM_`,
 *      `PYTHON`, `LD_`, `BASH_FUNC_`, `TF_`, `AWS_` …) and shapes (any name holding `PATH`,
 *      `HOME`, `CONF`, `PROXY`, `PAGER`, `EDITOR`, `SHELL`, option/flag variables …);
 *   4. anything left is an ordinary name.
 * OpenClaw's host-env policy (about 250 names plus the prefixes `GIT_CONFIG_`, `NPM_CONFIG_`,
 * `CARGO_REGISTRIES_`, `TF_VAR_`, `BASH_FUNC_`, `LD_`, `DYLD_`) is covered by these rules:
 * test/exec-env-policy.test.ts checks every one of its names.
 */

export interface EnvRefusal {
  /** The name as the caller spelled it. */
  name: string;
  /** Why it is refused, in a few words a model can act on. */
  reason: string;
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Ordinary names a family rule would otherwise catch: identity for commits, runtime modes, region, terminal and locale. */
const ORDINARY = new Set([
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
  'NODE_ENV',
  'NODE_NO_WARNINGS',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONIOENCODING',
  'PYTHONHASHSEED',
  'PYTHONUTF8',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'NO_COLOR',
  'FORCE_COLOR',
  'CLICOLOR',
  'CLICOLOR_FORCE',
  'TERM',
  'COLORTERM',
  'LANG',
  'LANGUAGE',
  'TZ',
  'COLUMNS',
  'LINES',
]);

/** Pagers only as "no pager": an empty value or `cat` (OpenClaw accepts the same two). */
const PAGER_OFF = new Set(['PAGER', 'GIT_PAGER']);

/** Single names no family rule below describes. */
const EXACT: Record<string, string> = {
  ENV: 'a shell start-up file',
  BASH_ENV: 'a shell start-up file',
  KSH_ENV: 'a shell start-up file',
  ZSH_ENV: 'a shell start-up file',
  ZDOTDIR: 'where zsh reads its start-up files',
  IFS: 'changes how the shell splits words',
  PS1: 'a shell prompt can run commands',
  PS2: 'a shell prompt can run commands',
  PS3: 'a shell prompt can run commands',
  PS4: 'a shell prompt can run commands',
  GLOBIGNORE: 'changes shell globbing',
  POSIXLY_CORRECT: 'changes how programs parse their options',
  BROWSER: 'a program other tools start',
  VISUAL: 'a program other tools start',
  FCEDIT: 'a program other tools start',
  CC: 'the compiler build tools run',
  CXX: 'the compiler build tools run',
  CPP: 'the preprocessor build tools run',
  LD: 'the linker build tools run',
  AR: 'a program build tools run',
  AS: 'the assembler build tools run',
  NM: 'a program build tools run',
  RANLIB: 'a program build tools run',
  STRIP: 'a program build tools run',
  OBJCOPY: 'a program build tools run',
  OBJDUMP: 'a program build tools run',
  FC: 'the compiler build tools run',
  F77: 'the compiler build tools run',
  YACC: 'a program build tools run',
  LEX: 'a program build tools run',
  MAKE: 'the make program build tools run',
  MAKEFILES: 'makefiles GNU make reads first',
  WGETRC: 'a start-up file',
  INPUTRC: 'a start-up file',
  SCREENRC: 'a start-up file',
  IRBRC: 'a start-up file',
  GEMRC: 'a start-up file',
  MYVIMRC: 'a start-up file',
  VIMINIT: 'editor start-up commands',
  EXINIT: 'editor start-up commands',
  GVIMINIT: 'editor start-up commands',
  NETRC: 'a credentials file',
  XAUTHORITY: 'a credentials file',
  KUBECONFIG: 'a tool configuration file',
  HOSTALIASES: 'resolver configuration',
  LOCALDOMAIN: 'resolver configuration',
  RES_OPTIONS: 'resolver configuration',
  TERMINFO: 'terminal descriptions programs load',
  TERMCAP: 'terminal descriptions programs load',
  NLSPATH: 'message catalogs programs load',
  CLASSPATH: 'code a runtime loads',
  HISTFILE: 'a file the shell writes',
  TMPDIR: 'where programs write and run temporary files',
  // Credentials and service addresses: a model swapping them makes tools act as, or talk to, someone else.
  GH_TOKEN: 'a credential the operator sets, not the model',
  GITHUB_TOKEN: 'a credential the operator sets, not the model',
  GITLAB_TOKEN: 'a credential the operator sets, not the model',
  DATABASE_URL: 'a service address the operator sets, not the model',
  MONGODB_URI: 'a service address the operator sets, not the model',
  REDIS_URL: 'a service address the operator sets, not the model',
  AMQP_URL: 'a service address the operator sets, not the model',
};

/** Whole namespaces of a tool, runtime, loader or claw itself: each prefix with why. */
const PREFIXES: Array<[prefix: string, reason: string]> = [
  ['LD_', 'dynamic loader variable (preload, library path, audit)'],
  ['DYLD_', 'dynamic loader variable (preload, library path)'],
  ['BASH_FUNC_', 'exports a shell function'],
  ['GCONV_', 'loader of character-set modules'],
  ['GLIBC_', 'C library tunables'],
  ['MALLOC_', 'C library allocator settings'],
  ['GIT_', 'configures git (GIT_CONFIG_*, GIT_DIR, GIT_SSH*, …); only GIT_AUTHOR_*/GIT_COMMITTER_* are ordinary'],
  ['HG', 'configures Mercurial'],
  ['BZR_', 'configures Bazaar'],
  ['SVN_', 'configures Subversion'],
  ['CVS', 'configures CVS'],
  ['RSYNC_', 'configures rsync (its connect program)'],
  ['SSH_', 'configures ssh (agent, askpass)'],
  ['GPG', 'configures GnuPG'],
  ['GNUPG', 'configures GnuPG'],
  ['OPENSSL_', 'configures OpenSSL (engines, config)'],
  ['SSL_', 'TLS trust settings'],
  ['CURL_', 'configures curl'],
  ['WGET', 'configures wget'],
  ['LESS', 'configures less (input preprocessor)'],
  ['SUDO_', 'configures sudo (askpass, editor)'],
  ['SYSTEMD_', 'configures systemd tools (pager, editor)'],
  ['XDG_', 'where programs find their config, data and runtime files'],
  ['DBUS_', 'which message bus programs talk to'],
  ['NODE_', 'configures Node.js (options, module path, TLS)'],
  ['NPM_', 'configures npm (NPM_CONFIG_* sets any npm setting)'],
  ['YARN_', 'configures Yarn'],
  ['PNPM_', 'configures pnpm'],
  ['BUN_', 'configures Bun'],
  ['DENO_', 'configures Deno'],
  ['COREPACK_', 'configures Corepack'],
  ['PYTHON', 'configures Python (path, start-up, breakpoint hooks)'],
  ['PIP_', 'configures pip (index, config)'],
  ['PIPENV_', 'configures Pipenv'],
  ['POETRY_', 'configures Poetry'],
  ['UV_', 'configures uv'],
  ['CONDA', 'configures conda'],
  ['VIRTUAL_ENV', 'selects a Python environment'],
  ['PERL', 'configures Perl (options, library path, debugger)'],
  ['RUBY', 'configures Ruby (options, library path)'],
  ['GEM_', 'configures RubyGems'],
  ['BUNDLE_', 'configures Bundler'],
  ['JAVA', 'configures the JVM (agents, options)'],
  ['_JAVA', 'configures the JVM (agents, options)'],
  ['JDK_', 'configures the JVM (agents, options)'],
  ['JVM', 'configures the JVM'],
  ['MAVEN_', 'configures Maven'],
  ['GRADLE_', 'configures Gradle'],
  ['SBT_', 'configures sbt'],
  ['ANT_', 'configures Ant'],
  ['DOTNET_', 'configures .NET (startup hooks)'],
  ['COMPLUS_', 'configures .NET'],
  ['CORECLR_', 'configures .NET (profiler)'],
  ['CGO_', 'configures cgo (compiler flags)'],
  ['RUST', 'configures Rust (compiler wrapper, flags)'],
  ['CARGO_', 'configures Cargo (CARGO_REGISTRIES_*, build wrappers)'],
  ['PHP', 'configures PHP (ini files)'],
  ['COMPOSER_', 'configures Composer'],
  ['LUA_', 'configures Lua (module path)'],
  ['R_', 'configures R (profile, libraries)'],
  ['TCL', 'configures Tcl'],
  ['GUILE', 'configures Guile'],
  ['CMAKE_', 'configures CMake (compilers)'],
  ['CCACHE_', 'configures ccache (its prefix command)'],
  ['DISTCC_', 'configures distcc'],
  ['TF_', 'configures Terraform (TF_VAR_*, TF_CLI_ARGS*)'],
  ['ANSIBLE_', 'configures Ansible (plugins, modules, config)'],
  ['TERRAFORM', 'configures Terraform'],
  ['HELM_', 'configures Helm'],
  ['KUBE', 'configures Kubernetes tools'],
  ['DOCKER_', 'which Docker daemon and config'],
  ['PODMAN', 'configures Podman'],
  ['CONTAINERS_', 'configures container tools'],
  ['AWS_', 'configures AWS tools (credentials, config and credential files); only the region is ordinary'],
  ['AZURE_', 'configures Azure tools'],
  ['GOOGLE_', 'configures Google Cloud tools (credential files)'],
  ['CLOUDSDK_', 'configures the Google Cloud SDK'],
  ['OPENCLAW_', "claw's own settings"],
  ['CLAW_', "claw's own settings"],
];

/** Name shapes: a family of variables across tools, each with why. Tested on the upper-cased name. */
const SHAPES: Array<[shape: RegExp, reason: string]> = [
  // Go's settings are GO + a word, no underscore: GOFLAGS, GOPROXY, GOPRIVATE, GOENV, GOTOOLCHAIN…
  [/^GO[A-Z0-9]+$/, 'configures the Go toolchain'],
  [/PATH/, 'changes where programs, libraries or modules are found'],
  [/LIB/, 'changes where libraries or modules are found'],
  [/HOME/, 'changes where a program reads its configuration'],
  [/CONF/, 'points a program at other configuration'],
  [/RC_?FILE|RC_FILENAME/, 'points a program at a start-up file'],
  [/(FILE|FILES|FILENAME)$/, 'points a program at a file to read or write'],
  [/DIRS?$/, 'points a program at a directory to load from'],
  [/OPT(S|IONS)?(_|$)/, 'passes options to a runtime or tool'],
  [/FLAGS(_|$)/, 'passes flags to a compiler or tool'],
  [/ARGS(_|$)/, 'passes arguments to a tool'],
  [/PROXY/, 'routes network traffic through a proxy'],
  [/PAGER/, 'a program other tools start'],
  [/EDITOR/, 'a program other tools start'],
  [/SHELL/, 'which shell programs start, or its options'],
  [/ASKPASS/, 'a program other tools start'],
  [/COMMAND|CMD/, 'a command other tools run'],
  [/PRELOAD|AUDIT/, 'loads code into programs'],
  [/HOOK/, 'code a runtime runs on start-up'],
  [/STARTUP/, 'code a runtime runs on start-up'],
  [/PLUGIN/, 'code a program loads'],
  [/WRAPPER/, 'a program build tools run instead'],
  [/CERT|CA_BUNDLE|CAINFO|SSL|TLS/, 'TLS trust settings'],
  [/CREDENTIAL/, 'a credentials file'],
];

/** Why exec refuses to set `name` (to `value`), or undefined when it is an ordinary name. */
export function execEnvRefusal(name: string, value?: string): string | undefined {
  if (!PLAIN_NAME.test(name)) return 'not a plain variable name (letters, digits and _, not starting with a digit)';
  const upper = name.toUpperCase();
  if (ORDINARY.has(upper)) return undefined;
  if (PAGER_OFF.has(upper)) {
    return value === undefined || value === '' || value === 'cat'
      ? undefined
      : 'a pager program; only "" or "cat" (no pager) is accepted';
  }
  if (EXACT[upper]) return EXACT[upper];
  for (const [prefix, reason] of PREFIXES) if (upper.startsWith(prefix)) return reason;
  for (const [shape, reason] of SHAPES) if (shape.test(upper)) return reason;
  return undefined;
}

/**
 * Every name in `env` exec refuses, with why (empty when all are ordinary). `operator` holds
 * what the operator configured for this call (a skill's env and API key, added to the call's
 * env by the skills plugin): an entry with exactly that name and value is the operator's
 * setting, not the model's, and is not judged.
 */
export function refusedExecEnv(
  env: Readonly<Record<string, string>> | undefined,
  operator?: Readonly<Record<string, string>>,
): EnvRefusal[] {
  if (!env) return [];
  return Object.entries(env).flatMap(([name, value]) => {
    if (operator && Object.hasOwn(operator, name) && operator[name] === value) return [];
    const reason = execEnvRefusal(name, value);
    return reason ? [{ name, reason }] : [];
  });
}

interface ServiceLookup {
  find(kind: 'service', name: string): Promise<{ api?: unknown } | undefined>;
}

/**
 * The env the operator configured for an exec call: the skills service's variables for the
 * agent's turn (only calls made during a run get them), whatever the call itself sets.
 * Empty when no skills plugin is enabled.
 */
export async function operatorExecEnv(
  capabilities: ServiceLookup,
  ctx: { agentId?: string; sessionKey?: string; runId?: string },
  params: Readonly<Record<string, unknown>>,
): Promise<Record<string, string>> {
  if (!ctx.agentId || !ctx.runId) return {};
  const service = (await capabilities.find('service', 'skills').catch(() => undefined))?.api as
    | {
        execEnv?(
          agentId: string,
          sessionKey: string | undefined,
          params: Record<string, unknown>,
        ): Record<string, string> | undefined;
      }
    | undefined;
  // Without the call's own env: the answer must hold every variable the skill would add.
  return service?.execEnv?.(ctx.agentId, ctx.sessionKey, { ...params, env: undefined }) ?? {};
}

/** One sentence naming each refused key and why: what exec, the approver and the backends say. */
export function describeEnvRefusals(refusals: readonly EnvRefusal[]): string {
  const listed = refusals.map((refusal) => `${refusal.name} (${refusal.reason})`).join(', ');
  return (
    `env may not set ${listed}. Variables that change which program runs, how it is configured or what code it loads ` +
    'are refused; pass settings as command arguments instead.'
  );
}
