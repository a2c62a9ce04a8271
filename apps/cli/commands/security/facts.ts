/**
 * What several areas of the audit ask about the same config, worked out once per audit:
 * each agent's reach (which tools it can call, whether it is sandboxed, its host exec
 * policy) and where strangers can write in (channels open to anyone).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson5, type KernelConfig } from '../../../../kernel/index.js';
import { channelSettings, configuredAccounts } from '../../../../sdk/channels/config.js';
import { sandboxSettings } from '../../../../host/sandbox-route.js';
import type { SandboxSettings } from '../../../../sdk/sandbox/index.js';
import type { ToolMatcher, ToolsConfig } from '../../../../sdk/tool-policy.js';
import { compileToolPolicy } from '../../../../host/tool-policy.js';
import { section, type AnyRecord, type AuditContext } from './types.js';

export type ExecSecurity = 'deny' | 'allowlist' | 'full';
export type ExecAsk = 'off' | 'on-miss' | 'always';

export interface HostExec {
  security: ExecSecurity;
  ask: ExecAsk;
  /** `security: "full"` is written in the config for this agent (its own or tools.exec). */
  configuredFull: boolean;
  /** Where that setting is, for details. */
  securityKey: string;
}

export interface AgentScope {
  id: string;
  /** `agents.list[].tools` (empty for the implicit main agent). */
  tools: AnyRecord;
  sandbox: Pick<SandboxSettings, 'mode' | 'workspaceAccess'>;
  /** An enabled plugin offers the tool, its switch is on, and the tool policy lets this agent call it. */
  can: (tool: string) => boolean;
  exec: HostExec;
}

export interface OpenInbound {
  channel: string;
  kind: 'dm' | 'group';
  /** The key that opens it, e.g. `channels.telegram.accounts.work.dmPolicy`. */
  path: string;
}

export interface ApprovalsLevel {
  security?: ExecSecurity;
  ask?: ExecAsk;
  allowlist?: Array<{ pattern?: unknown }>;
}

export interface ApprovalsDoc {
  defaults?: ApprovalsLevel;
  agents?: Record<string, ApprovalsLevel>;
}

export interface AuditFacts {
  scopes: AgentScope[];
  /** An enabled plugin offers the tool and its config switch is on (tool policy aside). */
  offered: (tool: string) => boolean;
  openInbound: OpenInbound[];
  approvals: ApprovalsDoc;
}

const SECURITY_RANK: Record<ExecSecurity, number> = { full: 0, allowlist: 1, deny: 2 };
const ASK_RANK: Record<ExecAsk, number> = { off: 0, 'on-miss': 1, always: 2 };
const securityOf = (value: unknown): ExecSecurity | undefined =>
  value === 'deny' || value === 'allowlist' || value === 'full' ? value : undefined;
const askOf = (value: unknown): ExecAsk | undefined =>
  value === 'off' || value === 'on-miss' || value === 'always' ? value : undefined;
const stricter = <T extends string>(rank: Record<T, number>, values: Array<T | undefined>, fallback: T): T =>
  values.reduce<T>((acc, value) => (value !== undefined && rank[value] > rank[acc] ? value : acc), fallback);

/** `<stateDir>/exec-approvals.json`; an absent or unreadable document tightens nothing. */
function readApprovals(stateDir: string): ApprovalsDoc {
  try {
    const doc = parseJson5(readFileSync(join(stateDir, 'exec-approvals.json'), 'utf8'));
    return section(doc) as ApprovalsDoc;
  } catch {
    return {};
  }
}

/** Agents as the config lists them; with no list, the one implicit `main` agent. */
export function listedAgents(config: AnyRecord): AnyRecord[] {
  const list: unknown[] = Array.isArray(section(config.agents).list) ? config.agents.list : [];
  return list.map(section).filter((agent) => typeof agent.id === 'string');
}

/** Tools that exist: declared by an enabled plugin, and not switched off in config. */
function offeredTools(ctx: AuditContext): (tool: string) => boolean {
  const declared = new Set(
    ctx.plugins.filter((record) => record.enabled).flatMap((record) => record.manifest?.tools ?? []),
  );
  const web = section(section(ctx.config.tools).web);
  const off = new Set<string>();
  if (section(web.fetch).enabled === false) off.add('web_fetch');
  if (section(web.search).enabled === false) off.add('web_search');
  if (section(ctx.config.browser).enabled === false) off.add('browser');
  return (tool) => declared.has(tool) && !off.has(tool);
}

/**
 * Host exec as the exec-approvals plugin applies it: `tools.exec` with the agent's own
 * `tools.exec` over it (default full / off), then the approvals document, which only tightens.
 */
function hostExec(ctx: AuditContext, agent: AnyRecord, approvals: ApprovalsDoc, implicit: boolean): HostExec {
  const global = section(section(ctx.config.tools).exec);
  const own = implicit ? {} : section(section(agent.tools).exec);
  const merged = { ...global, ...own };
  const levels = [
    section(approvals.defaults),
    section(section(approvals.agents)['*']),
    section(section(approvals.agents)[agent.id]),
  ];
  const configured = securityOf(merged.security);
  return {
    security: stricter(SECURITY_RANK, [configured, ...levels.map((level) => securityOf(level.security))], 'full'),
    ask: stricter(ASK_RANK, [askOf(merged.ask), ...levels.map((level) => askOf(level.ask))], 'off'),
    configuredFull: configured === 'full',
    securityKey: 'security' in own ? `agents.list.${agent.id}.tools.exec.security` : 'tools.exec.security',
  };
}

function agentScopes(ctx: AuditContext, approvals: ApprovalsDoc, offered: (tool: string) => boolean): AgentScope[] {
  const listed = listedAgents(ctx.config);
  const implicit = listed.length === 0;
  const agents = implicit ? [{ id: 'main' }] : listed;
  const global = section(ctx.config.tools) as ToolsConfig;
  return agents.map((agent) => {
    const tools = implicit ? {} : section(agent.tools);
    const policy: ToolMatcher = compileToolPolicy({ global, agent: tools as ToolsConfig });
    const settings = sandboxSettings(ctx.config as KernelConfig, String(agent.id), ctx.stateDir);
    return {
      id: String(agent.id),
      tools,
      sandbox: { mode: settings.mode, workspaceAccess: settings.workspaceAccess },
      can: (tool: string) => offered(tool) && policy(tool),
      exec: hostExec(ctx, agent, approvals, implicit),
    };
  });
}

/** A chat surface strangers can write to, and the key that opens it. */
export interface Opening extends OpenInbound {
  /** `channels.<id>` or `channels.<id>.accounts.<account>`: where the deciding key is set. */
  base: string;
  /** The policy in force (dmPolicy or groupPolicy). */
  policy: string;
  /** The list in force (allowFrom or groupAllowFrom). */
  list: string[];
}

/**
 * Every enabled channel account that admits anyone: a DM or group policy of "open", or a
 * "*" in the allowlist a "pairing"/"allowlist" policy checks (the channel pipeline lets
 * everyone through then, too). Named by the key that opens it, the account's own or else
 * the channel's.
 */
export function channelOpenings(ctx: AuditContext): Opening[] {
  const found = new Map<string, Opening>();
  for (const [channel, value] of Object.entries(section(ctx.config.channels))) {
    const root = section(value);
    const accounts = section(root.accounts);
    for (const account of configuredAccounts(root)) {
      const settings = channelSettings(ctx.config as KernelConfig, channel, account);
      if (!settings.enabled) continue;
      const own = section(accounts[account]);
      const base = (keys: string[]) =>
        keys.some((key) => key in own) ? `channels.${channel}.accounts.${account}` : `channels.${channel}`;
      const add = (kind: 'dm' | 'group', key: string, at: string, policy: string, list: string[]) =>
        found.set(`${at}.${key}`, { channel, kind, path: `${at}.${key}`, base: at, policy, list });
      const dm = settings.dmPolicy;
      if (dm === 'open') add('dm', 'dmPolicy', base(['dmPolicy', 'allowFrom']), dm, settings.allowFrom);
      else if (dm !== 'disabled' && settings.allowFrom.includes('*'))
        add('dm', 'allowFrom', base(['allowFrom']), dm, settings.allowFrom);
      const group = settings.groupPolicy;
      if (group === 'open') add('group', 'groupPolicy', base(['groupPolicy']), group, settings.groupAllowFrom);
      else if (group === 'allowlist' && settings.groupAllowFrom.includes('*')) {
        add('group', 'groupAllowFrom', base(['groupAllowFrom']), group, settings.groupAllowFrom);
      }
    }
  }
  return [...found.values()];
}

const cache = new WeakMap<AuditContext, AuditFacts>();

export function auditFacts(ctx: AuditContext): AuditFacts {
  let facts = cache.get(ctx);
  if (!facts) {
    const approvals = readApprovals(ctx.stateDir);
    const offered = offeredTools(ctx);
    const openInbound = channelOpenings(ctx).map(({ channel, kind, path }) => ({ channel, kind, path }));
    facts = { scopes: agentScopes(ctx, approvals, offered), offered, openInbound, approvals };
    cache.set(ctx, facts);
  }
  return facts;
}
