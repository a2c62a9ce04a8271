/**
 * The node host's system.* commands, with OpenClaw's params and payloads:
 *
 *   system.run.prepare  {command, rawCommand?, cwd?, env?, agentId?, sessionKey?}
 *                       → {plan, execPolicy: {security, ask}, allowAlwaysCoverage}
 *   system.run          {command, rawCommand?, cwd?, env?, timeoutMs?, agentId?, sessionKey?, runId?,
 *                        systemRunPlan?, approved?, approvalDecision?}
 *                       → {exitCode, timedOut, success, stdout, stderr, error}
 *   system.which        {bins} → {bins: {name: path}}
 *   system.execApprovals.get {includeResolvedDefaults?} → {path, exists, hash, file, resolvedDefaults?}
 *   system.execApprovals.set {file, baseHash?} → {path, exists, hash, file}
 *
 * The plan binds an approval: the argv with its program pinned to a real path, the working
 * directory's real path, and the policy it was judged under. A run carrying a person's
 * decision must match its plan exactly, and both the directory and the program are checked
 * again just before the command starts, so what was approved is what runs.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { NodeHostContext } from './host-context.js';
import {
  commandRequest,
  envAssignments,
  formatCommand,
  isShellWrapper,
  resolveExecutable,
  shellPayload,
} from './command-shape.js';
import { fail, NodeCommandError, objectParams, type InvokeAnswer, type NodeCommands } from './dispatcher.js';
import type { ApprovalDecision, ApprovalsSnapshot, PolicySnapshot } from './node-approvals.js';
import { runCommand, type RunResult } from './run-command.js';

export type SystemDeps = Pick<NodeHostContext, 'approvals' | 'execEnv' | 'watchdog'>;

/** Variables a shell wrapper keeps from the call's env (OpenClaw's list): the shell sees nothing else. */
const SHELL_WRAPPER_ENV = new Set(['TERM', 'LANG', 'COLORTERM', 'NO_COLOR', 'FORCE_COLOR']);
const CWD_DRIFT = 'SYSTEM_RUN_DENIED: approval cwd changed before execution';
const PROGRAM_DRIFT = 'SYSTEM_RUN_DENIED: approval requires a stable executable path';

export interface RunPlan {
  argv: string[];
  cwd: string | null;
  commandText: string;
  commandPreview: string | null;
  agentId: string | null;
  sessionKey: string | null;
  policySnapshot?: PolicySnapshot;
}

const optionalText = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() ? value.trim() : undefined;

function stringRecord(value: unknown, name: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new NodeCommandError('INVALID_REQUEST', `INVALID_REQUEST: ${name} must be an object of strings`);
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function realDir(cwd: string | undefined): string | undefined {
  try {
    return realpathSync(cwd ?? process.cwd());
  } catch {
    return undefined;
  }
}

/** OpenClaw's normalizeSystemRunApprovalPlan: null when the value is not a plan. */
function readPlan(value: unknown): RunPlan | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const plan = value as Record<string, unknown>;
  const argv = Array.isArray(plan.argv) ? plan.argv.filter((part): part is string => typeof part === 'string') : [];
  const commandText = optionalText(plan.commandText) ?? optionalText(plan.rawCommand);
  if (argv.length === 0 || !commandText) return null;
  const snapshot = plan.policySnapshot as PolicySnapshot | undefined;
  if (snapshot !== undefined && (typeof snapshot !== 'object' || !Array.isArray(snapshot?.allowlistRules))) return null;
  return {
    argv,
    cwd: optionalText(plan.cwd) ?? null,
    commandText,
    commandPreview: optionalText(plan.commandPreview) ?? null,
    agentId: optionalText(plan.agentId) ?? null,
    sessionKey: optionalText(plan.sessionKey) ?? null,
    ...(snapshot ? { policySnapshot: snapshot } : {}),
  };
}

const ruleKey = (rule: { pattern: string; argPattern?: string; source?: string }) =>
  JSON.stringify([rule.pattern, rule.argPattern ?? null, rule.source ?? null]);

/** The policy a plan was approved under still holds: same modes, and every rule it relied on still there. */
function snapshotCurrent(expected: PolicySnapshot, current: PolicySnapshot): boolean {
  const rules = new Set(current.allowlistRules.map(ruleKey));
  return (
    expected.security === current.security &&
    expected.ask === current.ask &&
    expected.askFallback === current.askFallback &&
    (expected.autoAllowSkills ?? false) === current.autoAllowSkills &&
    expected.allowlistRules.every((rule) => rules.has(ruleKey(rule)))
  );
}

/** A call's env, judged as exec judges it; then what a shell wrapper may see of it. */
async function callEnv(
  deps: SystemDeps,
  argv: string[],
  env: Record<string, string> | undefined,
): Promise<Record<string, string> | undefined> {
  const execEnv = await deps.execEnv();
  const assigned = envAssignments(argv);
  if (assigned.length > 0) {
    const refusal = await execEnv.envRefusal(Object.fromEntries(assigned.map((name) => [name, '1'])), {}, {});
    if (refusal)
      throw new NodeCommandError('INVALID_REQUEST', `SYSTEM_RUN_DENIED: command env assignment rejected (${refusal})`);
  }
  const refusal = await execEnv.envRefusal(env, {}, {});
  if (refusal)
    throw new NodeCommandError('INVALID_REQUEST', `SYSTEM_RUN_DENIED: environment override rejected (${refusal})`);
  if (!env || !isShellWrapper(argv)) return env;
  const kept = Object.entries(env).flatMap(([name, value]): Array<[string, string]> => {
    const upper = name.toUpperCase();
    if ((upper === 'PAGER' || upper === 'GIT_PAGER') && (value === '' || value === 'cat')) return [[name, '']];
    return SHELL_WRAPPER_ENV.has(upper) || upper.startsWith('LC_') ? [[name, value]] : [];
  });
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

function searchPath(env: Record<string, string>): string {
  return env.PATH ?? process.env.PATH ?? ['/usr/local/bin', '/usr/bin', '/bin'].join(delimiter);
}

/** The plan for `params`: argv with its program pinned (not for shell wrappers), the cwd's real path. */
async function buildPlan(
  deps: SystemDeps,
  params: Record<string, unknown>,
  snapshot: ApprovalsSnapshot,
): Promise<RunPlan> {
  const request = commandRequest(params.command, params.rawCommand);
  if (!request.ok) throw new NodeCommandError('INVALID_REQUEST', request.message);
  const cwd = realDir(optionalText(params.cwd));
  if (!cwd)
    throw new NodeCommandError(
      'INVALID_REQUEST',
      'SYSTEM_RUN_DENIED: working directory does not exist or is inaccessible',
    );
  await callEnv(deps, request.argv, stringRecord(params.env, 'env'));
  let argv = request.argv;
  if (!isShellWrapper(argv)) {
    const pinned = resolveExecutable(argv[0]!, cwd, searchPath((await deps.execEnv()).hostEnv(undefined)));
    if (!pinned) throw new NodeCommandError('INVALID_REQUEST', PROGRAM_DRIFT);
    argv = [pinned, ...argv.slice(1)];
  }
  const agentId = optionalText(params.agentId) ?? null;
  const commandText = formatCommand(argv);
  return {
    argv,
    cwd,
    commandText,
    commandPreview: request.preview && request.preview !== commandText ? request.preview : null,
    agentId,
    sessionKey: optionalText(params.sessionKey) ?? null,
    policySnapshot: deps.approvals.policySnapshot(snapshot, agentId ?? undefined),
  };
}

function withTruncationMark(result: RunResult): RunResult {
  if (!result.truncated) return result;
  const mark = '... (truncated)';
  return result.stderr.trim()
    ? { ...result, stderr: `${result.stderr}\n${mark}` }
    : { ...result, stdout: `${result.stdout}\n${mark}` };
}

export function systemCommands(deps: SystemDeps): NodeCommands {
  return {
    'system.which': {
      cap: 'system',
      async run(params) {
        const bins = objectParams(params).bins;
        if (!Array.isArray(bins)) throw new NodeCommandError('INVALID_REQUEST', 'INVALID_REQUEST: bins required');
        const dirs = searchPath((await deps.execEnv()).hostEnv(undefined))
          .split(delimiter)
          .filter(Boolean);
        const found: Record<string, string> = {};
        for (const bin of bins) {
          const name = typeof bin === 'string' ? bin.trim() : '';
          if (!name || name.includes('/') || name.includes('\\')) continue;
          const hit = dirs.map((dir) => join(dir, name)).find((candidate) => existsSync(candidate));
          if (hit) found[name] = hit;
        }
        return { ok: true, payload: { bins: found } };
      },
    },

    'system.execApprovals.get': {
      cap: 'system',
      async run(params) {
        const value = params === undefined ? {} : objectParams(params);
        if (value.includeResolvedDefaults !== undefined && typeof value.includeResolvedDefaults !== 'boolean')
          throw new NodeCommandError('INVALID_REQUEST', 'INVALID_REQUEST: includeResolvedDefaults must be boolean');
        const { path, exists, hash, file, resolvedDefaults } = await deps.approvals.snapshot();
        return {
          ok: true,
          payload: { path, exists, hash, file, ...(value.includeResolvedDefaults ? { resolvedDefaults } : {}) },
        };
      },
    },

    'system.execApprovals.set': {
      cap: 'system',
      once: true,
      async run(params) {
        const value = objectParams(params);
        if (!value.file || typeof value.file !== 'object')
          throw new NodeCommandError('INVALID_REQUEST', 'INVALID_REQUEST: exec approvals file required');
        const baseHash = optionalText(value.baseHash);
        const current = await deps.approvals.snapshot();
        // As OpenClaw: replacing an existing document needs the hash it was read at.
        if (current.exists && !baseHash)
          throw new NodeCommandError(
            'INVALID_REQUEST',
            'INVALID_REQUEST: exec approvals base hash required; reload and retry',
          );
        if (baseHash && baseHash !== current.hash)
          throw new NodeCommandError('INVALID_REQUEST', 'INVALID_REQUEST: exec approvals changed; reload and retry');
        try {
          const { path, exists, hash, file } = await deps.approvals.replace(value.file, baseHash);
          return { ok: true, payload: { path, exists, hash, file } };
        } catch (error) {
          throw new NodeCommandError('INVALID_REQUEST', `INVALID_REQUEST: ${(error as Error).message}`);
        }
      },
    },

    'system.run.prepare': {
      cap: 'system',
      async run(params) {
        const value = objectParams(params);
        const snapshot = await deps.approvals.snapshot();
        const plan = await buildPlan(deps, value, snapshot);
        const { security, ask } = deps.approvals.policy(snapshot, plan.agentId ?? undefined);
        return {
          ok: true,
          payload: { plan, execPolicy: { security, ask }, allowAlwaysCoverage: { complete: false, patterns: [] } },
        };
      },
    },

    'system.run': {
      cap: 'system',
      once: true,
      run: (params, ctx) => systemRun(deps, objectParams(params), ctx),
    },
  };
}

async function systemRun(
  deps: SystemDeps,
  params: Record<string, unknown>,
  ctx: Parameters<NodeCommands[string]['run']>[1],
): Promise<InvokeAnswer> {
  const request = commandRequest(params.command, params.rawCommand);
  if (!request.ok) return fail('INVALID_REQUEST', request.message);
  const plan = params.systemRunPlan === undefined ? null : readPlan(params.systemRunPlan);
  if (params.systemRunPlan !== undefined && !plan) return fail('INVALID_REQUEST', 'systemRunPlan invalid');
  if (params.approvalSource !== undefined && params.approvalSource !== null)
    return fail('INVALID_REQUEST', 'approvalSource invalid: this node host takes only an explicit approval');
  const decision: ApprovalDecision | null =
    params.approvalDecision === 'allow-once' || params.approvalDecision === 'allow-always'
      ? params.approvalDecision
      : null;
  const explicit = params.approved === true || decision !== null;
  const agentId = optionalText(params.agentId);
  const requestedSessionKey = optionalText(params.sessionKey);
  const cwdParam = optionalText(params.cwd);
  if (explicit) {
    const matches =
      plan !== null &&
      plan.argv.length === request.argv.length &&
      plan.argv.every((part, index) => part === request.argv[index]) &&
      plan.commandText === request.commandText &&
      (plan.cwd ?? undefined) === cwdParam &&
      (plan.agentId ?? undefined) === agentId &&
      (plan.sessionKey ?? undefined) === requestedSessionKey;
    if (!matches) return fail('INVALID_REQUEST', 'explicit approval requires matching systemRunPlan');
    if (!plan.policySnapshot) return fail('INVALID_REQUEST', 'delayed approval requires a prepared policy snapshot');
  }
  const execution = {
    sessionKey: requestedSessionKey ?? 'node',
    runId: optionalText(params.runId) ?? randomUUID(),
    host: 'node',
    command: request.commandText,
    ...(params.suppressNotifyOnExit === true ? { suppressNotifyOnExit: true } : {}),
  };
  const denied = async (reason: string, message: string): Promise<InvokeAnswer> => {
    await ctx.sendEvent('exec.denied', { ...execution, reason });
    return fail('SYSTEM_RUN_DENIED', message);
  };
  const env = await callEnv(deps, request.argv, stringRecord(params.env, 'env'));
  const snapshot = await deps.approvals.snapshot();
  const policy = deps.approvals.policy(snapshot, agentId);
  if (explicit && !snapshotCurrent(plan!.policySnapshot!, deps.approvals.policySnapshot(snapshot, agentId)))
    return denied('approval-required', 'SYSTEM_RUN_DENIED: exec approval policy changed; request approval again');
  if (policy.security === 'deny') return denied('security=deny', 'SYSTEM_RUN_DISABLED: security=deny');
  const cwd = realDir(cwdParam);
  if (!cwd) return denied('cwd-unavailable', 'SYSTEM_RUN_DENIED: working directory does not exist or is inaccessible');
  if (explicit && plan!.cwd && cwd !== plan!.cwd) return denied('approval-required', CWD_DRIFT);
  const execEnv = await deps.execEnv();
  const runEnv = execEnv.hostEnv(env);
  // The program of an approved plan was pinned to its real path: it must still be that file.
  const pinnedProgram = explicit && !isShellWrapper(request.argv) ? request.argv[0]! : undefined;
  if (pinnedProgram && resolveExecutable(pinnedProgram, cwd, searchPath(runEnv)) !== pinnedProgram)
    return denied('approval-required', PROGRAM_DRIFT);

  const judgement = await deps.approvals.judge(
    {
      command: shellPayload(request.argv) ?? request.commandText,
      cwd,
      ...(env ? { env } : {}),
      ...(agentId ? { agentId } : {}),
    },
    explicit ? (decision ?? 'allow-once') : undefined,
  );
  if (!judgement.allowed) {
    if (judgement.askRequired) return denied('approval-required', 'SYSTEM_RUN_DENIED: approval required');
    return denied(
      policy.security === 'allowlist' ? 'allowlist-miss' : 'approval-required',
      `SYSTEM_RUN_DENIED: ${policy.security === 'allowlist' ? 'allowlist miss' : 'denied'} (${judgement.reason})`,
    );
  }
  // Checked again at the last moment: a directory swapped while a person decided must not run.
  if (explicit && realDir(cwd) !== cwd) return denied('approval-required', CWD_DRIFT);
  if (ctx.signal.aborted) return fail('UNAVAILABLE', 'cancelled');
  const timeoutMs = typeof params.timeoutMs === 'number' && params.timeoutMs > 0 ? params.timeoutMs : undefined;
  const result = withTruncationMark(
    await runCommand(request.argv, { cwd, env: runEnv, timeoutMs, signal: ctx.signal, watchdog: deps.watchdog }),
  );
  const output = [result.stdout, result.stderr, result.error].filter(Boolean).join('\n').trim();
  await ctx.sendEvent('exec.finished', {
    ...execution,
    ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
    timedOut: result.timedOut,
    success: result.success,
    output: output.length > 20_000 ? `... (truncated) ${output.slice(-20_000)}` : output,
  });
  return {
    ok: true,
    payload: {
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      success: result.success,
      stdout: result.stdout,
      stderr: result.stderr,
      error: result.error ?? null,
    },
  };
}
