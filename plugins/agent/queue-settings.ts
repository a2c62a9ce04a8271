/**
 * The queue for messages that arrive while a run is going on (`messages.queue`, per channel
 * in `byChannel`; a session's `/queue` overrides it), with OpenClaw's defaults.
 */
import { durationMs } from '../../sdk/agent/index.js';

export type QueueMode = 'steer' | 'followup' | 'collect' | 'steer-backlog' | 'interrupt';
export type DropPolicy = 'old' | 'new' | 'summarize';

export interface QueueSettings {
  mode: QueueMode;
  debounceMs: number;
  cap: number;
  drop: DropPolicy;
}

export interface MessagesSection {
  queue?: Partial<QueueSettings> & { mode?: QueueMode | 'queue'; byChannel?: Record<string, QueueMode | 'queue'> };
}

export const DEFAULT_QUEUE: QueueSettings = { mode: 'collect', debounceMs: 1000, cap: 20, drop: 'summarize' };

export function queueDefaults(messages: MessagesSection | undefined, channel?: string): QueueSettings {
  const queue = messages?.queue ?? {};
  const byChannel = channel ? queue.byChannel?.[channel] : undefined;
  const mode = normalizeQueueMode(byChannel ?? queue.mode) ?? DEFAULT_QUEUE.mode;
  return {
    mode,
    debounceMs: durationMs(queue.debounceMs, DEFAULT_QUEUE.debounceMs),
    cap: Number(queue.cap ?? DEFAULT_QUEUE.cap),
    drop: (queue.drop ?? DEFAULT_QUEUE.drop) as DropPolicy,
  };
}

/** "queue" is OpenClaw's legacy name for steer; "steer+backlog" an alternative spelling. */
export function normalizeQueueMode(mode: string | undefined): QueueMode | undefined {
  if (!mode) return undefined;
  const m = mode.trim().toLowerCase();
  if (m === 'queue') return 'steer';
  if (m === 'steer+backlog') return 'steer-backlog';
  return (['steer', 'followup', 'collect', 'steer-backlog', 'interrupt'] as const).find((known) => known === m);
}
