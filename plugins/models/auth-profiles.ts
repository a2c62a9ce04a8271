/**
 * API keys per agent: ~/.openclaw/agents/<agentId>/agent/auth-profiles.json, holding several
 * keys per provider and what happened to each (cooldowns after failures). Keys in config
 * (`models.providers.<id>.apiKey`) and in the environment (env-keys.ts: `OPENAI_API_KEY`,
 * `OPENAI_API_KEYS`, `OPENAI_API_KEY_<suffix>`, `OPENCLAW_LIVE_OPENAI_KEY`) count as profiles too.
 *
 * A cooldown is kept per (profile, model) for failures about one model on that key (rate
 * limits, overload, timeouts: another model of the same provider may still answer) and per
 * profile for failures about the key itself (auth, billing). Consecutive failures cool down
 * for 1 → 5 → 25 → 60 minutes; billing 5 h doubling to 24 h. A success resets the count,
 * and so do 24 h without a failure.
 */
import { readFileSync, statSync } from 'node:fs';
import { writeJsonAtomic, type FailureKind } from '../../sdk/index.js';
import { envApiKeys } from './env-keys.js';
import type { AuthProfiles as AuthProfilesContract, CooldownState, ProfileUsage } from '../../sdk/agent/index.js';

export interface AuthProfile {
  id: string;
  provider: string;
  type: 'api_key';
  key: string;
  baseUrl?: string;
  /** Where it came from: the profiles file, config, or an environment variable. */
  source: 'file' | 'config' | 'env';
}

/** What keeps a (profile, model) from being used right now. */
export interface Cooldown {
  scope: 'profile' | 'model';
  kind?: FailureKind;
  until: number;
}

interface ProfilesFile {
  version: 1;
  profiles: Record<string, { type?: 'api_key'; provider: string; key: string; baseUrl?: string }>;
  order?: Record<string, string[]>;
  usageStats?: Record<string, ProfileUsage>;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
export const COOLDOWN_STEPS_MS = [1 * MINUTE, 5 * MINUTE, 25 * MINUTE, 60 * MINUTE];
export const BILLING_STEPS_MS = [5 * HOUR, 10 * HOUR, 20 * HOUR, 24 * HOUR];

/** Failures that say something about the key (so another key may work). */
export const PROFILE_FAILURES: ReadonlySet<FailureKind> = new Set([
  'auth',
  'billing',
  'rate_limit',
  'timeout',
  'overloaded',
]);
/** Failures about the key for every model: they cool the whole profile down. */
const KEY_FAILURES: ReadonlySet<FailureKind> = new Set(['auth', 'billing']);
/** After this long without a failure, the next one starts again at the first step. */
export const FAILURE_WINDOW_MS = 24 * HOUR;

export function cooldownFor(kind: FailureKind, usage: ProfileUsage | CooldownState, retryAfterMs?: number): number {
  if (kind === 'billing')
    return BILLING_STEPS_MS[
      Math.min(((usage as ProfileUsage).billingErrorCount ?? 1) - 1, BILLING_STEPS_MS.length - 1)
    ]!;
  const step = COOLDOWN_STEPS_MS[Math.min((usage.errorCount ?? 1) - 1, COOLDOWN_STEPS_MS.length - 1)]!;
  return Math.max(step, retryAfterMs ?? 0);
}

export class AuthProfiles implements AuthProfilesContract {
  private loaded: ProfilesFile;
  /** The file as last read or written (mtime, size, inode), so a change by someone else is seen. */
  private stamp: string | undefined;

  constructor(
    private readonly file: string,
    private readonly now: () => number = Date.now,
  ) {
    this.stamp = this.fileStamp();
    this.loaded = this.load();
  }

  /**
   * The profiles as the file holds them now: a key added by `claw models auth`, another
   * process or an editor while the gateway runs counts from the next turn, not the next start.
   */
  private get data(): ProfilesFile {
    const stamp = this.fileStamp();
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      this.loaded = this.load();
    }
    return this.loaded;
  }

  private fileStamp(): string | undefined {
    try {
      const stat = statSync(this.file);
      return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      return undefined;
    }
  }

  private load(): ProfilesFile {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as ProfilesFile;
      return { version: 1, profiles: parsed.profiles ?? {}, order: parsed.order, usageStats: parsed.usageStats ?? {} };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, profiles: {}, usageStats: {} };
      throw new Error(`auth profiles ${this.file} are unreadable: ${(error as Error).message}`);
    }
  }

  private save(): void {
    writeJsonAtomic(this.file, this.loaded);
    this.stamp = this.fileStamp();
  }

  /**
   * Profiles for a provider in the order they are tried: the file's explicit order, then
   * the rest of the file, then config, then the environment's — or only
   * `OPENCLAW_LIVE_<ID>_KEY` while it is set. `envKeys` are the provider plugin's own variables.
   */
  profilesFor(
    provider: string,
    extra: { configKey?: string; envKeys?: readonly string[]; env: Readonly<Record<string, string | undefined>> },
  ): AuthProfile[] {
    const fromEnv = envApiKeys(provider, extra.envKeys ?? [], extra.env);
    const envProfile = ({ source, key }: { source: string; key: string }): AuthProfile => ({
      id: `${provider}:env:${source}`,
      provider,
      type: 'api_key',
      key,
      source: 'env',
    });
    if (fromEnv.pinned) return fromEnv.keys.map(envProfile);
    const fromFile = Object.entries(this.data.profiles)
      .filter(
        ([, profile]) => profile.provider === provider && typeof profile.key === 'string' && profile.key.length > 0,
      )
      .map(([id, profile]): AuthProfile => ({
        id,
        provider,
        type: 'api_key',
        key: profile.key,
        baseUrl: profile.baseUrl,
        source: 'file',
      }));
    const order = this.data.order?.[provider] ?? [];
    fromFile.sort((a, b) => rank(order, a.id) - rank(order, b.id));
    const out = [...fromFile];
    if (extra.configKey)
      out.push({ id: `${provider}:config`, provider, type: 'api_key', key: extra.configKey, source: 'config' });
    for (const found of fromEnv.keys)
      if (!out.some((profile) => profile.key === found.key)) out.push(envProfile(found));
    return out;
  }

  usage(profileId: string): ProfileUsage {
    return this.data.usageStats?.[profileId] ?? {};
  }

  /** Usable now for `model` (or, without one, for any model): no cooldown of the profile or of that model. */
  available(profileId: string, model?: string): boolean {
    return this.cooldown(profileId, model) === undefined;
  }

  /** The cooldown in force for (profile, model): the profile's own first, then the model's. */
  cooldown(profileId: string, model?: string): Cooldown | undefined {
    const usage = this.usage(profileId);
    const now = this.now();
    if ((usage.cooldownUntil ?? 0) > now)
      return { scope: 'profile', kind: usage.lastFailureKind, until: usage.cooldownUntil! };
    const scoped = model === undefined ? undefined : usage.models?.[model];
    if (scoped && (scoped.cooldownUntil ?? 0) > now)
      return { scope: 'model', kind: scoped.lastFailureKind, until: scoped.cooldownUntil! };
    return undefined;
  }

  /**
   * Failed before and not yet answered since, though no longer cooling down: the next
   * attempt is a probe (one request, no retries) rather than another full recovery.
   */
  recovering(profileId: string, model: string): boolean {
    const usage = this.usage(profileId);
    return (
      Boolean(usage.errorCount || usage.models?.[model]?.errorCount) && this.cooldown(profileId, model) === undefined
    );
  }

  markSuccess(profileId: string, model?: string): void {
    const previous = this.usage(profileId);
    const scoped = model === undefined ? undefined : previous.models?.[model];
    // A healthy key answering again changes nothing worth a disk write, except now and then its lastUsed.
    const clean =
      !previous.errorCount &&
      !previous.billingErrorCount &&
      previous.cooldownUntil === undefined &&
      scoped === undefined;
    if (clean && previous.lastUsed !== undefined && this.now() - previous.lastUsed < MINUTE) return;
    const usage: ProfileUsage = {
      ...previous,
      lastUsed: this.now(),
      errorCount: 0,
      billingErrorCount: 0,
      cooldownUntil: undefined,
    };
    if (model !== undefined && usage.models?.[model]) {
      const { [model]: _cleared, ...rest } = usage.models;
      usage.models = Object.keys(rest).length > 0 ? rest : undefined;
    }
    this.data.usageStats = { ...this.data.usageStats, [profileId]: usage };
    this.save();
  }

  /**
   * Record a failure and start its cooldown. With a model, failures that are not about the
   * key (rate limit, overload, timeout) cool down only that model on this profile; auth and
   * billing failures, or a failure with no model named, cool down the whole profile.
   * Returns the streak that was extended.
   */
  markFailure(profileId: string, kind: FailureKind, retryAfterMs?: number, model?: string): CooldownState {
    const previous = this.usage(profileId);
    const now = this.now();
    if (model !== undefined && !KEY_FAILURES.has(kind)) {
      const streak = fresh(previous.models?.[model], now);
      const state: CooldownState = {
        lastFailureAt: now,
        lastFailureKind: kind,
        errorCount: (streak.errorCount ?? 0) + 1,
      };
      state.cooldownUntil = now + cooldownFor(kind, state, retryAfterMs);
      // The profile's own fields stay as they are: they describe the key, not this model.
      const usage: ProfileUsage = { ...previous, models: { ...previous.models, [model]: state } };
      this.data.usageStats = { ...this.data.usageStats, [profileId]: usage };
      this.save();
      return state;
    }
    const streak = fresh(previous, now);
    const usage: ProfileUsage = {
      ...previous,
      lastFailureAt: now,
      lastFailureKind: kind,
      errorCount: kind === 'billing' ? (streak.errorCount ?? 0) : (streak.errorCount ?? 0) + 1,
      billingErrorCount: kind === 'billing' ? (streak.billingErrorCount ?? 0) + 1 : streak.billingErrorCount,
    };
    usage.cooldownUntil = now + cooldownFor(kind, usage, retryAfterMs);
    this.data.usageStats = { ...this.data.usageStats, [profileId]: usage };
    this.save();
    return usage;
  }

  /** Ids of the profiles file's keys for `provider`, in the order they are tried. */
  savedIds(provider: string): string[] {
    return this.profilesFor(provider, { env: {} })
      .filter((profile) => profile.source === 'file')
      .map((profile) => profile.id);
  }

  /** Save `key` as the provider's `<provider>:default` profile (replacing its key and its failure history). */
  saveKey(provider: string, key: string): string {
    const id = `${provider}:default`;
    const data = this.data;
    data.profiles = { ...data.profiles, [id]: { type: 'api_key', provider, key } };
    if (data.usageStats?.[id]) {
      const { [id]: _dropped, ...rest } = data.usageStats;
      data.usageStats = rest;
    }
    this.save();
    return id;
  }

  /** Remove saved profiles, their usage and their places in every order. */
  remove(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const data = this.data;
    const gone = new Set(ids);
    const keep = <T>(record: Record<string, T> | undefined) =>
      record && Object.fromEntries(Object.entries(record).filter(([id]) => !gone.has(id)));
    data.profiles = keep(data.profiles)!;
    data.usageStats = keep(data.usageStats);
    if (data.order) {
      data.order = Object.fromEntries(
        Object.entries(data.order)
          .map(([provider, order]) => [provider, order.filter((id) => !gone.has(id))] as const)
          .filter(([, order]) => order.length > 0),
      );
    }
    this.save();
  }

  /** The order the provider's saved profiles are tried in; null goes back to the file's own order. */
  setOrder(provider: string, ids: readonly string[] | null): void {
    const data = this.data;
    const { [provider]: _previous, ...others } = data.order ?? {};
    data.order = ids ? { ...others, [provider]: [...ids] } : others;
    this.save();
  }

  /** Every profile id with its usage, for `claw models status`. */
  snapshot(): Record<string, ProfileUsage & { provider: string }> {
    const out: Record<string, ProfileUsage & { provider: string }> = {};
    for (const [id, profile] of Object.entries(this.data.profiles))
      out[id] = { provider: profile.provider, ...this.usage(id) };
    for (const [id, usage] of Object.entries(this.data.usageStats ?? {}))
      if (!out[id]) out[id] = { provider: id.split(':')[0]!, ...usage };
    return out;
  }
}

/** A streak whose last failure is older than the failure window starts over. */
function fresh<T extends CooldownState & { billingErrorCount?: number }>(
  state: T | undefined,
  now: number,
): Partial<T> {
  if (!state) return {};
  if (state.lastFailureAt !== undefined && now - state.lastFailureAt > FAILURE_WINDOW_MS)
    return { ...state, errorCount: 0, billingErrorCount: 0 };
  return state;
}

function rank(order: readonly string[], id: string): number {
  const index = order.indexOf(id);
  return index < 0 ? order.length : index;
}
