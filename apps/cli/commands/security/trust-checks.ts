/**
 * The trust model (`security.trust_model.*`): claw, like OpenClaw, is a personal assistant —
 * one trusted operator per gateway. These checks say when the config looks like several
 * people (or several trust levels) share one gateway, where that model stops holding.
 */
import type { KernelConfig } from '../../../../kernel/index.js';
import { channelSettings, configuredAccounts, mergedAccountConfig } from '../../../../sdk/channels/config.js';
import { auditFacts, listedAgents } from './facts.js';
import { section, type AnyRecord, type AuditContext, type Finding } from './types.js';

const GROUP_TARGET_KEYS = ['groups', 'guilds', 'channels', 'rooms'];
const SESSION_TOOLS = ['sessions_list', 'sessions_history', 'sessions_send', 'session_status'];

const hasWildcard = (list: unknown) => Array.isArray(list) && list.some((entry) => String(entry).trim() === '*');

function sectionSignals(settings: AnyRecord, base: string): string[] {
  const signals: string[] = [];
  if (settings.groupPolicy === 'open') signals.push(`${base}.groupPolicy is "open"`);
  else if (
    settings.groupPolicy === 'allowlist' &&
    GROUP_TARGET_KEYS.some((key) => Object.keys(section(settings[key])).length > 0)
  ) {
    signals.push(`${base}.groupPolicy is "allowlist" with groups configured`);
  }
  if (settings.dmPolicy === 'open') signals.push(`${base}.dmPolicy is "open"`);
  if (hasWildcard(settings.allowFrom)) signals.push(`${base}.allowFrom includes "*"`);
  if (hasWildcard(settings.groupAllowFrom)) signals.push(`${base}.groupAllowFrom includes "*"`);
  return signals;
}

/** Config that suggests more than one person writes to the assistant. */
export function multiUserSignals(ctx: AuditContext): string[] {
  const signals = new Set<string>();
  for (const [channel, value] of Object.entries(section(ctx.config.channels))) {
    const root = section(value);
    const accounts = Object.keys(section(root.accounts));
    for (const account of configuredAccounts(root)) {
      if (!channelSettings(ctx.config as KernelConfig, channel, account).enabled) continue;
      const base = accounts.length > 0 ? `channels.${channel}.accounts.${account}` : `channels.${channel}`;
      for (const signal of sectionSignals(mergedAccountConfig(root, account), base)) signals.add(signal);
    }
  }
  return [...signals];
}

function multiUserFinding(ctx: AuditContext): Finding[] {
  const signals = multiUserSignals(ctx);
  if (signals.length === 0) return [];
  const fsConfined = section(section(ctx.config.tools).fs).workspaceOnly !== false;
  const unguarded = auditFacts(ctx).scopes.filter((scope) => {
    if (scope.sandbox.mode === 'all') return false;
    return ['exec', 'process'].some(scope.can) || (!fsConfined && ['write', 'edit', 'apply_patch'].some(scope.can));
  });
  const impact =
    unguarded.length > 0
      ? `Unsandboxed shell or file tools: agent ${unguarded.map((scope) => scope.id).join(', ')}.`
      : 'No unsandboxed shell or file tools were found.';
  return [
    {
      checkId: 'security.trust_model.multi_user_heuristic',
      severity: 'warn',
      title: 'Several people may be using one personal assistant',
      detail:
        `Signs of shared use: ${signals.join('; ')}. ${impact} claw runs one trusted operator per gateway; everyone who can write ` +
        `to it shares the agent's tools, memory and credentials.`,
      fix:
        'Give people who do not trust each other separate gateways (separate state dirs, ideally separate OS users). For a ' +
        'deliberately shared one: agents.defaults.sandbox.mode "all", tools.fs.workspaceOnly true, deny runtime and web tools that are ' +
        'not needed, and keep personal credentials off it.',
      fixable: false,
    },
  ];
}

/**
 * Session tools reach other agents' transcripts when visibility is "all" and agent-to-agent
 * is on with no allow list (claw: off unless tools.agentToAgent.enabled is true).
 */
function crossAgentFinding(ctx: AuditContext): Finding[] {
  const agents = listedAgents(ctx.config);
  if (agents.length < 2) return [];
  const tools = section(ctx.config.tools);
  const a2a = section(tools.agentToAgent);
  const visibility = section(tools.sessions).visibility ?? 'all';
  if (visibility !== 'all' || a2a.enabled !== true || (Array.isArray(a2a.allow) && a2a.allow.length > 0)) return [];
  const defaultsSandbox = section(section(section(ctx.config.agents).defaults).sandbox);
  const reachers: string[] = [];
  const signals: string[] = [];
  for (const scope of auditFacts(ctx).scopes) {
    const own = agents.find((agent) => agent.id === scope.id) ?? {};
    const clamp = section(own.sandbox).sessionToolsVisibility ?? defaultsSandbox.sessionToolsVisibility ?? 'spawned';
    const allowed = SESSION_TOOLS.filter(scope.can);
    if (allowed.length > 0 && (scope.sandbox.mode !== 'all' || clamp === 'all'))
      reachers.push(`${scope.id} (${allowed.join(', ')})`);
    if (scope.sandbox.mode !== 'off') signals.push(`${scope.id} is sandboxed (${scope.sandbox.mode})`);
    const restricted = ['profile', 'allow', 'deny'].filter((key) => scope.tools[key] !== undefined);
    if (restricted.length > 0)
      signals.push(`${scope.id} has its own tool policy (${restricted.map((key) => `tools.${key}`).join(', ')})`);
  }
  if (reachers.length === 0) return [];
  signals.push(...multiUserSignals(ctx));
  return [
    {
      checkId: 'security.trust_model.cross_agent_session_access_default',
      severity: signals.length > 0 ? 'warn' : 'info',
      title: "Agents can read each other's sessions",
      detail:
        `tools.sessions.visibility is "all" and tools.agentToAgent is on with no allow list: agent ${reachers.join('; ')} ` +
        "can list, read and write to every agent's sessions" +
        (signals.length > 0 ? `, although the config suggests different trust levels (${signals.join('; ')}).` : '.'),
      fix:
        'Set tools.sessions.visibility to "agent", "tree" or "self"; list the agents that may talk in tools.agentToAgent.allow; or set ' +
        'tools.agentToAgent.enabled to false.',
      fixable: false,
    },
  ];
}

export function trustChecks(ctx: AuditContext): Finding[] {
  return [...multiUserFinding(ctx), ...crossAgentFinding(ctx)];
}
