/**
 * `session_status`: a `/status`-style card for the current session or another visible one
 * — model, tokens, context use, compactions, last activity and the time now — and, with
 * `model`, a per-session model override ("default" clears it).
 */
import type { SessionRecord } from './access.js';
import { kindOf, shownKey } from './rows.js';

function count(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : String(n);
}

function ago(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86_400)}d ago`;
}

export interface StatusFacts {
  record: SessionRecord;
  /** The model the next run uses: the override, else the agent's primary. */
  model: string;
  defaultModel?: string;
  active: boolean;
  now: number;
  timezone?: string;
}

function localTime(now: number, timezone: string | undefined): string {
  try {
    return new Date(now).toLocaleString('en-US', {
      timeZone: timezone,
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZoneName: 'short',
    });
  } catch {
    return new Date(now).toISOString();
  }
}

export function statusCard(facts: StatusFacts): { text: string; details: Record<string, unknown> } {
  const { entry } = facts.record;
  const percent = entry.contextTokens > 0 ? Math.round((entry.totalTokens / entry.contextTokens) * 100) : undefined;
  const context =
    entry.contextTokens > 0
      ? `${count(entry.totalTokens)}/${count(entry.contextTokens)} (${percent}%)`
      : `${count(entry.totalTokens)} (window unknown until the first run)`;
  const lines = [
    `Session: ${shownKey(facts.record.key)} (${kindOf(facts.record.key)}, agent ${facts.record.agentId}) · id ${entry.sessionId}`,
    `Model: ${facts.model}${entry.model ? ' (session override)' : ''}${entry.thinkingLevel ? ` · thinking ${entry.thinkingLevel}` : ''}`,
    `Tokens: ${count(entry.inputTokens)} in / ${count(entry.outputTokens)} out`,
    `Context: ${context} · compactions ${entry.compactionCount}`,
    `Activity: ${facts.active ? 'running now' : 'idle'} · updated ${ago(facts.now - entry.updatedAt)}`,
    `Time: ${localTime(facts.now, facts.timezone)}`,
  ];
  const details = {
    sessionKey: shownKey(facts.record.key),
    agentId: facts.record.agentId,
    sessionId: entry.sessionId,
    model: facts.model,
    ...(entry.model ? { modelOverride: entry.model } : {}),
    inputTokens: entry.inputTokens,
    outputTokens: entry.outputTokens,
    totalTokens: entry.totalTokens,
    contextTokens: entry.contextTokens,
    ...(percent !== undefined ? { contextPercent: percent } : {}),
    compactionCount: entry.compactionCount,
    active: facts.active,
    updatedAt: entry.updatedAt,
    now: facts.now,
    ...(facts.timezone ? { timezone: facts.timezone } : {}),
  };
  return { text: lines.join('\n'), details };
}
