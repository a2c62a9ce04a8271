/**
 * `claw mcp list|show|status|doctor|probe|add|set|configure|tools|unset|reload`: OpenClaw's
 * registry of saved MCP servers (`mcp.servers`). Only probe, `doctor --probe` and add (unless
 * --no-probe) connect to a server; reload asks the running gateway to retire its MCP runtimes.
 */
import type { CliContext, PluginApi } from '../../sdk/index.js';
import { parseFlags, UsageError } from '../../sdk/cli.js';
import { describeResolved, tryResolve } from './describe.js';
import { staticIssues, type DoctorEntry } from './doctor.js';
import { probeIssue, probeServers, type ProbeResult } from './probe.js';
import { redactServer } from './redact.js';
import {
  changeServers,
  checkServerName,
  McpCliError,
  readRegistry,
  requireServer,
  substituteRefs,
  unknownServer,
  whenEffective,
  type Registry,
  type ServerDef,
} from './registry-config.js';

export type Out = (text: string) => void;
type Io = { ctx: CliContext; api: PluginApi; out: Out; json: boolean };

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Flags OpenClaw has for OAuth and TLS: claw has neither, so they are refused by name rather than ignored. */
const UNSUPPORTED = {
  auth: { type: 'string' },
  'clear-auth': { type: 'boolean' },
  'oauth-scope': { type: 'string' },
  'oauth-redirect-url': { type: 'string' },
  'oauth-client-metadata-url': { type: 'string' },
  'ssl-verify': { type: 'string' },
  'client-cert': { type: 'string' },
  'client-key': { type: 'string' },
  'clear-tls': { type: 'boolean' },
} as const;

function refuseUnsupported(values: Record<string, unknown>): void {
  const used = Object.keys(UNSUPPORTED).filter((flag) => values[flag] !== undefined);
  if (used.some((flag) => flag.includes('auth')))
    throw new UsageError(
      `claw does not support OAuth for MCP servers (--${used[0]}); send the token in a header instead, e.g. an Authorization header whose value references an environment variable (\${DOCS_TOKEN})`,
    );
  if (used.length > 0)
    throw new UsageError(
      `claw does not support TLS overrides for MCP servers (--${used[0]}); HTTPS servers are verified against the system's certificate authorities`,
    );
}

const csv = (value: string | undefined) => {
  const entries = value
    ?.split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries && entries.length > 0 ? entries : undefined;
};

function keyValues(values: string[] | undefined, flag: string): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const out: Record<string, string> = {};
  for (const entry of values) {
    const at = entry.indexOf('=');
    const key = at > 0 ? entry.slice(0, at).trim() : '';
    if (!key) throw new UsageError(`${flag} "${entry.split('=')[0]}…" must be KEY=VALUE with a non-empty key`);
    out[key] = entry.slice(at + 1);
  }
  return out;
}

/** `--timeout 20` is seconds on the command line, milliseconds in the config (OpenClaw's). */
function seconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!value.trim() || !Number.isFinite(parsed) || parsed <= 0)
    throw new UsageError(`${flag} must be a positive number of seconds, got "${value}"`);
  return Math.round(parsed * 1000);
}

function approvalMode(value: string | undefined): 'auto' | 'prompt' | 'approve' | undefined {
  if (value === undefined) return undefined;
  const mode = value.trim().toLowerCase();
  if (mode !== 'auto' && mode !== 'prompt' && mode !== 'approve')
    throw new UsageError(`--approval must be "auto", "prompt" or "approve", got "${value}"`);
  return mode;
}

function oneName(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`usage: ${usage}`);
  return positionals[0]!;
}

function select(registry: Registry, name: string | undefined): Record<string, ServerDef> {
  if (name === undefined) return registry.servers;
  requireServer(registry, name);
  return { [name]: registry.servers[name]! };
}

const sorted = <T>(record: Record<string, T>) => Object.entries(record).sort(([a], [b]) => a.localeCompare(b));

// ---- read commands ------------------------------------------------------------------------

export function list({ api, out, json: asJson }: Io, argv: string[]): number {
  const { positionals } = parseFlags(argv, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError('usage: claw mcp list [--json]');
  const registry = readRegistry(api);
  if (asJson) {
    out(json(Object.fromEntries(sorted(registry.servers).map(([name, server]) => [name, redactServer(server)]))));
    return 0;
  }
  const entries = sorted(registry.servers);
  if (entries.length === 0) {
    out(`No MCP servers configured in ${registry.path}. Add one with claw mcp add <name> --command <command>.`);
    return 0;
  }
  out(`MCP servers (${registry.path}):`);
  for (const [name, server] of entries) out(`- ${name}${server.enabled === false ? ' (disabled)' : ''}`);
  return 0;
}

export function show({ api, out, json: asJson }: Io, argv: string[]): number {
  const { positionals } = parseFlags(argv, { json: { type: 'boolean' } });
  if (positionals.length > 1) throw new UsageError('usage: claw mcp show [name] [--json]');
  const registry = readRegistry(api);
  const name = positionals[0];
  const value = name
    ? redactServer(requireServer(registry, name))
    : Object.fromEntries(sorted(registry.servers).map(([key, server]) => [key, redactServer(server)]));
  if (!asJson) out(name ? `MCP server "${name}" (${registry.path}):` : `MCP servers (${registry.path}):`);
  out(json(value));
  return 0;
}

export interface StatusEntry {
  name: string;
  configured: true;
  enabled: boolean;
  ok: boolean;
  transport?: string;
  launch?: string;
  error?: string;
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
  supportsParallelToolCalls?: boolean;
  toolFilter?: unknown;
  codex?: unknown;
}

/** OpenClaw's `mcp status --json` entries, classified from the definitions alone. */
export function statusEntries(servers: Record<string, ServerDef>): StatusEntry[] {
  return sorted(servers).map(([name, server]) => {
    const resolved = tryResolve(name, server);
    const enabled = server.enabled !== false;
    const good = 'error' in resolved ? undefined : resolved;
    return {
      name,
      configured: true,
      enabled,
      ok: enabled && good !== undefined,
      ...(good
        ? {
            transport: good.transport,
            launch: describeResolved(good),
            requestTimeoutMs: good.requestTimeoutMs,
            connectionTimeoutMs: good.connectionTimeoutMs,
            supportsParallelToolCalls: server.supportsParallelToolCalls === true,
          }
        : { error: (resolved as { error: string }).error }),
      ...(server.toolFilter !== undefined ? { toolFilter: server.toolFilter } : {}),
      ...(server.codex !== undefined ? { codex: server.codex } : {}),
    };
  });
}

export function status({ api, out, json: asJson }: Io, argv: string[]): number {
  const { values, positionals } = parseFlags(argv, {
    json: { type: 'boolean' },
    verbose: { type: 'boolean', short: 'v' },
  });
  if (positionals.length > 0) throw new UsageError('usage: claw mcp status [--verbose] [--json]');
  const registry = readRegistry(api);
  const servers = statusEntries(registry.servers);
  if (asJson) {
    out(json({ path: registry.path, servers }));
    return 0;
  }
  if (servers.length === 0) {
    out(`No MCP servers configured in ${registry.path}.`);
    return 0;
  }
  out(`MCP server status (${registry.path}):`);
  for (const entry of servers) {
    const state = !entry.enabled ? 'disabled' : (entry.transport ?? 'invalid');
    const marks = `${entry.toolFilter ? ' tool-filtered' : ''}${entry.supportsParallelToolCalls ? ' parallel' : ''}`;
    out(`- ${entry.name}: ${state}${marks}`);
    if (!values.verbose) continue;
    if (entry.error) out(`  error: ${entry.error}`);
    else {
      out(`  launch: ${entry.launch}`);
      out(`  timeouts: connect=${entry.connectionTimeoutMs}ms request=${entry.requestTimeoutMs}ms`);
    }
    if (entry.toolFilter) out(`  tools: ${JSON.stringify(entry.toolFilter)}`);
    const mode = (entry.codex as { defaultToolsApprovalMode?: string } | undefined)?.defaultToolsApprovalMode;
    out(`  approval: ${mode ?? 'auto'}`);
  }
  return 0;
}

export async function doctor({ ctx, api, out, json: asJson }: Io, argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' }, probe: { type: 'boolean' } });
  if (positionals.length > 1) throw new UsageError('usage: claw mcp doctor [name] [--probe] [--json]');
  const registry = readRegistry(api);
  const selected = select(registry, positionals[0]);
  const servers: DoctorEntry[] = [];
  for (const [name, raw] of sorted(selected)) {
    const host = { path: ctx.env.PATH, workspaceDir: api.kernel.paths.workspaceDir };
    const issues = await staticIssues(name, raw, registry.resolved[name] ?? raw, host);
    for (const note of registry.unset[name] ?? []) issues.push({ level: 'warning', message: note });
    if (values.probe && raw.enabled !== false && !issues.some((issue) => issue.level === 'error')) {
      const result = await probeServers(api, { [name]: registry.resolved[name] ?? raw }, { [name]: raw });
      const failure = probeIssue(result, { [name]: raw }, registry.path);
      const server = result.servers[name];
      if (failure) issues.push({ level: 'error', message: `probe failed: ${failure}` });
      else if (server?.approvalHint)
        issues.push({ level: 'info', message: `approval mode ${server.codexApprovalMode}: ${server.approvalHint}` });
    }
    servers.push({ name, ok: !issues.some((issue) => issue.level === 'error'), issues });
  }
  const ok = servers.every((server) => server.ok);
  if (asJson) {
    out(json({ ok, path: registry.path, servers }));
    return ok ? 0 : 1;
  }
  if (servers.length === 0) {
    out(`No MCP servers configured in ${registry.path}. Add one with claw mcp add <name> --command <command>.`);
    return 0;
  }
  out(`MCP doctor (${registry.path}):`);
  for (const server of servers) {
    out(`- ${server.name}: ${server.ok ? 'ok' : 'issues'}`);
    for (const issue of server.issues)
      out(
        `  ${issue.level === 'error' ? '!' : issue.level === 'warning' ? '-' : 'i'} ${issue.level}: ${issue.message}`,
      );
  }
  if (!ok) ctx.stderr.write('MCP doctor found errors.\n');
  return ok ? 0 : 1;
}

export async function probe({ ctx, api, out, json: asJson }: Io, argv: string[]): Promise<number> {
  const { positionals } = parseFlags(argv, { json: { type: 'boolean' } });
  if (positionals.length > 1) throw new UsageError('usage: claw mcp probe [name] [--json]');
  const registry = readRegistry(api);
  const name = positionals[0];
  const selected = select(registry, name);
  if (name && selected[name]!.enabled === false)
    throw new McpCliError(
      `MCP server "${name}" is disabled in ${registry.path}. Run claw mcp configure ${name} --enable before probing it.`,
    );
  const enabled = sorted(selected).filter(([, server]) => server.enabled !== false);
  if (!asJson && enabled.length === 0) {
    out(
      `No enabled MCP servers in ${registry.path}. Add one with claw mcp add <name> --command <command> or enable one with claw mcp configure <name> --enable.`,
    );
    return 0;
  }
  for (const [key] of enabled)
    for (const note of registry.unset[key] ?? []) ctx.stderr.write(`warning: ${key}: ${note}\n`);
  const result = await probeServers(
    api,
    Object.fromEntries(enabled.map(([key, server]) => [key, registry.resolved[key] ?? server])),
    registry.servers,
  );
  if (asJson) out(json(result));
  else printProbe(out, registry.path, result);
  const failure = probeIssue(result, selected, registry.path);
  if (failure) ctx.stderr.write(`${failure}\n`);
  return failure ? 1 : 0;
}

function printProbe(out: Out, path: string, result: ProbeResult): void {
  out(`MCP probe (${path}):`);
  for (const [name, server] of Object.entries(result.servers)) {
    const extras = `${server.resources ? ', resources' : ''}${server.prompts ? ', prompts' : ''}`;
    out(`- ${name}: ${server.tools} tools${extras}, approval ${server.codexApprovalMode}`);
    if (server.approvalHint) out(`  i ${server.approvalHint}`);
    for (const warning of server.warnings ?? []) out(`  - warning: ${warning}`);
  }
  for (const diagnostic of result.diagnostics) out(`! ${diagnostic.serverName}: ${diagnostic.message}`);
}

// ---- write commands -----------------------------------------------------------------------

/** Probe a definition before it is saved; its failure stops the save. */
async function probeBeforeSaving(io: Io, registry: Registry, name: string, server: ServerDef): Promise<void> {
  const result = await probeServers(io.api, { [name]: substituteRefs(server, io.ctx.env) }, { [name]: server });
  const failure = probeIssue(result, { [name]: server }, registry.path);
  if (failure)
    throw new McpCliError(`${failure.replace(/\.?$/, '.')} Nothing was saved (--no-probe saves without connecting).`);
  for (const warning of result.servers[name]?.warnings ?? []) io.ctx.stderr.write(`warning: ${warning}\n`);
}

/**
 * `--arg -y`, `--arg --api-key`: a stdio server's arguments are often flags themselves, which
 * Node's parser would take for claw's own. The word after `--arg` is always its value.
 */
function bindArgValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index]!;
    if (word === '--') {
      out.push(...argv.slice(index));
      break;
    }
    if (word === '--arg' && index + 1 < argv.length) out.push(`--arg=${argv[++index]}`);
    else out.push(word);
  }
  return out;
}

export async function add(io: Io, argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(bindArgValues(argv), {
    command: { type: 'string' },
    arg: { type: 'string', multiple: true },
    env: { type: 'string', multiple: true },
    cwd: { type: 'string' },
    url: { type: 'string' },
    transport: { type: 'string' },
    header: { type: 'string', multiple: true },
    include: { type: 'string' },
    exclude: { type: 'string' },
    timeout: { type: 'string' },
    'connect-timeout': { type: 'string' },
    parallel: { type: 'boolean' },
    approval: { type: 'string' },
    disabled: { type: 'boolean' },
    'no-probe': { type: 'boolean' },
    ...UNSUPPORTED,
  } as const);
  refuseUnsupported(values);
  const name = checkServerName(oneName(positionals, 'claw mcp add <name> --command <cmd> | --url <url> [flags]'));
  const command = values.command?.trim();
  const url = values.url?.trim();
  if (command && url) throw new UsageError('Specify either --command for stdio or --url for HTTP, not both.');
  if (!command && !url) throw new UsageError('Specify --command for stdio or --url for HTTP.');
  const server: ServerDef = {};
  if (command) {
    server.command = command;
    if (values.arg?.length) server.args = values.arg;
    const env = keyValues(values.env, '--env');
    if (env) server.env = env;
    if (values.cwd?.trim()) server.cwd = values.cwd.trim();
    if (values.transport || values.header?.length)
      throw new UsageError('--transport and --header are for HTTP servers (--url)');
  } else {
    server.url = url;
    if (values.transport) server.transport = values.transport;
    const headers = keyValues(values.header, '--header');
    if (headers) server.headers = headers;
    if (values.arg?.length || values.env?.length || values.cwd)
      throw new UsageError('--arg, --env and --cwd are for stdio servers (--command)');
  }
  if (values.disabled) server.enabled = false;
  if (values.parallel) server.supportsParallelToolCalls = true;
  const mode = approvalMode(values.approval);
  if (mode) server.codex = { defaultToolsApprovalMode: mode };
  const requestTimeoutMs = seconds(values.timeout, '--timeout');
  const connectionTimeoutMs = seconds(values['connect-timeout'], '--connect-timeout');
  if (requestTimeoutMs) server.requestTimeoutMs = requestTimeoutMs;
  if (connectionTimeoutMs) server.connectionTimeoutMs = connectionTimeoutMs;
  const include = csv(values.include);
  const exclude = csv(values.exclude);
  if (include || exclude) server.toolFilter = { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) };
  const invalid = tryResolve(name, server);
  if ('error' in invalid) throw new UsageError(invalid.error);

  const registry = readRegistry(io.api);
  if (Object.hasOwn(registry.servers, name)) throw new McpCliError(`MCP server "${name}" already exists.`);
  if (!values['no-probe'] && server.enabled !== false) await probeBeforeSaving(io, registry, name, server);
  const change = await changeServers(io.ctx, `claw mcp add ${name}`, (servers) => {
    if (Object.hasOwn(servers, name)) throw new McpCliError(`MCP server "${name}" already exists.`);
    servers[name] = server;
  });
  io.out(`Saved MCP server "${name}" to ${registry.path}.${whenEffective(io.ctx, change)}`);
  return 0;
}

/** OpenClaw's OAuth and TLS keys: claw implements neither, so a definition carrying them is refused, not half-applied. */
const UNSUPPORTED_KEYS = ['auth', 'oauth', 'sslVerify', 'clientCert', 'clientKey'];

/** `type` is how Claude Code and other clients spell the transport; the saved shape uses `transport` (OpenClaw's). */
function normalizeDefinition(value: Record<string, unknown>): ServerDef {
  const unsupported = UNSUPPORTED_KEYS.filter((key) => key in value);
  if (unsupported.length > 0)
    throw new UsageError(
      `claw does not support ${unsupported.join(', ')} for MCP servers (no OAuth, no TLS overrides); send a token in "headers" instead`,
    );
  const { type, ...rest } = value;
  if (type === undefined) return rest;
  if (type === 'http' || type === 'streamable-http' || type === 'sse') {
    if (rest.transport === undefined) rest.transport = type === 'sse' ? 'sse' : 'streamable-http';
    return rest;
  }
  if (type === 'stdio') return rest;
  throw new UsageError(`"type": ${JSON.stringify(type)} is not an MCP transport (stdio, sse, http or streamable-http)`);
}

export async function set(io: Io, argv: string[]): Promise<number> {
  const { positionals } = parseFlags(argv, {});
  if (positionals.length !== 2) throw new UsageError(`usage: claw mcp set <name> '<json object>'`);
  const name = checkServerName(positionals[0]!);
  let parsed: unknown;
  try {
    parsed = JSON.parse(positionals[1]!);
  } catch (error) {
    throw new UsageError(`the value is not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UsageError('the value must be one JSON object, e.g. {"command":"uvx","args":["context7-mcp"]}');
  const server = normalizeDefinition(parsed as Record<string, unknown>);
  const change = await changeServers(io.ctx, `claw mcp set ${name}`, (servers) => {
    servers[name] = server;
  });
  io.out(`Saved MCP server "${name}" to ${readRegistry(io.api).path}.${whenEffective(io.ctx, change)}`);
  return 0;
}

export async function configure(io: Io, argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    enable: { type: 'boolean' },
    disable: { type: 'boolean' },
    include: { type: 'string' },
    exclude: { type: 'string' },
    'clear-tools': { type: 'boolean' },
    timeout: { type: 'string' },
    'connect-timeout': { type: 'string' },
    'clear-timeouts': { type: 'boolean' },
    parallel: { type: 'boolean' },
    'no-parallel': { type: 'boolean' },
    approval: { type: 'string' },
    probe: { type: 'boolean' },
    ...UNSUPPORTED,
  });
  refuseUnsupported(values);
  const name = oneName(positionals, 'claw mcp configure <name> [flags]');
  if (values.enable && values.disable) throw new UsageError('Specify only one of --enable or --disable.');
  if (values.parallel && values['no-parallel'])
    throw new UsageError('Specify only one of --parallel or --no-parallel.');
  const include = csv(values.include);
  const exclude = csv(values.exclude);
  const requestTimeoutMs = seconds(values.timeout, '--timeout');
  const connectionTimeoutMs = seconds(values['connect-timeout'], '--connect-timeout');
  const mode = approvalMode(values.approval);
  const update = (current: ServerDef): ServerDef => {
    const next: ServerDef = { ...current };
    if (values.enable) delete next.enabled;
    if (values.disable) next.enabled = false;
    if (values['clear-tools']) delete next.toolFilter;
    else if (include || exclude)
      next.toolFilter = {
        ...(next.toolFilter as object | undefined),
        ...(include ? { include } : {}),
        ...(exclude ? { exclude } : {}),
      };
    if (values['clear-timeouts']) {
      delete next.requestTimeoutMs;
      delete next.connectionTimeoutMs;
    }
    if (requestTimeoutMs) next.requestTimeoutMs = requestTimeoutMs;
    if (connectionTimeoutMs) next.connectionTimeoutMs = connectionTimeoutMs;
    if (values.parallel) next.supportsParallelToolCalls = true;
    if (values['no-parallel']) delete next.supportsParallelToolCalls;
    if (mode) next.codex = { ...(next.codex as object | undefined), defaultToolsApprovalMode: mode };
    return next;
  };
  const registry = readRegistry(io.api);
  const planned = update(requireServer(registry, name));
  if (values.probe && planned.enabled !== false) await probeBeforeSaving(io, registry, name, planned);
  const change = await changeServers(io.ctx, `claw mcp configure ${name}`, (servers) => {
    const current = servers[name];
    if (!current || typeof current !== 'object') throw unknownServer(name, registry.path);
    servers[name] = update(current as ServerDef);
  });
  io.out(
    `${change.changed ? 'Updated' : 'Nothing to change in'} MCP server "${name}" in ${registry.path}.${change.changed ? whenEffective(io.ctx, change) : ''}`,
  );
  return 0;
}

export async function tools(io: Io, argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    include: { type: 'string' },
    exclude: { type: 'string' },
    clear: { type: 'boolean' },
  });
  const name = oneName(positionals, 'claw mcp tools <name> [--include csv] [--exclude csv] [--clear]');
  if (!values.clear && values.include === undefined && values.exclude === undefined)
    throw new UsageError('Specify --include, --exclude, or --clear.');
  const include = csv(values.include);
  const exclude = csv(values.exclude);
  const registry = readRegistry(io.api);
  requireServer(registry, name);
  const change = await changeServers(io.ctx, `claw mcp tools ${name}`, (servers) => {
    const current = servers[name] as ServerDef | undefined;
    if (!current || typeof current !== 'object') throw unknownServer(name, registry.path);
    const next = { ...current };
    if (values.clear || (!include && !exclude)) delete next.toolFilter;
    else next.toolFilter = { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) };
    servers[name] = next;
  });
  io.out(`Updated MCP tool selection for "${name}" in ${registry.path}.${whenEffective(io.ctx, change)}`);
  return 0;
}

export async function unset(io: Io, argv: string[]): Promise<number> {
  const { positionals } = parseFlags(argv, {});
  const name = oneName(positionals, 'claw mcp unset <name>');
  const registry = readRegistry(io.api);
  requireServer(registry, name);
  const change = await changeServers(io.ctx, `claw mcp unset ${name}`, (servers) => {
    if (!Object.hasOwn(servers, name)) throw unknownServer(name, registry.path);
    delete servers[name];
  });
  io.out(`Removed MCP server "${name}" from ${registry.path}.${whenEffective(io.ctx, change)}`);
  return 0;
}

export interface ReloadAnswer {
  ok: boolean;
  /** How many server runtimes were running. */
  retired: number;
}

export async function reload({ ctx, out, json: asJson }: Io, argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    json: { type: 'boolean' },
    url: { type: 'string' },
    token: { type: 'string' },
    password: { type: 'string' },
    timeout: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError('usage: claw mcp reload [--url <ws>] [--token <t>] [--json]');
  if (values.url === undefined && !ctx.gateway.running()) {
    if (asJson) out(json({ ok: true, gateway: false, retired: 0 }));
    else
      out(
        'No gateway is running, so no MCP runtimes are cached: the next gateway start and every CLI command read the saved servers afresh.',
      );
    return 0;
  }
  const answer = await ctx.gateway.connect(values, (gateway) => gateway.request<ReloadAnswer>('mcp.reload', {}));
  if (asJson) out(json({ ok: true, gateway: true, retired: answer.retired }));
  else
    out(
      answer.retired > 0
        ? `Retired ${answer.retired} MCP server runtime${answer.retired === 1 ? '' : 's'} in the running gateway; each starts again with the saved config on next use.`
        : 'The running gateway had no MCP runtimes to retire; servers start with the saved config on next use.',
    );
  return 0;
}
