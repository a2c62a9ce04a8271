/**
 * Cooldowns for models called without a key (a local llama.cpp model, Ollama, a keyless
 * OpenAI-compatible server). Keyed models cool down in auth-profiles.json; these have no
 * profile to record it on, yet a failing local server is just as worth skipping on the next
 * turn. Kept in memory: a restart is a fair moment to try the server again.
 */
import type { FailureKind } from '../../sdk/index.js';
import { cooldownFor, FAILURE_WINDOW_MS } from './auth-profiles.js';

interface Streak {
  kind: FailureKind;
  errorCount: number;
  lastFailureAt: number;
  until: number;
}

export class KeylessCooldowns {
  private readonly streaks = new Map<string, Streak>();

  constructor(private readonly now: () => number) {}

  /** The cooldown in force for `ref` of `agentId`, as AuthProfiles.cooldown shapes it. */
  cooldown(agentId: string, ref: string): { kind: FailureKind; until: number } | undefined {
    const streak = this.streaks.get(`${agentId}|${ref}`);
    return streak && streak.until > this.now() ? { kind: streak.kind, until: streak.until } : undefined;
  }

  /** Failed before and not cooling down now: the next attempt is a probe. */
  recovering(agentId: string, ref: string): boolean {
    return this.streaks.has(`${agentId}|${ref}`) && !this.cooldown(agentId, ref);
  }

  markFailure(agentId: string, ref: string, kind: FailureKind, retryAfterMs?: number): void {
    const key = `${agentId}|${ref}`;
    const now = this.now();
    const previous = this.streaks.get(key);
    const errorCount = previous && now - previous.lastFailureAt < FAILURE_WINDOW_MS ? previous.errorCount + 1 : 1;
    const until = now + cooldownFor(kind, { errorCount }, retryAfterMs);
    this.streaks.set(key, { kind, errorCount, lastFailureAt: now, until });
  }

  markSuccess(agentId: string, ref: string): void {
    this.streaks.delete(`${agentId}|${ref}`);
  }
}
