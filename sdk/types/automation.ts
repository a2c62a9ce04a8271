/**
 * Automation contracts shared by the cron, heartbeat and webhook plugins.
 *
 * The heartbeat plugin provides `system-events` (`useService(kernel, 'system-events')`):
 * a durable per-session queue of short system lines that the agent sees at the start of
 * its next turn in that session, plus `wake`, which asks for a heartbeat turn. Cron's
 * `main` session target and `POST /hooks/wake` both go through it, so a cron job that
 * fires while the agent is busy is not lost and not run twice.
 */

export type WakeMode = 'now' | 'next-heartbeat';

export interface SystemEvent {
  /** Stable id (for dedupe and for removing the event once a turn has seen it). */
  id: string;
  /** Agent id; default: the default agent. */
  agentId: string;
  /** Session the event is for; default: the agent's main session. */
  sessionKey: string;
  text: string;
  /** Who queued it: `cron:<jobId>`, `hook:wake`, `cli`, … */
  source: string;
  /** Events with the same contextKey replace each other (only the newest is kept). */
  contextKey?: string;
  enqueuedAt: number;
}

export interface EnqueueSystemEvent {
  agentId?: string;
  sessionKey?: string;
  text: string;
  source: string;
  contextKey?: string;
}

export interface WakeRequest {
  agentId?: string;
  mode: WakeMode;
  /** Why (shown in `claw system heartbeat last` and logs): `cron:<jobId>`, `hook:wake`, … */
  reason: string;
}

export interface SystemEventsService {
  /** Queue an event durably (persisted before this resolves). */
  enqueue(event: EnqueueSystemEvent): Promise<SystemEvent>;
  /** Events waiting for a session, oldest first. */
  pending(sessionKey: string): SystemEvent[];
  /** `now`: run a heartbeat turn as soon as the session is free; `next-heartbeat`: leave it to the schedule. */
  wake(request: WakeRequest): Promise<{ queued: boolean; reason?: string }>;
}
