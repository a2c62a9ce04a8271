/**
 * `claw mcp serve`: claw as a stdio MCP server for Claude Code, Codex or any MCP client. The
 * client owns the process; while its stdin stays open the bridge holds one operator
 * connection to the gateway and offers the gateway's routed conversations as MCP tools.
 * stdout carries nothing but MCP JSON-RPC; logs and errors go to stderr.
 */
import { readFileSync } from 'node:fs';
import type { CliContext, PluginApi } from '../../../sdk/index.js';
import { clawVersion } from '../../../sdk/index.js';
import { parseFlags, UsageError } from '../../../sdk/cli.js';
import { ChannelBridge, type ClaudeChannelMode } from './bridge.js';
import { loadServerSdk } from './mcp-sdk.js';
import { argumentProblem, bridgeTools, toolListing } from './tools.js';

export const SERVE_HELP = `Usage: claw mcp serve [options]
Run claw as a stdio MCP server: routed gateway conversations, their history, live events,
replies through the stored route, and exec approvals, for an MCP client that spawns it.
Options:
  --url <url>                   gateway WebSocket URL (default: the running gateway, OPENCLAW_GATEWAY_URL, gateway.* config)
  --token <token>               gateway token          --token-file <path>     read it from a file
  --password <password>         gateway password       --password-file <path>  read it from a file
  --claude-channel-mode <mode>  on | off | auto (default auto, same as on): Claude Code channel notifications
  -v, --verbose                 log to stderr`;

const FLAGS = {
  help: { type: 'boolean' },
  url: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  password: { type: 'string' },
  'password-file': { type: 'string' },
  'claude-channel-mode': { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
} as const;

const MODES: readonly ClaudeChannelMode[] = ['on', 'off', 'auto'];
const PERMISSION_REQUEST = 'notifications/claude/channel/permission_request';
/** Reconnecting after the gateway went away: 1 s doubling to 30 s, as claw's other gateway clients. */
const RECONNECT_FIRST_MS = 1000;
const RECONNECT_MAX_MS = 30_000;
/** The gateway ticks every 30 s by default: this long without a word, the bridge checks on it. */
const LIVENESS_MS = 45_000;

/** A secret from a file: one line, trimmed; a missing or empty file names the flag. */
function readSecret(path: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const secret = text.trim();
  if (!secret) throw new UsageError(`${flag}: ${path} is empty`);
  return secret;
}

function pick(inline: string | undefined, file: string | undefined, name: string): string | undefined {
  if (inline !== undefined && file !== undefined) throw new UsageError(`use --${name} or --${name}-file, not both`);
  return file !== undefined ? readSecret(file, `--${name}-file`) : inline;
}

export async function mcpServe(argv: string[], ctx: CliContext, api: PluginApi): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS);
  if (values.help) {
    ctx.stdout.write(`${SERVE_HELP}\n`);
    return 0;
  }
  if (positionals.length) throw new UsageError(`claw mcp serve takes no arguments (got "${positionals[0]}")`);
  const mode = (values['claude-channel-mode'] ?? 'auto') as ClaudeChannelMode;
  if (!MODES.includes(mode))
    throw new UsageError(`--claude-channel-mode must be on, off or auto, got "${values['claude-channel-mode']}"`);
  const token = pick(values.token, values['token-file'], 'token');
  const password = pick(values.password, values['password-file'], 'password');
  const verbose = values.verbose === true;
  const log = (line: string) => void ctx.stderr.write(`${line}\n`);
  const sdk = await loadServerSdk(api.kernel);
  const flags = { url: values.url, token, password };

  const server = new sdk.Server(
    { name: 'claw', version: clawVersion() },
    {
      capabilities: {
        tools: {},
        ...(mode === 'off' ? {} : { experimental: { 'claude/channel': {}, 'claude/channel/permission': {} } }),
      },
    },
  );
  let lost: (() => void) | undefined;
  const bridge = new ChannelBridge({
    claudeChannelMode: mode,
    verbose,
    log,
    onLost: () => lost?.(),
    notify: (notification) => server.notification(notification),
  });
  const tools = bridgeTools(bridge);
  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({ tools: toolListing(tools) }));
  server.setRequestHandler(sdk.CallToolRequestSchema, async (request, extra) => {
    const tool = tools.find((item) => item.name === request.params.name);
    if (!tool) return { content: [{ type: 'text', text: `unknown tool: ${request.params.name}` }], isError: true };
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const problem = argumentProblem(tool, args);
    if (problem) return { content: [{ type: 'text', text: `${tool.name}: ${problem}` }], isError: true };
    try {
      return await tool.run(args, extra.signal);
    } catch (error) {
      return { content: [{ type: 'text', text: `${tool.name} failed: ${(error as Error).message}` }], isError: true };
    }
  });
  server.fallbackNotificationHandler = async (notification) => {
    if (notification.method !== PERMISSION_REQUEST) return;
    const params = (notification.params ?? {}) as Record<string, unknown>;
    const fields = ['request_id', 'tool_name', 'description', 'input_preview'] as const;
    if (!fields.every((field) => typeof params[field] === 'string')) {
      log(`claw mcp serve: ignored a ${PERMISSION_REQUEST} without ${fields.join(', ')}`);
      return;
    }
    bridge.claudePermissionRequest({
      requestId: params.request_id as string,
      toolName: params.tool_name as string,
      description: params.description as string,
      inputPreview: params.input_preview as string,
    });
  };

  // The client owns the process: its closing stdin (or a signal) ends the bridge.
  let stop!: () => void;
  const stopped = new Promise<'stopped'>((resolve) => (stop = () => resolve('stopped')));
  server.onclose = stop;
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const transport = new sdk.StdioServerTransport();

  /** One gateway connection, held until the client goes ('stopped') or the gateway does ('lost'). */
  const connection = (first: boolean) =>
    ctx.gateway.connect(
      flags,
      async (gateway) => {
        const gone = new Promise<'lost'>((resolve) => (lost = () => resolve('lost')));
        await bridge.attach(gateway);
        // MCP starts only once the gateway took us: a refused token is an error on stderr, not an MCP session.
        if (first) await server.connect(transport);
        if (verbose) log(`claw mcp serve: connected to ${ctx.gateway.target({ url: values.url }).url}`);
        const watchdog = setInterval(() => void bridge.checkAlive(LIVENESS_MS), LIVENESS_MS);
        const outcome = await Promise.race([stopped, gone]);
        clearInterval(watchdog);
        lost = undefined;
        bridge.detach();
        return outcome;
      },
      { onEvent: (event) => bridge.onGatewayEvent(event) },
    );

  let outcome = await connection(true);
  let delayMs = RECONNECT_FIRST_MS;
  while (outcome === 'lost') {
    log('claw mcp serve: the gateway connection was lost; reconnecting');
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      stopped,
      new Promise<'retry'>((resolve) => (timer = setTimeout(() => resolve('retry'), delayMs))),
    ]);
    clearTimeout(timer);
    if (next === 'stopped') break;
    try {
      outcome = await connection(false);
      delayMs = RECONNECT_FIRST_MS;
    } catch (error) {
      // A refusal (token revoked, scopes) will not heal by waiting; an absent gateway may come back.
      if ((error as { retryable?: boolean }).retryable !== true) throw error;
      if (verbose) log(`claw mcp serve: ${(error as Error).message}`);
      delayMs = Math.min(delayMs * 2, RECONNECT_MAX_MS);
    }
  }
  bridge.close();
  await server.close();
  if (verbose) log('claw mcp serve: client disconnected');
  return 0;
}
