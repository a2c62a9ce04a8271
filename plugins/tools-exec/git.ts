/**
 * Git on the host, with the workspace's repository config unable to run code. A model that
 * can write files in the workspace can write `.git/config` (or a repository of its own), and
 * the next allowed `git status` would run its `core.fsmonitor`, hooks, pager or editor.
 *
 * Two parts:
 *   - `hostGitEnv`: config git reads last (the "command" scope, like `git -c`, passed as
 *     GIT_CONFIG_COUNT/KEY_n/VALUE_n so every git in a pipeline or script gets it) that turns
 *     off the fixed-name keys which run programs;
 *   - `judgeLocalGitConfig`: what the approver (exec-approvals, through the "exec-env"
 *     service) needs to refuse what fixed overrides cannot reach — per-name keys
 *     (`filter.<driver>.clean`, `diff.<driver>.textconv`, `remote.<name>.uploadpack`,
 *     `credential.<url>.helper`, …); it refuses aliases itself.
 * Checked against git 2.39: a later `-c` on the command line still wins over these, so an
 * allowlist entry whose argPattern admits `-c` admits anything (git is a launcher).
 */

/** Fixed-name keys that run a program, and the value that makes them not do so. */
export const HOST_GIT_OVERRIDES: ReadonlyArray<readonly [key: string, value: string]> = [
  // A hook command run by status, diff, add, commit…; "false" turns the monitor off.
  ['core.fsmonitor', 'false'],
  // Hooks are looked up under /dev/null, where none can exist.
  ['core.hooksPath', '/dev/null'],
  // GIT_PAGER below also outranks pager.<command>; cat pages nothing.
  ['core.pager', 'cat'],
  // ":" is git's own "no editor".
  ['core.editor', ':'],
  ['sequence.editor', ':'],
  // Empty: no askpass program (with GIT_TERMINAL_PROMPT=0, no prompt either).
  ['core.askPass', ''],
  // A directory that merely looks like a bare repository (config, HEAD, objects/) is not used
  // unless named with --git-dir: the model could otherwise plant one anywhere it can write.
  ['safe.bareRepository', 'explicit'],
  // ext:: URLs run a command by design.
  ['protocol.ext.allow', 'never'],
];

/** The environment additions for a command run on the host (kept after the inherited ones). */
export function hostGitEnv(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  // Entries the gateway was started with stay, ours come after them: for one key the last wins.
  const inherited = Number(base.GIT_CONFIG_COUNT ?? '0');
  const start = Number.isInteger(inherited) && inherited >= 0 ? inherited : 0;
  const env: Record<string, string> = { GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' };
  HOST_GIT_OVERRIDES.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${start + index}`] = key;
    env[`GIT_CONFIG_VALUE_${start + index}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(start + HOST_GIT_OVERRIDES.length);
  return env;
}

/**
 * The whole environment of a command exec runs on the host: the gateway's, the call's `env`
 * (already judged by the env policy), OPENCLAW_SHELL, and the git overrides last. The approver
 * asks git about config with this same environment, so it sees what the command will.
 */
export function hostCommandEnv(
  env: Readonly<Record<string, string>> | undefined,
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const inherited = Object.fromEntries(
    Object.entries(base).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return { ...inherited, ...env, OPENCLAW_SHELL: 'exec', ...hostGitEnv(inherited) };
}

/**
 * Repository-config keys (section.key, or section.*.key with a subsection) that run nothing,
 * plus the fixed-name ones `hostGitEnv` overrides. Anything else in the repository's own
 * config (scopes "local" and "worktree", includes resolved) makes the repository one an
 * allowlist cannot vouch for. Allowlist-first: a key git adds later is judged unknown.
 */
const HARMLESS_KEYS = new Set([
  ...[
    'repositoryformatversion',
    'filemode',
    'bare',
    'logallrefupdates',
    'ignorecase',
    'precomposeunicode',
    'symlinks',
    'autocrlf',
    'eol',
    'safecrlf',
    'quotepath',
    'abbrev',
    'compression',
    'loosecompression',
    'bigfilethreshold',
    'checkstat',
    'trustctime',
    'splitindex',
    'untrackedcache',
    'commentchar',
    'whitespace',
    'excludesfile',
    'attributesfile',
    'sparsecheckout',
    'sparsecheckoutcone',
    'preloadindex',
    'multipackindex',
    'commitgraph',
    'warnambiguousrefs',
    'protecthfs',
    'protectntfs',
    'sharedrepository',
    'checkroundtripencoding',
    ...HOST_GIT_OVERRIDES.filter(([key]) => key.startsWith('core.')).map(([key]) => key.slice(5).toLowerCase()),
  ].map((key) => `core.${key}`),
  ...[
    'url',
    'pushurl',
    'fetch',
    'push',
    'mirror',
    'tagopt',
    'prune',
    'prunetags',
    'promisor',
    'partialclonefilter',
    'skipdefaultupdate',
    'skipfetchall',
  ].map((key) => `remote.*.${key}`),
  ...['remote', 'merge', 'rebase', 'pushremote', 'description'].map((key) => `branch.*.${key}`),
  ...['url', 'active', 'branch', 'ignore', 'shallow', 'fetchrecursesubmodules'].map((key) => `submodule.*.${key}`),
  'submodule.recurse',
  'submodule.fetchjobs',
  'submodule.active',
  'user.name',
  'user.email',
  'user.signingkey',
  'user.useconfigonly',
  'commit.gpgsign',
  'commit.verbose',
  'commit.cleanup',
  'commit.status',
  'commit.template',
  'tag.gpgsign',
  'tag.sort',
  'tag.forcesignannotated',
  'gpg.format',
  'pull.rebase',
  'pull.ff',
  'push.default',
  'push.autosetupremote',
  'push.followtags',
  'push.recursesubmodules',
  'push.gpgsign',
  'merge.ff',
  'merge.conflictstyle',
  'merge.log',
  'merge.renormalize',
  'merge.autostash',
  'merge.verbosity',
  'rebase.autosquash',
  'rebase.autostash',
  'rebase.updaterefs',
  'rebase.abbreviatecommands',
  'rebase.missingcommitscheck',
  'rebase.stat',
  'diff.renames',
  'diff.algorithm',
  'diff.mnemonicprefix',
  'diff.noprefix',
  'diff.colormoved',
  'diff.indentheuristic',
  'diff.submodule',
  'diff.context',
  'diff.interhunkcontext',
  'diff.ignoresubmodules',
  'diff.relative',
  'diff.renamelimit',
  'diff.wserrorhighlight',
  'diff.dirstat',
  'diff.orderfile',
  'diff.statgraphwidth',
  'http.postbuffer',
  'http.version',
  'url.*.insteadof',
  'url.*.pushinsteadof',
  'sequence.editor',
  'protocol.version',
  'protocol.allow',
  'protocol.*.allow',
  'include.path',
  'includeif.*.path',
  'safe.directory',
  'extensions.objectformat',
  'extensions.worktreeconfig',
  'extensions.preciousobjects',
  'extensions.partialclone',
  'extensions.noop',
]);
/** Whole sections without a key that names a program. */
const HARMLESS_SECTIONS = new Set([
  'alias',
  'color',
  'advice',
  'i18n',
  'gc',
  'pack',
  'index',
  'feature',
  'status',
  'log',
  'column',
  'init',
  'rerere',
  'blame',
  'fetch',
  'transfer',
  'maintenance',
]);

/** `section.key` or `section.*.key` (git lower-cases section and key; a subsection keeps its case). */
function keyShape(name: string): { section: string; shape: string } {
  const first = name.indexOf('.');
  const last = name.lastIndexOf('.');
  const section = name.slice(0, first).toLowerCase();
  const key = name.slice(last + 1).toLowerCase();
  return { section, shape: first === last ? `${section}.${key}` : `${section}.*.${key}` };
}

/** Is this repository-config key one that runs nothing (or is overridden on the host)? */
function isHarmlessLocalGitKey(name: string): boolean {
  const { section, shape } = keyShape(name);
  // Aliases only matter for commands that are not git's own, and those are refused anyway.
  return HARMLESS_SECTIONS.has(section) || HARMLESS_KEYS.has(shape);
}

/**
 * From `git config --list --show-scope --name-only -z` output: the repository's own keys
 * that could run a program. Global and system config belong to the user, not the workspace.
 */
export function judgeLocalGitConfig(listing: string): string[] {
  const parts = listing.split('\0');
  const risky: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const scope = parts[i]!;
    const name = parts[i + 1]!;
    if ((scope === 'local' || scope === 'worktree') && !isHarmlessLocalGitKey(name) && !risky.includes(name))
      risky.push(name);
  }
  return risky;
}
