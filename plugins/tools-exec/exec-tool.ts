/** The `exec` tool: run a shell command, wait for it or hand it to the background. */
import { stat } from 'node:fs/promises';
import { isAbsolute, posix, resolve } from 'node:path';
import {
  errorResult,
  sandboxOf,
  textResult,
  type CapabilityLookup,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from '../../sdk/index.js';
import { describeEnvRefusals, operatorExecEnv, refusedExecEnv } from './env-policy.js';
import { EXEC_HOSTS, execPlacementConfig, resolveExecTarget, type ExecTarget } from './exec-target.js';
import { runOnNode, type NodeRunDeps } from './node-run.js';
import { hostCommandEnv } from './git.js';
import { guard, optionalBoolean, optionalEnv, optionalNumber, optionalString, requiredString } from './args.js';
import { statusNote, summarize } from './describe.js';
import type { SessionRegistry } from './registry.js';
import { MAX_TIMER_MS, type ProcessSession, type SessionOptions } from './session.js';

export interface ExecConfig {
  timeoutSeconds: number;
  maxOutputChars: number;
  backgroundAfterMs: number;
}

export interface ExecDeps {
  registry: SessionRegistry;
  config: ExecConfig;
  workspace(ctx: ToolContext): string;
  /** Services by name: the skills service tells which env entries the operator configured. */
  capabilities?: Pick<CapabilityLookup, 'find'>;
  /** The live config: where exec runs (tools.exec.host, tools.exec.node, per agent). */
  liveConfig?: () => Readonly<Record<string, unknown>>;
  /** The "nodes" and "exec-approvals" services, for host=node. */
  kernel?: NodeRunDeps['kernel'];
}

type Params = Record<string, unknown>;

export function createExecTool(deps: ExecDeps): ToolDefinition<Params> {
  const { config } = deps;
  return {
    name: 'exec',
    label: 'Exec',
    runsInSandbox: true,
    description:
      'Run a shell command (/bin/sh -c) in the workspace and return its combined stdout and stderr. ' +
      `A command still running after yieldMs (default ${config.backgroundAfterMs} ms) keeps running in the background ` +
      'and the result gives its sessionId for the process tool; background: true does that at once. ' +
      `Commands are killed after timeout seconds (default ${config.timeoutSeconds}). ` +
      'host=node runs the command on a paired node (node: its id or name) and waits for it to finish: ' +
      'it never goes to the background, and the node and the gateway each apply their exec approvals.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: {
        command: { type: 'string', minLength: 1, description: 'Shell command to run' },
        workdir: {
          type: 'string',
          description: 'Working directory, relative to the workspace or absolute (default: the workspace)',
        },
        env: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description:
            'Environment variables to set for the command: ordinary names only (PATH, HOME, LD_*, GIT_*, NPM_*, PYTHON*, ' +
            'proxies, pagers, editors and other variables that pick or configure programs are refused)',
        },
        timeout: {
          type: 'number',
          minimum: 0,
          description: `Seconds before the command is killed (default ${config.timeoutSeconds}; 0 = no limit)`,
        },
        timeoutSeconds: { type: 'number', minimum: 0, description: 'Same as timeout' },
        background: { type: 'boolean', description: 'Return at once with a sessionId and keep the command running' },
        ask: {
          enum: ['off', 'on-miss', 'always'],
          description: 'Ask a person before running: can only make the configured exec approval policy stricter',
        },
        elevated: {
          type: 'boolean',
          description:
            'Run outside the sandbox, on the host, when elevated mode is permitted (tools.elevated); host exec approvals still apply',
        },
        host: {
          enum: [...EXEC_HOSTS],
          description:
            'Where to run: auto (default: the configured host), sandbox, gateway, or node (a paired node; only when tools.exec.host allows it)',
        },
        node: { type: 'string', minLength: 1, description: 'With host=node: the node id, name or IP' },
        yieldMs: {
          type: 'integer',
          minimum: 0,
          description: `Milliseconds to wait before moving the command to the background (default ${config.backgroundAfterMs}; 0 = wait until it ends)`,
        },
      },
      required: ['command'],
    },
    execute: (params, ctx) => guard('exec', () => runExec(params, ctx, deps)),
    // Host commands need exec approval for exactly the command, directory and PATH they run with.
    // A sandboxed call (context.sandbox, set by sandbox routing) runs inside the sandbox instead,
    // unless elevated mode or the configured host takes it out (exec-target.ts); elevated makes
    // the approver also check tools.elevated.
    approval: (params, ctx) => {
      const sandboxed = Boolean((ctx as { sandbox?: unknown }).sandbox);
      const target = targetOf(params, ctx, deps);
      // A call that may not run where it asked is refused by execute before anything runs.
      if (typeof target === 'string' || target.host === 'sandbox') return undefined;
      if (target.host === 'node')
        // The gateway's own policy gates the call before anything reaches a node; the plan the
        // node prepares is judged again (and shown to a person if one is asked) in node-run.ts.
        return {
          service: 'exec-approvals',
          request: {
            command: params.command,
            cwd: optionalString(params, 'workdir') ?? '',
            host: 'node',
            ...(target.node ? { node: target.node } : {}),
            ...(params.env ? { env: params.env } : {}),
            ...(sandboxed && params.elevated === true ? { elevated: true } : {}),
            ...(params.ask ? { ask: params.ask } : {}),
          },
        };
      return {
        service: 'exec-approvals',
        // PATH decides which binary a bare name runs, so the approver resolves with the same one
        // (env cannot change it: PATH is refused). Unsandboxed calls run on the host anyway:
        // `elevated` changes nothing for them. env goes along so the approver refuses what exec
        // would refuse, and shows the rest to whoever decides.
        request: {
          command: params.command,
          cwd: workingDirectory(params, ctx, deps),
          path: process.env.PATH ?? '',
          host: 'gateway',
          ...(params.env ? { env: params.env } : {}),
          ...(sandboxed && params.elevated === true ? { elevated: true } : {}),
          ...(params.ask ? { ask: params.ask } : {}),
        },
      };
    },
  };
}

function targetOf(params: Params, ctx: ToolContext, deps: ExecDeps): ExecTarget | string {
  const config = deps.liveConfig?.() ?? {};
  return resolveExecTarget(params, ctx, execPlacementConfig(config, ctx.agentId ?? 'main'));
}

/** The directory a call runs in: `workdir` against the workspace, or the workspace. */
function workingDirectory(params: Params, ctx: ToolContext, deps: ExecDeps): string {
  const workdir = optionalString(params, 'workdir');
  const workspace = deps.workspace(ctx);
  // Literal paths: "~" is not expanded, as a shell would not expand it in a quoted argument either.
  return workdir ? (isAbsolute(workdir) ? workdir : resolve(workspace, workdir)) : workspace;
}

async function runExec(params: Params, ctx: ToolContext, deps: ExecDeps): Promise<ToolResult> {
  const { config, registry } = deps;
  const command = requiredString(params, 'command');
  const env = optionalEnv(params, 'env');
  const timeoutSeconds =
    optionalNumber(params, 'timeout', { minimum: 0 }) ??
    optionalNumber(params, 'timeoutSeconds', { minimum: 0 }) ??
    config.timeoutSeconds;
  const background = optionalBoolean(params, 'background') ?? false;
  const yieldMs = optionalNumber(params, 'yieldMs', { minimum: 0, integer: true }) ?? config.backgroundAfterMs;

  // Every placement (host, sandbox, elevated) gets the same env policy.
  const refusals = refusedExecEnv(env, deps.capabilities && (await operatorExecEnv(deps.capabilities, ctx, params)));
  if (refusals.length > 0) {
    const details = { refused: true, blockedEnv: refusals.map((refusal) => refusal.name), reasons: refusals };
    return errorResult(`exec: refused: ${describeEnvRefusals(refusals)}`, details);
  }
  if (ctx.signal?.aborted) return errorResult('exec: the run was aborted before the command started');
  const target = targetOf(params, ctx, deps);
  if (typeof target === 'string') return errorResult(target);
  if (target.host === 'node') {
    if (background) return errorResult('exec: host=node waits for the command to finish; background is not available');
    if (!deps.kernel) return errorResult('exec: host=node is not available in this kernel');
    return runOnNode(
      {
        command,
        ...(optionalString(params, 'workdir') ? { workdir: optionalString(params, 'workdir') } : {}),
        ...(env ? { env } : {}),
        timeoutSeconds,
        ...(typeof params.ask === 'string' ? { ask: params.ask } : {}),
        ...(target.node ? { node: target.node } : {}),
        ...(target.boundNode ? { boundNode: target.boundNode } : {}),
      },
      ctx,
      { kernel: deps.kernel, maxOutputChars: config.maxOutputChars },
    );
  }
  // elevated: true reaches here only if the approval step let it through (tools.elevated gates
  // and host approvals); it then runs on the host even in a sandboxed session. A configured
  // gateway host runs there too.
  const placement = await place(params, ctx, deps, env, target.host === 'gateway');
  if (typeof placement === 'string') return errorResult(placement);

  let session: ProcessSession;
  try {
    session = registry.start({
      command,
      ...placement,
      timeoutMs: timeoutSeconds * 1000,
      maxOutputChars: config.maxOutputChars,
      agentId: ctx.agentId,
    });
  } catch (error) {
    // spawn() throws synchronously on arguments it cannot pass to the OS, such as a NUL byte.
    return errorResult(`exec: could not start the command: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (background) {
    session.backgrounded = true;
    return runningResult(session, '');
  }
  const outcome = await waitFor(session, yieldMs, ctx.signal);
  if (outcome === 'yield') {
    session.backgrounded = true;
    session.pollCursor = session.output.total;
    return runningResult(session, session.output.text());
  }
  return finishedResult(session);
}

/**
 * Where the command runs. In a sandbox: paths are the sandbox's own (the workspace is its
 * `workdir`) and nothing of the host's environment goes in. On the host: the workspace
 * directory, with the gateway's environment and git's overrides (git.ts).
 */
async function place(
  params: Params,
  ctx: ToolContext,
  deps: ExecDeps,
  env: Record<string, string> | undefined,
  onHost: boolean,
): Promise<Pick<SessionOptions, 'cwd' | 'env' | 'spawn' | 'place'> | string> {
  const sandbox = onHost ? undefined : sandboxOf(ctx);
  if (sandbox) {
    const workdir = optionalString(params, 'workdir');
    const cwd = workdir ? posix.resolve(sandbox.spec.workdir, workdir) : sandbox.spec.workdir;
    return {
      cwd,
      env: { ...env, OPENCLAW_SHELL: 'exec' },
      spawn: (request) => sandbox.spawn(request),
      place: sandbox.id,
    };
  }
  const cwd = workingDirectory(params, ctx, deps);
  const isDir = await stat(cwd).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!isDir) return `exec: working directory ${cwd} does not exist or is not a directory`;
  // With git overrides last: git on the host never runs what the workspace's repository config names.
  return { cwd, env: hostCommandEnv(env) };
}

/** Resolves when the command ends, or with "yield" once it has run for yieldMs. An abort kills it. */
function waitFor(session: ProcessSession, yieldMs: number, signal: AbortSignal | undefined): Promise<'done' | 'yield'> {
  return new Promise((resolvePromise) => {
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      session.stop('aborted');
    };
    const settle = (outcome: 'done' | 'yield') => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolvePromise(outcome);
    };
    const timer =
      yieldMs > 0
        ? setTimeout(
            () => {
              if (!aborted && session.running) settle('yield');
            },
            Math.min(yieldMs, MAX_TIMER_MS),
          )
        : undefined;
    signal?.addEventListener('abort', onAbort, { once: true });
    void session.done.then(() => settle('done'));
  });
}

function runningResult(session: ProcessSession, soFar: string): ToolResult {
  let text =
    `Command still running in the background as session ${session.id} (pid ${session.pid}). ` +
    `Use the process tool with sessionId "${session.id}": poll for new output, log to read all of it, ` +
    'write to send input, kill to stop it.';
  if (soFar) text += `\n\nOutput so far:\n${soFar}`;
  const { sessionId, pid, cwd, startedAt, outputChars } = summarize(session);
  return textResult(text, { status: 'running', sessionId, pid, cwd, startedAt, outputChars });
}

function finishedResult(session: ProcessSession): ToolResult {
  const output = session.output.text();
  const ok = session.status === 'completed';
  const text = (output || '(no output)') + (ok ? '' : `\n\n${statusNote(session)}`);
  const details = {
    status: session.status,
    exitCode: session.exitCode,
    signal: session.signal,
    durationMs: session.durationMs,
    cwd: session.cwd,
    pid: session.pid ?? null,
    outputChars: session.output.total,
    truncated: session.output.omitted > 0,
    omittedChars: session.output.omitted,
    ...(session.error === undefined ? {} : { error: session.error }),
  };
  return ok ? textResult(text, details) : errorResult(text, details);
}
