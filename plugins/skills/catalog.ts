/**
 * The skills service: for an agent, every skill found (discover.ts), each gated
 * (gating.ts), as a snapshot that turns reuse. With `skills.load.watch` on, the snapshot is
 * rebuilt after the watcher reports a change; with it off, each session keeps the snapshot
 * it started with. A config change (the `skills` section, the agent's allowlist) always
 * gives a fresh one. From a snapshot come the prompt list (bounded by
 * `skills.limits.maxSkillsPromptChars`), the slash commands and the env exec runs get.
 */
import type { KernelServices, Logger, SandboxRouter } from '../../sdk/index.js';
import {
  agentPaths,
  defaultAgentId,
  sessionSandbox,
  type Skill,
  type SkillCommand,
  type SkillsService,
  type SkillTarget,
} from '../../sdk/agent/index.js';
import type { KernelConfig } from '../../sdk/index.js';
import { join } from 'node:path';
import {
  bundledSkillsDir,
  discoverSkills,
  skillRoots,
  type FoundSkill,
  type SkillRoot,
  type SkillSource,
} from './discover.js';
import { binFinder, evaluate, resolveApiKey, skillKey, type Missing, type SkillState } from './gating.js';
import { agentAllowlist, skillsSettings, type SkillEntryConfig, type SkillsSettings } from './settings.js';
import { SkillWatcher } from './watch.js';

export interface SkillStatus {
  name: string;
  description?: string;
  source: SkillSource;
  pluginId?: string;
  filePath: string;
  baseDir: string;
  skillKey: string;
  emoji?: string;
  homepage?: string;
  primaryEnv?: string;
  always: boolean;
  userInvocable: boolean;
  disableModelInvocation: boolean;
  commandTool?: string;
  state: SkillState;
  eligible: boolean;
  reasons: string[];
  missing: Missing;
  /** What SKILL.md requires (OpenClaw's field name in skills.status). */
  requirements: { bins: string[]; anyBins: string[]; env: string[]; config: string[]; os: string[] };
  install: Array<Record<string, unknown>>;
  /** Whether the prompt list carries it (eligible, model-invocable, within the budget). */
  inPrompt: boolean;
  /** The names of the variables its config provides (never their values). */
  configuredEnv: string[];
  apiKeySet: boolean;
  config?: Record<string, unknown>;
}

export interface Snapshot {
  agentId: string;
  workspaceDir: string;
  roots: SkillRoot[];
  skills: SkillStatus[];
  prompt: Skill[];
  /** Eligible, model-invocable skills the prompt budget left out. */
  promptOmitted: string[];
  /** Descriptions shortened to fit the budget. */
  promptShortened: number;
  promptChars: number;
  /** Env the eligible skills give exec runs, by variable (first skill in precedence wins). */
  env: Record<string, string>;
  builtAt: number;
}

/** OpenClaw's cost model of the skills block: a fixed part, and per skill 97 characters plus its fields. */
const PROMPT_BASE_CHARS = 195;
const PROMPT_SKILL_CHARS = 97;
const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').length;
/** Variable names whose values are secrets: masked in every output, as the kernel does for the environment. */
const SECRET_ENV_NAME = /(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;
/** Session snapshots kept with watching off (oldest dropped first). */
const MAX_PINNED_SESSIONS = 256;
/** Session keys remembered with their current session id (oldest dropped first). */
const MAX_SESSION_KEYS = 4096;

/**
 * The prompt list within `maxChars`: whole if it fits; else every name and location with
 * descriptions cut to share what is left; else as many skills as fit without descriptions.
 */
export function boundPromptList(
  skills: readonly Skill[],
  maxChars: number,
): { list: Skill[]; omitted: string[]; shortened: number; chars: number } {
  if (skills.length === 0) return { list: [], omitted: [], shortened: 0, chars: 0 };
  const identity = (skill: Skill) => PROMPT_SKILL_CHARS + escaped(skill.name) + escaped(skill.location);
  const full = PROMPT_BASE_CHARS + skills.reduce((sum, skill) => sum + identity(skill) + escaped(skill.description), 0);
  if (full <= maxChars) return { list: [...skills], omitted: [], shortened: 0, chars: full };
  const bare = PROMPT_BASE_CHARS + skills.reduce((sum, skill) => sum + identity(skill), 0);
  if (bare > maxChars) {
    const list: Skill[] = [];
    let used = PROMPT_BASE_CHARS;
    for (const skill of skills) {
      if (used + identity(skill) > maxChars) break;
      used += identity(skill);
      list.push({ ...skill, description: '' });
    }
    return {
      list,
      omitted: skills.slice(list.length).map((skill) => skill.name),
      shortened: list.length,
      chars: list.length ? used : 0,
    };
  }
  // Share the rest: short descriptions keep their length, long ones get an equal cut of what remains.
  let left = maxChars - bare;
  const order = skills
    .map((skill, index) => ({ index, length: escaped(skill.description) }))
    .sort((a, b) => a.length - b.length);
  const allowance = new Map<number, number>();
  order.forEach((item, position) => {
    const share = Math.floor(left / (order.length - position));
    const take = Math.min(item.length, share);
    allowance.set(item.index, take);
    left -= take;
  });
  let shortened = 0;
  const list = skills.map((skill, index) => {
    const room = allowance.get(index)!;
    if (escaped(skill.description) <= room) return skill;
    shortened++;
    // Cut by raw characters, leaving room for escapes and the ellipsis.
    let cut = skill.description.slice(0, Math.max(0, room - 1));
    while (cut && escaped(cut) + 1 > room) cut = cut.slice(0, -1);
    return { ...skill, description: cut ? `${cut.trimEnd()}…` : '' };
  });
  const chars = PROMPT_BASE_CHARS + list.reduce((sum, skill) => sum + identity(skill) + escaped(skill.description), 0);
  return { list, omitted: [], shortened, chars };
}

/** A skill's slash command name: `a-z0-9_`, at most 32 characters, suffixed `_2`, `_3`… on a clash. */
export function commandName(skillName: string, taken: ReadonlySet<string>): string {
  const base =
    skillName
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/_+/g, '_')
      .replace(/^_|_$/g, '')
      .slice(0, 32) || 'skill';
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const name = `${base.slice(0, 32 - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
}

export class SkillsCatalog implements SkillsService {
  private readonly watcher: SkillWatcher;
  private readonly latest = new Map<string, { key: string; generation: number; snapshot: Snapshot }>();
  private readonly pinned = new Map<string, { key: string; snapshot: Snapshot }>();
  /** The session id each session key last ran with, so hooks and commands find its snapshot. */
  private readonly sessionIds = new Map<string, string>();
  readonly bundledDir: string;

  constructor(
    private readonly kernel: KernelServices,
    private readonly logger: Logger,
    /** The host's "sandbox-route" service: sandboxed calls get no skill env. */
    private readonly router: SandboxRouter,
    options: { bundledDir?: string; onChange?: (reason: string) => void } = {},
  ) {
    this.bundledDir = options.bundledDir ?? bundledSkillsDir();
    this.watcher = new SkillWatcher(
      () => this.settings().watchDebounceMs,
      () => options.onChange?.('watch'),
    );
  }

  settings(): SkillsSettings {
    return skillsSettings(this.kernel.config() as Record<string, unknown>, this.kernel.env);
  }

  /** The workspace of an agent, as the agent plugin resolves it. */
  workspaceOf(agentId: string): string {
    return agentPaths(this.kernel.config() as KernelConfig, agentId, this.kernel.paths).workspaceDir;
  }

  defaultAgent(): string {
    return defaultAgentId(this.kernel.config() as KernelConfig);
  }

  /** Skill folders of enabled plugins (manifest `skills`, relative to the plugin). */
  private pluginDirs(): Array<{ pluginId: string; dir: string }> {
    return this.kernel
      .plugins()
      .filter((record) => record.enabled && record.dir && record.manifest?.skills?.length)
      .flatMap((record) =>
        record.manifest!.skills!.map((dir) => ({ pluginId: record.id, dir: join(record.dir!, dir) })),
      );
  }

  roots(workspaceDir: string, settings = this.settings()): SkillRoot[] {
    return skillRoots({
      workspaceDir,
      stateDir: this.kernel.paths.stateDir,
      bundledDir: this.bundledDir,
      pluginDirs: this.pluginDirs(),
      extraDirs: settings.extraDirs,
    });
  }

  /** The snapshot a target uses now (see the file comment for when it is rebuilt). */
  snapshot(target: SkillTarget): Snapshot {
    const settings = this.settings();
    const roots = this.roots(target.workspaceDir, settings);
    const config = this.kernel.config() as Record<string, unknown>;
    const key = JSON.stringify([
      target.workspaceDir,
      roots,
      config.skills ?? null,
      agentAllowlist(config, target.agentId) ?? null,
    ]);
    if (target.sessionKey && target.sessionId && this.sessionIds.get(target.sessionKey) !== target.sessionId) {
      this.sessionIds.delete(target.sessionKey);
      this.sessionIds.set(target.sessionKey, target.sessionId);
      if (this.sessionIds.size > MAX_SESSION_KEYS) this.sessionIds.delete(this.sessionIds.keys().next().value!);
    }
    const sessionId = target.sessionId ?? (target.sessionKey ? this.sessionIds.get(target.sessionKey) : undefined);
    if (settings.watch) {
      // Armed before reading, so a change made while we read is not missed.
      this.watcher.ensure(roots.map((root) => root.dir));
      const cached = this.latest.get(target.agentId);
      if (!this.watcher.broken && cached && cached.key === key && cached.generation === this.watcher.generation)
        return cached.snapshot;
      const snapshot = this.build(target, settings, roots);
      this.latest.set(target.agentId, { key, generation: this.watcher.generation, snapshot });
      return snapshot;
    }
    if (!sessionId) return this.build(target, settings, roots);
    const pinned = this.pinned.get(sessionId);
    if (pinned && pinned.key === key) return pinned.snapshot;
    const snapshot = this.build(target, settings, roots);
    this.pinned.delete(sessionId);
    this.pinned.set(sessionId, { key, snapshot });
    if (this.pinned.size > MAX_PINNED_SESSIONS) this.pinned.delete(this.pinned.keys().next().value!);
    return snapshot;
  }

  private build(target: SkillTarget, settings: SkillsSettings, roots: SkillRoot[]): Snapshot {
    const config = this.kernel.config() as Record<string, unknown>;
    const env = this.kernel.env;
    const found = discoverSkills(roots);
    const ctx = {
      settings,
      agentAllowlist: agentAllowlist(config, target.agentId),
      env,
      config,
      platform: process.platform,
      hasBin: binFinder(env.PATH ?? process.env.PATH),
    };
    const skills = found.map((skill) => this.status(skill, evaluate(skill, ctx), settings.entries[skillKey(skill)]));
    const candidates = skills
      .filter((skill) => skill.eligible && !skill.disableModelInvocation)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((skill) => ({ name: skill.name, description: skill.description ?? '', location: skill.filePath }));
    const bounded = boundPromptList(candidates, settings.maxSkillsPromptChars);
    const inPrompt = new Set(bounded.list.map((skill) => skill.name));
    for (const skill of skills)
      skill.inPrompt = skill.eligible && inPrompt.has(skill.name) && !skill.disableModelInvocation;
    if (bounded.omitted.length)
      this.logger.warn(
        `skills: ${bounded.omitted.length} skill(s) left out of the prompt by skills.limits.maxSkillsPromptChars: ${bounded.omitted.join(', ')}`,
      );
    return {
      agentId: target.agentId,
      workspaceDir: target.workspaceDir,
      roots,
      skills,
      prompt: bounded.list,
      promptOmitted: bounded.omitted,
      promptShortened: bounded.shortened,
      promptChars: bounded.chars,
      env: this.skillEnv(skills, settings, env),
      builtAt: Date.now(),
    };
  }

  private status(
    skill: FoundSkill,
    gate: ReturnType<typeof evaluate>,
    entry: SkillEntryConfig | undefined,
  ): SkillStatus {
    const meta = skill.meta;
    const req = meta?.openclaw.requires;
    return {
      name: skill.name,
      ...(meta ? { description: meta.description } : {}),
      source: skill.source,
      ...(skill.pluginId ? { pluginId: skill.pluginId } : {}),
      filePath: skill.file,
      baseDir: skill.dir,
      skillKey: skillKey(skill),
      ...(meta?.openclaw.emoji ? { emoji: meta.openclaw.emoji } : {}),
      ...(meta?.homepage ? { homepage: meta.homepage } : {}),
      ...(meta?.openclaw.primaryEnv ? { primaryEnv: meta.openclaw.primaryEnv } : {}),
      always: meta?.openclaw.always ?? false,
      userInvocable: meta?.userInvocable ?? false,
      disableModelInvocation: meta?.disableModelInvocation ?? false,
      ...(meta?.commandTool ? { commandTool: meta.commandTool } : {}),
      state: gate.state,
      eligible: gate.state === 'eligible',
      reasons: gate.reasons,
      missing: gate.missing,
      requirements: {
        bins: req?.bins ?? [],
        anyBins: req?.anyBins ?? [],
        env: req?.env ?? [],
        config: req?.config ?? [],
        os: meta?.openclaw.os ?? [],
      },
      install: meta?.openclaw.install ?? [],
      inPrompt: false,
      configuredEnv: Object.keys(entry?.env ?? {}),
      apiKeySet: entry?.apiKey !== undefined,
      ...(entry?.config ? { config: entry.config } : {}),
    };
  }

  /** What eligible skills add to exec runs; their secret values join the kernel's redactor. */
  private skillEnv(
    skills: readonly SkillStatus[],
    settings: SkillsSettings,
    env: Readonly<Record<string, string | undefined>>,
  ): Record<string, string> {
    const out: Record<string, string> = {};
    for (const skill of skills) {
      if (!skill.eligible) continue;
      const entry = settings.entries[skill.skillKey];
      const apiKey = resolveApiKey(entry, env);
      const vars: Record<string, string> = {
        ...(entry?.env ?? {}),
        ...(skill.primaryEnv && apiKey ? { [skill.primaryEnv]: apiKey } : {}),
      };
      for (const [name, value] of Object.entries(vars)) {
        if (name === skill.primaryEnv || SECRET_ENV_NAME.test(name)) this.kernel.redact.add(value);
        if (!(name in out)) out[name] = value;
      }
    }
    return out;
  }

  // ── SkillsService ────────────────────────────────────────────────────────────

  promptSkills(target: SkillTarget): Skill[] {
    return this.guarded('the prompt list', () => this.snapshot(target).prompt);
  }

  /** A failure reading skills costs a turn its skills, never the turn itself. */
  private guarded<T>(what: string, work: () => T[]): T[] {
    try {
      return work();
    } catch (error) {
      this.logger.error(`skills: ${what} could not be built: ${(error as Error).message ?? String(error)}`);
      return [];
    }
  }

  commands(target: SkillTarget, reserved: readonly string[]): SkillCommand[] {
    return this.guarded('the skill commands', () => this.commandList(target, reserved));
  }

  private commandList(target: SkillTarget, reserved: readonly string[]): SkillCommand[] {
    const taken = new Set(reserved.map((name) => name.toLowerCase()));
    const out: SkillCommand[] = [];
    const skills = this.snapshot(target)
      .skills.filter((skill) => skill.eligible && skill.userInvocable)
      .sort((a, b) => a.name.localeCompare(b.name));
    for (const skill of skills) {
      const name = commandName(skill.name, taken);
      taken.add(name);
      out.push({
        name,
        skillName: skill.name,
        description: skill.description ?? '',
        location: skill.filePath,
        ...(skill.commandTool ? { tool: skill.commandTool } : {}),
        ...(skill.config ? { settings: skill.config } : {}),
      });
    }
    return out;
  }

  /**
   * Variables an agent's exec call gets from its eligible skills: only those neither the
   * call nor the gateway's environment sets. Host runs only, as in OpenClaw: a sandboxed
   * call (not elevated) gets none.
   */
  execEnv(
    agentId: string,
    sessionKey: string | undefined,
    params: Record<string, unknown>,
  ): Record<string, string> | undefined {
    const workspaceDir = this.workspaceOf(agentId);
    if (sessionKey && params.elevated !== true) {
      const config = this.kernel.config() as KernelConfig;
      if (
        sessionSandbox(this.router, config, { agentId, workspaceDir }, sessionKey, this.kernel.paths.stateDir).sandboxed
      )
        return undefined;
    }
    const snapshot = this.snapshot({ agentId, workspaceDir, sessionKey });
    const given = (params.env ?? {}) as Record<string, unknown>;
    const add = Object.fromEntries(
      Object.entries(snapshot.env).filter(([name]) => process.env[name] === undefined && given[name] === undefined),
    );
    return Object.keys(add).length ? add : undefined;
  }

  /** `skills.status` and `claw skills`: the whole picture for an agent, secrets masked. */
  report(agentId = this.defaultAgent()): StatusReport {
    const workspaceDir = this.workspaceOf(agentId);
    const settings = this.settings();
    const snapshot = this.snapshot({ agentId, workspaceDir });
    return this.kernel.redact.value({
      agentId,
      workspaceDir,
      managedSkillsDir: join(this.kernel.paths.stateDir, 'skills'),
      bundledSkillsDir: this.bundledDir,
      roots: snapshot.roots,
      watch: settings.watch ? (this.watcher.broken ? `off (${this.watcher.broken})` : 'on') : 'off',
      prompt: {
        chars: snapshot.promptChars,
        maxChars: settings.maxSkillsPromptChars,
        skills: snapshot.prompt.length,
        omitted: snapshot.promptOmitted,
        shortened: snapshot.promptShortened,
      },
      skills: snapshot.skills,
    });
  }

  close(): void {
    this.watcher.close();
  }
}

export interface StatusReport {
  agentId: string;
  workspaceDir: string;
  managedSkillsDir: string;
  bundledSkillsDir: string;
  roots: SkillRoot[];
  watch: string;
  prompt: { chars: number; maxChars: number; skills: number; omitted: string[]; shortened: number };
  skills: SkillStatus[];
}
