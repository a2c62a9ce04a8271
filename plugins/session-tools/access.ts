/**
 * Which sessions a session's tools may see and reach. Four things decide it:
 * `tools.sessions.visibility` (self | tree | agent | all), `tools.agentToAgent` (other agents'
 * sessions), the spawn tree (`spawnedBy` on each entry: a session always reaches what it
 * spawned, directly or further down) and the sandbox: a sandboxed session sees only itself
 * and its spawn tree unless its `sandbox.sessionToolsVisibility` is "all". The same decision
 * serves listing, reading, sending and status, so no tool can reach what another would hide.
 */
import type { KernelConfig, SandboxRouter } from '../../sdk/index.js';
import { normalizeAgentId, parseSessionKey, type SessionEntry, type SessionService } from '../../sdk/agent/index.js';

export type Visibility = 'self' | 'tree' | 'agent' | 'all';

export interface SessionRecord {
  /** The key as stored. */
  key: string;
  agentId: string;
  entry: SessionEntry;
}

export interface Requester {
  agentId: string;
  sessionKey: string;
}

type AnyRecord = Record<string, any>;

/** Every session of every known agent, read once per tool call. */
export async function snapshot(sessions: SessionService): Promise<Map<string, SessionRecord>> {
  const all = new Map<string, SessionRecord>();
  for (const agentId of sessions.knownAgents()) {
    for (const { key, entry } of await sessions.store(normalizeAgentId(agentId)).list())
      all.set(key, { key, agentId: normalizeAgentId(agentId), entry });
  }
  return all;
}

function globMatch(pattern: string, value: string): boolean {
  const escaped = pattern
    .trim()
    .toLowerCase()
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`).test(value.toLowerCase());
}

/** The session tools' reach for one calling session. */
export class SessionAccess {
  readonly visibility: Visibility;
  /** Clamped to its spawn tree by the sandbox. */
  readonly sandboxed: boolean;
  private readonly mainKey: string;

  constructor(
    private readonly config: KernelConfig,
    readonly requester: Requester,
    private readonly records: Map<string, SessionRecord>,
    stateDir: string,
    router: SandboxRouter,
  ) {
    const tools = (config.tools ?? {}) as AnyRecord;
    this.visibility = (tools.sessions?.visibility as Visibility | undefined) ?? 'all';
    const route = router.route(config, {
      agentId: requester.agentId,
      sessionKey: requester.sessionKey,
      stateDir,
      workspaceDir: '',
    });
    this.sandboxed = route.sandboxed && this.sandboxVisibility() !== 'all';
    this.mainKey = route.mainSessionKey;
  }

  private sandboxVisibility(): string | undefined {
    const agents = (this.config.agents ?? {}) as AnyRecord;
    const entry = ((agents.list ?? []) as AnyRecord[]).find(
      (agent) => normalizeAgentId(agent?.id) === this.requester.agentId,
    );
    return entry?.sandbox?.sessionToolsVisibility ?? agents.defaults?.sandbox?.sessionToolsVisibility;
  }

  /** The target was spawned by the requester, or by something it spawned. */
  isDescendant(key: string): boolean {
    const seen = new Set<string>();
    let parent = this.records.get(key)?.entry.spawnedBy;
    while (parent && !seen.has(parent)) {
      if (parent === this.requester.sessionKey) return true;
      seen.add(parent);
      parent = this.records.get(parent)?.entry.spawnedBy;
    }
    return false;
  }

  /** Why the requester may not reach this session, or undefined when it may. */
  refusal(target: { key: string; agentId: string }): string | undefined {
    const { requester } = this;
    if (target.key === requester.sessionKey) return undefined;
    const own = this.isDescendant(target.key);
    if (this.sandboxed) {
      return own
        ? undefined
        : `a sandboxed session reaches only itself and the sessions it spawned (agents.defaults.sandbox.sessionToolsVisibility is "spawned")`;
    }
    switch (this.visibility) {
      case 'self':
        return `session tools are limited to the current session (tools.sessions.visibility is "self")`;
      case 'tree':
        if (own || (requester.sessionKey === this.mainKey && target.agentId === requester.agentId)) return undefined;
        return `session tools reach only this session and what it spawned (tools.sessions.visibility is "tree")`;
      case 'agent':
        return target.agentId === requester.agentId
          ? undefined
          : `session tools reach only this agent's sessions (tools.sessions.visibility is "agent")`;
      default:
        if (own || target.agentId === requester.agentId) return undefined;
        return this.agentToAgentRefusal(target.agentId);
    }
  }

  private agentToAgentRefusal(targetAgent: string): string | undefined {
    const a2a = ((this.config.tools ?? {}) as AnyRecord).agentToAgent as
      { enabled?: boolean; allow?: string[] } | undefined;
    if (a2a?.enabled !== true)
      return `agent-to-agent access is off: session ${'"'}${targetAgent}${'"'} belongs to another agent (set tools.agentToAgent.enabled to true)`;
    const allow = a2a.allow ?? [];
    if (allow.length === 0) return undefined;
    for (const agentId of [this.requester.agentId, targetAgent]) {
      if (!allow.some((pattern) => globMatch(pattern, agentId)))
        return `agent-to-agent access between "${this.requester.agentId}" and "${targetAgent}" is not in tools.agentToAgent.allow`;
    }
    return undefined;
  }

  /** Every session the requester may see. */
  visible(): SessionRecord[] {
    return [...this.records.values()].filter((record) => !this.refusal(record));
  }
}

/** The agent id a key belongs to (keys without `agent:<id>:` belong to the caller's agent). */
export function agentOfKey(key: string, fallback: string): string {
  return normalizeAgentId(parseSessionKey(key).agentId ?? fallback);
}
