/**
 * Heartbeat and system events. Provides the `system-events` service (sdk/types/automation.ts)
 * that cron's main-session jobs and `POST /hooks/wake` use; runs the heartbeat schedule while
 * the gateway runs; and shows pending events to the agent at the start of its next turn in
 * their session (before_prompt_build), removing them once that turn has ended well
 * (agent_end), so a crash mid-turn shows them again instead of losing them.
 */
import {
  definePlugin,
  ErrorCodes,
  ProtocolError,
  type KernelConfig,
  buildAgentMainSessionKey,
  normalizeAgentId,
  parseSessionKey,
  type EnqueueSystemEvent,
  type SystemEvent,
  type SystemEventsService,
  type WakeRequest,
} from '../../sdk/index.js';
import { cliCommand } from '../../sdk/cli.js';
import { useService } from '../../sdk/services.js';
import {
  agentPaths,
  agentValue,
  unknownAgentProblem,
  type AgentService,
  type SessionService,
} from '../../sdk/agent/index.js';
import { SYSTEM_HELP, systemCommand } from './cli.js';
import { formatSystemEvents, SystemEventStore } from './event-store.js';
import { HeartbeatRunner } from './runner.js';
import { heartbeatAgents, isolatedHeartbeatKey } from './settings.js';
import { HeartbeatState } from './state.js';

const MODE = { enum: ['now', 'next-heartbeat'] };
/** Runs whose shown events wait for agent_end; far more than can run at once. */
const MAX_TRACKED_RUNS = 1000;

export default definePlugin({
  id: 'heartbeat',
  register(api) {
    const kernel = api.kernel;
    const config = () => kernel.config() as KernelConfig;
    const store = new SystemEventStore(kernel.paths.stateDir);
    const state = new HeartbeatState(kernel.paths.stateDir);
    const mainKey = (agentId: string) => {
      const key = (config().session as { mainKey?: unknown } | undefined)?.mainKey;
      return buildAgentMainSessionKey(agentId, typeof key === 'string' ? key : 'main');
    };
    const defaultAgent = () => heartbeatAgents(config())[0] ?? 'main';
    const workspace = (agentId: string) => {
      const dir = agentPaths(config(), agentId, kernel.paths).workspaceDir;
      return { dir, userTimezone: agentValue<string>(config(), agentId, 'userTimezone') };
    };

    kernel.protocol.registerEvent('heartbeat', api.id, {
      scope: 'operator.read',
      description:
        '{ts, agentId, status: sent|ok-token|ok-empty|skipped|failed, reason?, trigger, sessionKey?, runId?, channel?, to?, preview?, systemEvents?, durationMs?}',
    });
    const runner = new HeartbeatRunner({
      config,
      state,
      events: store,
      agent: () => useService<AgentService>(kernel, 'agent'),
      mainKey,
      session: async (agentId, sessionKey) =>
        (await useService<SessionService>(kernel, 'sessions'))?.store(agentId).get(sessionKey),
      restoreUpdatedAt: async (agentId, sessionKey, before, run) => {
        const sessions = await useService<SessionService>(kernel, 'sessions');
        const agent = await useService<AgentService>(kernel, 'agent');
        await sessions
          ?.store(agentId)
          .upsert(sessionKey, (entry) =>
            entry &&
            entry.sessionId === before.sessionId &&
            run.sessionId === before.sessionId &&
            entry.updatedAt >= run.startedAt &&
            entry.updatedAt <= run.endedAt &&
            !agent?.isActive(sessionKey)
              ? { updatedAt: before.updatedAt }
              : undefined,
          );
      },
      workspace,
      send: (request) => kernel.channels.send(request) as never,
      emit: (event) => kernel.protocol.emit('heartbeat', event),
      logger: api.logger,
    });

    const checkAgent = (agentId: string): string => {
      const id = normalizeAgentId(agentId);
      const problem = unknownAgentProblem(config(), id);
      if (problem) throw new Error(problem);
      return id;
    };

    const service: SystemEventsService = {
      async enqueue(event: EnqueueSystemEvent): Promise<SystemEvent> {
        const fromKey = event.sessionKey ? parseSessionKey(event.sessionKey).agentId : undefined;
        const agentId = checkAgent(event.agentId ?? fromKey ?? defaultAgent());
        if (event.agentId && fromKey && normalizeAgentId(fromKey) !== agentId)
          throw new Error(`session ${event.sessionKey} belongs to agent "${fromKey}", not "${agentId}"`);
        const sessionKey = !event.sessionKey || event.sessionKey === 'main' ? mainKey(agentId) : event.sessionKey;
        if (!event.source?.trim()) throw new Error('a system event needs a source (cron:<jobId>, hook:wake, cli, …)');
        return store.enqueue({
          agentId,
          sessionKey,
          text: event.text ?? '',
          source: event.source,
          ...(event.contextKey ? { contextKey: event.contextKey } : {}),
        });
      },
      pending: (sessionKey) => store.pending(sessionKey),
      async wake(request: WakeRequest) {
        const agentId = checkAgent(request.agentId ?? defaultAgent());
        if (!request.reason?.trim()) throw new Error('a wake needs a reason (cron:<jobId>, hook:wake, …)');
        if (request.mode === 'now') return runner.wakeNow(agentId, request.reason);
        if (request.mode === 'next-heartbeat') return runner.wakeNext(agentId);
        throw new Error(`wake mode must be "now" or "next-heartbeat", got "${String(request.mode)}"`);
      },
    };
    api.registerService({ id: 'system-events', api: service, start: () => runner.start(), stop: () => runner.stop() });

    // ── Pending events into the next turn of their session ──────────────────────
    const seen = new Map<string, string[]>();
    api.on('before_prompt_build', (_event, ctx) => {
      if (!ctx.sessionKey) return undefined;
      // An isolated heartbeat shows the events queued for the main session it stands in for.
      const main = ctx.agentId ? mainKey(ctx.agentId) : undefined;
      const pending = store.pending(main && ctx.sessionKey === isolatedHeartbeatKey(main) ? main : ctx.sessionKey);
      if (pending.length === 0) return undefined;
      if (ctx.runId) {
        seen.set(
          ctx.runId,
          pending.map((event) => event.id),
        );
        // A turn that throws never reaches agent_end; its entry must not stay forever.
        if (seen.size > MAX_TRACKED_RUNS) seen.delete(seen.keys().next().value as string);
      }
      const zone = ctx.agentId ? workspace(ctx.agentId).userTimezone : undefined;
      return { prependContext: formatSystemEvents(pending, zone) };
    });
    api.on('agent_end', async (event, ctx) => {
      const ids = ctx.runId ? seen.get(ctx.runId) : undefined;
      if (!ids) return;
      seen.delete(ctx.runId!);
      // A turn that failed or was stopped leaves them queued: the next turn sees them again.
      if (event.success) await store.remove(ids);
    });

    // ── Gateway methods ─────────────────────────────────────────────────────────
    const invalid = (error: unknown) =>
      new ProtocolError(ErrorCodes.INVALID_REQUEST, (error as Error).message ?? String(error));
    const guarded = async <T>(work: () => Promise<T> | T): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        throw error instanceof ProtocolError ? error : invalid(error);
      }
    };

    api.registerGatewayMethod('system-event', {
      scope: 'operator.write',
      sideEffect: 'optional',
      description:
        'Queue a system event for a session (default: the agent main session); mode now also wakes a heartbeat.',
      params: {
        type: 'object',
        required: ['text'],
        additionalProperties: false,
        properties: {
          text: { type: 'string', minLength: 1 },
          mode: MODE,
          sessionKey: { type: 'string', minLength: 1 },
          agentId: { type: 'string', minLength: 1 },
          contextKey: { type: 'string', minLength: 1 },
          idempotencyKey: { type: 'string' },
        },
      },
      handler: (params: {
        text: string;
        mode?: 'now' | 'next-heartbeat';
        sessionKey?: string;
        agentId?: string;
        contextKey?: string;
      }) =>
        guarded(async () => {
          const event = await service.enqueue({
            text: params.text,
            source: 'gateway',
            agentId: params.agentId,
            sessionKey: params.sessionKey,
            contextKey: params.contextKey,
          });
          const mode = params.mode ?? 'next-heartbeat';
          const wake =
            event.sessionKey === mainKey(event.agentId)
              ? await service.wake({ agentId: event.agentId, mode, reason: 'system-event' })
              : {
                  queued: false,
                  reason: `heartbeats run in the main session; the event waits for the next turn in ${event.sessionKey}`,
                };
          return { ok: true, event, wake };
        }),
    });
    api.registerGatewayMethod('wake', {
      scope: 'operator.write',
      sideEffect: 'optional',
      description:
        'Queue text as a system event on the default agent main session and wake its heartbeat (now) or leave it to the schedule (next-heartbeat).',
      params: {
        type: 'object',
        required: ['mode', 'text'],
        additionalProperties: false,
        properties: {
          mode: MODE,
          text: { type: 'string' },
          agentId: { type: 'string', minLength: 1 },
          idempotencyKey: { type: 'string' },
        },
      },
      handler: (params: { mode: 'now' | 'next-heartbeat'; text: string; agentId?: string }) =>
        guarded(async () => {
          if (!params.text.trim()) throw new Error('wake needs text (what the agent should notice)');
          const event = await service.enqueue({ text: params.text, source: 'wake', agentId: params.agentId });
          return {
            ok: true,
            event,
            wake: await service.wake({ agentId: event.agentId, mode: params.mode, reason: 'wake' }),
          };
        }),
    });
    api.registerGatewayMethod('last-heartbeat', {
      scope: 'operator.read',
      description:
        "The last heartbeat (status and reason), whether heartbeats are on, and each agent's schedule and pending events.",
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { agentId: { type: 'string', minLength: 1 } },
      },
      handler: (params: { agentId?: string }) =>
        guarded(() => {
          const only = params.agentId ? checkAgent(params.agentId) : undefined;
          const ids = only ? [only] : heartbeatAgents(config());
          return {
            last: state.last(only) ?? null,
            enabled: state.enabled,
            agents: ids.map((agentId) => {
              const settings = runner.settings(agentId);
              const next = runner.nextDue(agentId);
              return {
                agentId,
                every: settings.every,
                target: settings.target,
                lastRunAt: state.agent(agentId)?.lastRunAt ?? null,
                nextDueAt: next ?? null,
                pendingEvents: store.pending(mainKey(agentId)).length,
                last: state.last(agentId) ?? null,
              };
            }),
          };
        }),
    });
    api.registerGatewayMethod('set-heartbeats', {
      scope: 'operator.admin',
      sideEffect: 'optional',
      description: 'Turn scheduled heartbeats on or off (kept across restarts).',
      params: {
        type: 'object',
        required: ['enabled'],
        additionalProperties: false,
        properties: { enabled: { type: 'boolean' }, idempotencyKey: { type: 'string' } },
      },
      handler: (params: { enabled: boolean }) => {
        runner.setEnabled(params.enabled);
        return { ok: true, enabled: state.enabled };
      },
    });

    api.registerCli({
      name: 'system',
      description: 'System events, heartbeat and presence',
      run: cliCommand(SYSTEM_HELP, (argv, ctx) => systemCommand(argv, ctx)),
    });
  },
});
