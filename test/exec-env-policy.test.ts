/**
 * Issue 28: the one env policy for every exec path (plugins/tools-exec/env-policy.ts). It must be at
 * least as strict as OpenClaw's host-env policy — every name and prefix OpenClaw refuses for a
 * model-supplied env is refused here — while ordinary names still pass; each refused key is
 * named, through the tool choke point, in a sandboxed placement and in one sentence.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { describeEnvRefusals, execEnvRefusal, refusedExecEnv } from '../plugins/tools-exec/env-policy.js';
import { hostGitEnv } from '../plugins/tools-exec/git.js';
import { createExecTool } from '../plugins/tools-exec/exec-tool.js';
import { SessionRegistry } from '../plugins/tools-exec/registry.js';
import { REPO, tempDir } from './helpers.js';

const EXEC = join(REPO, 'plugins', 'tools-exec');
const APPROVALS = join(REPO, 'plugins', 'exec-approvals');
const text = (result: { content: Array<{ type: string; text?: string }> }) =>
  result.content.map((part) => part.text ?? '').join('');

/**
 * OpenClaw's host-env security policy (src/infra/host-env-security-policy.json): the keys it
 * refuses everywhere and the keys it refuses as a request's override. Names only, as data.
 */
const OPENCLAW_BLOCKED = [
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONHOME',
  'PYTHONPATH',
  'PERL5LIB',
  'PERL5OPT',
  'RUBYLIB',
  'RUBYOPT',
  'BASH_ENV',
  'ENV',
  'BROWSER',
  'GIT_EDITOR',
  'GIT_EXTERNAL_DIFF',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_EXEC_PATH',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
  'GIT_SEQUENCE_EDITOR',
  'GIT_TEMPLATE_DIR',
  'GIT_SSL_NO_VERIFY',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'CC',
  'CXX',
  'CARGO_BUILD_RUSTC',
  'CARGO_BUILD_RUSTC_WRAPPER',
  'RUSTC_WRAPPER',
  'CMAKE_C_COMPILER',
  'CMAKE_CXX_COMPILER',
  'SHELL',
  'SHELLOPTS',
  'PS4',
  'GCONV_PATH',
  'IFS',
  'SSLKEYLOGFILE',
  'JAVA_OPTS',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'PYTHONBREAKPOINT',
  'DOTNET_STARTUP_HOOKS',
  'DOTNET_ADDITIONAL_DEPS',
  'GLIBC_TUNABLES',
  'MAVEN_OPTS',
  'MAKEFLAGS',
  'MFLAGS',
  'SBT_OPTS',
  'GRADLE_OPTS',
  'ANT_OPTS',
  'HGRCPATH',
  'EXINIT',
  'VIMINIT',
  'MYVIMRC',
  'GVIMINIT',
  'LUA_INIT',
  'LUA_INIT_5_1',
  'LUA_INIT_5_2',
  'LUA_INIT_5_3',
  'LUA_INIT_5_4',
  'EMACSLOADPATH',
  'RUBYSHELL',
  'GIT_HOOK_PATH',
  'SVN_EDITOR',
  'SVN_SSH',
  'BZR_EDITOR',
  'BZR_SSH',
  'BZR_PLUGIN_PATH',
  'SUDO_ASKPASS',
  'JULIA_EDITOR',
  'CONFIG_SITE',
  'CONFIG_SHELL',
  'CMAKE_TOOLCHAIN_FILE',
  'CATALINA_OPTS',
  'CORECLR_PROFILER',
  'HELM_PLUGINS',
  'PACKER_PLUGIN_PATH',
  'VAGRANT_VAGRANTFILE',
  'ERL_AFLAGS',
  'ERL_FLAGS',
  'ERL_ZFLAGS',
  'ELIXIR_ERL_OPTIONS',
  'R_ENVIRON',
  'R_PROFILE',
  'R_ENVIRON_USER',
  'R_PROFILE_USER',
  'HOSTALIASES',
  'HOME',
  'GRADLE_USER_HOME',
  'ZDOTDIR',
  'GIT_SSH_COMMAND',
  'GIT_SSH',
  'GIT_PROXY_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'LESSOPEN',
  'LESSCLOSE',
  'PAGER',
  'MANPAGER',
  'GIT_PAGER',
  'EDITOR',
  'VISUAL',
  'FCEDIT',
  'SUDO_EDITOR',
  'PROMPT_COMMAND',
  'HISTFILE',
  'PERL5DB',
  'PERL5DBCMD',
  'OPENSSL_CONF',
  'OPENSSL_ENGINES',
  'PYTHONSTARTUP',
  'WGETRC',
  'CURL_HOME',
  'CLASSPATH',
  'CFLAGS',
  'CGO_CFLAGS',
  'CGO_LDFLAGS',
  'GOFLAGS',
  'CORECLR_PROFILER_PATH',
  'PHPRC',
  'PHP_INI_SCAN_DIR',
  'DENO_DIR',
  'BUN_CONFIG_REGISTRY',
  'YARN_RC_FILENAME',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'DOCKER_HOST',
  'DOCKER_TLS_VERIFY',
  'DOCKER_CERT_PATH',
  'PIP_INDEX_URL',
  'PIP_PYPI_URL',
  'PIP_EXTRA_INDEX_URL',
  'PIP_CONFIG_FILE',
  'PIP_FIND_LINKS',
  'PIP_TRUSTED_HOST',
  'UV_INDEX',
  'UV_INDEX_URL',
  'UV_PYTHON',
  'UV_EXTRA_INDEX_URL',
  'UV_DEFAULT_INDEX',
  'DOCKER_CONTEXT',
  'LIBRARY_PATH',
  'LDFLAGS',
  'CPATH',
  'C_INCLUDE_PATH',
  'CPLUS_INCLUDE_PATH',
  'OBJC_INCLUDE_PATH',
  'GOPROXY',
  'GONOSUMCHECK',
  'GONOSUMDB',
  'GONOPROXY',
  'GOPRIVATE',
  'GOENV',
  'GOPATH',
  'PYTHONUSERBASE',
  'RUSTFLAGS',
  'CARGO_HOME',
  'VIRTUAL_ENV',
  'LUA_PATH',
  'LUA_CPATH',
  'GEM_HOME',
  'GEM_PATH',
  'BUNDLE_GEMFILE',
  'COMPOSER_HOME',
  'XDG_CONFIG_HOME',
  'XDG_CONFIG_DIRS',
  'AWS_CONFIG_FILE',
  'KUBECONFIG',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AZURE_AUTH_LOCATION',
  'HELM_HOME',
  'ANSIBLE_CONFIG',
  'ANSIBLE_LIBRARY',
  'ANSIBLE_CALLBACK_PLUGINS',
  'ANSIBLE_COLLECTIONS_PATH',
  'ANSIBLE_CONNECTION_PLUGINS',
  'ANSIBLE_FILTER_PLUGINS',
  'ANSIBLE_INVENTORY_PLUGINS',
  'ANSIBLE_LOOKUP_PLUGINS',
  'ANSIBLE_MODULE_UTILS',
  'ANSIBLE_REMOTE_TEMP',
  'ANSIBLE_ROLES_PATH',
  'ANSIBLE_STRATEGY_PLUGINS',
  'R_LIBS_USER',
  'TF_CLI_CONFIG_FILE',
  'TF_PLUGIN_CACHE_DIR',
  'AMQP_URL',
  'AWS_ACCESS_KEY_ID',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SECURITY_TOKEN',
  'AWS_SESSION_TOKEN',
  'AZURE_CLIENT_ID',
  'AZURE_CLIENT_SECRET',
  'DATABASE_URL',
  'GH_TOKEN',
  'GITHUB_TOKEN',
  'GITLAB_TOKEN',
  'MONGODB_URI',
  'NODE_AUTH_TOKEN',
  'NPM_TOKEN',
  'REDIS_URL',
  'SSH_AUTH_SOCK',
];
/** Its prefixes, each with a name under it. */
const OPENCLAW_PREFIXED = [
  'GIT_CONFIG_COUNT',
  'GIT_CONFIG_KEY_0',
  'GIT_CONFIG_VALUE_0',
  'NPM_CONFIG_REGISTRY',
  'CARGO_REGISTRIES_EVIL_INDEX',
  'TF_VAR_region',
  'BASH_FUNC_ls%%',
  'LD_PRELOAD',
  'DYLD_INSERT_LIBRARIES',
];

describe('the exec env policy', () => {
  it("refuses every name and prefix OpenClaw's host-env policy refuses, in any case", () => {
    const passed = [...OPENCLAW_BLOCKED, ...OPENCLAW_PREFIXED].filter(
      (name) => execEnvRefusal(name, 'x') === undefined,
    );
    expect(passed).toEqual([]);
    // Lower case reaches programs too (http_proxy, ld_preload): judged alike.
    const lower = [...OPENCLAW_BLOCKED, ...OPENCLAW_PREFIXED].filter(
      (name) => execEnvRefusal(name.toLowerCase(), 'x') === undefined,
    );
    expect(lower).toEqual([]);
  });

  it('refuses families beyond the list: any PATH, HOME, XDG_*, *CONFIG*, pagers, editors, shells, runtimes', () => {
    for (const name of [
      'MANPATH',
      'CDPATH',
      'GNUPGHOME',
      'XDG_DATA_HOME',
      'PKG_CONFIG',
      'DOCKER_CONFIG',
      'SYSTEMD_PAGER',
      'SVN_EDITOR',
      'BASH_FUNC_x',
      'NODE_ENV_FILE',
      'PYTHONWARNINGS',
      'RUBYGEMS_GEMDEPS',
      'JAVA_HOME',
      'OPENCLAW_STATE_DIR',
      'POSIXLY_CORRECT',
      'TMPDIR',
      'MAKEFILES',
      'CCACHE_PREFIX',
      'ZSH_ENV',
      'KSH_ENV',
    ]) {
      expect(execEnvRefusal(name, 'x'), name).toBeDefined();
    }
    // Not a plain identifier: the shell function export form and anything with '='.
    expect(execEnvRefusal('BASH_FUNC_ls%%', '() { id; }')).toMatch(/not a plain variable name/);
    expect(execEnvRefusal('A=B', 'x')).toMatch(/not a plain variable name/);
  });

  it('passes ordinary names, and a pager only as "no pager"', () => {
    const env = {
      ...{
        GREETING: 'hi',
        NODE_ENV: 'test',
        GIT_AUTHOR_NAME: 'A',
        GIT_COMMITTER_EMAIL: 'a@b',
        LANG: 'C.UTF-8',
        LC_ALL: 'C',
        TERM: 'dumb',
      },
      ...{
        NO_COLOR: '1',
        CI: '1',
        DEBUG: 'x',
        KEYED_API_KEY: 'k',
        PYTHONUNBUFFERED: '1',
        RAILS_ENV: 'test',
        PAGER: 'cat',
        GIT_PAGER: '',
      },
    };
    expect(refusedExecEnv(env)).toEqual([]);
    expect(execEnvRefusal('GIT_PAGER', 'less')).toMatch(/only "" or "cat"/);
    expect(execEnvRefusal('PAGER', 'sh -c id')).toBeDefined();
    expect(execEnvRefusal('MANPAGER', 'cat')).toBeDefined();
  });

  it('an operator-configured entry (a skill’s, same name and value) is not the model’s to judge', () => {
    expect(refusedExecEnv({ GITHUB_TOKEN: 'from-config' }, { GITHUB_TOKEN: 'from-config' })).toEqual([]);
    const swapped = refusedExecEnv({ GITHUB_TOKEN: 'the-models-own' }, { GITHUB_TOKEN: 'from-config' });
    expect(swapped.map((refusal) => refusal.name)).toEqual(['GITHUB_TOKEN']);
  });

  it('one sentence names every refused key', () => {
    const refusals = refusedExecEnv({ FINE: '1', HOME: '/tmp/x', GIT_CONFIG_KEY_0: 'core.fsmonitor' });
    expect(refusals.map((refusal) => refusal.name)).toEqual(['HOME', 'GIT_CONFIG_KEY_0']);
    expect(describeEnvRefusals(refusals)).toMatch(/^env may not set HOME \(.+\), GIT_CONFIG_KEY_0 \(.+\)\./);
  });

  it('host git overrides come after any the gateway was started with', () => {
    const env = hostGitEnv({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'Operator' });
    expect(env.GIT_CONFIG_KEY_1).toBe('core.fsmonitor');
    expect(env.GIT_CONFIG_KEY_0).toBeUndefined();
    expect(Number(env.GIT_CONFIG_COUNT)).toBeGreaterThan(1);
    expect(env).toMatchObject({ GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' });
  });
});

describe('every exec path names the refused keys and runs nothing', () => {
  let kernel: TestKernel;
  beforeAll(async () => {
    kernel = await createTestKernel({ plugins: [EXEC, APPROVALS] });
  });
  afterAll(() => kernel.dispose());

  it.each([
    [{ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'touch pwned' }],
    [{ HOME: '/tmp/elsewhere', XDG_CONFIG_HOME: '/tmp/elsewhere' }],
    [{ GIT_PAGER: 'sh -c id', PAGER: 'less', EDITOR: 'vim' }],
    [{ 'BASH_FUNC_git%%': '() { touch pwned; }', NPM_CONFIG_SCRIPT_SHELL: '/tmp/sh', TF_VAR_x: '1' }],
  ])('host exec: %o', async (env) => {
    const ws = tempDir();
    const result = await kernel.runTool(
      'exec',
      { command: 'touch ran', env: { OK_NAME: '1', ...env } },
      { workspaceDir: ws },
    );
    expect(result.isError).toBe(true);
    for (const name of Object.keys(env)) expect(text(result)).toContain(`${name} (`);
    expect(text(result)).not.toContain('OK_NAME (');
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('a sandboxed call is refused by exec itself, before the backend is asked to spawn', async () => {
    const spawned: unknown[] = [];
    const spec = { scopeKey: 's', workspaceRoot: '/w', workspaceAccess: 'rw', workdir: '/w' };
    const sandbox = { id: 'fake', backend: 'fake', spec, spawn: (request: unknown) => spawned.push(request) };
    const tool = createExecTool({
      registry: new SessionRegistry({ finishedTtlMs: 1000, maxFinished: 1 }),
      config: { timeoutSeconds: 5, maxOutputChars: 1000, backgroundAfterMs: 0 },
      workspace: () => '/w',
    });
    const env = { LD_PRELOAD: '/w/evil.so', GIT_CONFIG_PARAMETERS: "'core.pager'='id'" };
    const result = await tool.execute({ command: 'id', env }, { toolCallId: 't', sandbox } as never);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^exec: refused: env may not set LD_PRELOAD \(.+\), GIT_CONFIG_PARAMETERS \(/);
    expect(result.details).toMatchObject({ refused: true, blockedEnv: ['LD_PRELOAD', 'GIT_CONFIG_PARAMETERS'] });
    expect(spawned).toEqual([]);
  });
});
