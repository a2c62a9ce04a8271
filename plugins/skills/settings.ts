/**
 * The `skills` config section (validated by the manifest's schema) with its defaults, read
 * afresh from the live config on every use so a hot reload applies on the next turn; and the
 * agent allowlists `agents.defaults.skills` / `agents.list[].skills`.
 */
import { expandHome } from '../../sdk/index.js';
import type { SkillAllowlist } from './generated/types.js';

export interface SkillEntryConfig {
  enabled?: boolean;
  apiKey?: string | { source: 'env'; provider?: string; id: string };
  env?: Record<string, string>;
  config?: Record<string, unknown>;
}

export interface SkillsSettings {
  allowBundled?: string[];
  extraDirs: string[];
  watch: boolean;
  watchDebounceMs: number;
  maxSkillsPromptChars: number;
  entries: Record<string, SkillEntryConfig>;
}

export const DEFAULT_WATCH_DEBOUNCE_MS = 250;
export const DEFAULT_MAX_SKILLS_PROMPT_CHARS = 30_000;

interface SkillsSection {
  allowBundled?: string[];
  load?: { extraDirs?: string[]; watch?: boolean; watchDebounceMs?: number };
  limits?: { maxSkillsPromptChars?: number };
  entries?: Record<string, SkillEntryConfig>;
}

export function skillsSettings(
  config: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): SkillsSettings {
  const section = (config.skills ?? {}) as SkillsSection;
  return {
    ...(section.allowBundled ? { allowBundled: section.allowBundled } : {}),
    extraDirs: (section.load?.extraDirs ?? []).map((dir) => expandHome(dir, env)),
    watch: section.load?.watch ?? true,
    watchDebounceMs: section.load?.watchDebounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS,
    maxSkillsPromptChars: section.limits?.maxSkillsPromptChars ?? DEFAULT_MAX_SKILLS_PROMPT_CHARS,
    entries: section.entries ?? {},
  };
}

/** An agent's list replaces the defaults' (`[]` means no skills); neither set means every skill. */
export function agentAllowlist(config: Readonly<Record<string, unknown>>, agentId: string): string[] | undefined {
  // The shapes were checked against schemas.ts before the plugin ran.
  const agents = (config.agents ?? {}) as {
    defaults?: { skills?: SkillAllowlist };
    list?: Array<{ id?: string; skills?: SkillAllowlist }>;
  };
  return agents.list?.find((agent) => agent.id === agentId)?.skills ?? agents.defaults?.skills;
}
