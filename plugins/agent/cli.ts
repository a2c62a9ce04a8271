/**
 * `claw agent`, `claw models`, `claw sessions`, `claw setup`.
 *
 * `claw agent` talks to the running gateway (so runs share its session lanes, hooks and
 * channels) and streams the answer as it is written; `--local` runs the turn in this
 * process instead. Without a running gateway for this state dir it runs locally too.
 */
import { expandHome, type CliContext, type GatewayAuthService, type PluginApi } from '../../sdk/index.js';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { useService } from '../../sdk/services.js';
import { parseFlags as parse, runCliCommand, UsageError } from '../../sdk/cli.js';
import type { AgentRuntime, RunResult } from './runtime.js';
import { ensureWorkspace, parseReply, unknownAgentProblem } from '../../sdk/agent/index.js';

const HELP: Record<string, string> = {
  agent: `Usage: claw agent --message "<text>" [options]

Send one message to an agent and stream the answer.

Options:
  -m, --message <text>   the message (required)
  --agent <id>           agent id (default: the default agent)
  --session <key>        session key (default: the agent's main session)
  --thinking <level>     off | minimal | low | medium | high
  --model <ref>          model for this message (provider/model or an alias)
  --timeout <seconds>    give up after this long (default agents.defaults.timeoutSeconds)
  --local                run in this process instead of through the gateway
  --json                 print the run result as JSON
  --url, --token, --password   reach a gateway elsewhere`,
  setup: `Usage: claw setup [--workspace <dir>]

Creates the config file (if missing) and the agent workspace with its template files.
Existing files are never overwritten; BOOTSTRAP.md (the first-run ritual) is seeded only
into a brand-new workspace.`,
};

const COMMON = { help: { type: 'boolean' }, json: { type: 'boolean' } } as const;

export function runAgentCli(
  name: string,
  argv: string[],
  ctx: CliContext,
  api: PluginApi,
  runtime: AgentRuntime,
  templatesDir: string,
): Promise<number> {
  return runCliCommand(ctx, async () => {
    if (argv.includes('--help')) {
      ctx.stdout.write(`${HELP[name] ?? ''}\n`);
      return 0;
    }
    switch (name) {
      case 'agent':
        return await agentCommand(argv, ctx, api, runtime);
      case 'setup': {
        // Gateway auth is the gateway plugin's; without that plugin there is no gateway to protect.
        const gatewayAuth = await useService<GatewayAuthService>(api.kernel, 'gateway-auth');
        // Reads and writes openclaw.json: under the config lock like every other writer.
        return await api.kernel.configFile.locked('claw setup', (write) =>
          setupCommand(argv, ctx, api, templatesDir, write, gatewayAuth),
        );
      }
      default:
        throw new UsageError(`unknown command ${name}`);
    }
  });
}

// ── claw agent ────────────────────────────────────────────────────────────────────

async function agentCommand(argv: string[], ctx: CliContext, api: PluginApi, runtime: AgentRuntime): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...COMMON,
    message: { type: 'string', short: 'm' },
    agent: { type: 'string' },
    session: { type: 'string' },
    thinking: { type: 'string' },
    model: { type: 'string' },
    timeout: { type: 'string' },
    local: { type: 'boolean' },
    url: { type: 'string' },
    token: { type: 'string' },
    password: { type: 'string' },
  });
  const message = (values.message as string | undefined) ?? (positionals.length ? positionals.join(' ') : undefined);
  if (!message?.trim()) throw new UsageError('give the message with --message "<text>" (see claw agent --help)');
  const thinking = values.thinking as string | undefined;
  if (thinking && !['off', 'minimal', 'low', 'medium', 'high'].includes(thinking))
    throw new UsageError(`--thinking must be off, minimal, low, medium or high, got "${thinking}"`);
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0))
    throw new UsageError(`--timeout must be seconds, got "${String(values.timeout)}"`);
  const json = values.json === true;
  const out = new StreamPrinter(ctx, json);

  const remote =
    !values.local &&
    (values.url !== undefined || ctx.env.OPENCLAW_GATEWAY_URL !== undefined || ctx.gateway.running() !== undefined);
  // A gateway checks the agent against its own config; here, this config decides.
  const agentProblem =
    !remote && values.agent !== undefined
      ? unknownAgentProblem(api.kernel.config(), values.agent as string)
      : undefined;
  if (agentProblem) throw new UsageError(agentProblem);
  let result: ReturnType<typeof summaryOf>;
  if (remote) {
    const flags = {
      url: values.url as string | undefined,
      token: values.token as string | undefined,
      password: values.password as string | undefined,
    };
    result = await ctx.gateway.connect(
      flags,
      (client) =>
        client.request<ReturnType<typeof summaryOf>>(
          'agent',
          {
            message,
            idempotencyKey: randomUUID(),
            ...(values.agent ? { agentId: values.agent } : {}),
            ...(values.session ? { sessionKey: values.session } : {}),
            ...(thinking ? { thinking } : {}),
            ...(values.model ? { model: values.model } : {}),
            ...(timeout ? { timeout } : {}),
          },
          {
            expectFinal: true,
            timeoutMs:
              ((timeout ?? runtime.settings(values.agent ?? runtime.defaultAgent()).timeoutSeconds) + 30) * 1000,
            onAck: (ack) => out.accepted((ack as { runId: string }).runId),
          },
        ),
      { onEvent: (frame) => out.event(frame.event, frame.payload as Record<string, unknown>) },
    );
  } else {
    const handle = await runtime.dispatch({
      agentId: values.agent as string | undefined,
      sessionKey: values.session as string | undefined,
      message,
      thinking: thinking as never,
      model: values.model as string | undefined,
      timeoutMs: timeout ? timeout * 1000 : undefined,
      channel: 'cli',
      authorized: true,
      onEvent: (event) => out.event(event.kind, event as unknown as Record<string, unknown>),
    });
    out.accepted(handle.runId);
    // Nothing left that could finish the run (a promise no one will settle): say so and fail,
    // rather than let the empty event loop end the process with exit code 0 and no output.
    let stalled!: () => void;
    const stall = new Promise<RunResult>(
      (resolve) =>
        (stalled = () =>
          resolve({
            ...runtime.emptyResult(handle.runId, '', 'error'),
            error: 'the run stalled: nothing left to wait for',
          })),
    );
    process.once('beforeExit', stalled);
    result = summaryOf(await Promise.race([handle.done, stall]).finally(() => process.off('beforeExit', stalled)));
  }
  out.finish(result);
  return result.status === 'ok' ? 0 : 1;
}

function summaryOf(result: RunResult) {
  return {
    runId: result.runId,
    status: result.status,
    summary: result.error ?? result.text,
    error: result.error,
    result: { text: result.text, model: result.model, provider: result.provider, usage: result.usage },
  };
}

/** Prints assistant text as it streams, then whatever the final result adds. */
class StreamPrinter {
  private runId?: string;
  private readonly early: Array<{ kind: string; payload: Record<string, unknown> }> = [];
  private printed = '';
  /** Text of the latest model message: the final answer, when the run ends, is that message. */
  private message = '';
  private messageEnded = false;
  /** Text of an attempt that failed part-way, still on screen, while the next attempt catches up. */
  private shownPartial?: string;

  constructor(
    private readonly ctx: CliContext,
    private readonly json: boolean,
  ) {}

  accepted(runId: string): void {
    this.runId = runId;
    for (const item of this.early.splice(0)) this.event(item.kind, item.payload);
  }

  event(kind: string, payload: Record<string, unknown>): void {
    if (kind !== 'agent') return;
    if (!this.runId) {
      this.early.push({ kind, payload });
      return;
    }
    if (payload.runId !== this.runId) return;
    const data = (payload.data ?? {}) as Record<string, unknown>;
    // On stderr even with --json: a run that waits should say why.
    if (payload.stream === 'lifecycle' && data.phase === 'waiting' && data.reason === 'session-lock') {
      this.ctx.stderr.write(
        `[waiting] the session is in use by another process${data.holderPid ? ` (pid ${String(data.holderPid)})` : ''}\n`,
      );
      return;
    }
    if (this.json) return;
    if (payload.stream === 'assistant' && typeof data.delta === 'string' && data.delta) {
      if (this.messageEnded) {
        // Text written before a tool call, then the answer: one line apart, not run together.
        if (this.message) this.write('\n');
        this.message = '';
        this.messageEnded = false;
      }
      this.message += data.delta;
      this.writeDelta(data.delta);
    } else if (payload.stream === 'assistant' && data.messageEnd) {
      this.messageEnded = true;
    } else if (payload.stream === 'assistant' && data.reset) {
      this.reset(data);
    } else if (payload.stream === 'tool' && data.phase === 'start') {
      this.ctx.stderr.write(`[tool] ${String(data.name)}\n`);
    } else if (payload.stream === 'tool' && data.phase === 'result' && data.isError) {
      this.ctx.stderr.write(
        `[tool] ${String(data.name)} failed${typeof data.result === 'string' && data.result ? `: ${data.result.split('\n')[0]!.slice(0, 200)}` : ''}\n`,
      );
    }
  }

  private write(text: string): void {
    this.printed += text;
    this.ctx.stdout.write(text);
  }

  /**
   * A failed attempt's text stays on screen; the next attempt's is printed only past it (a
   * retry usually starts the same way), or on a new line once it says something else.
   */
  private writeDelta(delta: string): void {
    const shown = this.shownPartial;
    if (shown === undefined) return this.write(delta);
    if (shown.startsWith(this.message)) return;
    this.shownPartial = undefined;
    this.write(this.message.startsWith(shown) ? this.message.slice(shown.length) : `\n${this.message}`);
  }

  /** The model is asked again, or the next one is: say so on stderr, keep the partial text once. */
  private reset(data: Record<string, unknown>): void {
    const failover = data.failover as { from: string; to: string; cause: string } | undefined;
    const retry = data.retry as { attempt: number; of: number } | undefined;
    if (failover)
      this.ctx.stderr.write(`[model] model ${failover.from} failed (${failover.cause}), trying ${failover.to}\n`);
    else if (retry)
      this.ctx.stderr.write(`[model] ${String(data.reason)}; trying again (${retry.attempt}/${retry.of})\n`);
    if (this.message && this.shownPartial === undefined) this.shownPartial = this.message;
    this.message = '';
    this.messageEnded = false;
  }

  finish(result: ReturnType<typeof summaryOf>): void {
    if (this.json) {
      this.ctx.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    // The reply as delivered (directives parsed, hooks applied); printed again only when it
    // is not what already streamed (a command's reply, a message_sending rewrite).
    const text = result.result?.text ?? '';
    if (text && text !== parseReply(this.message).text) this.write(this.printed ? `\n${text}` : text);
    if (this.printed) this.ctx.stdout.write('\n');
    if (result.status !== 'ok')
      this.ctx.stderr.write(`claw: run ${result.status}${result.error ? `: ${result.error}` : ''}\n`);
  }
}

// ── claw setup ────────────────────────────────────────────────────────────────────

function setupCommand(
  argv: string[],
  ctx: CliContext,
  api: PluginApi,
  templatesDir: string,
  write: (raw: Record<string, unknown>) => void,
  gatewayAuth: GatewayAuthService | undefined,
): number {
  const { values, positionals } = parse(argv, { ...COMMON, workspace: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (see claw setup --help)`);
  const requested = values.workspace ? resolve(expandHome(values.workspace as string)) : undefined;
  const configPath = api.kernel.paths.configPath;
  const lines: string[] = [];
  const file = api.kernel.configFile;
  const existed = existsSync(configPath);
  const raw = (existed ? file.read().raw : {}) as {
    agents?: { defaults?: Record<string, unknown> };
    gateway?: Record<string, unknown>;
  };
  let next = raw;
  if (!existed || requested) {
    next = {
      ...next,
      agents: {
        ...raw.agents,
        defaults: {
          ...raw.agents?.defaults,
          workspace: requested ?? raw.agents?.defaults?.workspace ?? api.kernel.paths.workspaceDir,
        },
      },
    };
    lines.push(existed ? `Set agents.defaults.workspace in ${configPath}` : `Created config ${configPath}`);
  }
  // The gateway never runs open: a config without gateway auth gets a strong token now.
  if (gatewayAuth?.authUnset(raw.gateway, ctx.env)) {
    const auth = { ...(raw.gateway?.auth as object | undefined), mode: 'token', token: gatewayAuth.generateToken() };
    next = { ...next, gateway: { ...raw.gateway, auth } };
    lines.push(
      `Generated a gateway token (gateway.auth.token in ${configPath}); \`claw dashboard\` opens the web UI with it`,
    );
  }
  if (next !== raw) write(next);
  else lines.push(`Config ${configPath} already exists (left as it is)`);
  const workspace = requested ?? api.kernel.paths.workspaceDir;
  const { created, kept } = ensureWorkspace(workspace, templatesDir);
  lines.push(`Workspace ${workspace}`);
  for (const name of created) lines.push(`  created ${name}`);
  for (const name of kept) lines.push(`  kept    ${name} (already there)`);
  lines.push('', 'Next: set a model (see README "Models and providers"), then: claw agent --message "hello"');
  if (values.json) ctx.stdout.write(`${JSON.stringify({ configPath, workspace, created, kept }, null, 2)}\n`);
  else ctx.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
