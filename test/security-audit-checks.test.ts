/**
 * The audit's checks one area at a time, through the built CLI, on configs that are
 * otherwise clean (owner-only files, a long token, loopback): exposure of open chats,
 * elevated mode, host exec and its allowlists, webhooks, the gateway's origins and HTTP
 * API, break-glass flags, sandbox settings, models, the trust model, plugins, browser
 * control, synced folders, and what --fix changes.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { claw, tempDir } from './helpers.js';

interface Finding {
  checkId: string;
  severity: 'critical' | 'warn' | 'info';
  title: string;
  detail: string;
  fix: string;
  fixable: boolean;
}

interface Report {
  summary: { critical: number; warn: number; info: number };
  findings: Finding[];
  fixed?: Array<Record<string, string>>;
}

const TOKEN = randomBytes(32).toString('base64url');
const TELEGRAM = { botToken: '123:abc' };

function setup(config: Record<string, unknown>, options: { approvals?: unknown; stateDir?: string } = {}) {
  const stateDir = options.stateDir ?? tempDir('claw-audit-checks-');
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  chmodSync(stateDir, 0o700);
  const full = {
    ...config,
    gateway: { auth: { mode: 'token', token: TOKEN }, ...(config.gateway as object | undefined) },
  };
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(full, null, 2), { mode: 0o600 });
  if (options.approvals)
    writeFileSync(join(stateDir, 'exec-approvals.json'), JSON.stringify(options.approvals), { mode: 0o600 });
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir } };
}

type Audited = Report & { code: number };

async function audit(
  config: Record<string, unknown>,
  options: { approvals?: unknown; args?: string[] } = {},
): Promise<Audited> {
  const { env } = setup(config, options);
  const result = await claw(['security', 'audit', '--json', ...(options.args ?? [])], env);
  return { code: result.code, ...(JSON.parse(result.stdout) as Report) };
}

const find = (report: Report, checkId: string) => report.findings.filter((finding) => finding.checkId === checkId);
const one = (report: Report, checkId: string) => {
  const found = find(report, checkId);
  expect(found, `${checkId} in ${report.findings.map((finding) => finding.checkId).join(', ')}`).toHaveLength(1);
  return found[0]!;
};
const ids = (report: Report) => report.findings.map((finding) => finding.checkId);

describe('open chats × agent tools (security.exposure.*)', () => {
  it('open DMs reach exec (claw runs it unattended by default), the shell and file tools, and cron', async () => {
    const report = await audit({ channels: { telegram: { ...TELEGRAM, dmPolicy: 'open', allowFrom: ['*'] } } });
    expect(report.code).toBe(1);
    expect(one(report, 'security.exposure.open_channels_with_exec')).toMatchObject({
      severity: 'critical',
      fixable: false,
    });
    expect(one(report, 'security.exposure.open_channels_with_exec').detail).toContain(
      'main: security full, ask off, sandbox off',
    );
    expect(one(report, 'security.exposure.open_groups_with_runtime_or_fs').severity).toBe('critical');
    expect(one(report, 'security.exposure.open_groups_with_control_plane_tools').detail).toContain('main (cron)');
    expect(one(report, 'channels.telegram.dm.open').severity).toBe('critical');
    // Elevated mode is off unless turned on in claw: nothing to say about it.
    expect(ids(report)).not.toContain('security.exposure.open_groups_with_elevated');
    expect(one(report, 'security.trust_model.multi_user_heuristic').detail).toContain(
      'channels.telegram.dmPolicy is "open"',
    );
  });

  it('narrows with the tools: an allowlist makes exec a warning, a sandbox and denies clear the rest', async () => {
    const asking = await audit({
      channels: { telegram: { ...TELEGRAM, groupPolicy: 'open' } },
      tools: { exec: { security: 'allowlist', ask: 'on-miss' }, deny: ['cron'] },
      agents: { defaults: { sandbox: { mode: 'all' } } },
    });
    expect(one(asking, 'security.exposure.open_channels_with_exec').severity).toBe('warn');
    expect(ids(asking)).not.toContain('security.exposure.open_groups_with_runtime_or_fs');
    expect(ids(asking)).not.toContain('security.exposure.open_groups_with_control_plane_tools');

    const messaging = await audit({
      channels: { telegram: { ...TELEGRAM, groupPolicy: 'open' } },
      tools: { profile: 'messaging' },
    });
    expect(ids(messaging).filter((id) => id.startsWith('security.exposure.'))).toEqual([]);
    // File tools outside the workspace count, without a shell only as a warning.
    const files = await audit({
      channels: { telegram: { ...TELEGRAM, groupPolicy: 'open' } },
      tools: { deny: ['group:runtime', 'cron'], fs: { workspaceOnly: false } },
    });
    expect(one(files, 'security.exposure.open_groups_with_runtime_or_fs')).toMatchObject({ severity: 'warn' });
    expect(one(files, 'security.exposure.open_groups_with_runtime_or_fs').detail).toContain(
      'read, write, edit, apply_patch',
    );
  });

  it('elevated mode behind open chats is critical once tools.elevated.enabled is true; a disabled channel opens nothing', async () => {
    const elevated = await audit({
      channels: { telegram: { ...TELEGRAM, groupPolicy: 'open' } },
      tools: { elevated: { enabled: true, allowFrom: { telegram: ['42'] } } },
    });
    expect(one(elevated, 'security.exposure.open_groups_with_elevated').severity).toBe('critical');
    const off = await audit({
      channels: { telegram: { ...TELEGRAM, enabled: false, dmPolicy: 'open', allowFrom: ['*'], groupPolicy: 'open' } },
    });
    expect(ids(off).filter((id) => id.startsWith('security.') || id.startsWith('channels.'))).toEqual([]);
  });
  it('"*" in the list a pairing or allowlist policy checks opens the chat just the same', async () => {
    const report = await audit({
      channels: {
        telegram: {
          ...TELEGRAM,
          dmPolicy: 'pairing',
          allowFrom: ['*'],
          groupPolicy: 'allowlist',
          groupAllowFrom: ['*'],
        },
      },
    });
    expect(one(report, 'channels.telegram.dm.open')).toMatchObject({ severity: 'critical' });
    const dm = one(report, 'channels.telegram.dm.open').detail;
    expect(dm).toMatch(/^channels\.telegram\.allowFrom includes "\*": with dmPolicy "pairing"/);
    expect(one(report, 'channels.telegram.groups.open')).toMatchObject({ severity: 'warn', fixable: false });
    expect(ids(report)).not.toContain('channels.telegram.dm.open_invalid');
    expect(one(report, 'security.exposure.open_channels_with_exec').detail).toMatch(
      /^Open to anyone: channels\.telegram\.allowFrom, channels\.telegram\.groupAllowFrom\./,
    );
  });
});

describe('elevated allowlists (tools.elevated.allowFrom.<channel>.*)', () => {
  it('"*" is critical whether or not elevated is on yet, a long list a warning, enabled: false silences both', async () => {
    const many = Array.from({ length: 26 }, (_, i) => String(100 + i));
    const report = await audit({
      tools: { elevated: { allowFrom: { telegram: ['*', '42'], discord: many, whatsapp: ['+15550001'] } } },
    });
    expect(one(report, 'tools.elevated.allowFrom.telegram.wildcard')).toMatchObject({
      severity: 'critical',
      fixable: true,
    });
    expect(one(report, 'tools.elevated.allowFrom.telegram.wildcard').detail).toContain('elevated mode is off for now');
    expect(one(report, 'tools.elevated.allowFrom.discord.large').detail).toContain('26 entries');
    expect(ids(report).filter((id) => id.includes('whatsapp'))).toEqual([]);
    const disabled = await audit({ tools: { elevated: { enabled: false, allowFrom: { telegram: ['*'] } } } });
    expect(ids(disabled).filter((id) => id.startsWith('tools.elevated'))).toEqual([]);
  });

  it('--fix takes "*" out of the list and keeps the named senders; a second run has nothing to do', async () => {
    const { stateDir, env } = setup({
      tools: { elevated: { enabled: true, allowFrom: { telegram: ['*', 42], discord: ['7'] } } },
    });
    const result = await claw(['security', 'audit', '--json', '--fix'], env);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.fixed).toEqual([
      { kind: 'config', key: 'tools.elevated.allowFrom.telegram', from: '["*",42]', to: '[42]' },
    ]);
    expect(ids(report).filter((id) => id.startsWith('tools.elevated'))).toEqual([]);
    const written = JSON5.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));
    expect(written.tools.elevated).toEqual({ enabled: true, allowFrom: { telegram: [42], discord: ['7'] } });
    const text = await claw(['security', 'audit', '--fix'], env);
    expect(text.stdout).toContain('Nothing for --fix to change.');
  });
});

describe('host exec (tools.exec.*)', () => {
  it('security "full" written in the config is a warning, critical next to open chats; the approvals file can overrule it', async () => {
    const quiet = await audit({ tools: { exec: { security: 'full' } } });
    expect(one(quiet, 'tools.exec.security_full_configured')).toMatchObject({ severity: 'warn' });
    expect(one(quiet, 'tools.exec.security_full_configured').detail).toMatch(
      /^tools\.exec\.security is "full" for agent main/,
    );
    const open = await audit({
      tools: { exec: { security: 'full' } },
      channels: { telegram: { ...TELEGRAM, groupPolicy: 'open' } },
    });
    expect(one(open, 'tools.exec.security_full_configured').severity).toBe('critical');
    const perAgent = await audit({
      agents: { list: [{ id: 'main' }, { id: 'ops', tools: { exec: { security: 'full' } } }] },
    });
    expect(one(perAgent, 'tools.exec.security_full_configured').detail).toMatch(
      /^agents\.list\.ops\.tools\.exec\.security is "full" for agent ops/,
    );
    // The approvals document only tightens, and here it does: no full exec, nothing unattended.
    const tightened = await audit(
      { tools: { exec: { security: 'full' } } },
      { approvals: { version: 1, defaults: { security: 'allowlist', ask: 'on-miss' } } },
    );
    expect(ids(tightened).filter((id) => id.startsWith('tools.exec'))).toEqual([]);
    // claw's default (unset) is full as well, but that is the unattended-exec warning's business.
    expect(ids(await audit({}))).toEqual(['tools.exec.host_no_sandbox_no_approvals']);
  });

  it('file tools denied while exec stays is drift; a read-only "all" sandbox closes it', async () => {
    const drift = await audit({ tools: { deny: ['write', 'edit', 'apply_patch'] } });
    expect(one(drift, 'tools.exec.fs_tools_disabled_but_exec_enabled').detail).toContain(
      'main (sandbox off, workspaceAccess none)',
    );
    const sandboxed = await audit({
      tools: { deny: ['group:fs'] },
      agents: { defaults: { sandbox: { mode: 'all', workspaceAccess: 'ro' } } },
    });
    expect(ids(sandboxed)).not.toContain('tools.exec.fs_tools_disabled_but_exec_enabled');
  });

  it('launchers and interpreters on the approvals allowlist are flagged; launchers only outside a sandbox', async () => {
    const allowlist = ['/usr/bin/git', 'make', 'python3.12', '/usr/bin/*', '/usr/bin/cut'].map((pattern) => ({
      pattern,
    }));
    const approvals = { version: 1, agents: { '*': { allowlist } } };
    const report = await audit({ tools: { exec: { security: 'allowlist', ask: 'on-miss' } } }, { approvals });
    const interpreters = one(report, 'tools.exec.allowlist_interpreter_without_strict_inline_eval');
    expect(interpreters.severity).toBe('warn');
    expect(interpreters.detail).toContain('agents.*: python3.12 (python3)');
    expect(interpreters.detail).toContain('agents.*: /usr/bin/* (sh, bash, dash, zsh, ksh, mksh, +');
    const launchers = one(report, 'tools.exec.allowlist_launcher_unsandboxed');
    expect(launchers.detail).toContain('agents.*: /usr/bin/git (git)');
    expect(launchers.detail).toContain('agents.*: make (make)');
    expect(launchers.detail).not.toContain('/usr/bin/cut');

    const open = await audit({ channels: { telegram: { ...TELEGRAM, groupPolicy: 'open' } } }, { approvals });
    expect(one(open, 'tools.exec.allowlist_launcher_unsandboxed').severity).toBe('critical');
    const sandboxed = await audit({ agents: { defaults: { sandbox: { mode: 'all' } } } }, { approvals });
    expect(ids(sandboxed)).not.toContain('tools.exec.allowlist_launcher_unsandboxed');
    expect(ids(sandboxed)).toContain('tools.exec.allowlist_interpreter_without_strict_inline_eval');
  });

  it('safe bins that interpret or launch, and safe-bin directories others can write to', async () => {
    const report = await audit({
      tools: {
        exec: {
          security: 'allowlist',
          safeBins: ['cut', 'jq', 'node', 'xargs'],
          safeBinTrustedDirs: ['/opt/tools/bin', '/tmp/bin', 'bin', '/usr/local/bin'],
        },
      },
      agents: { list: [{ id: 'main', tools: { exec: { safeBins: ['perl'] } } }] },
    });
    expect(one(report, 'tools.exec.safe_bins_interpreter_unprofiled').detail).toBe(
      'tools.exec.safeBins: node (node); agents.list.main.tools.exec.safeBins: perl (perl): a safe bin runs in allowlist mode without ' +
        'asking, and an interpreter runs whatever program its arguments or stdin hold.',
    );
    expect(one(report, 'tools.exec.safe_bins_broad_behavior').detail).toMatch(
      /^tools\.exec\.safeBins: jq \(jq\); tools\.exec\.safeBins: xargs \(xargs\):/,
    );
    const dirs = one(report, 'tools.exec.safe_bin_trusted_dirs_risky').detail;
    expect(dirs).toContain('/tmp/bin (a temporary directory');
    expect(dirs).toContain('bin (a relative path');
    expect(dirs).toContain('/usr/local/bin (a package-manager directory');
    expect(dirs).not.toContain('/opt/tools/bin');
  });
});

describe('webhooks (hooks.*)', () => {
  const HOOKS_TOKEN = randomBytes(32).toString('hex');

  it('once enabled: unset defaultSessionKey, any agent, caller-chosen sessions; critical beyond loopback', async () => {
    const local = await audit({ hooks: { enabled: true, token: HOOKS_TOKEN, allowRequestSessionKey: true } });
    expect(one(local, 'hooks.default_session_key_unset').severity).toBe('warn');
    expect(one(local, 'hooks.allowed_agent_ids_unrestricted').severity).toBe('warn');
    expect(one(local, 'hooks.request_session_key_enabled').severity).toBe('warn');
    expect(one(local, 'hooks.request_session_key_prefixes_missing').severity).toBe('warn');
    const flags = find(local, 'config.insecure_or_dangerous_flags').map((finding) => finding.title);
    expect(flags).toEqual(['Protection switched off: hooks.allowRequestSessionKey']);

    const lan = await audit({
      gateway: {
        bind: 'lan',
        auth: { mode: 'token', token: TOKEN },
        controlUi: { allowedOrigins: ['https://claw.example'] },
      },
      hooks: { enabled: true, token: HOOKS_TOKEN, allowRequestSessionKey: true, allowedAgentIds: ['*'] },
    });
    expect(one(lan, 'hooks.allowed_agent_ids_unrestricted')).toMatchObject({ severity: 'critical' });
    expect(one(lan, 'hooks.allowed_agent_ids_unrestricted').detail).toContain('contains "*"');
    expect(one(lan, 'hooks.request_session_key_enabled').severity).toBe('critical');
    expect(one(lan, 'hooks.request_session_key_prefixes_missing').severity).toBe('critical');
  });

  it('pinned agents, a default session and prefixes leave only the deliberate opt-in; disabled hooks are not judged', async () => {
    const pinned = await audit({
      hooks: {
        enabled: true,
        token: HOOKS_TOKEN,
        defaultSessionKey: 'hook:ingress',
        allowedAgentIds: ['hooks'],
        allowRequestSessionKey: true,
        allowedSessionKeyPrefixes: ['hook:'],
      },
    });
    expect(ids(pinned).filter((id) => id.startsWith('hooks.'))).toEqual(['hooks.request_session_key_enabled']);
    const off = await audit({ hooks: { enabled: false, token: HOOKS_TOKEN } });
    expect(ids(off).filter((id) => id.startsWith('hooks.'))).toEqual([]);
  });
});

describe('gateway origins and HTTP API', () => {
  it('a LAN bind needs gateway.controlUi.allowedOrigins; "*" there is critical on the network, a warning on loopback', async () => {
    const lan = await audit({ gateway: { bind: 'lan', auth: { mode: 'token', token: TOKEN } } });
    expect(one(lan, 'gateway.control_ui.allowed_origins_required')).toMatchObject({
      severity: 'critical',
      fixable: false,
    });
    const listed = await audit({
      gateway: {
        bind: 'lan',
        auth: { mode: 'token', token: TOKEN },
        controlUi: { allowedOrigins: ['https://claw.example'] },
      },
    });
    expect(ids(listed).filter((id) => id.startsWith('gateway.control_ui'))).toEqual([]);
    const wildcard = await audit({
      gateway: { bind: 'lan', auth: { mode: 'token', token: TOKEN }, controlUi: { allowedOrigins: ['*'] } },
    });
    expect(one(wildcard, 'gateway.control_ui.allowed_origins_wildcard').severity).toBe('critical');
    const local = await audit({
      gateway: { auth: { mode: 'token', token: TOKEN }, controlUi: { allowedOrigins: ['*'] } },
    });
    expect(one(local, 'gateway.control_ui.allowed_origins_wildcard').severity).toBe('warn');
  });

  it('auth "none" leaves the HTTP API and browser control open; the chat API lets callers pick sessions', async () => {
    const open = await audit({
      gateway: { auth: { mode: 'none' }, http: { endpoints: { chatCompletions: { enabled: true } } } },
    });
    expect(one(open, 'gateway.http.no_auth')).toMatchObject({ severity: 'warn' });
    expect(one(open, 'gateway.http.no_auth').detail).toContain('/v1/models, /v1/chat/completions answer any caller');
    expect(one(open, 'browser.control_no_auth').severity).toBe('critical');
    expect(one(open, 'gateway.http.session_key_override_enabled').severity).toBe('info');
    const noBrowser = await audit({ gateway: { auth: { mode: 'none' } }, browser: { enabled: false } });
    expect(ids(noBrowser)).not.toContain('browser.control_no_auth');
    expect(ids(noBrowser)).not.toContain('gateway.http.session_key_override_enabled');
  });
});

describe('break-glass flags (config.insecure_or_dangerous_flags)', () => {
  it('one warning per switch, private-network opt-ins of web_fetch, the browser and cron webhooks included', async () => {
    const report = await audit({
      tools: {
        fs: { workspaceOnly: false },
        exec: { applyPatch: { workspaceOnly: false } },
        web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } },
      },
      browser: { ssrfPolicy: { allowPrivateNetwork: true } },
      cron: { webhookSsrfPolicy: { dangerouslyAllowPrivateNetwork: true } },
      hooks: { mappings: [{ match: { path: 'mail' }, allowUnsafeExternalContent: true }] },
    });
    const flags = find(report, 'config.insecure_or_dangerous_flags');
    expect(flags.map((finding) => finding.severity)).toEqual(Array(6).fill('warn'));
    expect(flags.map((finding) => finding.detail.split(' ')[0])).toEqual([
      'hooks.mappings[0].allowUnsafeExternalContent',
      'tools.fs.workspaceOnly',
      'tools.exec.applyPatch.workspaceOnly',
      'browser.ssrfPolicy.allowPrivateNetwork',
      'tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork',
      'cron.webhookSsrfPolicy.dangerouslyAllowPrivateNetwork',
    ]);
    expect(flags[4]!.fix).toContain('tools.web.fetch.ssrfPolicy.allowedHostnames');
  });
});

describe('sandbox settings (sandbox.*)', () => {
  it('mounts of host control surfaces and relative paths, a shared network, docker settings with the sandbox off', async () => {
    const report = await audit({
      agents: {
        defaults: {
          sandbox: {
            mode: 'all',
            docker: { binds: ['/var/run/docker.sock:/var/run/docker.sock', 'data:/data', '/srv/project:/project:ro'] },
          },
        },
        list: [
          { id: 'main' },
          { id: 'lab', sandbox: { docker: { network: 'host' } } },
          { id: 'idle', sandbox: { mode: 'off', docker: { image: 'x' } } },
        ],
      },
    });
    const dangerous = one(report, 'sandbox.dangerous_bind_mount');
    expect(dangerous.severity).toBe('critical');
    expect(dangerous.detail).toMatch(
      /^agents\.defaults\.sandbox\.docker\.binds has "\/var\/run\/docker\.sock:\/var\/run\/docker\.sock": /,
    );
    expect(one(report, 'sandbox.bind_mount_non_absolute').detail).toContain('"data:/data"');
    expect(one(report, 'sandbox.dangerous_network_mode')).toMatchObject({ severity: 'critical' });
    expect(one(report, 'sandbox.dangerous_network_mode').detail).toMatch(
      /^agents\.list\.lab\.sandbox\.docker\.network is "host"/,
    );
    expect(one(report, 'sandbox.docker_config_mode_off').detail).toMatch(
      /^agents\.list\.idle\.sandbox\.docker is configured/,
    );
  });
});

describe('models (models.*)', () => {
  it('legacy and lower-tier models warn; a small model that reads the web is critical until web tools are denied for it', async () => {
    const report = await audit({
      agents: {
        defaults: {
          model: { primary: 'fast', fallbacks: ['openai/gpt-3.5-turbo'] },
          models: { 'anthropic/claude-3-5-haiku': { alias: 'fast' } },
        },
        list: [{ id: 'main' }, { id: 'local', model: 'ollama/llama3.1:8b' }],
      },
    });
    expect(one(report, 'models.legacy').detail).toContain(
      'openai/gpt-3.5-turbo (GPT-3.5) at agents.defaults.model.fallbacks',
    );
    const weak = one(report, 'models.weak_tier').detail;
    expect(weak).toContain(
      'anthropic/claude-3-5-haiku (a Haiku-tier model, below Claude 4.5) at agents.defaults.model.primary',
    );
    expect(weak).toContain('openai/gpt-3.5-turbo (below GPT-5)');
    const small = one(report, 'models.small_params');
    expect(small.severity).toBe('critical');
    expect(small.detail).toContain(
      'ollama/llama3.1:8b (8B) at agents.list.local.model: reads the web through web_search, web_fetch, browser',
    );

    const denied = await audit({
      agents: { defaults: { model: 'ollama/llama3.1:8b' } },
      tools: { byProvider: { 'ollama/llama3.1:8b': { deny: ['group:web', 'browser'] } } },
    });
    expect(one(denied, 'models.small_params')).toMatchObject({ severity: 'info' });
    const current = await audit({
      agents: { defaults: { model: 'anthropic/claude-sonnet-4-5', models: { 'openai/gpt-5': { alias: 'g' } } } },
    });
    expect(ids(current).filter((id) => id.startsWith('models.'))).toEqual([]);
  });
});

describe('trust model (security.trust_model.*)', () => {
  it('allowlisted groups still mean several people; cross-agent session reach is info, a warning with different trust levels', async () => {
    const groups = await audit({
      channels: { telegram: { ...TELEGRAM, groupPolicy: 'allowlist', groups: { '-100': { requireMention: true } } } },
    });
    expect(one(groups, 'security.trust_model.multi_user_heuristic').detail).toContain(
      'channels.telegram.groupPolicy is "allowlist" with groups configured',
    );

    const agents = [{ id: 'main' }, { id: 'work' }];
    expect(ids(await audit({ agents: { list: agents } }))).not.toContain(
      'security.trust_model.cross_agent_session_access_default',
    );
    const shared = await audit({ agents: { list: agents }, tools: { agentToAgent: { enabled: true } } });
    expect(one(shared, 'security.trust_model.cross_agent_session_access_default')).toMatchObject({ severity: 'info' });
    const mixed = await audit({
      agents: { list: [{ id: 'main' }, { id: 'kids', tools: { profile: 'messaging' } }] },
      tools: { agentToAgent: { enabled: true } },
    });
    const finding = one(mixed, 'security.trust_model.cross_agent_session_access_default');
    expect(finding.severity).toBe('warn');
    expect(finding.detail).toContain('kids has its own tool policy (tools.profile)');
    const allowed = await audit({
      agents: { list: agents },
      tools: { agentToAgent: { enabled: true, allow: ['main'] } },
    });
    expect(ids(allowed)).not.toContain('security.trust_model.cross_agent_session_access_default');
  });
});

describe('plugins (plugins.*)', () => {
  it('allow entries naming nothing, unpinned npm installs, and installs whose files moved on', async () => {
    const { stateDir, env } = setup({});
    const installed = join(stateDir, 'extensions', 'weather');
    mkdirSync(installed, { recursive: true, mode: 0o700 });
    writeFileSync(join(installed, 'package.json'), JSON.stringify({ name: 'claw-weather', version: '1.4.0' }), {
      mode: 0o600,
    });
    const config = JSON5.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));
    const installedAt = new Date().toISOString();
    config.plugins = {
      allow: ['gateway', 'agent', 'ghost-plugin'],
      installs: {
        weather: { source: 'npm', spec: 'claw-weather', installPath: installed, version: '1.2.0', installedAt },
        pinned: {
          source: 'npm',
          spec: '@acme/pinned@2.0.1',
          installPath: join(stateDir, 'extensions', 'pinned'),
          installedAt,
        },
      },
    };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config), { mode: 0o600 });
    const report = JSON.parse((await claw(['security', 'audit', '--json'], env)).stdout) as Report;
    expect(one(report, 'plugins.allow_phantom_entries').detail).toMatch(/^plugins\.allow lists "ghost-plugin", which/);
    expect(one(report, 'plugins.installs_unpinned_npm_specs').detail).toMatch(/^weather \(claw-weather\):/);
    expect(one(report, 'plugins.installs_version_drift').detail).toMatch(
      /^weather \(recorded 1\.2\.0, installed 1\.4\.0\):/,
    );
  });
});

describe('local disk', () => {
  it('a state dir inside a synced folder is reported', async () => {
    const stateDir = join(tempDir('claw-audit-'), 'Dropbox', 'claw-state');
    const { env } = setup({}, { stateDir });
    const report = JSON.parse((await claw(['security', 'audit', '--json'], env)).stdout) as Report;
    expect(one(report, 'fs.synced_dir')).toMatchObject({ severity: 'warn' });
    expect(one(report, 'fs.synced_dir').detail).toContain(stateDir);
  });
});

describe('channel settings that weaken identity or privacy', () => {
  it('names name matching and a plaintext IRC connection, per account, and skips disabled ones', async () => {
    const report = await audit({
      channels: {
        irc: {
          host: 'irc.example.net',
          nick: 'clawbot',
          tls: false,
          dangerouslyAllowNameMatching: true,
          accounts: { work: { tls: true }, old: { enabled: false, tls: false } },
        },
      },
    });
    expect(one(report, 'channels.irc.transport.plaintext')).toMatchObject({
      severity: 'warn',
      detail: expect.stringContaining('channels.irc.tls is false'),
    });
    expect(one(report, 'channels.irc.allowFrom.dangerous_name_matching_enabled').severity).toBe('info');
    expect(report.findings.map((finding) => finding.detail).join('\n')).not.toContain('accounts.old');
    const clean = await audit({ channels: { irc: { host: 'irc.example.net', nick: 'clawbot' } } });
    expect(ids(clean).filter((id) => id.startsWith('channels.irc.'))).toEqual([]);
  }, 60_000);

  it('names Matrix invites accepted from anyone, louder when the rooms are open, and reads dm.policy', async () => {
    const matrix = { homeserver: 'https://matrix.example.org', accessToken: 'syt_x', autoJoin: 'always' };
    const quiet = await audit({ channels: { matrix } });
    expect(one(quiet, 'channels.matrix.invites.auto_join_all').severity).toBe('info');
    const loud = await audit({
      channels: { matrix: { ...matrix, groupPolicy: 'open', dm: { policy: 'open', allowFrom: ['*'] } } },
    });
    expect(one(loud, 'channels.matrix.invites.auto_join_all').severity).toBe('warn');
    expect(one(loud, 'channels.matrix.dm.open').severity).toBe('critical');
    const clean = await audit({ channels: { matrix: { ...matrix, autoJoin: 'allowlist' } } });
    expect(ids(clean).filter((id) => id.startsWith('channels.matrix.'))).toEqual([]);
  }, 60_000);
});
