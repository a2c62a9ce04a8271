/**
 * `sessions_send`: run another session with a message, through the agent service (so its
 * lanes, queue and tool policy apply), then either return at once (`timeoutSeconds: 0`) or
 * wait for the reply. The agent-to-agent follow-up (a2a.ts) runs afterwards in the
 * background either way. The target must be visible to the caller (access.ts) and its
 * send policy must allow messages.
 */
import type { KernelServices } from '../../sdk/index.js';
import type { AgentService, RunResult, SessionEntry, SessionService } from '../../sdk/agent/index.js';
import { runA2AFlow, messageContext, A2A_LANE, type A2AEnds, type A2AOutcome } from './a2a.js';
import type { SessionAccess, SessionRecord } from './access.js';
import { shownKey } from './rows.js';

export const DEFAULT_SEND_TIMEOUT_SECONDS = 30;

export interface SendRequest {
  target: SessionRecord;
  message: string;
  timeoutSeconds: number;
  requesterChannel?: string;
}

export type SendResult =
  | { status: 'accepted'; runId: string; sessionKey: string; delivery: { status: 'pending' } }
  | { status: 'ok'; runId: string; sessionKey: string; reply: string; delivery: { status: 'pending' } }
  | { status: 'timeout' | 'error'; runId: string; sessionKey: string; error: string }
  | { status: 'forbidden'; sessionKey: string; error: string };

export interface SendDeps {
  kernel: KernelServices;
  agent: AgentService;
  /** Its send policy says whether the target may be sent to (and announced in). */
  sessions: Pick<SessionService, 'sendPolicy'>;
  /** The target's entry as stored now (the announce goes where it last talked). */
  entryOf(record: SessionRecord): Promise<SessionEntry | undefined>;
  /** Observes each finished agent-to-agent flow (tests, logs). */
  onFlowDone?: (outcome: A2AOutcome | { error: string }) => void;
}

function failure(result: RunResult): string {
  return result.error ?? `the run ended with status ${result.status}`;
}

export async function sendToSession(deps: SendDeps, access: SessionAccess, request: SendRequest): Promise<SendResult> {
  const { target } = request;
  const sessionKey = shownKey(target.key);
  if (target.key === access.requester.sessionKey)
    return {
      status: 'forbidden',
      sessionKey,
      error: 'a session cannot send to itself (it would wait on its own turn)',
    };
  if (deps.sessions.sendPolicy({ sessionKey: target.key, entry: target.entry }) === 'deny') {
    return {
      status: 'forbidden',
      sessionKey,
      error: `sending to ${sessionKey} is blocked by its send policy (session.sendPolicy or the session's sendPolicy override)`,
    };
  }
  const ends: A2AEnds = {
    requester: { ...access.requester, ...(request.requesterChannel ? { channel: request.requesterChannel } : {}) },
    target: { agentId: target.agentId, sessionKey: target.key },
  };
  const timeoutMs = request.timeoutSeconds * 1000;
  const handle = await deps.agent.dispatch({
    agentId: target.agentId,
    sessionKey: target.key,
    message: request.message,
    extraSystemPrompt: messageContext(ends),
    // Another agent's words are data: they never run the target's slash commands.
    authorized: false,
    queueMode: 'followup',
    lane: A2A_LANE,
  });
  if (handle.status === 'dropped')
    return {
      status: 'error',
      runId: handle.runId,
      sessionKey,
      error: `the target session's queue is full; the message was dropped`,
    };

  // The follow-up exchange starts once the first reply is in, whether or not anyone waits for it.
  const stepTimeoutMs = Math.max(timeoutMs, DEFAULT_SEND_TIMEOUT_SECONDS * 1000);
  void handle.done
    .then((result) => {
      if (result.status !== 'ok' || !result.text.trim()) return undefined;
      return runA2AFlow(
        deps.kernel,
        deps.agent,
        deps.sessions,
        ends,
        request.message,
        result.text.trim(),
        () => deps.entryOf(target),
        stepTimeoutMs,
      );
    })
    .then(
      (outcome) => outcome && deps.onFlowDone?.(outcome),
      (error: unknown) => deps.onFlowDone?.({ error: String(error) }),
    );

  if (request.timeoutSeconds === 0)
    return { status: 'accepted', runId: handle.runId, sessionKey, delivery: { status: 'pending' } };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const result = await Promise.race([handle.done, timedOut]).finally(() => clearTimeout(timer));
  if (result === 'timeout') {
    return {
      status: 'timeout',
      runId: handle.runId,
      sessionKey,
      error: `no reply within ${request.timeoutSeconds}s; the run goes on (read it later with sessions_history)`,
    };
  }
  if (result.status !== 'ok') return { status: 'error', runId: handle.runId, sessionKey, error: failure(result) };
  return { status: 'ok', runId: handle.runId, sessionKey, reply: result.text, delivery: { status: 'pending' } };
}
