/**
 * Effective host-exec policy and the verdict for one command. Each layer (config
 * `tools.exec`, the approvals document, and every session up the `spawnedBy` chain) can only
 * make things stricter: the verdict is the strictest of what each layer says, so a child
 * session can never loosen its parent's policy.
 */
import type { AllowlistEntry, ApprovalsDocument, Ask, Security } from './file.js';
import { DEFAULT_SAFE_BINS, DEFAULT_TRUSTED_DIRS, entryMatches, isSafeBin, type Segment } from './match.js';

export interface ExecConfig {
  security?: Security;
  ask?: Ask;
  safeBins?: string[];
  safeBinTrustedDirs?: string[];
}

export interface Policy {
  security: Security;
  ask: Ask;
  askFallback: Security;
  allowlist: AllowlistEntry[];
  safeBins: string[];
  trustedDirs: string[];
}

const SECURITY_RANK: Record<Security, number> = { full: 0, allowlist: 1, deny: 2 };
const ASK_RANK: Record<Ask, number> = { off: 0, 'on-miss': 1, always: 2 };
export const stricterSecurity = (a: Security, b: Security): Security => (SECURITY_RANK[a] >= SECURITY_RANK[b] ? a : b);
export const stricterAsk = (a: Ask, b: Ask): Ask => (ASK_RANK[a] >= ASK_RANK[b] ? a : b);

/** `tools.exec` with `agents.list[<agentId>].tools.exec` over it. */
export function execConfigFor(config: Readonly<Record<string, unknown>>, agentId: string): ExecConfig {
  const global = ((config.tools as { exec?: ExecConfig } | undefined)?.exec ?? {}) as ExecConfig;
  const list =
    (config.agents as { list?: Array<{ id?: string; tools?: { exec?: ExecConfig } }> } | undefined)?.list ?? [];
  const own = list.find((agent) => agent.id === agentId)?.tools?.exec ?? {};
  return { ...global, ...own };
}

/** One agent's policy: the stricter of config and the approvals document (defaults, "*", the agent). */
export function agentPolicy(exec: ExecConfig, doc: ApprovalsDocument, agentId: string): Policy {
  const wildcard = doc.agents?.['*'] ?? {};
  const own = doc.agents?.[agentId] ?? {};
  const file = { ...doc.defaults, ...strip(wildcard), ...strip(own) };
  return {
    // OpenClaw's gateway-host defaults: full / off; the document can only tighten.
    security: stricterSecurity(exec.security ?? 'full', file.security ?? 'full'),
    ask: stricterAsk(exec.ask ?? 'off', file.ask ?? 'off'),
    askFallback: file.askFallback ?? 'deny',
    allowlist: [...(wildcard.allowlist ?? []), ...(own.allowlist ?? [])],
    safeBins: exec.safeBins ?? DEFAULT_SAFE_BINS,
    trustedDirs: [...DEFAULT_TRUSTED_DIRS, ...(exec.safeBinTrustedDirs ?? [])],
  };
}

/** The document's defaults with the fallbacks filled in (OpenClaw's `resolvedDefaults`). */
export function resolvedDefaults(doc: ApprovalsDocument): { security: Security; ask: Ask; askFallback: Security } {
  return {
    security: doc.defaults?.security ?? 'full',
    ask: doc.defaults?.ask ?? 'off',
    askFallback: doc.defaults?.askFallback ?? 'deny',
  };
}

function strip<T extends { allowlist?: unknown }>(level: T): Omit<T, 'allowlist'> {
  const { allowlist: _allowlist, ...rest } = level;
  return rest;
}

export type Verdict = 'allow' | 'ask' | 'deny';
const VERDICT_RANK: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };

export interface CommandFacts {
  /** Segments, or undefined when the command cannot be judged (always a miss). */
  segments: Segment[] | undefined;
  cwd: string;
  home: string | undefined;
  /** Launchers are never safe bins (the host's "launchers" service). */
  isLauncher(name: string): boolean;
}

/** Every segment allowlisted or a safe bin. */
export function allowlisted(policy: Policy, facts: CommandFacts): AllowlistEntry[] | undefined {
  if (!facts.segments) return undefined;
  const hits: AllowlistEntry[] = [];
  for (const segment of facts.segments) {
    if (isSafeBin(segment, policy.safeBins, policy.trustedDirs, facts.isLauncher)) continue;
    const entry = policy.allowlist.find((candidate) => entryMatches(candidate, segment, facts.cwd, facts.home));
    if (!entry) return undefined;
    hits.push(entry);
  }
  return hits;
}

/** What one layer says about the command. */
export function verdict(policy: Policy, facts: CommandFacts): Verdict {
  if (policy.security === 'deny') return 'deny';
  if (policy.ask === 'always') return 'ask';
  if (policy.security === 'full') return 'allow';
  if (allowlisted(policy, facts)) return 'allow';
  return policy.ask === 'on-miss' ? 'ask' : 'deny';
}

/** What the layers say together: the strictest verdict wins. */
export function combinedVerdict(layers: readonly Policy[], facts: CommandFacts): Verdict {
  return layers
    .map((layer) => verdict(layer, facts))
    .reduce((a, b) => (VERDICT_RANK[a] >= VERDICT_RANK[b] ? a : b), 'allow');
}

/** No one answered (no approver, or the wait ran out): each layer's askFallback, strictest wins. */
export function fallbackAllows(layers: readonly Policy[], facts: CommandFacts): boolean {
  return layers.every((layer) => {
    const fallback = stricterSecurity(layer.askFallback, layer.security);
    if (fallback === 'deny') return false;
    if (fallback === 'full') return true;
    return allowlisted(layer, facts) !== undefined;
  });
}

/** One policy summarizing the layers, for display (`claw approvals get`). */
export function summarize(layers: readonly Policy[]): Omit<Policy, 'allowlist' | 'safeBins' | 'trustedDirs'> {
  return layers.reduce(
    (acc, layer) => ({
      security: stricterSecurity(acc.security, layer.security),
      ask: stricterAsk(acc.ask, layer.ask),
      askFallback: stricterSecurity(acc.askFallback, layer.askFallback),
    }),
    { security: 'full' as Security, ask: 'off' as Ask, askFallback: 'full' as Security },
  );
}

export interface PolicyView {
  path: string;
  /** `tools.exec` as configured. */
  requested: unknown;
  file: ApprovalsDocument;
  /** Per agent: what applies (before any parent session tightens it). */
  effective: Record<string, ReturnType<typeof summarize> & { allowlist: string[]; safeBins: string[] }>;
}

/** What `claw approvals get` and `exec.approvals.get` show: requested, host file, effective. */
export function policyView(
  config: Readonly<Record<string, unknown>>,
  path: string,
  file: ApprovalsDocument,
): PolicyView {
  const listed = ((config.agents as { list?: Array<{ id?: string }> } | undefined)?.list ?? []).flatMap((agent) =>
    agent.id ? [agent.id] : [],
  );
  const agents = [...new Set(['main', ...listed, ...Object.keys(file.agents ?? {}).filter((id) => id !== '*')])];
  const effective = Object.fromEntries(
    agents.map((agent) => {
      const policy = agentPolicy(execConfigFor(config, agent), file, agent);
      return [
        agent,
        {
          ...summarize([policy]),
          allowlist: policy.allowlist.map((entry) => entry.pattern),
          safeBins: policy.safeBins,
        },
      ];
    }),
  );
  return { path, requested: (config.tools as { exec?: unknown } | undefined)?.exec ?? {}, file, effective };
}
