/**
 * Where sessions begin and end for the agent: a run resolves its session (a new one when
 * the reset policy or `freshSession` says so, with session_end for the old and
 * session_start for the new), and `/new`, `/reset` and `sessions.reset` cross the same
 * boundary.
 */
import type { KernelServices } from '../../sdk/index.js';
import {
  parseSessionKey,
  sessionTypeOf,
  type DispatchInput,
  type SessionEntry,
  type SessionService,
} from '../../sdk/agent/index.js';

export interface SessionLifecycleDeps {
  kernel: KernelServices;
  now: () => number;
  sessions: SessionService;
  /** Session queue overrides, mirrored from the store so queue decisions stay synchronous. */
  queueOverrides: Map<string, SessionEntry['queue']>;
}

export class SessionLifecycle {
  constructor(private readonly deps: SessionLifecycleDeps) {}

  /** The session entry for this run, starting a new session when the reset policy says so. */
  async resolve(
    agentId: string,
    sessionKey: string,
    input: Pick<DispatchInput, 'channel' | 'freshSession' | 'from' | 'threadId' | 'accountId'>,
  ): Promise<SessionEntry> {
    const { sessions } = this.deps;
    const store = sessions.store(agentId);
    const policy = sessions.resetPolicy({ type: sessionTypeOf(sessionKey), channel: input.channel });
    const resolved = await store.resolve(sessionKey, {
      reset: input.freshSession
        ? true
        : (entry) => sessions.isStale(entry.updatedAt, policy, new Date(this.deps.now())),
      // The run's end writes updatedAt; touching it here too would cost a store write per turn.
      touch: false,
      ...(input.channel
        ? {
            patch: {
              channel: input.channel,
              origin: {
                provider: input.channel,
                from: input.from,
                accountId: input.accountId,
                threadId: input.threadId,
              },
            },
          }
        : {}),
    });
    this.deps.queueOverrides.set(sessionKey, resolved.entry.queue);
    if (resolved.isNew) await this.boundary(agentId, sessionKey, resolved.entry, resolved.previous);
    return resolved.entry;
  }

  /** A session ends (when there was one) and a new one starts: session_end, then session_start. */
  async boundary(agentId: string, sessionKey: string, entry: SessionEntry, previous?: SessionEntry): Promise<void> {
    const hooks = this.deps.kernel.hooks;
    if (previous) {
      const count = this.deps.sessions
        .transcript(
          this.deps.sessions.store(agentId).transcriptPath(previous.sessionId, parseSessionKey(sessionKey).threadId),
        )
        .messages().length;
      await hooks.ready('session_end');
      void hooks.runVoid(
        'session_end',
        { sessionId: previous.sessionId, sessionKey, messageCount: count },
        { agentId, sessionKey },
      );
    }
    await hooks.ready('session_start');
    void hooks.runVoid(
      'session_start',
      { sessionId: entry.sessionId, sessionKey, ...(previous ? { resumedFrom: previous.sessionId } : {}) },
      { agentId, sessionKey },
    );
  }
}
