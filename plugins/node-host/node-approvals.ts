/**
 * The node's own exec approvals: claw's exec-approvals plugin running in the node host's
 * kernel, over this state dir's exec-approvals.json and `tools.exec` config. The gateway's
 * approval never loosens them: a command is judged here again before it runs.
 *
 * The approver asks a person by publishing `exec.approval.requested`. A node host has no
 * operators of its own to reach, so it listens for that event itself: without a decision
 * carried by the invoke, the ask is cut short and the gateway is told "approval required"
 * (it asks a person, then sends system.run again with the decision); with one — a person's
 * allow-once / allow-always given on the gateway for this very plan — the pending ask is
 * answered with it (allow-always then lands in this node's allowlist, as in OpenClaw).
 */
import { randomUUID } from 'node:crypto';
import type { GatewayMethodDefinition, KernelServices, ToolApprover } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';

export type ApprovalDecision = 'allow-once' | 'allow-always';

export interface ApprovalsSnapshot {
  path: string;
  exists: boolean;
  hash: string;
  file: { version: 1; defaults?: Record<string, unknown>; agents?: Record<string, AgentLevel> };
  resolvedDefaults: { security: string; ask: string; askFallback: string };
  effective: Record<string, { security: string; ask: string; askFallback: string }>;
}

interface AgentLevel {
  allowlist?: Array<{ pattern: string; argPattern?: string; source?: string }>;
}

/** OpenClaw's policySnapshot: what a prepared plan was judged under. */
export interface PolicySnapshot {
  security: string;
  ask: string;
  askFallback: string;
  /** OpenClaw's skill-bin auto-allow; claw's approvals have no such setting, so always false. */
  autoAllowSkills: false;
  allowlistRules: Array<{ pattern: string; argPattern?: string; source?: string }>;
}

export type Judgement = { allowed: true } | { allowed: false; askRequired: boolean; reason: string };

export class NodeApprovals {
  /** The approval currently being judged: the ask it raises is answered by it. */
  private judging?: { decision?: ApprovalDecision; controller: AbortController; asked: boolean };
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly kernel: KernelServices) {
    kernel.protocol.onEmit((emitted) => {
      if (emitted.event !== 'exec.approval.requested' || !this.judging) return 0;
      const current = this.judging;
      const id = (emitted.payload as { id?: string }).id;
      current.asked = true;
      queueMicrotask(() => {
        if (current.decision && id) void this.resolvePending(id, current.decision);
        else current.controller.abort();
      });
      return 1;
    });
  }

  private async method(name: string): Promise<GatewayMethodDefinition> {
    await requireService(this.kernel, 'exec-approvals', 'the node host');
    return this.kernel.capabilities.get('gatewayMethod', name);
  }

  private async resolvePending(id: string, decision: ApprovalDecision): Promise<void> {
    try {
      await (await this.method('exec.approval.resolve')).handler({ id, decision }, {});
    } catch {
      this.judging?.controller.abort();
    }
  }

  async snapshot(): Promise<ApprovalsSnapshot> {
    return (await (await this.method('exec.approvals.get')).handler({}, {})) as ApprovalsSnapshot;
  }

  /** Replace the document; `baseHash` guards against a concurrent edit. Refusals carry the plugin's message. */
  async replace(file: unknown, baseHash: string | undefined): Promise<ApprovalsSnapshot> {
    const method = await this.method('exec.approvals.set');
    return (await method.handler({ file, ...(baseHash ? { baseHash } : {}) }, {})) as ApprovalsSnapshot;
  }

  policy(snapshot: ApprovalsSnapshot, agentId: string | undefined) {
    const effective = snapshot.effective[agentId ?? 'main'] ?? snapshot.effective.main;
    return effective ?? { ...snapshot.resolvedDefaults };
  }

  policySnapshot(snapshot: ApprovalsSnapshot, agentId: string | undefined): PolicySnapshot {
    const { security, ask, askFallback } = this.policy(snapshot, agentId);
    const agents = snapshot.file.agents ?? {};
    const rules = [...(agents['*']?.allowlist ?? []), ...(agents[agentId ?? 'main']?.allowlist ?? [])].map((entry) => ({
      pattern: entry.pattern,
      ...(entry.argPattern !== undefined ? { argPattern: entry.argPattern } : {}),
      ...(entry.source === 'allow-always' ? { source: entry.source } : {}),
    }));
    return { security, ask, askFallback, autoAllowSkills: false, allowlistRules: rules };
  }

  /**
   * Judge `command` (shell text) in `cwd` with `env` for `agentId` under this node's policy;
   * `decision` is a person's answer given on the gateway for this plan.
   */
  judge(
    request: { command: string; cwd: string; env?: Record<string, string>; agentId?: string },
    decision?: ApprovalDecision,
  ): Promise<Judgement> {
    // One at a time: the ask an approver raises must be matched to the command that raised it.
    const run = this.queue.then(() => this.judgeNow(request, decision));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async judgeNow(
    request: { command: string; cwd: string; env?: Record<string, string>; agentId?: string },
    decision: ApprovalDecision | undefined,
  ): Promise<Judgement> {
    const approver = await requireService<ToolApprover>(this.kernel, 'exec-approvals', 'the node host');
    const current = { decision, controller: new AbortController(), asked: false };
    this.judging = current;
    try {
      const verdict = await approver.authorize(
        // No `host`: to the approver this is a command on its own machine (host "node" means the
        // gateway judging a command it sends to a node). PATH is the node host's own (a call's env
        // cannot change it), so a bare name is judged as the program that will run.
        {
          command: request.command,
          cwd: request.cwd,
          path: process.env.PATH ?? '',
          ...(request.env ? { env: request.env } : {}),
        },
        {
          toolName: 'exec',
          toolCallId: randomUUID(),
          agentId: request.agentId ?? 'main',
          signal: current.controller.signal,
        },
      );
      if (verdict.allowed) return { allowed: true };
      return {
        allowed: false,
        askRequired: current.asked && !decision,
        reason: verdict.reason ?? 'the exec policy refused it',
      };
    } finally {
      this.judging = undefined;
    }
  }
}
