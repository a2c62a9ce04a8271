/**
 * The saved MCP server definitions (`mcp.servers` in openclaw.json) as the registry commands
 * read and change them: read from the file as written (so `${VAR}` references stay
 * references), changed through the CLI's config write path (the running gateway when there is
 * one, else the file under the config lock; validated, atomic, owner-only).
 */
import type { CliContext, ConfigChange, PluginApi } from '../../sdk/index.js';

export type ServerDef = Record<string, unknown>;

/** A failure `claw mcp` reports as OpenClaw does: a message (or `{ok:false,error:{type:"cli_error"}}` under --json), exit 1. */
export class McpCliError extends Error {
  override name = 'McpCliError';
}

export interface Registry {
  path: string;
  /** As written in the file. */
  servers: Record<string, ServerDef>;
  /** With `${VAR}` references substituted: what connecting uses. */
  resolved: Record<string, ServerDef>;
  /** Per server, the settings left out because a `${VAR}` they reference is not set. */
  unset: Record<string, string[]>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function serversOf(root: unknown): Record<string, ServerDef> {
  const mcp = isRecord(root) ? root.mcp : undefined;
  const servers = isRecord(mcp) ? mcp.servers : undefined;
  if (!isRecord(servers)) return {};
  return Object.fromEntries(
    Object.entries(servers).filter((entry): entry is [string, ServerDef] => isRecord(entry[1])),
  );
}

export function readRegistry(api: PluginApi): Registry {
  const snapshot = api.kernel.configFile.read();
  const broken = snapshot.issues.filter(
    (issue) => issue.level === 'error' && (issue.path === '<file>' || /^mcp(\.|$)/.test(issue.path)),
  );
  if (broken.length > 0)
    throw new McpCliError(
      `invalid config ${snapshot.path}: ${broken.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
    );
  const unset: Record<string, string[]> = {};
  for (const issue of snapshot.issues) {
    const at = /^mcp\.servers\.([A-Za-z0-9_-]+)\.(.+)$/.exec(issue.path);
    if (at && issue.level === 'warning' && issue.message.includes('not set in the environment'))
      (unset[at[1]!] ??= []).push(`${at[2]} ${issue.message}`);
  }
  return { path: snapshot.path, servers: serversOf(snapshot.raw), resolved: serversOf(snapshot.resolved), unset };
}

export function unknownServer(name: string, path: string): McpCliError {
  return new McpCliError(`No MCP server named "${name}" in ${path}. Run claw mcp list to see configured servers.`);
}

export function requireServer(registry: Registry, name: string): ServerDef {
  if (!Object.hasOwn(registry.servers, name)) throw unknownServer(name, registry.path);
  return registry.servers[name]!;
}

/** `[A-Za-z0-9_-]+` without `__`: a tool is named `<server>__<tool>`, so the server part must be unambiguous. */
export function checkServerName(name: string): string {
  const trimmed = name.trim();
  if (!/^[A-Za-z0-9_-]+$/.test(trimmed))
    throw new McpCliError(`MCP server name "${name}" must be letters, digits, "-" or "_"`);
  if (trimmed.includes('__'))
    throw new McpCliError(
      `MCP server name "${name}" must not contain "__" (it separates server and tool in tool names)`,
    );
  return trimmed;
}

/** The open `mcp.servers` object of a raw config, created when missing. */
function serversIn(raw: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(raw.mcp)) raw.mcp = {};
  const mcp = raw.mcp as Record<string, unknown>;
  if (!isRecord(mcp.servers)) mcp.servers = {};
  return mcp.servers as Record<string, unknown>;
}

/** Drops `mcp.servers` (and `mcp`) once nothing is left in them, so unsetting the last server leaves no husk. */
function tidy(raw: Record<string, unknown>): void {
  const mcp = raw.mcp as Record<string, unknown> | undefined;
  if (isRecord(mcp?.servers) && Object.keys(mcp.servers).length === 0) delete mcp.servers;
  if (isRecord(mcp) && Object.keys(mcp).length === 0) delete raw.mcp;
}

/**
 * Change `mcp.servers` in openclaw.json. `edit` may run more than once (another writer got in
 * first) and must decide from the servers it is given; what it throws is the command's error.
 */
export function changeServers(
  ctx: CliContext,
  purpose: string,
  edit: (servers: Record<string, unknown>) => void,
): Promise<ConfigChange> {
  return ctx.gateway.changeConfig(purpose, (raw) => {
    edit(serversIn(raw));
    tidy(raw);
  });
}

/** What to say after a change, about when it takes effect. */
export function whenEffective(ctx: CliContext, change: ConfigChange): string {
  if (change.via === 'gateway') return ' The running gateway has applied it.';
  return ctx.gateway.running() ? '' : ' It takes effect when the gateway starts (claw gateway).';
}

/**
 * A definition not yet saved (`claw mcp add`, `configure --probe`) with its `${VAR}` references
 * filled from the environment, as the config loader would fill them once it is saved.
 */
export function substituteRefs(server: ServerDef, env: Record<string, string | undefined>): ServerDef {
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.replace(/\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match: string, name: string) => {
        if (match.startsWith('$$')) return match.slice(1);
        const found = env[name];
        if (found === undefined) throw new McpCliError(`\${${name}} is not set in the environment`);
        return found;
      });
    if (Array.isArray(value)) return value.map(fill);
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item)]));
    return value;
  };
  return fill(server) as ServerDef;
}
