/**
 * `claw security audit --json` against OpenClaw's own `openclaw security audit --json`
 * (npm openclaw from .cache, offline) on the same insecure configs: every finding OpenClaw
 * reports must be in claw's report under the same checkId, at the same severity or a
 * stricter one — except the few ids listed in NOT_IN_CLAW, each with the reason claw has
 * nothing to report there. Every critical OpenClaw finding must be critical in claw.
 *
 * The configs are valid for both. Where the two disagree on a default, the config says
 * which it means, so both read it alike: tools.elevated (claw: off unless enabled,
 * OpenClaw: on unless disabled) and tools.agentToAgent (claw: off, OpenClaw: on).
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { claw, tempDir } from './helpers.js';
import { runOpenclaw } from './openclaw-cli.js';

type Severity = 'critical' | 'warn' | 'info';
interface Finding {
  checkId: string;
  severity: Severity;
}

const RANK: Record<Severity, number> = { info: 0, warn: 1, critical: 2 };
const GATEWAY_TOKEN = 'parity-gateway-token-0123456789abcdef0123';
const HOOKS_TOKEN = 'parity-hooks-token-0123456789abcdef01234567';

/** OpenClaw ids claw does not emit, and why there is nothing to report in claw. */
const NOT_IN_CLAW: Record<string, string> = {
  'summary.attack_surface': 'an inventory, not a finding; claw prints a summary line instead',
  'gateway.trusted_proxies_missing': 'claw has no gateway.trustedProxies: it trusts no forwarded client address at all',
  'gateway.auth_no_rate_limit':
    'claw limits failed auth by default; only a weakened gateway.auth.rateLimit is a finding',
};

interface Case {
  name: string;
  config: Record<string, unknown>;
  /** Ids OpenClaw must report, so a case cannot pass because OpenClaw refused the config. */
  openclawReports: string[];
}

const token = { mode: 'token', token: GATEWAY_TOKEN };
const CASES: Case[] = [
  {
    name: 'the issue: LAN bind, open DMs and groups, elevated "*", exec full, hooks, private network',
    config: {
      gateway: { bind: 'lan', auth: token },
      channels: { telegram: { botToken: '123:abc', dmPolicy: 'open', allowFrom: ['*'], groupPolicy: 'open' } },
      tools: {
        elevated: { enabled: true, allowFrom: { telegram: ['*'] } },
        exec: { security: 'full' },
        web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } },
      },
      hooks: { enabled: true, token: HOOKS_TOKEN },
      browser: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } },
    },
    openclawReports: [
      'gateway.control_ui.allowed_origins_required',
      'tools.elevated.allowFrom.telegram.wildcard',
      'tools.exec.security_full_configured',
      'security.exposure.open_channels_with_exec',
      'security.exposure.open_groups_with_elevated',
      'security.exposure.open_groups_with_runtime_or_fs',
      'security.exposure.open_groups_with_control_plane_tools',
      'hooks.allowed_agent_ids_unrestricted',
      'hooks.default_session_key_unset',
      'security.trust_model.multi_user_heuristic',
      'config.insecure_or_dangerous_flags',
    ],
  },
  {
    name: 'open DMs with exec security "full"',
    config: {
      gateway: { auth: token },
      channels: { telegram: { botToken: '123:abc', dmPolicy: 'open', allowFrom: ['*'] } },
      tools: { exec: { security: 'full' }, elevated: { enabled: false } },
    },
    openclawReports: [
      'tools.exec.security_full_configured',
      'security.exposure.open_channels_with_exec',
      'security.exposure.open_groups_with_runtime_or_fs',
    ],
  },
  {
    name: 'open groups with elevated mode, exec "full" and file tools outside the workspace',
    config: {
      gateway: { auth: token },
      channels: { telegram: { botToken: '123:abc', groupPolicy: 'open' } },
      tools: {
        exec: { security: 'full' },
        elevated: { enabled: true, allowFrom: { telegram: ['12345'] } },
        fs: { workspaceOnly: false },
      },
    },
    openclawReports: [
      'security.exposure.open_groups_with_elevated',
      'security.exposure.open_groups_with_control_plane_tools',
      'config.insecure_or_dangerous_flags',
    ],
  },
  {
    name: 'LAN bind without gateway.controlUi.allowedOrigins',
    config: {
      gateway: {
        bind: 'lan',
        auth: { ...token, rateLimit: { maxAttempts: 10, windowMs: 60_000, lockoutMs: 300_000 } },
      },
      tools: { elevated: { enabled: false } },
    },
    openclawReports: ['gateway.control_ui.allowed_origins_required'],
  },
  {
    name: 'webhooks without allowedAgentIds, with request session keys, on a LAN gateway',
    config: {
      gateway: { bind: 'lan', auth: token, controlUi: { allowedOrigins: ['https://claw.example'] } },
      hooks: { enabled: true, token: HOOKS_TOKEN, allowRequestSessionKey: true },
      tools: { elevated: { enabled: false } },
    },
    openclawReports: [
      'hooks.allowed_agent_ids_unrestricted',
      'hooks.request_session_key_enabled',
      'hooks.request_session_key_prefixes_missing',
    ],
  },
  {
    name: 'elevated allowFrom "*" on one channel and a long list on another',
    config: {
      gateway: { auth: token },
      tools: {
        elevated: {
          enabled: true,
          allowFrom: { telegram: ['*'], discord: Array.from({ length: 26 }, (_, i) => String(1000 + i)) },
        },
      },
    },
    openclawReports: ['tools.elevated.allowFrom.telegram.wildcard', 'tools.elevated.allowFrom.discord.large'],
  },
  {
    name: 'auth "none" with the OpenAI-compatible API and private-network opt-ins',
    config: {
      gateway: { auth: { mode: 'none' }, http: { endpoints: { chatCompletions: { enabled: true } } } },
      tools: { web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } }, elevated: { enabled: false } },
      browser: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } },
    },
    openclawReports: [
      'gateway.loopback_no_auth',
      'gateway.http.no_auth',
      'gateway.http.session_key_override_enabled',
      'config.insecure_or_dangerous_flags',
    ],
  },
  {
    name: 'a sandbox mount of /etc and a small model that reads the web',
    config: {
      gateway: { auth: token },
      agents: {
        defaults: {
          model: 'ollama/llama3.1:8b',
          sandbox: { mode: 'non-main', docker: { binds: ['/etc:/host-etc:ro'] } },
        },
      },
      tools: { elevated: { enabled: false } },
    },
    openclawReports: ['sandbox.dangerous_bind_mount', 'models.small_params'],
  },
  {
    name: 'two agents: a weak model, the gateway token reused for hooks, an unwrapped mapping, agent exec "full"',
    config: {
      gateway: { auth: token },
      hooks: {
        enabled: true,
        token: GATEWAY_TOKEN,
        mappings: [{ match: { path: 'mail' }, action: 'agent', allowUnsafeExternalContent: true }],
      },
      tools: {
        elevated: { enabled: false },
        exec: { applyPatch: { workspaceOnly: false } },
        agentToAgent: { enabled: true },
      },
      agents: {
        defaults: { model: 'anthropic/claude-3-haiku' },
        list: [
          { id: 'main', default: true },
          { id: 'work', tools: { exec: { security: 'full' } } },
        ],
      },
    },
    openclawReports: [
      'hooks.token_reuse_gateway_token',
      'tools.exec.security_full_configured',
      'models.weak_tier',
      'security.trust_model.cross_agent_session_access_default',
      'config.insecure_or_dangerous_flags',
    ],
  },
];

async function clawAudit(config: Record<string, unknown>): Promise<Finding[]> {
  const stateDir = tempDir('claw-parity-');
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2), { mode: 0o600 });
  const result = await claw(['security', 'audit', '--json'], { OPENCLAW_STATE_DIR: stateDir });
  return (JSON.parse(result.stdout) as { findings: Finding[] }).findings;
}

async function openclawAudit(config: Record<string, unknown>): Promise<Finding[]> {
  const result = await runOpenclaw(['security', 'audit', '--json'], config);
  let report: { findings?: Finding[] };
  try {
    report = JSON.parse(result.stdout);
  } catch {
    throw new Error(`openclaw security audit printed no JSON (exit ${result.code}): ${result.stdout}${result.stderr}`);
  }
  if (!report.findings) throw new Error(`openclaw security audit refused the config: ${result.stdout}`);
  return report.findings;
}

/** Highest severity per checkId. */
function bySeverity(findings: readonly Finding[]): Map<string, Severity> {
  const out = new Map<string, Severity>();
  for (const finding of findings) {
    const seen = out.get(finding.checkId);
    if (!seen || RANK[finding.severity] > RANK[seen]) out.set(finding.checkId, finding.severity);
  }
  return out;
}

const openclawFindings = new Map<string, Finding[]>();

beforeAll(async () => {
  // Two OpenClaw processes at a time: each takes seconds of CPU, and the machine is shared.
  const queue = [...CASES];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift())
      openclawFindings.set(next.name, await openclawAudit(next.config));
  };
  await Promise.all([worker(), worker()]);
}, 600_000);

describe('claw security audit reports what OpenClaw reports', () => {
  it.each(CASES)('$name', async ({ name, config, openclawReports }) => {
    const theirs = bySeverity(openclawFindings.get(name)!);
    expect([...theirs.keys()]).toEqual(expect.arrayContaining(openclawReports));
    const ours = bySeverity(await clawAudit(config));
    const missing = [...theirs]
      .filter(([checkId]) => !(checkId in NOT_IN_CLAW))
      .filter(([checkId, severity]) => !ours.has(checkId) || RANK[ours.get(checkId)!] < RANK[severity])
      .map(([checkId, severity]) => `${checkId} (OpenClaw ${severity}, claw ${ours.get(checkId) ?? 'missing'})`);
    expect(missing).toEqual([]);
    const criticals = [...theirs].filter(([, severity]) => severity === 'critical').map(([checkId]) => checkId);
    expect(criticals.filter((checkId) => ours.get(checkId) !== 'critical')).toEqual([]);
  });
});
