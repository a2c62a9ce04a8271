/**
 * `claw mcp`: the registry of saved MCP servers (registry-cli.ts). Under --json a failure is
 * OpenClaw's `{ok:false,error:{type:"cli_error",message}}` on stdout with a nonzero exit, so a
 * script reads one JSON document whatever happened.
 */
import type { CliContext, PluginApi } from '../../sdk/index.js';
import { UsageError, unknownCommand } from '../../sdk/cli.js';
import { McpCliError } from './registry-config.js';
import * as registry from './registry-cli.js';

export const MCP_HELP = `Usage: claw mcp list [--json]                       saved MCP servers (mcp.servers), sorted
       claw mcp show [name] [--json]                 one saved definition, or all (credentials masked)
       claw mcp status [-v|--verbose] [--json]       transport, launch, timeouts of each, without connecting
       claw mcp doctor [name] [--probe] [--json]     setup problems: command, cwd, literal secrets, disabled
       claw mcp probe [name] [--json]                connect; tools, resources, prompts, diagnostics
       claw mcp add <name> --command <cmd> [--arg <a>]... [--env K=V]... [--cwd <dir>]
       claw mcp add <name> --url <url> [--transport sse|streamable-http] [--header K=V]...
              [--include csv] [--exclude csv] [--timeout <s>] [--connect-timeout <s>] [--parallel]
              [--approval auto|prompt|approve] [--disabled] [--no-probe]   (probes before saving)
       claw mcp set <name> '<json object>'           save a whole definition ("type":"http" → streamable-http)
       claw mcp configure <name> [--enable|--disable] [--include csv] [--exclude csv] [--clear-tools]
              [--timeout <s>] [--connect-timeout <s>] [--clear-timeouts] [--parallel|--no-parallel]
              [--approval auto|prompt|approve] [--probe]
       claw mcp tools <name> [--include csv] [--exclude csv] [--clear]   tool filter (names and * globs)
       claw mcp unset <name>                         remove a saved server
       claw mcp reload [--url <ws>] [--token <t>]    the running gateway retires its MCP runtimes
       claw mcp serve [--url <ws>] [--token-file <f>] [--claude-channel-mode on|off|auto] [-v]
              claw as a stdio MCP server: the gateway's conversations (claw mcp serve --help)
Tools appear to agents as <server>__<tool>. --approval sets codex.defaultToolsApprovalMode: approve never
asks, prompt asks on every call, auto asks by the agent's exec ask policy and the tool's annotations.
OAuth (login/logout, --auth) and TLS overrides are not supported: send a token in a header, e.g.
--header 'X-Api-Key=\${DOCS_KEY}' (saved as the reference, filled from the environment when connecting).`;

const COMMANDS = [
  'list',
  'show',
  'status',
  'doctor',
  'probe',
  'add',
  'set',
  'configure',
  'tools',
  'unset',
  'reload',
  'serve',
] as const;

/** `--json` before any `--` (the CLI re-adds the global flag there). */
const wantsJson = (argv: string[]) => {
  const end = argv.includes('--') ? argv.indexOf('--') : argv.length;
  return argv.slice(0, end).includes('--json');
};

export async function mcpCommand(argv: string[], ctx: CliContext, api: PluginApi): Promise<number> {
  const [action, ...rest] = argv;
  // Its own help and errors; stdout is the MCP stream. The MCP SDK loads only now.
  if (action === 'serve') return (await import('./serve/command.js')).mcpServe(rest, ctx, api);
  if (action === undefined || action === '--help' || action === 'help' || rest.includes('--help')) {
    ctx.stdout.write(`${MCP_HELP}\n`);
    return 0;
  }
  const json = wantsJson(rest);
  // stderr is masked by the CLI; stdout is this command's, so it masks what it prints itself.
  const mask = (text: string) => api.kernel.redact.text(text);
  const io = { ctx, api, json, out: (text: string) => void ctx.stdout.write(`${mask(text)}\n`) };
  try {
    switch (action) {
      case 'list':
        return registry.list(io, rest);
      case 'show':
        return registry.show(io, rest);
      case 'status':
        return registry.status(io, rest);
      case 'doctor':
        return await registry.doctor(io, rest);
      case 'probe':
        return await registry.probe(io, rest);
      case 'add':
        return await registry.add(io, rest);
      case 'set':
        return await registry.set(io, rest);
      case 'configure':
        return await registry.configure(io, rest);
      case 'tools':
        return await registry.tools(io, rest);
      case 'unset':
        return await registry.unset(io, rest);
      case 'reload':
        return await registry.reload(io, rest);
      case 'login':
      case 'logout':
        throw new McpCliError(
          `claw mcp ${action}: OAuth is not supported for MCP servers; send the token in a header instead (claw mcp add <name> --url <url> --header 'X-Api-Key=\${DOCS_KEY}')`,
        );
      default:
        throw unknownCommand('mcp', action, COMMANDS);
    }
  } catch (error) {
    if (!json) {
      if (!(error instanceof McpCliError)) throw error;
      ctx.stderr.write(`${error.message}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.out(JSON.stringify({ ok: false, error: { type: 'cli_error', message } }, null, 2));
    return error instanceof UsageError ? 2 : 1;
  }
}
