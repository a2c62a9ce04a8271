/**
 * Model hygiene (`models.*`): older and smaller models follow injected instructions more
 * readily, which matters most for an agent with tools. Every configured primary and
 * fallback is judged by its name (aliases resolved); a small model that can read the web
 * (web_search, web_fetch, browser) is where injected text comes from, hence critical.
 */
import type { ToolsConfig } from '../../../../sdk/tool-policy.js';
import { compileToolPolicy } from '../../../../host/tool-policy.js';
import { auditFacts, listedAgents } from './facts.js';
import { section, type AuditContext, type Finding } from './types.js';

interface ModelRef {
  ref: string;
  source: string;
  /** The agent it belongs to; undefined for agents.defaults (every agent without its own). */
  agent?: string;
}

const LEGACY: Array<[RegExp, string]> = [
  [/\bgpt-3\.5\b/i, 'GPT-3.5'],
  [/\bclaude-(instant|2)\b/i, 'Claude 2 / Instant'],
  [/\bgpt-4-(0314|0613)\b/i, 'an early GPT-4 snapshot'],
];
/** At most this many billion parameters counts as small (OpenClaw's line). */
const SMALL_MAX_B = 300;
const WEB_TOOLS = ['web_search', 'web_fetch', 'browser'];

/** "claude-3-5-sonnet" → 3.5, "claude-opus-4-1" → 4.1, "claude-sonnet-4-20250514" → 4. */
function claudeVersion(ref: string): number | undefined {
  const match = /claude-(?:[a-z]+-)?(\d+)(?:[.-](\d)(?![0-9]))?/i.exec(ref);
  return match ? Number(match[1]) + (match[2] ? Number(match[2]) / 10 : 0) : undefined;
}

function weakReasons(ref: string): string[] {
  const reasons: string[] = [];
  if (/\bhaiku\b/i.test(ref)) reasons.push('a Haiku-tier model');
  if (/\bgpt-/i.test(ref) && !/\bgpt-(5|[6-9]|\d{2,})(\b|[.-])/i.test(ref)) reasons.push('below GPT-5');
  const claude = claudeVersion(ref);
  if (/\bclaude-/i.test(ref) && (claude === undefined || claude < 4.5)) reasons.push('below Claude 4.5');
  return reasons;
}

/** The largest "<n>b" size in a model name ("llama-3.1-8b", "qwen2.5:32b"), in billions. */
function paramsB(ref: string): number | undefined {
  let best: number | undefined;
  for (const match of ref.toLowerCase().matchAll(/(?:^|[^a-z0-9])[a-z]?(\d+(?:\.\d+)?)b(?![a-z0-9])/g)) {
    const value = Number(match[1]);
    if (Number.isFinite(value) && value > 0 && (best === undefined || value > best)) best = value;
  }
  return best;
}

function modelRefs(ctx: AuditContext): ModelRef[] {
  const defaults = section(section(ctx.config.agents).defaults);
  const aliases = new Map<string, string>();
  for (const holder of [defaults, ...listedAgents(ctx.config)]) {
    for (const [ref, settings] of Object.entries(section(holder.models))) {
      const alias = section(settings).alias;
      if (typeof alias === 'string') aliases.set(alias.trim().toLowerCase(), ref);
    }
  }
  const refs: ModelRef[] = [];
  const add = (value: unknown, source: string, agent?: string) => {
    if (typeof value !== 'string' || value.trim() === '') return;
    const raw = value.trim();
    refs.push({ ref: raw.includes('/') ? raw : (aliases.get(raw.toLowerCase()) ?? raw), source, agent });
  };
  const addModel = (model: unknown, base: string, agent?: string) => {
    if (typeof model === 'string') return add(model, base, agent);
    const object = section(model);
    add(object.primary, `${base}.primary`, agent);
    const fallbacks: unknown[] = Array.isArray(object.fallbacks) ? object.fallbacks : [];
    fallbacks.forEach((fallback) => add(fallback, `${base}.fallbacks`, agent));
  };
  addModel(defaults.model, 'agents.defaults.model');
  for (const agent of listedAgents(ctx.config))
    addModel(agent.model, `agents.list.${agent.id}.model`, String(agent.id));
  return refs;
}

function smallModelCheck(ctx: AuditContext, refs: readonly ModelRef[]): Finding[] {
  const facts = auditFacts(ctx);
  const listed = listedAgents(ctx.config);
  const tools = section(ctx.config.tools) as ToolsConfig;
  let unsafe = false;
  const lines = refs.flatMap((entry) => {
    const size = paramsB(entry.ref);
    if (size === undefined || size > SMALL_MAX_B) return [];
    // A default model serves every agent that names none of its own.
    const ownModel = (id: string) => listed.some((agent) => agent.id === id && agent.model !== undefined);
    const scopes = facts.scopes.filter((scope) => (entry.agent ? scope.id === entry.agent : !ownModel(scope.id)));
    const slash = entry.ref.indexOf('/');
    const provider = slash > 0 ? entry.ref.slice(0, slash) : undefined;
    const exposed = new Set<string>();
    for (const scope of scopes) {
      const policy = compileToolPolicy({
        global: tools,
        agent: scope.tools as ToolsConfig,
        provider,
        model: entry.ref,
      });
      for (const tool of WEB_TOOLS) if (facts.offered(tool) && policy(tool)) exposed.add(tool);
    }
    if (exposed.size > 0) unsafe = true;
    const reach = exposed.size > 0 ? `reads the web through ${[...exposed].join(', ')}` : 'no web tools';
    return [`${entry.ref} (${size}B) at ${entry.source}: ${reach}`];
  });
  if (lines.length === 0) return [];
  return [
    {
      checkId: 'models.small_params',
      severity: unsafe ? 'critical' : 'info',
      title: unsafe ? 'Small models read untrusted web content' : 'Small models configured',
      detail:
        `Models of ${SMALL_MAX_B}B parameters or fewer: ${lines.join('; ')}. Small models are easily steered by instructions hidden ` +
        `in what they read.`,
      fix:
        'Deny web tools for them: tools.byProvider["<provider>/<model>"].deny ["group:web", "browser"] (or per agent), and run such ' +
        'agents in sandbox mode "all".',
      fixable: false,
    },
  ];
}

export function modelChecks(ctx: AuditContext): Finding[] {
  const refs = modelRefs(ctx);
  if (refs.length === 0) return [];
  const findings: Finding[] = [];
  const legacy = refs.flatMap((entry) => {
    const label = LEGACY.find(([pattern]) => pattern.test(entry.ref))?.[1];
    return label ? [`${entry.ref} (${label}) at ${entry.source}`] : [];
  });
  if (legacy.length > 0) {
    findings.push({
      checkId: 'models.legacy',
      severity: 'warn',
      title: 'Legacy models configured',
      detail: `${legacy.join('; ')}: older models resist prompt injection and tool misuse less well.`,
      fix: 'Use a current, instruction-hardened model for any agent with tools.',
      fixable: false,
    });
  }
  const weak = refs.flatMap((entry) => {
    const reasons = weakReasons(entry.ref);
    return reasons.length > 0 ? [`${entry.ref} (${reasons.join(', ')}) at ${entry.source}`] : [];
  });
  if (weak.length > 0) {
    findings.push({
      checkId: 'models.weak_tier',
      severity: 'warn',
      title: 'Models below the recommended tier',
      detail: `${weak.join('; ')}: smaller and older tiers follow injected instructions more readily.`,
      fix: 'Use the top tier (GPT-5 or later, Claude 4.5 or later) for agents with tools or open inboxes.',
      fixable: false,
    });
  }
  return [...findings, ...smallModelCheck(ctx, refs)];
}
