/**
 * What a run does, by session target and payload. Every path goes through the same choke
 * points a user's message does: `main` jobs queue a system event and ask for a wake (the
 * heartbeat plugin's `system-events` service); isolated agent turns go to the agent's
 * dispatcher in their own fresh session `cron:<jobId>` on the `cron` lane; command jobs
 * call the `exec` tool through the kernel's tool path, so tool policy, sandbox routing and
 * exec approvals decide exactly as they do for the model. Announce delivery goes out
 * through the kernel's outbound path (message hooks, chunking, retries).
 */
import type { PluginApi, SystemEventsService } from '../../sdk/index.js';
import {
  agentPaths,
  defaultAgentId,
  isSilentReplyText,
  unknownAgentProblem,
  type AgentService,
  type SessionService,
} from '../../sdk/agent/index.js';
import { mkdirSync } from 'node:fs';
import { useService } from '../../sdk/services.js';
import type { Executor, RunContext, RunOutcome } from './service.js';
import { jobTimeoutMs } from './service.js';
import type { CronJob } from './types.js';

const SUMMARY_MAX_CHARS = 2000;

/** The session a job's agent runs are stored under, one per job. */
export function cronSessionKey(jobId: string): string {
  return `cron:${jobId.trim()}`;
}

const clip = (text: string) => (text.length > SUMMARY_MAX_CHARS ? `${text.slice(0, SUMMARY_MAX_CHARS)}…` : text);

/** Run `work` in the cron lane (cap cron.maxConcurrentRuns); the slot frees when the scheduler is done with the run. */
function inCronLane(
  api: PluginApi,
  ctx: RunContext,
  laneKey: string | undefined,
  work: () => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const task = () => {
    ctx.started();
    const ended = ctx.ended.then((): RunOutcome => ({ status: 'error', error: 'cron: run ended by the scheduler' }));
    return Promise.race([work(), ended]);
  };
  return laneKey ? api.kernel.lanes.runInSession(laneKey, task, 'cron') : api.kernel.lanes.enqueue('cron', task);
}

export function createExecutor(api: PluginApi): Executor {
  const agentService = () => useService<AgentService>(api.kernel, 'agent');

  async function runMain(job: CronJob, ctx: RunContext): Promise<RunOutcome> {
    if (job.payload.kind !== 'systemEvent') throw new Error('main cron jobs require payload.kind="systemEvent"');
    const text = job.payload.text.trim();
    if (!text) return { status: 'skipped', error: 'empty system event text' };
    const events = await useService<SystemEventsService>(api.kernel, 'system-events');
    if (!events) {
      throw new Error(
        'main-session cron jobs need the "system-events" service, and no enabled plugin provides it: enable the heartbeat plugin (claw plugins enable heartbeat), or make the job isolated (--session isolated --message …)',
      );
    }
    return inCronLane(api, ctx, undefined, async () => {
      const source = `cron:${job.id}`;
      const event = await events.enqueue({
        ...(job.agentId ? { agentId: job.agentId } : {}),
        text,
        source,
        contextKey: source,
      });
      const wake = await events.wake({
        ...(job.agentId ? { agentId: job.agentId } : {}),
        mode: job.wakeMode,
        reason: source,
      });
      // The event is queued durably either way; a wake that could not be requested now is noted.
      if (job.wakeMode === 'now' && !wake.queued)
        api.logger.warn(
          `cron job "${job.name}": system event queued, but no heartbeat was requested now${wake.reason ? ` (${wake.reason})` : ''}`,
        );
      return { status: 'ok', summary: clip(text), sessionKey: event.sessionKey, deliveryStatus: 'not-requested' };
    });
  }

  async function runCommand(job: CronJob, ctx: RunContext): Promise<RunOutcome> {
    if (job.payload.kind !== 'command') throw new Error('not a command job');
    const payload = job.payload;
    const config = api.kernel.config();
    const agentId = job.agentId ?? defaultAgentId(config);
    const unknown = unknownAgentProblem(config, agentId);
    if (unknown) throw new Error(unknown);
    // The command runs where the agent's exec would: its workspace (created as the agent would).
    const { workspaceDir } = agentPaths(config, agentId, api.kernel.paths);
    mkdirSync(workspaceDir, { recursive: true, mode: 0o700 });
    const sessionKey = cronSessionKey(job.id);
    const outcome = await inCronLane(api, ctx, sessionKey, async () => {
      const call = await api.kernel.tools.invoke({
        name: 'exec',
        params: {
          command: payload.command,
          ...(payload.cwd ? { workdir: payload.cwd } : {}),
          timeout: Math.ceil(jobTimeoutMs(job) / 1000),
          yieldMs: 0,
        },
        toolCallId: `cron-${ctx.runId}`,
        context: { agentId, sessionKey, runId: ctx.runId, signal: ctx.signal, workspaceDir },
      });
      const text = call.result.content
        .map((part) => (part.type === 'text' ? part.text : ''))
        .join('')
        .trim();
      const details = call.result.details as { exitCode?: number | null } | undefined;
      if (call.blocked || call.result.isError) {
        const exit =
          details?.exitCode !== undefined && details.exitCode !== null ? `exit code ${details.exitCode}: ` : '';
        return {
          status: 'error',
          error: clip(`${call.blocked ? 'blocked: ' : exit}${text || 'the command failed'}`),
          summary: clip(text),
          sessionKey,
        };
      }
      return { status: 'ok', summary: clip(text), sessionKey };
    });
    return outcome.status === 'ok'
      ? { ...outcome, ...(await announce(job, outcome.summary ?? '', agentId, sessionKey, ctx.runId)) }
      : outcome;
  }

  async function runAgentTurn(job: CronJob, ctx: RunContext): Promise<RunOutcome> {
    if (job.payload.kind !== 'agentTurn') throw new Error('isolated cron jobs require payload.kind="agentTurn"');
    const agent = await agentService();
    if (!agent)
      throw new Error(
        'isolated cron jobs need the "agent" service, and no enabled plugin provides it (enable the agent plugin)',
      );
    const payload = job.payload;
    const agentId = job.agentId ?? agent.defaultAgent();
    const timeoutMs = jobTimeoutMs(job);
    const handle = await agent.dispatch({
      agentId,
      sessionKey: cronSessionKey(job.id),
      message: payload.message,
      ...(payload.model ? { model: payload.model } : {}),
      ...(payload.thinking ? { thinking: payload.thinking as never } : {}),
      ...(timeoutMs > 0 ? { timeoutMs } : {}),
      // A fresh transcript for every run, as OpenClaw's isolated jobs get.
      freshSession: true,
      lane: 'cron',
      callerJournaled: true,
      authorized: false,
      onEvent: (event) => {
        if (event.kind === 'agent' && event.stream === 'lifecycle' && event.data.phase === 'start') ctx.started();
      },
    });
    const abort = () => agent.abortRun(handle.runId, 'cron: job execution timed out');
    ctx.signal.addEventListener('abort', abort, { once: true });
    try {
      const result = await Promise.race([handle.done, ctx.ended.then(() => undefined)]);
      if (!result) return { status: 'error', error: 'cron: run ended by the scheduler' };
      const base = {
        sessionKey: result.sessionKey,
        sessionId: result.sessionId,
        ...(result.model ? { model: result.model } : {}),
        ...(result.provider ? { provider: result.provider } : {}),
        usage: result.usage,
      };
      if (result.status !== 'ok')
        return {
          ...base,
          status: 'error',
          error: result.error ?? `agent run ended: ${result.status}`,
          summary: clip(result.text),
        };
      return {
        ...base,
        status: 'ok',
        summary: clip(result.text),
        ...(await announce(job, result.text, agentId, result.sessionKey, handle.runId)),
      };
    } finally {
      ctx.signal.removeEventListener('abort', abort);
    }
  }

  /** Announce delivery of a finished isolated run's text to its chat target. */
  async function announce(
    job: CronJob,
    text: string,
    agentId: string,
    sessionKey: string,
    runId: string,
  ): Promise<Partial<RunOutcome>> {
    const delivery = job.delivery;
    if (!delivery || delivery.mode !== 'announce') return { deliveryStatus: 'not-requested' };
    if (!text.trim() || isSilentReplyText(text))
      return {
        delivered: false,
        deliveryStatus: 'not-delivered',
        deliveryError: 'nothing to announce (empty or silent reply)',
      };
    let { channel, to, accountId, threadId } = delivery;
    if (!channel || channel === 'last' || !to) {
      const sessions = await useService<SessionService>(api.kernel, 'sessions');
      const main = sessions ? await sessions.store(agentId).get(sessions.mainKey(agentId)) : undefined;
      if (!channel || channel === 'last') {
        channel = main?.lastChannel;
        accountId ??= main?.lastAccountId;
        threadId ??= main?.lastThreadId;
      }
      to ??= main?.lastChannel === channel ? main?.lastTo : undefined;
    }
    if (!channel || !to) {
      return {
        delivered: false,
        deliveryStatus: 'not-delivered',
        deliveryError: `no delivery target: ${!channel ? 'the main session has no last channel yet' : `no "to" for channel ${channel}`} (set --channel and --to)`,
      };
    }
    const result = (await api.kernel.channels.send({
      channel,
      to,
      ...(accountId ? { accountId } : {}),
      ...(threadId !== undefined ? { threadId: String(threadId) } : {}),
      text,
      context: { agentId, sessionKey, runId, channel },
    } as never)) as { delivered: boolean; cancelled: boolean; error?: string };
    if (result.delivered) return { delivered: true, deliveryStatus: 'delivered' };
    return {
      delivered: false,
      deliveryStatus: 'not-delivered',
      deliveryError: result.cancelled ? 'cancelled by a message_sending hook' : (result.error ?? 'not delivered'),
    };
  }

  return (job, ctx) => {
    if (job.sessionTarget === 'main') return runMain(job, ctx);
    if (job.payload.kind === 'command') return runCommand(job, ctx);
    return runAgentTurn(job, ctx);
  };
}
