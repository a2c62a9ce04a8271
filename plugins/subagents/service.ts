/**
 * Sub-agents: spawn a child run in its own session on the `subagent` lane, track it in the
 * registry, and when it ends announce the result into the requester's session (whose reply
 * is relayed to the requester's channel). Limits, the agent allow list and the sandbox rule
 * are checked before anything is created; a refusal creates nothing.
 */
import { randomUUID } from 'node:crypto';
import type { PluginApi } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import {
  normalizeAgentId,
  parseSessionKey,
  subagentDepth,
  unknownAgentProblem,
  isSilentReplyText,
  type AgentService,
  type RunResult,
  type SessionService,
} from '../../sdk/agent/index.js';
import { subagentSettings } from './settings.js';
import { ANNOUNCE_SKIP, announceMessage, subagentSystemPrompt } from './prompt.js';
import { SubagentRegistry, type RequesterOrigin, type SubagentRunRecord } from './registry.js';
import { SubagentHooks } from './hooks.js';

export interface SpawnParams {
  task: string;
  label?: string;
  agentId?: string;
  model?: string;
  thinking?: string;
  runTimeoutSeconds?: number;
  cleanup?: 'delete' | 'keep';
}

export interface Requester {
  agentId?: string;
  sessionKey?: string;
}

export type SpawnOutcome =
  | { status: 'accepted'; childSessionKey: string; runId: string; note: string }
  | { status: 'forbidden' | 'error'; error: string };

/** A refusal the caller should see as it is (limits, allow list, sandbox). */
export class SpawnRefusal extends Error {}

export class SubagentService {
  readonly registry: SubagentRegistry;
  readonly hooks: SubagentHooks;
  private readonly finishing = new Map<string, Promise<void>>();
  private archiveTimer?: NodeJS.Timeout;

  constructor(private readonly api: PluginApi) {
    this.hooks = new SubagentHooks((hook, error) => api.logger.error(`${hook} handler failed: ${error.message}`));
    this.registry = new SubagentRegistry(api.kernel.paths.stateDir);
    this.registry.load();
  }

  private agent(): Promise<AgentService> {
    return requireService<AgentService>(this.api.kernel, 'agent', 'sub-agents');
  }

  private sessions(): Promise<SessionService> {
    return requireService<SessionService>(this.api.kernel, 'sessions', 'sub-agents');
  }

  /** The requester's full key and agent (a call without a session speaks for the default agent's main session). */
  async requesterOf(requester: Requester): Promise<{ agentId: string; sessionKey: string }> {
    return (await this.sessions()).resolveTarget({ agentId: requester.agentId, sessionKey: requester.sessionKey });
  }

  async spawn(requester: Requester, params: SpawnParams): Promise<SpawnOutcome> {
    try {
      return await this.spawnChecked(requester, params);
    } catch (error) {
      if (error instanceof SpawnRefusal) return { status: 'forbidden', error: error.message };
      throw error;
    }
  }

  private async spawnChecked(requester: Requester, params: SpawnParams): Promise<SpawnOutcome> {
    const config = this.api.kernel.config();
    const sessions = await this.sessions();
    const { agentId: requesterAgentId, sessionKey: requesterSessionKey } = await this.requesterOf(requester);
    const task = params.task?.trim();
    if (!task) throw new SpawnRefusal('sessions_spawn needs a non-empty task.');
    const limits = subagentSettings(config, requesterAgentId);
    const depth = subagentDepth(requesterSessionKey);
    if (depth >= limits.maxSpawnDepth) {
      throw new SpawnRefusal(
        `sessions_spawn is not allowed at depth ${depth}: agents.defaults.subagents.maxSpawnDepth is ${limits.maxSpawnDepth}, so ${depth === 0 ? 'no session' : 'this sub-agent'} may spawn further.`,
      );
    }
    const active = this.registry.activeFor(requesterSessionKey).length;
    if (active >= limits.maxChildrenPerAgent) {
      throw new SpawnRefusal(
        `sessions_spawn refused: this session already has ${active} sub-agents running (agents.defaults.subagents.maxChildrenPerAgent is ${limits.maxChildrenPerAgent}); wait for one to finish or kill one.`,
      );
    }
    const childAgentId = normalizeAgentId(params.agentId ?? requesterAgentId);
    if (childAgentId !== normalizeAgentId(requesterAgentId)) {
      if (!limits.allowAgents.includes('*') && !limits.allowAgents.includes(childAgentId)) {
        throw new SpawnRefusal(
          `agentId "${childAgentId}" is not allowed: agent "${requesterAgentId}" may spawn only ${['itself', ...limits.allowAgents].join(', ')} (agents.list[].subagents.allowAgents).`,
        );
      }
      const unknown = unknownAgentProblem(config, childAgentId);
      if (unknown) throw new SpawnRefusal(`sessions_spawn: ${unknown}`);
    }
    const base =
      depth === 0 ? `agent:${childAgentId}` : `agent:${childAgentId}:${parseSessionKey(requesterSessionKey).rest}`;
    const childSessionKey = `${base}:subagent:${randomUUID()}`;
    // A child never runs with less confinement than its requester.
    const router = await requireService<SandboxRouter>(this.api.kernel, SANDBOX_ROUTE_SERVICE, 'sessions_spawn');
    const route = (agentId: string, sessionKey: string) =>
      router.route(config, { agentId, sessionKey, workspaceDir: '', stateDir: this.api.kernel.paths.stateDir });
    if (route(requesterAgentId, requesterSessionKey).sandboxed && !route(childAgentId, childSessionKey).sandboxed) {
      throw new SpawnRefusal(
        `sessions_spawn refused: this session is sandboxed and agent "${childAgentId}" would run the child outside a sandbox.`,
      );
    }

    const requesterEntry = await sessions.store(requesterAgentId).get(requesterSessionKey);
    const origin: RequesterOrigin | undefined = requesterEntry?.deliveryContext?.channel
      ? { ...requesterEntry.deliveryContext }
      : requesterEntry?.lastChannel && requesterEntry.lastTo
        ? {
            channel: requesterEntry.lastChannel,
            to: requesterEntry.lastTo,
            accountId: requesterEntry.lastAccountId,
            threadId: requesterEntry.lastThreadId,
          }
        : undefined;
    const store = sessions.store(childAgentId);
    const entry = await store.upsert(childSessionKey, {
      spawnedBy: requesterSessionKey,
      spawnDepth: depth + 1,
      ...(params.label ? { label: params.label } : {}),
    });
    const spawning = await this.hooks.spawning({
      agentId: childAgentId,
      childSessionKey,
      label: params.label,
      requesterSessionKey,
      requester: origin,
    });
    if (spawning.error) {
      await store.delete(childSessionKey);
      throw new SpawnRefusal(`sessions_spawn refused by a subagent_spawning hook: ${spawning.error}`);
    }

    const model = params.model ?? limits.model;
    const thinking = params.thinking ?? limits.thinking;
    const runTimeoutSeconds = params.runTimeoutSeconds ?? limits.runTimeoutSeconds;
    const agent = await this.agent();
    agent.sessionChanged(childSessionKey, entry);
    const handle = await agent
      .dispatch({
        agentId: childAgentId,
        sessionKey: childSessionKey,
        message: task,
        extraSystemPrompt: subagentSystemPrompt({
          requesterSessionKey,
          childSessionKey,
          task,
          label: params.label,
          childDepth: depth + 1,
          maxSpawnDepth: limits.maxSpawnDepth,
        }),
        lane: 'subagent',
        queueMode: 'followup',
        // This registry reports a child cut off by a restart; the intake journal must not rerun it.
        callerJournaled: true,
        ...(model ? { model } : {}),
        ...(thinking ? { thinking: thinking as never } : {}),
        ...(runTimeoutSeconds > 0 ? { timeoutMs: runTimeoutSeconds * 1000 } : {}),
      })
      .catch(async (error: Error) => {
        // Not started (the gateway is stopping): leave no session behind.
        await store.delete(childSessionKey);
        throw error;
      });
    const record: SubagentRunRecord = {
      runId: handle.runId,
      childSessionKey,
      childAgentId,
      requesterSessionKey,
      requesterAgentId,
      ...(origin ? { requesterOrigin: origin } : {}),
      task,
      ...(params.label ? { label: params.label } : {}),
      cleanup: params.cleanup ?? 'keep',
      ...(model ? { model } : {}),
      ...(runTimeoutSeconds > 0 ? { runTimeoutSeconds } : {}),
      createdAt: handle.acceptedAt,
      startedAt: handle.acceptedAt,
      status: 'running',
    };
    await this.registry.add(record);
    this.track(record.runId, handle.done);
    await this.hooks.spawned({
      runId: record.runId,
      agentId: childAgentId,
      childSessionKey,
      label: params.label,
      requesterSessionKey,
    });
    return {
      status: 'accepted',
      childSessionKey,
      runId: record.runId,
      note: 'The sub-agent runs in the background and its result is announced to this session when it ends; do not poll for it.',
    };
  }

  private track(runId: string, done: Promise<RunResult>): void {
    const finished = done.then(
      (result) => this.finish(runId, result),
      (error: Error) =>
        this.finish(runId, {
          status: 'error',
          error: error.message,
          text: '',
          usage: undefined,
        } as unknown as RunResult),
    );
    const settled = finished
      .catch((error: Error) => this.api.logger.error(`sub-agent ${runId}: ${error.message}`))
      .finally(() => this.finishing.delete(runId));
    this.finishing.set(runId, settled);
  }

  /** Resolves when every child this process is following has ended and announced (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.finishing.size > 0) await Promise.all([...this.finishing.values()]);
  }

  private async finish(runId: string, result: RunResult): Promise<void> {
    const run = this.registry.get(runId);
    if (!run || run.endedAt !== undefined) return; // killed: already ended, no announce
    const text = result.text ?? '';
    const skip = text.trim() === ANNOUNCE_SKIP;
    await this.registry.update(runId, {
      endedAt: result.endedAt ?? Date.now(),
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
      result: skip ? '' : text,
      ...(result.usage ? { usage: { input: result.usage.input, output: result.usage.output } } : {}),
      ...(skip ? { suppressAnnounceReason: 'announce-skip' as const } : {}),
    });
    await this.announceAndClean(run);
  }

  /** Deliver the announce (unless suppressed), then cleanup and subagent_ended. */
  private async announceAndClean(run: SubagentRunRecord): Promise<void> {
    if (!run.suppressAnnounceReason && run.announcedAt === undefined) await this.announce(run);
    await this.registry.update(run.runId, { announcedAt: run.announcedAt ?? Date.now() });
    if (run.cleanup === 'delete') await this.deleteChildSession(run);
    await this.hooks.ended({
      runId: run.runId,
      childSessionKey: run.childSessionKey,
      requesterSessionKey: run.requesterSessionKey,
      status: run.status,
      reason: run.suppressAnnounceReason ?? run.status,
    });
  }

  private async deleteChildSession(run: SubagentRunRecord): Promise<void> {
    const sessions = await this.sessions();
    await sessions.store(run.childAgentId).delete(run.childSessionKey);
    (await this.agent()).sessionChanged(run.childSessionKey, undefined);
  }

  /**
   * The requester's session gets the announce as a turn; a top-level requester's reply goes
   * on to its channel unless it is ANNOUNCE_SKIP. A requester sub-agent whose session is gone
   * hands the announce up to its own requester.
   */
  private async announce(run: SubagentRunRecord): Promise<void> {
    const sessions = await this.sessions();
    let target = { agentId: run.requesterAgentId, sessionKey: run.requesterSessionKey, origin: run.requesterOrigin };
    for (let hops = 0; hops < 8 && subagentDepth(target.sessionKey) > 0; hops++) {
      if (await sessions.store(target.agentId).get(target.sessionKey)) break;
      const parent = this.registry.byChildKey(target.sessionKey);
      if (!parent) break;
      target = {
        agentId: parent.requesterAgentId,
        sessionKey: parent.requesterSessionKey,
        origin: parent.requesterOrigin,
      };
    }
    const override = await this.hooks.deliveryTarget({
      childSessionKey: run.childSessionKey,
      requesterSessionKey: target.sessionKey,
      requesterOrigin: target.origin,
    });
    const origin = override ?? target.origin;
    const child = await sessions.store(run.childAgentId).get(run.childSessionKey);
    const agent = await this.agent();
    const handle = await agent.dispatch({
      agentId: target.agentId,
      sessionKey: target.sessionKey,
      message: announceMessage(run, child?.sessionId),
      queueMode: 'followup',
      lane: subagentDepth(target.sessionKey) > 0 ? 'subagent' : 'main',
    });
    const result = await handle.done;
    const reply = result.text?.trim() ?? '';
    if (subagentDepth(target.sessionKey) > 0 || !origin?.channel || !origin.to || result.status !== 'ok') return;
    if (!reply || reply === ANNOUNCE_SKIP || isSilentReplyText(reply)) return;
    const sent = await this.api.kernel.channels.send({
      channel: origin.channel,
      to: origin.to,
      ...(origin.accountId ? { accountId: origin.accountId } : {}),
      ...(origin.threadId !== undefined ? { threadId: String(origin.threadId) } : {}),
      text: reply,
      context: { agentId: target.agentId, sessionKey: target.sessionKey, runId: result.runId },
    });
    if (!sent.delivered && !sent.cancelled)
      this.api.logger.error(
        `sub-agent ${run.runId}: the announce reply to ${origin.channel}:${origin.to} failed: ${sent.error}`,
      );
  }

  /** Stop a run and, first, everything it spawned; killed runs announce nothing. */
  async kill(runId: string): Promise<{ killed: number; labels: string[] }> {
    const run = this.registry.get(runId);
    if (!run) return { killed: 0, labels: [] };
    let killed = 0;
    const labels: string[] = [];
    for (const child of this.registry.forRequester(run.childSessionKey)) {
      const below = await this.kill(child.runId);
      killed += below.killed;
      labels.push(...below.labels);
    }
    if (run.endedAt === undefined) {
      await this.registry.update(runId, {
        endedAt: Date.now(),
        status: 'killed',
        suppressAnnounceReason: 'killed',
        announcedAt: Date.now(),
      });
      (await this.agent()).stop(run.childSessionKey, 'killed');
      killed++;
      labels.push(run.label ?? run.runId);
      await this.hooks.ended({
        runId,
        childSessionKey: run.childSessionKey,
        requesterSessionKey: run.requesterSessionKey,
        status: 'killed',
        reason: 'killed',
      });
    }
    return { killed, labels };
  }

  /** Guidance into a running child: it steers the active run, or starts the next one. */
  async steer(runId: string, message: string): Promise<{ status: string; runId: string }> {
    const run = this.registry.get(runId);
    if (!run) throw new Error(`no sub-agent run ${runId}`);
    const handle = await (
      await this.agent()
    ).dispatch({
      agentId: run.childAgentId,
      sessionKey: run.childSessionKey,
      message,
      queueMode: 'steer',
      lane: 'subagent',
    });
    return { status: handle.status, runId: handle.runId };
  }

  /**
   * At start: runs this registry holds that never ended were cut off by the restart (their
   * process is gone): report each to its requester as interrupted. Ended runs whose
   * announce did not go out get it now.
   */
  async restore(): Promise<void> {
    for (const run of this.registry.all()) {
      if (run.endedAt === undefined) {
        await this.registry.update(run.runId, {
          endedAt: Date.now(),
          status: 'interrupted',
          interrupted: true,
          error: 'the gateway restarted while the sub-agent was running',
        });
      }
      if (run.announcedAt === undefined) {
        const settled = this.announceAndClean(run)
          .catch((error: Error) => this.api.logger.error(`sub-agent ${run.runId}: ${error.message}`))
          .finally(() => this.finishing.delete(run.runId));
        this.finishing.set(run.runId, settled);
      }
    }
    this.archive();
    this.archiveTimer = setInterval(() => void this.archive(), 60_000);
    this.archiveTimer.unref();
  }

  stop(): void {
    if (this.archiveTimer) clearInterval(this.archiveTimer);
  }

  /** Finished runs older than archiveAfterMinutes leave the registry, with their session entry. */
  async archive(now = Date.now()): Promise<number> {
    const config = this.api.kernel.config();
    const old = this.registry.all().filter((run) => {
      const minutes = subagentSettings(config, run.requesterAgentId).archiveAfterMinutes;
      return (
        run.endedAt !== undefined &&
        run.announcedAt !== undefined &&
        minutes > 0 &&
        now - run.endedAt >= minutes * 60_000
      );
    });
    for (const run of old) if (run.cleanup === 'keep') await this.deleteChildSession(run).catch(() => undefined);
    await this.registry.remove(old.map((run) => run.runId));
    return old.length;
  }

  /** Who a `subagents` caller acts for: a leaf sees its parent's children (its siblings). */
  async listingRequester(requester: Requester): Promise<string> {
    const { agentId, sessionKey } = await this.requesterOf(requester);
    const depth = subagentDepth(sessionKey);
    if (depth > 0 && depth >= subagentSettings(this.api.kernel.config(), agentId).maxSpawnDepth) {
      return this.registry.byChildKey(sessionKey)?.requesterSessionKey ?? sessionKey;
    }
    return sessionKey;
  }

  /** A run by run id (or its prefix), child key, label, or 1-based position in the requester's list. */
  resolveTarget(requesterSessionKey: string, target: string): SubagentRunRecord | undefined {
    const runs = this.registry.forRequester(requesterSessionKey);
    const wanted = target.trim();
    if (/^#?\d+$/.test(wanted)) return runs[Number(wanted.replace('#', '')) - 1];
    return (
      runs.find((run) => run.runId === wanted || run.childSessionKey === wanted || run.label === wanted) ??
      runs.find((run) => run.runId.startsWith(wanted))
    );
  }
}
