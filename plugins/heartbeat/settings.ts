/**
 * `agents.defaults.heartbeat` merged with `agents.list[].heartbeat`, OpenClaw's way: when any
 * listed agent has a heartbeat block, only those agents run heartbeats; otherwise the
 * default agent does. The shapes are this plugin's (schemas.ts, checked from the manifest
 * before the plugin runs); generated/types.ts types them.
 */
import type { KernelConfig } from '../../sdk/index.js';
import { defaultAgentId, DEFAULT_ACK_MAX_CHARS } from '../../sdk/agent/index.js';
import type { ActiveHours, HeartbeatConfig } from './generated/types.js';

export type { ActiveHours, HeartbeatConfig };

export { DEFAULT_ACK_MAX_CHARS, HEARTBEAT_TOKEN } from '../../sdk/agent/index.js';
export const DEFAULT_EVERY = '30m';

/** Our own wording of OpenClaw's default heartbeat prompt (read HEARTBEAT.md, answer HEARTBEAT_OK if nothing needs attention). */
export const DEFAULT_PROMPT =
  "Heartbeat check. If HEARTBEAT.md exists in your workspace, read it and follow it exactly; do not bring back tasks from earlier conversations on your own. If nothing needs the user's attention right now, reply with HEARTBEAT_OK and nothing else.";

export interface HeartbeatSettings {
  agentId: string;
  /** 0: no schedule (wakes still run). */
  everyMs: number;
  every: string;
  model?: string;
  target: string;
  to?: string;
  accountId?: string;
  prompt: string;
  ackMaxChars: number;
  timeoutSeconds?: number;
  isolatedSession: boolean;
  activeHours?: ActiveHours;
}

type AnyRecord = Record<string, any>;
type Agents = {
  defaults?: { heartbeat?: HeartbeatConfig };
  list?: Array<{ id?: unknown; heartbeat?: HeartbeatConfig }>;
};

/** A heartbeat duration: "30m", "1h", "45s", "1.5h"; a bare number is minutes. */
export function parseEvery(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (!match)
    throw new Error(`heartbeat.every "${value}" is not a duration (use e.g. "30m", "1h", "45s"; "0m" turns it off)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    (match[2] ?? 'm') as 'ms' | 's' | 'm' | 'h' | 'd'
  ];
  return Math.round(Number(match[1]) * unit);
}

function listedAgents(config: KernelConfig): AnyRecord[] {
  return (((config.agents as AnyRecord | undefined)?.list ?? []) as AnyRecord[]).filter(
    (agent) => typeof agent?.id === 'string',
  );
}

/** The agents that run heartbeats. */
export function heartbeatAgents(config: KernelConfig): string[] {
  const withBlock = listedAgents(config).filter((agent) => agent.heartbeat && typeof agent.heartbeat === 'object');
  return withBlock.length > 0 ? withBlock.map((agent) => String(agent.id)) : [defaultAgentId(config)];
}

export function heartbeatSettings(config: KernelConfig, agentId: string): HeartbeatSettings {
  const defaults = (config.agents as Agents | undefined)?.defaults?.heartbeat;
  const entry = (listedAgents(config) as NonNullable<Agents['list']>).find((agent) => agent.id === agentId)?.heartbeat;
  const merged: HeartbeatConfig = { ...defaults, ...entry };
  const every = merged.every ?? DEFAULT_EVERY;
  return {
    agentId,
    every,
    everyMs: parseEvery(every),
    model: merged.model,
    target: merged.target ?? 'last',
    to: merged.to,
    accountId: merged.accountId,
    prompt: merged.prompt ?? DEFAULT_PROMPT,
    ackMaxChars: merged.ackMaxChars ?? DEFAULT_ACK_MAX_CHARS,
    timeoutSeconds: merged.timeoutSeconds,
    isolatedSession: merged.isolatedSession === true,
    activeHours: merged.activeHours,
  };
}

/** The session an isolated heartbeat (isolatedSession) runs in, beside the main session. */
export function isolatedHeartbeatKey(mainKey: string): string {
  return `${mainKey}:heartbeat`;
}

// ── Active hours ────────────────────────────────────────────────────────────────

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone the window is read in: "user" → userTimezone or the host's, "local" → the host's, else the IANA name (an unknown one falls back to "user"). */
export function activeHoursZone(hours: ActiveHours, userTimezone: string | undefined): string {
  const host = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const user = userTimezone && validZone(userTimezone) ? userTimezone : host;
  const zone = hours.timezone?.trim();
  if (!zone || zone === 'user') return user;
  if (zone === 'local') return host;
  return validZone(zone) ? zone : user;
}

/** Minutes since midnight at `at` in `zone`. */
export function minuteOfDay(at: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return get('hour') * 60 + get('minute');
}

/** Inside [start, end) in the window's zone; a window may wrap midnight; start == end is never inside. */
export function withinActiveHours(hours: ActiveHours, at: number, userTimezone: string | undefined): boolean {
  const start = minutesOf(hours.start);
  const end = minutesOf(hours.end);
  if (start === end) return false;
  const now = minuteOfDay(at, activeHoursZone(hours, userTimezone));
  return start < end ? now >= start && now < end : now >= start || now < end;
}
