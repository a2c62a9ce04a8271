/**
 * Whether a skill can be used here and now, and if not, every reason why: turned off in
 * config, outside `skills.allowBundled` or the agent's allowlist, the wrong OS, or missing
 * binaries, environment variables or config. `always: true` skips the requirement checks
 * (never the OS, config or allowlists), as in OpenClaw.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { FoundSkill } from './discover.js';
import type { SkillEntryConfig, SkillsSettings } from './settings.js';

export type SkillState = 'eligible' | 'disabled' | 'blocked' | 'excluded' | 'missing' | 'invalid' | 'shadowed';

export interface Missing {
  bins: string[];
  anyBins: string[];
  env: string[];
  config: string[];
  os: string[];
}

export interface Gate {
  state: SkillState;
  reasons: string[];
  missing: Missing;
}

export interface GateContext {
  settings: SkillsSettings;
  /** The agent's allowlist (`agents.list[].skills`, else `agents.defaults.skills`); undefined: every skill. */
  agentAllowlist?: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  config: Readonly<Record<string, unknown>>;
  platform: string;
  /** Binary lookups, cached for one catalog build. */
  hasBin(name: string): boolean;
}

/** A `hasBin` over a PATH value, remembering answers. */
export function binFinder(path: string | undefined): (name: string) => boolean {
  const dirs = (path ?? '').split(delimiter).filter(Boolean);
  const cache = new Map<string, boolean>();
  return (name) => {
    let found = cache.get(name);
    if (found === undefined) {
      found = dirs.some((dir) => {
        const file = join(dir, name);
        try {
          accessSync(file, constants.X_OK);
          return statSync(file).isFile();
        } catch {
          return false;
        }
      });
      cache.set(name, found);
    }
    return found;
  };
}

/** `a.b.c` of the config is set to something truthy (an empty object or list counts as unset). */
export function configTruthy(config: Readonly<Record<string, unknown>>, path: string): boolean {
  let value: unknown = config;
  for (const segment of path.split('.')) {
    if (value === null || typeof value !== 'object') return false;
    value = (value as Record<string, unknown>)[segment];
  }
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === 'object') return Object.keys(value).length > 0;
  return Boolean(value);
}

/** The config key of a skill: `metadata.openclaw.skillKey`, else its name. */
export function skillKey(skill: FoundSkill): string {
  return skill.meta?.openclaw.skillKey ?? skill.name;
}

/** The apiKey's value: the string itself, or the named variable for `{ source: "env", id }`. */
export function resolveApiKey(
  entry: SkillEntryConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const apiKey = entry?.apiKey;
  if (apiKey === undefined) return undefined;
  const value = typeof apiKey === 'string' ? apiKey : env[apiKey.id];
  return value?.trim() ? value : undefined;
}

export function evaluate(skill: FoundSkill, ctx: GateContext): Gate {
  const missing: Missing = { bins: [], anyBins: [], env: [], config: [], os: [] };
  if (skill.invalid) return { state: 'invalid', reasons: [skill.invalid], missing };
  if (skill.shadowedBy) return { state: 'shadowed', reasons: [`overridden by ${skill.shadowedBy}`], missing };
  const meta = skill.meta!;
  const key = skillKey(skill);
  const entry = ctx.settings.entries[key];
  if (entry?.enabled === false)
    return { state: 'disabled', reasons: [`disabled in config (skills.entries.${key}.enabled is false)`], missing };
  if (skill.source === 'bundled' && ctx.settings.allowBundled && !ctx.settings.allowBundled.includes(skill.name)) {
    return { state: 'blocked', reasons: ['bundled, and not in skills.allowBundled'], missing };
  }
  const reasons: string[] = [];
  const os = meta.openclaw.os;
  if (os.length > 0 && !os.includes(ctx.platform)) {
    missing.os = os;
    reasons.push(`only for ${os.join(', ')} (this host is ${ctx.platform})`);
  }
  if (!meta.openclaw.always) {
    const req = meta.openclaw.requires;
    missing.bins = req.bins.filter((bin) => !ctx.hasBin(bin));
    if (missing.bins.length) reasons.push(`missing on PATH: ${missing.bins.join(', ')}`);
    if (req.anyBins.length && !req.anyBins.some((bin) => ctx.hasBin(bin))) {
      missing.anyBins = req.anyBins;
      reasons.push(`needs one of these on PATH: ${req.anyBins.join(', ')}`);
    }
    const apiKey = resolveApiKey(entry, ctx.env);
    missing.env = req.env.filter(
      (name) => !ctx.env[name]?.trim() && !entry?.env?.[name]?.trim() && !(name === meta.openclaw.primaryEnv && apiKey),
    );
    if (missing.env.length) {
      const hint =
        meta.openclaw.primaryEnv && missing.env.includes(meta.openclaw.primaryEnv)
          ? ` (or skills.entries.${key}.apiKey)`
          : ` (or skills.entries.${key}.env)`;
      reasons.push(`missing env: ${missing.env.join(', ')}${hint}`);
    }
    missing.config = req.config.filter((path) => !configTruthy(ctx.config, path));
    if (missing.config.length) reasons.push(`config not set: ${missing.config.join(', ')}`);
  }
  if (reasons.length) return { state: 'missing', reasons, missing };
  // Requirements are reported even for skills the agent cannot see, so `check` tells the whole story.
  if (ctx.agentAllowlist && !ctx.agentAllowlist.includes(skill.name))
    return {
      state: 'excluded',
      reasons: ["not in this agent's skills allowlist (agents.list[].skills / agents.defaults.skills)"],
      missing,
    };
  return { state: 'eligible', reasons: [], missing };
}
