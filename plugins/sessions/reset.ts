/**
 * When a session expires. Expiry is checked on the next inbound message: a stale
 * session gets a new sessionId under the same key. Two clocks can expire it —
 *   daily: the last update is before the most recent `atHour:00` (gateway-host local time);
 *   idle:  more than `idleMinutes` passed since the last update —
 * and when both apply, whichever comes first wins.
 *
 * Which rule applies, most specific first: `resetByChannel[channel]`, then
 * `resetByType[type]`, then `reset`. The chosen rule is used as a whole (a field it
 * omits takes the built-in default, not the value from a less specific rule), which is
 * why the config example repeats `atHour: 4` in its overrides.
 */
import type { ResetMode, ResetPolicy, SessionType } from '../../sdk/sessions/index.js';

export interface ResetRule {
  mode?: ResetMode;
  /** 0–23, local time of the daily reset. */
  atHour?: number;
  idleMinutes?: number;
}

/** The reset-related part of `session.*` config. */
export interface SessionResetConfig {
  reset?: ResetRule;
  /** `dm` is accepted as an older spelling of `direct`. */
  resetByType?: Partial<Record<SessionType | 'dm', ResetRule>>;
  resetByChannel?: Record<string, ResetRule>;
  /** Legacy: on its own it means idle-only expiry; otherwise the idle window of `reset`. */
  idleMinutes?: number;
  resetTriggers?: string[];
}

export const DEFAULT_RESET_HOUR = 4;
/** Idle window for `mode: "idle"` when no `idleMinutes` is configured anywhere. */
export const DEFAULT_IDLE_MINUTES = 60;
export const DEFAULT_RESET_TRIGGERS: readonly string[] = ['/new', '/reset'];

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

function hourOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return DEFAULT_RESET_HOUR;
  return Math.min(23, Math.max(0, Math.floor(value)));
}

function channelRule(
  byChannel: Record<string, ResetRule> | undefined,
  channel: string | undefined,
): ResetRule | undefined {
  if (!byChannel || !channel) return undefined;
  const wanted = channel.trim().toLowerCase();
  for (const [name, rule] of Object.entries(byChannel)) {
    if (name.trim().toLowerCase() === wanted && rule) return rule;
  }
  return undefined;
}

export function resolveResetPolicy(
  session: SessionResetConfig | undefined,
  context: { type: SessionType; channel?: string },
): ResetPolicy {
  const config = session ?? {};
  const legacyIdle = positive(config.idleMinutes);
  const byType = config.resetByType;
  const typeRule = byType?.[context.type] ?? (context.type === 'direct' ? byType?.dm : undefined);
  const hasTypeRules = byType !== undefined && Object.keys(byType).length > 0;

  let rule: ResetRule;
  let source: ResetPolicy['source'];
  const byChannel = channelRule(config.resetByChannel, context.channel);
  if (byChannel) {
    rule = byChannel;
    source = 'channel';
  } else if (typeRule) {
    rule = typeRule;
    source = 'type';
  } else if (config.reset) {
    // The old top-level idleMinutes still supplies the idle window of a newer `reset`.
    rule = { ...config.reset, idleMinutes: config.reset.idleMinutes ?? legacyIdle };
    source = 'reset';
  } else if (legacyIdle !== undefined && !hasTypeRules) {
    rule = { mode: 'idle', idleMinutes: legacyIdle };
    source = 'legacy-idle';
  } else {
    rule = { idleMinutes: legacyIdle };
    source = 'default';
  }

  const mode: ResetMode = rule.mode === 'idle' ? 'idle' : 'daily';
  const idleMinutes =
    positive(rule.idleMinutes) ?? (mode === 'idle' ? (legacyIdle ?? DEFAULT_IDLE_MINUTES) : undefined);
  return { mode, atHour: hourOf(rule.atHour), ...(idleMinutes === undefined ? {} : { idleMinutes }), source };
}

/** The latest `atHour:00` local time that is not after `now`. */
export function mostRecentDailyReset(now: Date, atHour: number): Date {
  const boundary = new Date(now.getFullYear(), now.getMonth(), now.getDate(), hourOf(atHour), 0, 0, 0);
  // Stepping back by calendar day (not 24 h) keeps the hour right across DST changes.
  if (boundary.getTime() > now.getTime()) boundary.setDate(boundary.getDate() - 1);
  return boundary;
}

/** Why a session last updated at `updatedAt` (ms) has expired, or undefined if it has not. */
export function staleReason(updatedAt: number, policy: ResetPolicy, now: Date): 'daily' | 'idle' | undefined {
  if (policy.mode === 'daily' && updatedAt < mostRecentDailyReset(now, policy.atHour).getTime()) return 'daily';
  if (policy.idleMinutes !== undefined && now.getTime() - updatedAt > policy.idleMinutes * 60_000) return 'idle';
  return undefined;
}

export function isStale(updatedAt: number, policy: ResetPolicy, now: Date): boolean {
  return staleReason(updatedAt, policy, now) !== undefined;
}

/** `/new` and `/reset` always reset; `session.resetTriggers` adds more. */
export function resetTriggersFrom(session: SessionResetConfig | undefined): string[] {
  const configured = (session?.resetTriggers ?? []).map((trigger) => trigger.trim()).filter(Boolean);
  return [...new Set([...DEFAULT_RESET_TRIGGERS, ...configured])];
}

/**
 * The reset trigger the message starts with, matched as a whole word (case-insensitive):
 * `/new opus` → `{ trigger: "/new", rest: "opus" }`, while `/newfoo` is not a trigger.
 */
export function matchResetTrigger(
  text: string,
  triggers: readonly string[] = DEFAULT_RESET_TRIGGERS,
): { trigger: string; rest: string } | undefined {
  const trimmed = text.trimStart();
  const match = /^\S+/.exec(trimmed);
  if (!match) return undefined;
  const word = match[0].toLowerCase();
  const trigger = triggers.find((candidate) => candidate.trim() !== '' && candidate.trim().toLowerCase() === word);
  if (trigger === undefined) return undefined;
  return { trigger: trigger.trim(), rest: trimmed.slice(match[0].length).trim() };
}
