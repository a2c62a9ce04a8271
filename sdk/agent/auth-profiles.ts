/**
 * API keys per agent: ~/.openclaw/agents/<agentId>/agent/auth-profiles.json, holding several
 * keys per provider and what happened to each (cooldowns after failures). Keys in config
 * (`models.providers.<id>.apiKey`) and in the environment count as profiles too.
 *
 * A failing profile cools down: 1 → 5 → 25 → 60 minutes for consecutive failures; billing
 * failures 5 h doubling to 24 h. A success resets the count.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../kernel/index.js';
import type { FailureKind } from '../models.js';

export interface AuthProfile {
  id: string;
  provider: string;
  type: 'api_key';
  key: string;
  baseUrl?: string;
  /** Where it came from: the profiles file, config, or an environment variable. */
  source: 'file' | 'config' | 'env';
}

export interface ProfileUsage {
  lastUsed?: number;
  lastFailureAt?: number;
  lastFailureKind?: FailureKind;
  errorCount?: number;
  billingErrorCount?: number;
  cooldownUntil?: number;
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
export const PROFILE_FAILURES: ReadonlySet<FailureKind> = new Set(['auth', 'billing', 'rate_limit', 'timeout', 'overloaded']);

export function authProfilesFile(stateDir: string, agentId: string): string {
  return join(stateDir, 'agents', agentId, 'agent', 'auth-profiles.json');
}

export function cooldownFor(kind: FailureKind, usage: ProfileUsage, retryAfterMs?: number): number {
  if (kind === 'billing') return BILLING_STEPS_MS[Math.min((usage.billingErrorCount ?? 1) - 1, BILLING_STEPS_MS.length - 1)]!;
  const step = COOLDOWN_STEPS_MS[Math.min((usage.errorCount ?? 1) - 1, COOLDOWN_STEPS_MS.length - 1)]!;
  return Math.max(step, retryAfterMs ?? 0);
}

export class AuthProfiles {
  private data: ProfilesFile;

  constructor(
    private readonly file: string,
    private readonly now: () => number = Date.now,
  ) {
    this.data = this.load();
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
    writeJsonAtomic(this.file, this.data);
  }

  /**
   * Profiles for a provider in the order they are tried: the file's explicit order, then
   * the rest of the file, then config, then environment.
   */
  profilesFor(provider: string, extra: { configKey?: string; envKeys?: readonly string[]; env: Readonly<Record<string, string | undefined>> }): AuthProfile[] {
    const fromFile = Object.entries(this.data.profiles)
      .filter(([, profile]) => profile.provider === provider && typeof profile.key === 'string' && profile.key.length > 0)
      .map(([id, profile]): AuthProfile => ({ id, provider, type: 'api_key', key: profile.key, baseUrl: profile.baseUrl, source: 'file' }));
    const order = this.data.order?.[provider] ?? [];
    fromFile.sort((a, b) => rank(order, a.id) - rank(order, b.id));
    const out = [...fromFile];
    if (extra.configKey) out.push({ id: `${provider}:config`, provider, type: 'api_key', key: extra.configKey, source: 'config' });
    for (const name of extra.envKeys ?? []) {
      const value = extra.env[name]?.trim();
      if (value && !out.some((profile) => profile.key === value)) out.push({ id: `${provider}:env:${name}`, provider, type: 'api_key', key: value, source: 'env' });
    }
    return out;
  }

  usage(profileId: string): ProfileUsage {
    return this.data.usageStats?.[profileId] ?? {};
  }

  available(profileId: string): boolean {
    return (this.usage(profileId).cooldownUntil ?? 0) <= this.now();
  }

  markSuccess(profileId: string): void {
    const previous = this.usage(profileId);
    // A healthy key answering again changes nothing worth a disk write, except now and then its lastUsed.
    const clean = !previous.errorCount && !previous.billingErrorCount && previous.cooldownUntil === undefined;
    if (clean && previous.lastUsed !== undefined && this.now() - previous.lastUsed < MINUTE) return;
    const usage = { ...previous, lastUsed: this.now(), errorCount: 0, billingErrorCount: 0, cooldownUntil: undefined };
    this.data.usageStats = { ...this.data.usageStats, [profileId]: usage };
    this.save();
  }

  markFailure(profileId: string, kind: FailureKind, retryAfterMs?: number): ProfileUsage {
    const previous = this.usage(profileId);
    const usage: ProfileUsage = {
      ...previous,
      lastFailureAt: this.now(),
      lastFailureKind: kind,
      errorCount: kind === 'billing' ? previous.errorCount ?? 0 : (previous.errorCount ?? 0) + 1,
      billingErrorCount: kind === 'billing' ? (previous.billingErrorCount ?? 0) + 1 : previous.billingErrorCount,
    };
    usage.cooldownUntil = this.now() + cooldownFor(kind, usage, retryAfterMs);
    this.data.usageStats = { ...this.data.usageStats, [profileId]: usage };
    this.save();
    return usage;
  }

  /** Every profile id with its usage, for `claw models status`. */
  snapshot(): Record<string, ProfileUsage & { provider: string }> {
    const out: Record<string, ProfileUsage & { provider: string }> = {};
    for (const [id, profile] of Object.entries(this.data.profiles)) out[id] = { provider: profile.provider, ...this.usage(id) };
    for (const [id, usage] of Object.entries(this.data.usageStats ?? {})) if (!out[id]) out[id] = { provider: id.split(':')[0]!, ...usage };
    return out;
  }
}

function rank(order: readonly string[], id: string): number {
  const index = order.indexOf(id);
  return index < 0 ? order.length : index;
}
