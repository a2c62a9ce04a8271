/**
 * exec host=node, as OpenClaw's gateway runs it: the node turns the command into a canonical
 * plan (system.run.prepare), the gateway's own exec approvals judge that plan for the session
 * (the owner's policy: a node never loosens it), then system.run carries the plan. A node
 * whose own policy wants a person answers "approval required": a person is asked through
 * claw's exec approval flow and system.run is sent again with the same plan plus
 * approved/approvalDecision, so the node binds the approval to exactly what was shown (and
 * keeps an allow-always itself). Nothing is re-sent after a node goes away mid-run.
 */
import { randomUUID } from 'node:crypto';
import {
  errorResult,
  NODES_SERVICE,
  NodeInvokeError,
  textResult,
  type KernelServices,
  type NodeInfo,
  type NodeService,
  type ToolApprover,
  type ToolContext,
  type ToolResult,
} from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { formatDuration, shortCommand } from './describe.js';
import { nodeLabel, pickExecNode } from './node-target.js';
import { OutputBuffer } from './output.js';

export interface NodeRunDeps {
  kernel: Pick<KernelServices, 'capabilities'> & Partial<Pick<KernelServices, 'plugins'>>;
  maxOutputChars: number;
}

export interface NodeRunRequest {
  command: string;
  /** The node's own path; unset: the node host's working directory. */
  workdir?: string;
  env?: Record<string, string>;
  /** 0: no limit. */
  timeoutSeconds: number;
  ask?: string;
  /** The node the call names, and the configured binding. */
  node?: string;
  boundNode?: string;
}

/** What system.run.prepare answers (OpenClaw's node host): the plan is sent back unchanged. */
interface PreparedRun {
  plan: Record<string, unknown> & { argv: string[]; commandText: string; cwd?: string | null };
  execPolicy?: { security?: string; ask?: string };
}

type Decision = 'allow-once' | 'allow-always';

/** The slack past the command's own limit before the gateway stops waiting for the node. */
const INVOKE_GRACE_MS = 5_000;
const PREPARE_TIMEOUT_MS = 15_000;

/** OpenClaw's shell per platform: the node runs argv, never a string. */
export function nodeShellArgv(command: string, platform: string | null): string[] {
  const name = (platform ?? '').trim().toLowerCase();
  if (name.startsWith('win')) return ['cmd.exe', '/d', '/s', '/c', command];
  if (name === 'darwin' || name.startsWith('macos')) return ['/bin/sh', '-c', command];
  return ['/bin/sh', '-lc', command];
}

function parsePrepared(payload: unknown): PreparedRun | undefined {
  const raw = payload as { plan?: Record<string, unknown>; execPolicy?: PreparedRun['execPolicy'] } | undefined;
  const plan = raw?.plan;
  if (!plan || !Array.isArray(plan.argv) || plan.argv.length === 0 || typeof plan.commandText !== 'string')
    return undefined;
  return { plan: plan as PreparedRun['plan'], ...(raw.execPolicy ? { execPolicy: raw.execPolicy } : {}) };
}

/**
 * The failure's code when it is a NodeInvokeError. By shape, not instanceof: the service may
 * come from another copy of the SDK module (a plugin loaded from its own folder).
 */
export function invokeErrorCode(error: unknown): string | undefined {
  if (error instanceof NodeInvokeError) return error.code;
  const shaped = error as { name?: unknown; code?: unknown } | null;
  return shaped && shaped.name === 'NodeInvokeError' && typeof shaped.code === 'string' ? shaped.code : undefined;
}

const isApprovalRequired = (error: unknown) =>
  invokeErrorCode(error) === 'SYSTEM_RUN_DENIED' && /approval required/i.test((error as Error).message);

export async function runOnNode(request: NodeRunRequest, ctx: ToolContext, deps: NodeRunDeps): Promise<ToolResult> {
  const nodes = await requireService<NodeService>(deps.kernel, NODES_SERVICE, 'exec host=node');
  const approver = await requireService<ToolApprover>(deps.kernel, 'exec-approvals', 'exec host=node');
  let node: NodeInfo;
  try {
    node = await pickExecNode(nodes, request.node, request.boundNode);
  } catch (error) {
    return errorResult((error as Error).message);
  }
  const label = nodeLabel(node);
  const runMs = request.timeoutSeconds > 0 ? Math.round(request.timeoutSeconds * 1000) : 0;
  const invokeTimeoutMs = Math.max(10_000, (runMs || 30 * 60_000) + INVOKE_GRACE_MS);

  let prepared: PreparedRun | undefined;
  try {
    prepared = parsePrepared(
      await nodes.invoke(
        node.nodeId,
        'system.run.prepare',
        {
          command: nodeShellArgv(request.command, node.platform),
          rawCommand: request.command,
          ...(request.workdir ? { cwd: request.workdir } : {}),
          ...(request.env ? { env: request.env } : {}),
          ...(request.ask ? { ask: request.ask } : {}),
          agentId: ctx.agentId ?? 'main',
          ...(ctx.sessionKey ? { sessionKey: ctx.sessionKey } : {}),
        },
        { timeoutMs: PREPARE_TIMEOUT_MS, idempotencyKey: randomUUID(), signal: ctx.signal },
      ),
    );
  } catch (error) {
    return errorResult(`exec: node ${label} could not prepare the command: ${describe(error)}`);
  }
  if (!prepared) return errorResult(`exec: node ${label} answered system.run.prepare without a usable plan`);
  const { plan } = prepared;

  // The gateway's own policy for this session, on the plan the node will run.
  const judge = (extra: Record<string, unknown>) =>
    approver.authorize(
      {
        command: plan.commandText,
        cwd: typeof plan.cwd === 'string' ? plan.cwd : '',
        host: 'node',
        nodeId: node.nodeId,
        nodeName: node.displayName ?? node.nodeId,
        systemRunPlan: { argv: plan.argv, cwd: plan.cwd ?? null, commandText: plan.commandText },
        ...(prepared.execPolicy ? { nodePolicy: prepared.execPolicy } : {}),
        ...(request.env ? { env: request.env } : {}),
        ...(request.ask ? { ask: request.ask } : {}),
        ...extra,
      },
      { ...ctx, toolName: 'exec' },
    );
  const gateway = await judge({});
  if (!gateway.allowed) return errorResult(`exec was not approved for node ${label}: ${gateway.reason ?? 'denied'}`);

  const send = (decision: Decision | undefined) =>
    nodes.invoke(
      node.nodeId,
      'system.run',
      {
        command: plan.argv,
        rawCommand: plan.commandText,
        systemRunPlan: plan,
        ...(typeof plan.cwd === 'string' ? { cwd: plan.cwd } : {}),
        ...(request.env ? { env: request.env } : {}),
        timeoutMs: runMs,
        agentId: plan.agentId ?? ctx.agentId ?? 'main',
        ...((plan.sessionKey ?? ctx.sessionKey) ? { sessionKey: plan.sessionKey ?? ctx.sessionKey } : {}),
        ...(decision ? { approved: true, approvalDecision: decision } : {}),
        runId: randomUUID(),
        suppressNotifyOnExit: true,
      },
      { timeoutMs: invokeTimeoutMs, idempotencyKey: randomUUID(), sessionKey: ctx.sessionKey, signal: ctx.signal },
    );

  const startedAt = Date.now();
  let decision = decisionOf(gateway);
  let payload: unknown;
  try {
    try {
      payload = await send(decision);
    } catch (error) {
      // The node's own policy wants a person; once asked, a second refusal is final.
      if (decision || !isApprovalRequired(error)) throw error;
      const person = await judge({ nodeAsks: true, ask: 'always' });
      if (!person.allowed)
        return errorResult(
          `exec was not approved for node ${label}: the node asks for approval, and ${person.reason ?? 'it was denied'}`,
        );
      // The node takes approved/approvalDecision as a person's word: only a recorded decision goes.
      decision = decisionOf(person);
      if (!decision)
        return errorResult(
          `exec was not approved for node ${label}: the node asks for a person's approval, and none was given`,
        );
      payload = await send(decision);
    }
  } catch (error) {
    return errorResult(failureText(error, label, request.command), {
      status: 'failed',
      nodeId: node.nodeId,
      ...(invokeErrorCode(error) ? { code: invokeErrorCode(error) } : {}),
    });
  }
  return formatRun(payload, label, node.nodeId, plan, Date.now() - startedAt, deps.maxOutputChars);
}

/** The decision a person made, when the approver says (exec-approvals does). */
function decisionOf(outcome: { allowed: boolean }): Decision | undefined {
  const decision = (outcome as { decision?: unknown }).decision;
  return decision === 'allow-once' || decision === 'allow-always' ? decision : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function failureText(error: unknown, label: string, command: string): string {
  const what = shortCommand(command);
  const code = invokeErrorCode(error);
  if (code) {
    const message = (error as Error).message;
    if (code === 'NODE_DISCONNECTED')
      return `exec: node ${label} went away while running \`${what}\`; it was not re-run. Whether it ran, and how far, is unknown.`;
    if (code === 'TIMEOUT')
      return `exec: node ${label} did not answer in time for \`${what}\`; it may still be running there and was not re-run.`;
    if (code === 'SYSTEM_RUN_DENIED')
      return `exec: node ${label} refused \`${what}\` (its own exec approvals): ${message}`;
    return `exec: node ${label} could not run \`${what}\` (${code}): ${message}`;
  }
  return `exec: node ${label} could not run \`${what}\`: ${describe(error)}`;
}

/** OpenClaw's system.run payload → claw's exec result: output kept within maxOutputChars. */
function formatRun(
  payload: unknown,
  label: string,
  nodeId: string,
  plan: PreparedRun['plan'],
  durationMs: number,
  maxOutputChars: number,
): ToolResult {
  const raw = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>;
  const text = (name: string) => (typeof raw[name] === 'string' ? (raw[name] as string) : '');
  const exitCode = typeof raw.exitCode === 'number' ? raw.exitCode : null;
  const timedOut = raw.timedOut === true;
  const success = typeof raw.success === 'boolean' ? raw.success : exitCode === 0;
  const output = new OutputBuffer(maxOutputChars);
  for (const part of [text('stdout'), text('stderr'), text('error')].filter(Boolean))
    output.append(output.total > 0 ? `\n${part}` : part);
  const note = timedOut
    ? `[timed out on the node after ${formatDuration(durationMs)}; the command was killed there]`
    : success
      ? ''
      : `[exit code ${exitCode ?? 'unknown'}]`;
  const body = `Node: ${label}\n${output.text() || '(no output)'}${note ? `\n\n${note}` : ''}`;
  const details = {
    status: timedOut ? 'timeout' : success ? 'completed' : 'failed',
    exitCode,
    nodeId,
    cwd: typeof plan.cwd === 'string' ? plan.cwd : null,
    durationMs,
    outputChars: output.total,
    truncated: output.omitted > 0 || raw.truncated === true,
    ...(timedOut ? { timedOut: true } : {}),
  };
  return success && !timedOut ? textResult(body, details) : errorResult(body, details);
}
