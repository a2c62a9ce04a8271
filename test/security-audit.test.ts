/**
 * `claw security audit` through the built CLI: a deliberately loose state dir and config,
 * what --fix changes on disk (and what it must not), a clean setup, plugin provenance,
 * symlinks, and --deep against real gateways.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { claw, EMPTY_SCHEMA, startCliGateway, tempDir, writePlugin } from './helpers.js';

interface Finding {
  checkId: string;
  severity: 'critical' | 'warn' | 'info';
  title: string;
  detail: string;
  fix: string;
  fixable: boolean;
}

interface Report {
  ok: boolean;
  summary: { critical: number; warn: number; info: number };
  findings: Finding[];
  fixed?: Array<Record<string, string>>;
  probe?: { url: string; healthy: boolean; error?: string; unauthenticated: string };
}

const mode = (path: string) => statSync(path).mode & 0o777;
const ids = (report: Report) => report.findings.map((finding) => finding.checkId).sort();
const severityOf = (report: Report, checkId: string) =>
  report.findings.find((finding) => finding.checkId === checkId)?.severity;
const TOKEN = randomBytes(32).toString('base64url');

async function audit(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; report: Report; stderr: string }> {
  const result = await claw(['security', 'audit', '--json', ...args], env);
  return { code: result.code, report: JSON.parse(result.stdout) as Report, stderr: result.stderr };
}

function write(path: string, text: string, fileMode: number): void {
  writeFileSync(path, text);
  chmodSync(path, fileMode);
}

/** A state dir with one of each mistake the audit knows about. */
function looseSetup() {
  const stateDir = tempDir('claw-audit-');
  chmodSync(stateDir, 0o755);
  const config = {
    gateway: {
      bind: 'lan',
      auth: { mode: 'none', token: 'abcde' },
      http: { endpoints: { chatCompletions: { enabled: true } } },
    },
    channels: { telegram: { botToken: '${TG_TOKEN}', dmPolicy: 'open', allowFrom: ['*'], groupPolicy: 'open' } },
  };
  write(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2), 0o644);
  for (const dir of ['agents/main/sessions', 'agents/main/agent', 'credentials', 'cache/validators', 'workspace']) {
    mkdirSync(join(stateDir, dir), { recursive: true, mode: 0o700 });
  }
  write(join(stateDir, 'agents/main/sessions/s1.jsonl'), '{"type":"session"}\n', 0o644);
  write(join(stateDir, 'agents/main/sessions/sessions.json'), '{}\n', 0o600);
  write(join(stateDir, 'agents/main/agent/auth-profiles.json'), '{"version":1,"profiles":{}}\n', 0o644);
  write(join(stateDir, 'credentials/telegram-allowFrom.json'), '{"version":1,"allowFrom":[]}\n', 0o666);
  write(join(stateDir, 'cache/validators/abc.cjs'), 'module.exports = 1;\n', 0o644);
  // The user's own document in the workspace: neither reported nor changed.
  write(join(stateDir, 'workspace/notes.md'), '# notes\n', 0o644);
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir, TG_TOKEN: '123:abc' } };
}

/** Owner-only state, a long token, loopback, default policies. */
function cleanSetup(extra: Record<string, unknown> = {}) {
  const stateDir = tempDir('claw-audit-');
  write(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({ gateway: { auth: { mode: 'token', token: TOKEN } }, ...extra }, null, 2),
    0o600,
  );
  mkdirSync(join(stateDir, 'agents/main/sessions'), { recursive: true, mode: 0o700 });
  write(join(stateDir, 'agents/main/sessions/s1.jsonl'), '{"type":"session"}\n', 0o600);
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir } };
}

describe('claw security audit', () => {
  it('reports each mistake of a loose setup under its checkId, critical first, with exit code 1', async () => {
    const { env } = looseSetup();
    const { code, report } = await audit(env);
    expect(code).toBe(1);
    expect(ids(report)).toEqual([
      'browser.control_no_auth',
      'channels.telegram.dm.open',
      'channels.telegram.groups.open',
      'fs.auth_profiles.perms_readable',
      'fs.config.perms_world_readable',
      'fs.credentials_dir.perms_writable',
      'fs.sessions_store.perms_readable',
      'fs.state_dir.contents_perms_loose',
      'fs.state_dir.perms_readable',
      'gateway.bind_no_auth',
      'gateway.control_ui.allowed_origins_required',
      'gateway.http.chat_completions_enabled',
      'gateway.http.no_auth',
      'gateway.http.session_key_override_enabled',
      'gateway.token_too_short',
      'security.exposure.open_channels_with_exec',
      'security.exposure.open_groups_with_control_plane_tools',
      'security.exposure.open_groups_with_runtime_or_fs',
      'security.trust_model.multi_user_heuristic',
      'tools.exec.host_no_sandbox_no_approvals',
    ]);
    expect(report).toMatchObject({ ok: false, summary: { critical: 11, warn: 8, info: 1 } });
    expect(report).not.toHaveProperty('fixed');
    for (const finding of report.findings) {
      expect(Object.keys(finding).sort()).toEqual(['checkId', 'detail', 'fix', 'fixable', 'severity', 'title']);
    }
    const severities = report.findings.map((finding) => finding.severity);
    expect(severities).toEqual(
      [...severities].sort((a, b) => ['critical', 'warn', 'info'].indexOf(a) - ['critical', 'warn', 'info'].indexOf(b)),
    );
    expect(severityOf(report, 'gateway.bind_no_auth')).toBe('critical');
    expect(severityOf(report, 'gateway.http.chat_completions_enabled')).toBe('critical');
    // As in OpenClaw: open DMs are critical even when allowFrom says "*" on purpose.
    expect(severityOf(report, 'channels.telegram.dm.open')).toBe('critical');
    const byId = Object.fromEntries(report.findings.map((finding) => [finding.checkId, finding]));
    expect(byId['channels.telegram.groups.open']).toMatchObject({ fixable: true });
    expect(byId['gateway.bind_no_auth']).toMatchObject({ fixable: false });
    expect(byId['gateway.token_too_short']!.detail).toContain('5 characters');
    expect(byId['fs.sessions_store.perms_readable']!.detail).toContain('agents/main/sessions/s1.jsonl (644)');
    expect(byId['fs.state_dir.contents_perms_loose']!.detail).toContain('cache/validators/abc.cjs (644)');
    expect(JSON.stringify(report)).not.toContain('notes.md');

    const text = await claw(['security', 'audit'], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('Summary: 11 critical · 8 warn · 1 info');
    expect(text.stdout.indexOf('CRITICAL')).toBeLessThan(text.stdout.indexOf('WARN'));
    expect(text.stdout).toMatch(/\n {2}gateway\.bind_no_auth {2}.+\n {4}gateway\.auth\.mode is "none"/);
    expect(text.stdout).toContain(
      'channels.telegram.groups.open  Any group can use the assistant on telegram  (--fix)',
    );
  });

  it('--fix tightens modes on disk and closes open groups, but leaves auth alone and still exits 1', async () => {
    const { stateDir, env } = looseSetup();
    const { code, report } = await audit(env, '--fix');
    expect(code).toBe(1);
    expect(report.fixed![0]).toEqual({
      kind: 'config',
      key: 'channels.telegram.groupPolicy',
      from: 'open',
      to: 'allowlist',
    });
    const chmods = report.fixed!.slice(1).sort((a, b) => a.path!.localeCompare(b.path!));
    expect(chmods).toEqual([
      { kind: 'chmod', path: stateDir, from: '755', to: '700' },
      { kind: 'chmod', path: join(stateDir, 'agents/main/agent/auth-profiles.json'), from: '644', to: '600' },
      { kind: 'chmod', path: join(stateDir, 'agents/main/sessions/s1.jsonl'), from: '644', to: '600' },
      { kind: 'chmod', path: join(stateDir, 'cache/validators/abc.cjs'), from: '644', to: '600' },
      { kind: 'chmod', path: join(stateDir, 'credentials/telegram-allowFrom.json'), from: '666', to: '600' },
    ]);
    expect(mode(stateDir)).toBe(0o700);
    expect(mode(join(stateDir, 'openclaw.json'))).toBe(0o600);
    expect(mode(join(stateDir, 'openclaw.json.bak'))).toBe(0o600);
    expect(mode(join(stateDir, 'agents/main/sessions/s1.jsonl'))).toBe(0o600);
    expect(mode(join(stateDir, 'agents/main/agent/auth-profiles.json'))).toBe(0o600);
    expect(mode(join(stateDir, 'credentials/telegram-allowFrom.json'))).toBe(0o600);
    expect(mode(join(stateDir, 'cache/validators/abc.cjs'))).toBe(0o600);
    expect(mode(join(stateDir, 'workspace/notes.md'))).toBe(0o644);

    const written = readFileSync(join(stateDir, 'openclaw.json'), 'utf8');
    const config = JSON5.parse(written);
    expect(config.channels.telegram.groupPolicy).toBe('allowlist');
    expect(config.channels.telegram.botToken).toBe('${TG_TOKEN}');
    expect(config.gateway).toEqual({
      bind: 'lan',
      auth: { mode: 'none', token: 'abcde' },
      http: { endpoints: { chatCompletions: { enabled: true } } },
    });

    // What is left is what --fix must not decide for the user.
    expect(ids(report)).toEqual([
      'browser.control_no_auth',
      'channels.telegram.dm.open',
      'gateway.bind_no_auth',
      'gateway.control_ui.allowed_origins_required',
      'gateway.http.chat_completions_enabled',
      'gateway.http.no_auth',
      'gateway.http.session_key_override_enabled',
      'gateway.token_too_short',
      'security.exposure.open_channels_with_exec',
      'security.exposure.open_groups_with_control_plane_tools',
      'security.exposure.open_groups_with_runtime_or_fs',
      'security.trust_model.multi_user_heuristic',
      'tools.exec.host_no_sandbox_no_approvals',
    ]);
    expect(report).toMatchObject({ ok: false, summary: { critical: 9 } });

    const again = await audit(env, '--fix');
    expect(again.code).toBe(1);
    expect(again.report.fixed).toEqual([]);
  });

  it('passes a clean setup with exit code 0', async () => {
    const { env } = cleanSetup();
    const { code, report } = await audit(env);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    // Only the exec tool is left to mention: it is on by default.
    expect(ids(report)).toEqual(['tools.exec.host_no_sandbox_no_approvals']);
    expect(report.findings.filter((finding) => finding.checkId.startsWith('fs.'))).toEqual([]);

    const sandboxed = cleanSetup({
      plugins: { slots: { sandbox: 'sandbox-bwrap' } },
      agents: { defaults: { sandbox: { mode: 'all' } } },
    });
    expect(ids((await audit(sandboxed.env)).report)).toEqual([]);
    // Approvals in front of exec: not unattended any more.
    const asking = await audit(cleanSetup({ tools: { exec: { security: 'allowlist', ask: 'on-miss' } } }).env);
    expect(ids(asking.report)).toEqual([]);

    const locked = cleanSetup({ tools: { deny: ['group:runtime'] } });
    const text = await claw(['security', 'audit'], locked.env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Summary: 0 critical · 0 warn · 0 info');
    expect(text.stdout).toContain('No findings.');
  });

  it('judges secrets, exposure, origins and rate limits of an authenticated gateway', async () => {
    const { env } = cleanSetup({
      gateway: {
        bind: 'custom',
        customBindHost: '192.0.2.10',
        auth: {
          mode: 'token',
          token: 'short-but-not-tiny-token',
          password: 'hunter2hunter2',
          rateLimit: { maxAttempts: 0 },
        },
        allowedOrigins: ['*'],
      },
    });
    const { code, report } = await audit(env);
    // Reachable from the network: "*" origins and no controlUi.allowedOrigins are critical (as in OpenClaw).
    expect(code).toBe(1);
    expect(
      report.findings.filter(
        (finding) => finding.checkId.startsWith('gateway.') || finding.checkId.startsWith('config.'),
      ),
    ).toEqual([
      expect.objectContaining({ checkId: 'gateway.control_ui.allowed_origins_wildcard', severity: 'critical' }),
      expect.objectContaining({ checkId: 'gateway.control_ui.allowed_origins_required', severity: 'critical' }),
      expect.objectContaining({ checkId: 'gateway.token_too_short', severity: 'warn' }),
      expect.objectContaining({ checkId: 'gateway.password_too_short', severity: 'warn' }),
      expect.objectContaining({ checkId: 'gateway.auth_no_rate_limit', severity: 'warn' }),
      expect.objectContaining({ checkId: 'gateway.bind_non_loopback', severity: 'info' }),
      expect.objectContaining({ checkId: 'config.secrets.gateway_password_in_config', severity: 'info' }),
    ]);

    const placeholder = cleanSetup({ gateway: { bind: 'lan', auth: { mode: 'token', token: 'changeme' } } });
    const weak = await audit(placeholder.env);
    expect(weak.code).toBe(1);
    expect(severityOf(weak.report, 'gateway.token_placeholder_value')).toBe('critical');
    expect(severityOf(weak.report, 'gateway.bind_non_loopback')).toBe('warn');

    const tiny = cleanSetup({ gateway: { bind: 'lan', auth: { mode: 'token', token: 'abc123' } } });
    expect(severityOf((await audit(tiny.env)).report, 'gateway.token_too_short')).toBe('critical');
    const noAuthLocal = cleanSetup({ gateway: { auth: { mode: 'none' } } });
    expect(severityOf((await audit(noAuthLocal.env)).report, 'gateway.loopback_no_auth')).toBe('critical');
  });

  it('judges the webhook token: the gateway secret reused is critical; short or written in the file, a warning', async () => {
    const reused = await audit(cleanSetup({ hooks: { enabled: true, token: TOKEN } }).env);
    expect(reused.code).toBe(1);
    expect(severityOf(reused.report, 'hooks.token_reuse_gateway_token')).toBe('critical');
    expect(severityOf(reused.report, 'config.secrets.hooks_token_in_config')).toBe('warn');
    const short = cleanSetup({ hooks: { enabled: true, token: '${HOOK_TOKEN}' } });
    const fromEnv = await audit({ ...short.env, HOOK_TOKEN: 'short-hook-token' });
    expect(ids(fromEnv.report).filter((id) => id.includes('hooks'))).toEqual([
      'hooks.allowed_agent_ids_unrestricted',
      'hooks.default_session_key_unset',
      'hooks.token_too_short',
    ]);
  });

  it('judges channel policies per account: open DMs are critical, and inconsistent without "*"', async () => {
    const { env } = cleanSetup({
      channels: {
        telegram: {
          dmPolicy: 'open',
          allowFrom: ['*'],
          accounts: { work: { dmPolicy: 'open', allowFrom: ['123'] }, home: { groupPolicy: 'open' } },
        },
      },
    });
    const { code, report } = await audit(env);
    expect(code).toBe(1);
    const channelFindings = report.findings.filter((finding) => finding.checkId.startsWith('channels.'));
    expect(channelFindings.map((finding) => [finding.checkId, finding.severity, finding.detail.split(' ')[0]])).toEqual(
      [
        ['channels.telegram.dm.open', 'critical', 'channels.telegram.accounts.work.dmPolicy'],
        ['channels.telegram.dm.open', 'critical', 'channels.telegram.dmPolicy'],
        ['channels.telegram.dm.open_invalid', 'warn', 'channels.telegram.accounts.work.dmPolicy'],
        ['channels.telegram.groups.open', 'warn', 'channels.telegram.accounts.home.groupPolicy'],
      ],
    );
  });

  it('flags plugins from outside claw without an allowlist, and ones whose origin is not on record', async () => {
    const { stateDir, env } = cleanSetup();
    const local = writePlugin(join(tempDir(), 'local-thing'), {
      manifest: { id: 'local-thing', configSchema: EMPTY_SCHEMA },
      code: 'export default { register() {} };',
    });
    const shipped = writePlugin(join(tempDir(), 'shipped'), {
      manifest: { id: 'shipped', configSchema: EMPTY_SCHEMA },
      code: 'export default { register() {} };',
    });
    expect((await claw(['plugins', 'install', shipped], env)).code).toBe(0);
    // Copied by hand next to it: no install record.
    writePlugin(join(stateDir, 'extensions', 'stray'), {
      manifest: { id: 'stray', configSchema: EMPTY_SCHEMA },
      code: 'export default { register() {} };',
    });
    const config = JSON5.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));
    config.plugins.load = { paths: [local] };
    config.plugins.installs.ghost = {
      source: 'path',
      spec: '/gone/ghost',
      installPath: join(stateDir, 'extensions', 'ghost'),
      installedAt: new Date().toISOString(),
    };
    write(join(stateDir, 'openclaw.json'), JSON.stringify(config), 0o600);

    const { report } = await audit(env);
    const byId = Object.fromEntries(report.findings.map((finding) => [finding.checkId, finding]));
    expect(byId['plugins.extensions_no_allowlist']).toMatchObject({ severity: 'warn' });
    expect(byId['plugins.extensions_no_allowlist']!.detail).toContain('shipped (global, on)');
    const origin = byId['plugins.unknown_origin']!;
    expect(origin.severity).toBe('warn');
    expect(origin.detail).toContain(`local-thing loads from plugins.load.paths (${local})`);
    expect(origin.detail).toContain('stray sits in');
    expect(origin.detail).toContain('plugins.installs.ghost points to');
    expect(origin.detail).not.toContain('shipped');

    config.plugins.allow = ['shipped', 'local-thing', 'gateway'];
    write(join(stateDir, 'openclaw.json'), JSON.stringify(config), 0o600);
    expect(ids((await audit(env)).report)).not.toContain('plugins.extensions_no_allowlist');
  });

  it('reports symlinks and a config kept elsewhere, and --fix follows no link', async () => {
    const real = tempDir('claw-audit-real-');
    const stateDir = join(tempDir(), 'state-link');
    symlinkSync(real, stateDir);
    const outside = join(tempDir(), 'private.txt');
    write(outside, 'not claw state\n', 0o644);
    symlinkSync(outside, join(real, 'linked.txt'));
    const configPath = join(tempDir(), 'elsewhere.json');
    write(configPath, JSON.stringify({ gateway: { auth: { token: TOKEN } } }), 0o640);
    const env = { OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: configPath };

    const { report } = await audit(env);
    expect(ids(report)).toEqual([
      'fs.config.perms_group_readable',
      'fs.state_dir.symlink',
      'tools.exec.host_no_sandbox_no_approvals',
    ]);
    const fixed = await audit(env, '--fix');
    expect(fixed.report.fixed).toEqual([{ kind: 'chmod', path: configPath, from: '640', to: '600' }]);
    expect(mode(configPath)).toBe(0o600);
    expect(mode(outside)).toBe(0o644);
  });

  it('--deep finds a running gateway that admits clients without credentials', async () => {
    const { env } = cleanSetup({ gateway: { auth: { mode: 'none' } } });
    const gw = await startCliGateway(env);
    const { code, report } = await audit(env, '--deep');
    expect(code).toBe(1);
    expect(report.probe).toEqual({ url: `ws://127.0.0.1:${gw.port}`, healthy: true, unauthenticated: 'accepted' });
    expect(severityOf(report, 'gateway.probe_unauthenticated_accepted')).toBe('critical');
    expect(ids(report)).not.toContain('gateway.probe_failed');
    gw.child.kill('SIGTERM');
    await gw.exited;

    // Nothing listens on the discard port; the default port may belong to another gateway on this machine.
    const down = await audit({ ...env, OPENCLAW_GATEWAY_URL: 'ws://127.0.0.1:9' }, '--deep');
    expect(severityOf(down.report, 'gateway.probe_failed')).toBe('warn');
    expect(down.report.probe).toMatchObject({ url: 'ws://127.0.0.1:9', healthy: false, unauthenticated: 'refused' });
    expect(ids(down.report)).not.toContain('gateway.probe_unauthenticated_accepted');
  });

  it('--deep passes a gateway that requires its token, and --token overrides the configured one', async () => {
    const { env } = cleanSetup();
    const gw = await startCliGateway(env);
    const { code, report } = await audit(env, '--deep');
    expect(code).toBe(0);
    expect(report.probe).toEqual({ url: `ws://127.0.0.1:${gw.port}`, healthy: true, unauthenticated: 'refused' });
    expect(ids(report).filter((id) => id.startsWith('gateway.'))).toEqual([]);

    const wrong = await audit(env, '--deep', '--token', 'not-the-token');
    expect(severityOf(wrong.report, 'gateway.probe_failed')).toBe('warn');
    expect(wrong.report.probe).toMatchObject({ healthy: false, unauthenticated: 'refused' });
    expect(wrong.report.probe!.error).toMatch(/unauthorized/);
    expect(await claw(['security', 'audit', '--token', 'x'], env)).toMatchObject({
      code: 2,
      stderr: 'claw: --token and --password are for the --deep probe\n',
    });
  });
});
