/**
 * The "exec-approvals" service the kernel's approval step asks. It judges a host command
 * against every policy layer; when a person must decide, it publishes
 * `exec.approval.requested`, waits for `exec.approval.resolve` and falls back to
 * askFallback when no one can answer or the wait runs out.
 */
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { parseSessionKey, type SessionService } from '../../sdk/sessions/index.js';
import { type KernelServices, type ToolApprover, type ToolContext, isSecretKey, MASK } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { addAllowlistEntry, readDocument, updateDocument, type ApprovalsDocument } from './file.js';
import { EXEC_ENV_SERVICE, LAUNCHERS_SERVICE, type ExecEnvService, type Launchers } from '../../sdk/exec/index.js';
import { gitProblem } from './git-check.js';
import { analyze, type Segment } from './match.js';
import { elevatedRefusal } from './elevated.js';
import { addMcpGrant, mcpCall, mcpGrant, mcpNeedsAsking } from './mcp.js';
import {
  agentPolicy,
  combinedVerdict,
  execConfigFor,
  fallbackAllows,
  type CommandFacts,
  type Policy,
} from './policy.js';

export type Decision = 'allow-once' | 'allow-always' | 'deny';
export const DECISIONS: readonly Decision[] = ['allow-once', 'allow-always', 'deny'];

export interface ApprovalRequest {
  command: string;
  cwd: string;
  host: string;
  agentId: string;
  sessionKey?: string;
  security: string;
  ask: string;
  /** The call's own env (secret values masked): part of what runs. */
  env?: Record<string, string>;
  /** What whoever decides should know: launchers, a repository config that runs programs. */
  warnings?: string[];
  /** host "node": the node it runs on and the plan the node prepared (OpenClaw's fields). */
  nodeId?: string;
  systemRunPlan?: { argv: string[]; cwd: string | null; commandText: string };
  /** An MCP tool call (plugins/mcp): `command` shows it as `<server>__<tool> <arguments>`. */
  kind?: 'mcp';
  mcp?: { server: string; tool: string; arguments: Record<string, unknown>; annotations: Record<string, unknown> };
}

export interface PendingApproval {
  id: string;
  request: ApprovalRequest;
  createdAtMs: number;
  expiresAtMs: number;
}

/** Why an approval ended, in OpenClaw's terms (its approval.* methods report them). */
export type SettleReason = 'user' | 'timeout' | 'no-route' | 'run-aborted' | 'gateway-restart';

/** A decided or lapsed approval, kept (the last MAX_SETTLED) for approval.get and approval.history. */
export interface SettledApproval extends PendingApproval {
  /** null: nobody decided in time, or nobody could be asked. */
  decision: Decision | null;
  reason: SettleReason;
  resolvedAtMs: number;
}

interface Waiting extends PendingApproval {
  settle(decision: Decision | null, reason: SettleReason): void;
  /** exec.approval.waitDecision callers. */
  waiters: Array<(decision: Decision | null) => void>;
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, String(item)]));
}

/** Git segments an allowlist cannot vouch for get their problem attached (see git-check.ts). */
async function markGitProblems(
  segments: Segment[],
  cwd: string,
  env: Record<string, string> | undefined,
  execEnv: ExecEnvService,
): Promise<void> {
  const runEnv = execEnv.hostEnv(env);
  for (const segment of segments) {
    const problem = await gitProblem(segment, cwd, runEnv, execEnv);
    if (problem) segment.problem = problem;
  }
}

/** For the approval prompt: launchers (run on the host, no sandbox) and segments with a problem. */
function approvalWarnings(segments: Segment[] | undefined, launchers: Launchers): string[] {
  const warnings: string[] = [];
  for (const segment of segments ?? []) {
    const program = segment.resolvedPath ?? segment.argv[0]!;
    if (launchers.isLauncher(program)) warnings.push(launchers.warning(program));
    if (segment.problem) warnings.push(segment.problem);
  }
  return [...new Set(warnings)];
}

/** The policy said no; name the segment that could not be covered when there is a reason. */
function denyReason(segments: Segment[] | undefined): string {
  const problem = segments?.find((segment) => segment.problem)?.problem;
  const base = 'the exec policy (tools.exec.security / exec-approvals.json) does not allow this command on the host.';
  return problem ? `${base} Not covered by the allowlist: ${problem}.` : base;
}

/** How far up a spawnedBy chain to look (a loop in the store must not hang a tool call). */
const MAX_ANCESTORS = 16;
/** Settled approvals remembered, so a repeated resolve can say what happened to the id. */
const MAX_SETTLED = 512;

export type ResolveOutcome = 'resolved' | 'same' | 'conflict' | 'expired' | 'unknown';

export class ExecApprovalService implements ToolApprover {
  private readonly pending = new Map<string, Waiting>();
  /** id → the decision, or null when it expired undecided. */
  private readonly settled = new Map<string, SettledApproval>();

  /** Posts a new request to chats (approvals.exec) and resolves to how many took it; undefined when none would. */
  forward?: (approval: PendingApproval) => Promise<number> | undefined;

  constructor(
    private readonly kernel: Pick<
      KernelServices,
      'config' | 'paths' | 'protocol' | 'env' | 'capabilities' | 'redact' | 'plugins'
    >,
    private readonly timeoutMs: number,
  ) {}

  /**
   * The sessions plugin's stores, asked when a session must be read (its ancestors, its
   * elevated settings). Without the service this throws, and the kernel's approval step
   * refuses the call: a child session's parents cannot be checked, so nothing is approved.
   */
  private sessions(): Promise<SessionService> {
    return requireService<SessionService>(this.kernel, 'sessions', 'exec approvals');
  }

  /** Exec's env policy and host environment (plugin tools-exec): the command is judged as exec runs it. */
  private execEnv(): Promise<ExecEnvService> {
    return requireService<ExecEnvService>(this.kernel, EXEC_ENV_SERVICE, 'exec approvals');
  }

  /** Which programs are launchers: the host's list, which `claw security audit` judges allowlists by too. */
  launchers(): Promise<Launchers> {
    return requireService<Launchers>(this.kernel, LAUNCHERS_SERVICE, 'exec approvals');
  }

  document(): ApprovalsDocument {
    return readDocument(this.kernel.paths.stateDir);
  }

  /** The session's own policy, then each ancestor's: a child is held to all of them. */
  async layers(agentId: string, sessionKey: string | undefined): Promise<Policy[]> {
    const doc = this.document();
    const config = this.kernel.config() as Record<string, unknown>;
    const layers = [agentPolicy(execConfigFor(config, agentId), doc, agentId)];
    const seen = new Set<string>();
    let key = sessionKey;
    let agent = agentId;
    while (key && !seen.has(key) && seen.size < MAX_ANCESTORS) {
      seen.add(key);
      const entry = await (await this.sessions()).store(agent).get(key);
      const parent = entry?.spawnedBy;
      if (!parent) break;
      agent = parseSessionKey(parent).agentId ?? agent;
      layers.push(agentPolicy(execConfigFor(config, agent), doc, agent));
      key = parent;
    }
    return layers;
  }

  async authorize(
    raw: Record<string, unknown>,
    context: ToolContext & { toolName: string },
  ): ReturnType<ToolApprover['authorize']> {
    const command = String(raw.command ?? '');
    const cwd = String(raw.cwd ?? '');
    const agentId = context.agentId ?? 'main';
    if (raw.host === 'node') return this.authorizeNode(raw, context);
    if (raw.kind === 'mcp') return this.authorizeMcp(raw, context);
    const refusal = await this.refusedUpFront(raw, context, agentId);
    if (refusal) return { allowed: false, reason: refusal };
    const env = stringRecord(raw.env);
    const layers = await this.layers(agentId, context.sessionKey);
    // The call's own `ask` is one more layer: it can only harden what the others say.
    if (raw.ask === 'on-miss' || raw.ask === 'always')
      layers.push({ ...layers[0]!, security: 'full', ask: raw.ask, askFallback: 'full' });
    const segments = analyze(command, cwd, typeof raw.path === 'string' ? raw.path : undefined);
    // Only an allowlist or a person looks at segments; `full` with no asking runs anything anyway.
    const judged = layers.some((layer) => layer.security === 'allowlist' || layer.ask !== 'off');
    if (segments && judged) await markGitProblems(segments, cwd, env, await this.execEnv());
    const launchers = await this.launchers();
    const facts: CommandFacts = { segments, cwd, home: homedir(), isLauncher: launchers.isLauncher };
    const verdict = combinedVerdict(layers, facts);
    if (verdict === 'allow') return { allowed: true };
    if (verdict === 'deny') return { allowed: false, reason: denyReason(segments) };
    const strictest = layers.reduce((a, b) =>
      a.security === 'deny' || (a.security === 'allowlist' && b.security === 'full') ? a : b,
    );
    const warnings = approvalWarnings(segments, launchers);
    const request: ApprovalRequest = {
      command,
      cwd,
      host: String(raw.host ?? 'gateway'),
      agentId,
      ...(context.sessionKey ? { sessionKey: context.sessionKey } : {}),
      security: strictest.security,
      ask: layers.map((l) => l.ask).includes('always') ? 'always' : 'on-miss',
      ...(env && Object.keys(env).length > 0 ? { env: this.maskEnv(env) } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
    const { decision, reached } = await this.ask(request, context.signal);
    if (decision === null) {
      return fallbackAllows(layers, facts)
        ? { allowed: true }
        : {
            allowed: false,
            reason: reached
              ? 'no one approved it in time (askFallback: deny).'
              : 'no approval client is connected to ask (askFallback: deny).',
          };
    }
    if (decision === 'deny') return { allowed: false, reason: 'an operator denied it.' };
    if (decision === 'allow-always') await this.rememberAlways(agentId, facts);
    return { allowed: true };
  }

  /**
   * What refuses a call before any policy is read: elevated mode where it is not permitted, and
   * an env exec would refuse anyway (no one should be asked about a command that cannot run as shown).
   */
  private async refusedUpFront(
    raw: Record<string, unknown>,
    context: ToolContext & { toolName: string },
    agentId: string,
  ): Promise<string | undefined> {
    if (raw.elevated === true) {
      const session = context.sessionKey
        ? await (await this.sessions()).store(agentId).get(context.sessionKey)
        : undefined;
      const refusal = elevatedRefusal(this.kernel.config() as Record<string, unknown>, agentId, session);
      if (refusal) return refusal;
    }
    return (await this.execEnv()).envRefusal(stringRecord(raw.env), context, { elevated: raw.elevated });
  }

  /**
   * host "node": the command runs on another machine, so this gateway's allowlist (paths on
   * this host) cannot vouch for it; the owner's security and ask levels still bind it, and a
   * node's own policy can only add to them. Without a plan (the kernel's step, before the node
   * is contacted) only an outright deny refuses; with the node's plan a person is asked when
   * the policy or the node wants one. The decision goes back to exec, which hands it to the
   * node (an allow-always is kept there, not in this gateway's allowlist).
   */
  private async authorizeNode(
    raw: Record<string, unknown>,
    context: ToolContext & { toolName: string },
  ): Promise<{ allowed: boolean; reason?: string; decision?: Decision }> {
    const agentId = context.agentId ?? 'main';
    const refusal = await this.refusedUpFront(raw, context, agentId);
    if (refusal) return { allowed: false, reason: refusal };
    const env = stringRecord(raw.env);
    const layers = await this.layers(agentId, context.sessionKey);
    if (raw.ask === 'on-miss' || raw.ask === 'always')
      layers.push({ ...layers[0]!, security: 'full', ask: raw.ask, askFallback: 'full' });
    if (layers.some((layer) => layer.security === 'deny'))
      return {
        allowed: false,
        reason: 'the exec policy (tools.exec.security / exec-approvals.json) denies host commands, on nodes too.',
      };
    const plan = raw.systemRunPlan as ApprovalRequest['systemRunPlan'] | undefined;
    if (!plan) return { allowed: true };
    const nodeSecurity = (raw.nodePolicy as { security?: unknown } | undefined)?.security;
    const askAlways = layers.some((layer) => layer.ask === 'always');
    const askOnMiss = layers.some((layer) => layer.ask === 'on-miss');
    // allowlist here: the node's own allowlist judges the command when its policy is allowlist
    // (a miss comes back as "approval required" or a refusal); a node that runs anything cannot.
    const unvouched =
      layers.some((layer) => layer.security === 'allowlist') && nodeSecurity !== 'allowlist' && nodeSecurity !== 'deny';
    const nodeAsks = raw.nodeAsks === true;
    if (!nodeAsks && !askAlways && !unvouched) return { allowed: true };
    if (!nodeAsks && !askAlways && !askOnMiss)
      return {
        allowed: false,
        reason:
          'the exec policy is allowlist with ask off, and this gateway cannot match its allowlist against another machine; ' +
          'allowlist the command on the node (its own exec approvals) or set ask on-miss.',
      };
    const nodeName = String(raw.nodeName ?? raw.nodeId ?? 'node');
    const warnings = [
      `Runs on node ${nodeName}${raw.nodeId && raw.nodeId !== nodeName ? ` (${String(raw.nodeId)})` : ''}: ` +
        `${JSON.stringify(plan.argv)}${plan.cwd ? ` in ${plan.cwd}` : ''}` +
        (nodeAsks ? ' — the node asks for approval under its own exec policy.' : ''),
    ];
    const request: ApprovalRequest = {
      command: plan.commandText,
      cwd: plan.cwd ?? '',
      host: 'node',
      agentId,
      ...(context.sessionKey ? { sessionKey: context.sessionKey } : {}),
      security: layers.some((layer) => layer.security === 'allowlist') ? 'allowlist' : 'full',
      ask: askAlways || nodeAsks ? 'always' : 'on-miss',
      ...(env && Object.keys(env).length > 0 ? { env: this.maskEnv(env) } : {}),
      warnings,
      ...(typeof raw.nodeId === 'string' ? { nodeId: raw.nodeId } : {}),
      systemRunPlan: plan,
    };
    const { decision, reached } = await this.ask(request, context.signal);
    if (decision === null) {
      // No answer: only a fallback of full on every layer runs it, and never past a node that asked.
      const facts: CommandFacts = { segments: undefined, cwd: request.cwd, home: homedir(), isLauncher: () => true };
      if (!nodeAsks && fallbackAllows(layers, facts)) return { allowed: true };
      return {
        allowed: false,
        reason: reached
          ? 'no one approved it in time (askFallback: deny).'
          : 'no approval client is connected to ask (askFallback: deny).',
      };
    }
    if (decision === 'deny') return { allowed: false, reason: 'an operator denied it.' };
    return { allowed: true, decision };
  }

  /** An MCP tool call: see mcp.ts for when a person decides; allow-always saves a grant for the tool. */
  private async authorizeMcp(
    raw: Record<string, unknown>,
    context: ToolContext & { toolName: string },
  ): Promise<{ allowed: boolean; reason?: string }> {
    const agentId = context.agentId ?? 'main';
    const call = mcpCall(raw);
    if (call.mode === 'approve') return { allowed: true };
    const layers = await this.layers(agentId, context.sessionKey);
    if (!mcpNeedsAsking(call, layers, mcpGrant(this.document(), agentId, call) !== undefined)) return { allowed: true };
    const args = this.kernel.redact.value(call.arguments);
    const request: ApprovalRequest = {
      command: `${context.toolName} ${JSON.stringify(args)}`,
      cwd: '',
      host: 'gateway',
      agentId,
      ...(context.sessionKey ? { sessionKey: context.sessionKey } : {}),
      security: 'full',
      ask: call.mode === 'prompt' || layers.some((layer) => layer.ask === 'always') ? 'always' : 'on-miss',
      warnings: [
        `MCP tool ${call.tool} of server ${call.server}` +
          (call.annotations.destructiveHint === true ? ' (the server marks it destructive)' : ''),
      ],
      kind: 'mcp',
      mcp: { server: call.server, tool: call.tool, arguments: args, annotations: call.annotations },
    };
    const { decision, reached } = await this.ask(request, context.signal);
    if (decision === null)
      return {
        allowed: false,
        reason: reached ? 'no one approved it in time.' : 'no approval client is connected to ask.',
      };
    if (decision === 'deny') return { allowed: false, reason: 'an operator denied it.' };
    if (decision === 'allow-always')
      await updateDocument(this.kernel.paths.stateDir, (doc) => addMcpGrant(doc, agentId, call));
    return { allowed: true };
  }

  /** Values of secret-named variables, and known secrets anywhere, are not shown to approvers. */
  private maskEnv(env: Record<string, string>): Record<string, string> {
    const masked = Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, isSecretKey(name) ? MASK : value]),
    );
    return this.kernel.redact.value(masked);
  }

  /** Publish the request and wait; no client reached means no one can answer: null at once. */
  private ask(
    request: ApprovalRequest,
    signal: AbortSignal | undefined,
  ): Promise<{ decision: Decision | null; reached: boolean }> {
    const createdAtMs = Date.now();
    const id = randomUUID();
    return new Promise((resolve) => {
      let reached = false;
      const timer = setTimeout(() => settle(null, 'timeout'), this.timeoutMs);
      const onAbort = () => settle('deny', 'run-aborted');
      const settle = (decision: Decision | null, reason: SettleReason) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        this.settled.set(id, { ...this.publicView(waiting), decision, reason, resolvedAtMs: Date.now() });
        if (this.settled.size > MAX_SETTLED) this.settled.delete(this.settled.keys().next().value!);
        signal?.removeEventListener('abort', onAbort);
        this.kernel.protocol.emit('exec.approval.resolved', {
          id,
          decision: decision ?? 'deny',
          ...(decision === null ? { reason: reached ? 'timeout' : 'no-approver' } : {}),
          ts: Date.now(),
        });
        resolve({ decision, reached });
        for (const waiter of waiting.waiters) waiter(decision);
      };
      const waiting: Waiting = {
        id,
        request,
        createdAtMs,
        expiresAtMs: createdAtMs + this.timeoutMs,
        settle,
        waiters: [],
      };
      this.pending.set(id, waiting);
      signal?.addEventListener('abort', onAbort, { once: true });
      reached = this.kernel.protocol.emit('exec.approval.requested', this.publicView(waiting)) > 0;
      const forwarding = this.forward?.(this.publicView(waiting));
      if (!forwarding) {
        if (!reached) settle(null, 'no-route');
        return;
      }
      // A chat that took the request has someone who can /approve it: it counts as reached.
      void forwarding
        .catch(() => 0)
        .then((sent) => {
          if (sent > 0) reached = true;
          else if (!reached) settle(null, 'no-route');
        });
    });
  }

  /** allow-always: this exact argv, in this directory, from now on. */
  private async rememberAlways(agentId: string, facts: CommandFacts): Promise<void> {
    if (!facts.segments || facts.segments.some((segment) => !segment.resolvedPath)) return;
    const segments = facts.segments;
    await updateDocument(this.kernel.paths.stateDir, (doc) => {
      let changed = false;
      for (const segment of segments) {
        const args = segment.argv
          .slice(1)
          .join(' ')
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        changed =
          addAllowlistEntry(doc, agentId, {
            pattern: segment.resolvedPath!,
            argPattern: `^${args}$`,
            cwd: facts.cwd,
            source: 'allow-always',
            lastUsedAt: Date.now(),
          }) || changed;
      }
      return changed;
    });
  }

  private publicView(waiting: Waiting): PendingApproval {
    const { id, request, createdAtMs, expiresAtMs } = waiting;
    return { id, request, createdAtMs, expiresAtMs };
  }

  list(): PendingApproval[] {
    return [...this.pending.values()].map((waiting) => this.publicView(waiting));
  }

  get(id: string): PendingApproval | undefined {
    const waiting = this.pending.get(id);
    return waiting && this.publicView(waiting);
  }

  /** Decide a pending approval; a repeat of the recorded decision is "same", a different one "conflict". */
  resolve(id: string, decision: Decision): ResolveOutcome {
    const waiting = this.pending.get(id);
    if (waiting) {
      waiting.settle(decision, 'user');
      return 'resolved';
    }
    if (!this.settled.has(id)) return 'unknown';
    const recorded = this.settled.get(id)!.decision;
    if (recorded === null) return 'expired';
    return recorded === decision ? 'same' : 'conflict';
  }

  /** The recorded decision of a settled approval (null: expired). */
  outcome(id: string): Decision | null | undefined {
    return this.settled.get(id)?.decision;
  }

  /** A settled approval's record, if still kept. */
  settledRecord(id: string): SettledApproval | undefined {
    return this.settled.get(id);
  }

  /** The settled approvals still kept, newest first. */
  history(): SettledApproval[] {
    return [...this.settled.values()].reverse();
  }

  /** Wait for a pending approval's decision; null when it expires first. */
  waitDecision(id: string): Promise<Decision | null> | undefined {
    const waiting = this.pending.get(id);
    if (!waiting) return undefined;
    return new Promise((resolve) => waiting.waiters.push(resolve));
  }

  /** Deny everything still waiting (the plugin stops). */
  close(): void {
    for (const waiting of [...this.pending.values()]) waiting.settle('deny', 'gateway-restart');
  }
}
