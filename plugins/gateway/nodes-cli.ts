/**
 * `claw nodes …`: OpenClaw's `openclaw nodes` over the running gateway's node.* methods — who is
 * paired, pending and connected, approving and removing nodes, and sending one a command. Flags
 * and `--json` output are OpenClaw's; without `--json` it prints tables like claw's other commands.
 */
import { randomUUID } from 'node:crypto';
import type { CliContext, GatewayConnection } from '../../sdk/index.js';
import { GatewayRequestError, parseFlags, unknownCommand, UsageError } from '../../sdk/cli.js';

const ACTIONS = [
  'list',
  'status',
  'describe',
  'pending',
  'approve',
  'reject',
  'remove',
  'rename',
  'invoke',
  'notify',
  'run',
] as const;

const HELP = `Usage: claw nodes <command> [options]

  status [--connected] [--last-connected <24h>]   known nodes, connection and capabilities
  list [--connected] [--last-connected <24h>]     pending and paired nodes
  describe --node <id|name|ip|prefix>             one node: caps, effective and pending commands
  pending                                         pairing requests waiting for approval
  approve <requestId> | reject <requestId>        decide a pairing request
  remove --node <…>                               take the node pairing away (disconnects it)
  rename --node <…> --name <displayName>
  invoke --node <…> --command <cmd> [--params '<json>'] [--invoke-timeout <ms>] [--idempotency-key <k>]
  notify --node <…> --title <t> --body <b> [--sound <name>] [--priority passive|active|timeSensitive]
         [--delivery system|overlay|auto] [--invoke-timeout <ms>]
  run --node <…> [--cwd <dir>] [--command-timeout <s>] -- <command…>
                                                  a shell command on the node (the exec tool, host node)

--node takes an exact id, IP, display name or an id prefix of six or more characters; connected
nodes win ties. system.run is never sent by invoke: use run (it passes exec approvals).

Options: --url <ws://…>  --token  --password  --timeout <ms> (default 30000)  --json`;

const FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  password: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  node: { type: 'string' },
  name: { type: 'string' },
  connected: { type: 'boolean' },
  'last-connected': { type: 'string' },
  command: { type: 'string' },
  params: { type: 'string' },
  'invoke-timeout': { type: 'string' },
  'idempotency-key': { type: 'string' },
  title: { type: 'string' },
  body: { type: 'string' },
  sound: { type: 'string' },
  priority: { type: 'string' },
  delivery: { type: 'string' },
  cwd: { type: 'string' },
  'command-timeout': { type: 'string' },
} as const;

type Values = ReturnType<typeof parseFlags<typeof FLAGS>>['values'];

/** What node.list says of a node (the fields this command reads). */
interface NodeRow {
  nodeId: string;
  displayName?: string | null;
  platform?: string | null;
  version?: string | null;
  remoteIp?: string | null;
  caps?: string[];
  commands?: string[];
  approvalState?: string | null;
  pendingRequestId?: string | null;
  pendingDeclaredCommands?: string[] | null;
  connected?: boolean;
  paired?: boolean;
  connectedAtMs?: number | null;
  lastConnectedAtMs?: number | null;
  lastSeenAtMs?: number | null;
  [key: string]: unknown;
}

interface PendingRow {
  requestId: string;
  nodeId: string;
  displayName?: string | null;
  platform?: string | null;
  remoteIp?: string | null;
  commands?: string[];
  requiredApproveScopes?: string[];
  ts?: number;
  [key: string]: unknown;
}

/** Commands only the exec tool may send (it runs them through exec approvals). */
const SHELL_COMMANDS = new Set(['system.run', 'system.run.prepare']);
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `24h`, `7d`, `90m`, `500ms` (a bare number is milliseconds, as OpenClaw reads it). */
export function parseDuration(text: string, flag: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new UsageError(`${flag} must be a duration such as 30m, 24h or 7d, got "${text}"`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!);
}

function positiveInteger(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text.trim());
  if (!text.trim() || !Number.isInteger(value) || value <= 0)
    throw new UsageError(`${flag} must be a positive whole number of milliseconds, got "${text}"`);
  return value;
}

/**
 * One node for `--node`: the strongest kind of match wins (exact id, then IP, then display name,
 * then an id prefix of six or more), connected nodes first within it; a tie is an error listing them.
 */
export function resolveNode(nodes: NodeRow[], query: string): NodeRow {
  const q = query.trim();
  if (!q) throw new UsageError('--node must not be empty (an id, IP, display name or id prefix)');
  const lower = q.toLowerCase();
  const tiers: Array<(node: NodeRow) => boolean> = [
    (node) => node.nodeId === q,
    (node) => node.remoteIp === q,
    (node) => (node.displayName ?? '').toLowerCase() === lower,
    (node) => q.length >= 6 && node.nodeId.toLowerCase().startsWith(lower),
  ];
  for (const matches of tiers) {
    const found = nodes.filter(matches);
    if (found.length === 0) continue;
    const connected = found.filter((node) => node.connected);
    const pick = connected.length > 0 ? connected : found;
    if (pick.length === 1) return pick[0]!;
    throw new GatewayRequestError({
      code: 'AMBIGUOUS',
      message: `--node "${q}" matches ${pick.length} nodes: ${pick.map(label).join('; ')} (use the exact id)`,
    });
  }
  const known = nodes.map(label).join('; ') || 'none';
  throw new GatewayRequestError({ code: 'NOT_FOUND', message: `no node matches "${q}" (known: ${known})` });
}

const label = (node: { nodeId: string; displayName?: string | null }) =>
  node.displayName ? `${node.displayName} (${node.nodeId.slice(0, 12)})` : node.nodeId;

function ago(ms: number | null | undefined, now: number): string {
  if (typeof ms !== 'number') return '-';
  const delta = Math.max(0, now - ms);
  if (delta < 60_000) return `${Math.round(delta / 1000)}s ago`;
  if (delta < 3_600_000) return `${Math.round(delta / 60_000)}m ago`;
  if (delta < 86_400_000) return `${Math.round(delta / 3_600_000)}h ago`;
  return `${Math.round(delta / 86_400_000)}d ago`;
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((title, index) => Math.max(title.length, ...rows.map((row) => row[index]!.length)));
  return [head, ...rows]
    .map((row) =>
      row
        .map((cell, index) => cell.padEnd(widths[index]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const list = (values: string[] | null | undefined) => (values && values.length > 0 ? values.join(', ') : '-');

function connectionFilter(values: Values): (node: NodeRow) => boolean {
  const since =
    values['last-connected'] === undefined ? undefined : parseDuration(values['last-connected'], '--last-connected');
  const now = Date.now();
  return (node) => {
    if (values.connected && !node.connected) return false;
    if (since === undefined) return true;
    const last = node.lastConnectedAtMs ?? node.connectedAtMs;
    return typeof last === 'number' && now - last <= since;
  };
}

function approvalHints(nodes: NodeRow[]): string[] {
  return nodes
    .filter((node) => node.pendingRequestId && String(node.approvalState ?? '').startsWith('pending'))
    .map(
      (node) =>
        `${node.approvalState === 'pending-reapproval' ? 'Reapproval' : 'Approval'} pending for ${label(node)}: claw nodes approve ${node.pendingRequestId}`,
    );
}

export async function nodes(argv: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS);
  const [action, ...rest] = positionals;
  if (values.help || action === undefined || action === 'help') {
    ctx.stdout.write(`${HELP}\n`);
    return action === undefined && !values.help ? 1 : 0;
  }
  if (!(ACTIONS as readonly string[]).includes(action)) throw unknownCommand('nodes', action, ACTIONS);
  const out = (text: string) => ctx.stdout.write(`${text}\n`);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  const flags = { url: values.url, token: values.token, password: values.password, timeout: values.timeout };
  const transportMs = positiveInteger(values.timeout, '--timeout', 30_000);
  const need = (value: string | undefined, flag: string): string => {
    if (value === undefined || !value.trim()) throw new UsageError(`claw nodes ${action} needs ${flag}`);
    return value.trim();
  };
  const nodeList = async (gw: GatewayConnection) =>
    ((await gw.request<{ nodes?: NodeRow[] }>('node.list', {})).nodes ?? []) as NodeRow[];
  const target = async (gw: GatewayConnection) => resolveNode(await nodeList(gw), need(values.node, '--node'));

  // Checked before connecting, so a mistyped command costs no round trip.
  const request = action === 'invoke' ? invokeRequest(values, need) : undefined;
  const notice = action === 'notify' ? notifyRequest(values) : undefined;
  const shell = action === 'run' ? runCommandLine(rest, argv) : undefined;
  if ((action === 'approve' || action === 'reject') && !rest[0])
    throw new UsageError(`usage: claw nodes ${action} <requestId>`);

  return ctx.gateway.connect(flags, async (gw) => {
    const now = Date.now();
    switch (action) {
      case 'status': {
        const result = await gw.request<Record<string, unknown> & { nodes?: NodeRow[] }>('node.list', {});
        const all = result.nodes ?? [];
        const shown = all.filter(connectionFilter(values));
        if (values.json) {
          json({ ...result, ts: result.ts ?? now, nodes: shown });
          return 0;
        }
        const of = shown.length === all.length ? '' : ` (of ${all.length})`;
        out(
          `Known: ${shown.length}${of} · Paired: ${shown.filter((n) => n.paired).length} · Connected: ${shown.filter((n) => n.connected).length}`,
        );
        if (shown.length === 0) return 0;
        const rows = shown.map((node) => [
          node.displayName ?? '-',
          node.nodeId.slice(0, 12),
          node.remoteIp ?? '-',
          node.platform ?? '-',
          `${node.paired ? 'paired' : 'unpaired'} · ${node.connected ? `connected ${ago(node.connectedAtMs, now)}` : 'disconnected'}${node.approvalState && node.approvalState !== 'approved' ? ` · ${node.approvalState}` : ''}`,
          list(node.caps),
          list(node.commands),
        ]);
        out(table(['NODE', 'ID', 'IP', 'PLATFORM', 'STATUS', 'CAPS', 'COMMANDS'], rows));
        for (const hint of approvalHints(shown)) out(hint);
        return 0;
      }
      case 'list': {
        const pairs = await gw.request<{ pending?: PendingRow[]; paired?: NodeRow[] }>('node.pair.list', {});
        const live = new Map((await nodeList(gw)).map((node) => [node.nodeId, node]));
        const pending = pairs.pending ?? [];
        // As OpenClaw: paired records, with what the live catalog knows of each on top.
        const paired = (pairs.paired ?? []).map((node) => ({
          ...node,
          ...live.get(node.nodeId),
          lastConnectedAtMs: live.get(node.nodeId)?.lastConnectedAtMs ?? node.lastConnectedAtMs ?? null,
        }));
        const shown = paired.filter(connectionFilter(values));
        if (values.json) {
          json({ pending, paired: shown });
          return 0;
        }
        const of = shown.length === paired.length ? '' : ` (of ${paired.length})`;
        out(`Pending: ${pending.length} · Paired: ${shown.length}${of}`);
        if (pending.length > 0) out(`\n${pendingTable(pending, now)}`);
        if (shown.length > 0) {
          const rows = shown.map((node) => [
            node.displayName ?? '-',
            node.nodeId.slice(0, 12),
            node.remoteIp ?? '-',
            node.connected ? 'connected' : 'disconnected',
            ago(node.lastConnectedAtMs, now),
            list(node.commands),
          ]);
          out(`\n${table(['NODE', 'ID', 'IP', 'STATUS', 'LAST CONNECT', 'COMMANDS'], rows)}`);
        }
        return 0;
      }
      case 'describe': {
        const node = await target(gw);
        const result = await gw.request<NodeRow>('node.describe', { nodeId: node.nodeId });
        if (values.json) {
          json(result);
          return 0;
        }
        const lines: Array<[string, string]> = [
          ['Node', result.displayName ?? '-'],
          ['ID', result.nodeId],
          ['Platform', `${result.platform ?? '-'}${result.version ? ` (${result.version})` : ''}`],
          ['IP', result.remoteIp ?? '-'],
          [
            'Status',
            `${result.paired ? 'paired' : 'unpaired'} · ${result.connected ? 'connected' : 'disconnected'} · ${result.approvalState ?? '-'}`,
          ],
          ['Last seen', ago(result.lastSeenAtMs ?? result.lastConnectedAtMs, now)],
          ['Caps', list(result.caps)],
          ['Commands', list(result.commands)],
        ];
        if (result.pendingRequestId)
          lines.push([
            'Pending',
            `${list(result.pendingDeclaredCommands)} (claw nodes approve ${result.pendingRequestId})`,
          ]);
        const width = Math.max(...lines.map(([key]) => key.length));
        out(lines.map(([key, value]) => `${key.padEnd(width)}  ${value}`).join('\n'));
        return 0;
      }
      case 'pending': {
        const pending = (await gw.request<{ pending?: PendingRow[] }>('node.pair.list', {})).pending ?? [];
        if (values.json) {
          json(pending);
          return 0;
        }
        out(pending.length === 0 ? 'No pending pairing requests.' : pendingTable(pending, now));
        return 0;
      }
      case 'approve':
      case 'reject': {
        const requestId = rest[0]!;
        const result = await gw.request<Record<string, any>>(`node.pair.${action}`, { requestId });
        if (values.json) {
          json(result);
          return 0;
        }
        const nodeId: string = result.node?.nodeId ?? result.nodeId ?? '';
        out(
          `${action === 'approve' ? 'Approved' : 'Rejected'} request ${requestId}${nodeId ? ` (node ${nodeId})` : ''}.`,
        );
        return 0;
      }
      case 'remove': {
        const node = await target(gw);
        const result = await gw.request('node.pair.remove', { nodeId: node.nodeId });
        if (values.json) {
          json(result);
          return 0;
        }
        out(`Removed paired node ${label(node)}.`);
        return 0;
      }
      case 'rename': {
        const name = need(values.name, '--name <displayName>');
        const node = await target(gw);
        const result = await gw.request('node.rename', { nodeId: node.nodeId, displayName: name });
        if (values.json) {
          json(result);
          return 0;
        }
        out(`Renamed node ${node.nodeId}: ${node.displayName ?? '-'} -> ${name}.`);
        return 0;
      }
      case 'invoke':
      case 'notify': {
        const call = (request ?? notice)!;
        const node = await target(gw);
        const result = await gw.request<Record<string, unknown>>(
          'node.invoke',
          { nodeId: node.nodeId, ...call },
          { timeoutMs: Math.max(transportMs, call.timeoutMs + 10_000) },
        );
        if (action === 'invoke' || values.json) {
          json(result);
          return 0;
        }
        out('notify ok');
        return 0;
      }
      case 'run': {
        const node = await target(gw);
        const args = {
          command: shell!,
          host: 'node',
          node: node.nodeId,
          ...(values.cwd ? { workdir: values.cwd } : {}),
          ...(values['command-timeout'] !== undefined ? { timeout: seconds(values['command-timeout']) } : {}),
        };
        const result = await gw.request<{
          ok?: boolean;
          output?: { content?: Array<{ type: string; text?: string }> };
          error?: { code?: string; message?: string };
        }>('tools.invoke', { name: 'exec', args, idempotencyKey: randomUUID() }, { timeoutMs: transportMs });
        if (values.json) {
          json(result);
          return 0;
        }
        if (!result.ok) {
          ctx.stderr.write(`claw: ${result.error?.message ?? 'the command failed'}\n`);
          return 1;
        }
        const texts = (result.output?.content ?? []).filter((part) => part.type === 'text').map((part) => part.text);
        out(texts.join('').trimEnd());
        return 0;
      }
    }
    return 1;
  });
}

function pendingTable(pending: PendingRow[], now: number): string {
  const rows = pending.map((request) => [
    request.requestId,
    request.displayName ?? '-',
    request.nodeId.slice(0, 12),
    request.remoteIp ?? '-',
    list(request.commands),
    list(request.requiredApproveScopes),
    ago(request.ts, now),
  ]);
  return table(['REQUEST', 'NODE', 'ID', 'IP', 'COMMANDS', 'APPROVER NEEDS', 'ASKED'], rows);
}

interface InvokeCall {
  command: string;
  params: unknown;
  timeoutMs: number;
  idempotencyKey: string;
}

function idempotencyKey(values: Values): string {
  const key = values['idempotency-key'];
  if (key === '') throw new UsageError('--idempotency-key must not be empty');
  return key ?? randomUUID();
}

function invokeRequest(values: Values, need: (value: string | undefined, flag: string) => string): InvokeCall {
  const command = need(values.command, '--command <command>');
  if (SHELL_COMMANDS.has(command.toLowerCase()))
    throw new UsageError(
      `command "${command}" is reserved for shell execution: use claw nodes run (the exec tool with host=node)`,
    );
  let params: unknown = {};
  if (values.params !== undefined) {
    try {
      params = JSON.parse(values.params);
    } catch {
      throw new UsageError('--params must be valid JSON');
    }
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      throw new UsageError('--params must be a JSON object');
  }
  return {
    command,
    params,
    timeoutMs: positiveInteger(values['invoke-timeout'], '--invoke-timeout', 15_000),
    idempotencyKey: idempotencyKey(values),
  };
}

const PRIORITIES = ['passive', 'active', 'timeSensitive'];
const DELIVERIES = ['system', 'overlay', 'auto'];

function notifyRequest(values: Values): InvokeCall {
  const title = values.title?.trim() ?? '';
  const body = values.body?.trim() ?? '';
  if (!title && !body) throw new UsageError('claw nodes notify needs --title or --body');
  if (values.priority !== undefined && !PRIORITIES.includes(values.priority))
    throw new UsageError(`--priority must be ${PRIORITIES.join(', ')}; got "${values.priority}"`);
  const delivery = values.delivery ?? 'system';
  if (!DELIVERIES.includes(delivery))
    throw new UsageError(`--delivery must be ${DELIVERIES.join(', ')}; got "${delivery}"`);
  return {
    command: 'system.notify',
    params: { title, body, sound: values.sound, priority: values.priority, delivery },
    timeoutMs: positiveInteger(values['invoke-timeout'], '--invoke-timeout', 15_000),
    idempotencyKey: idempotencyKey(values),
  };
}

function seconds(text: string): number {
  const value = Number(text.trim());
  if (!text.trim() || !Number.isFinite(value) || value < 0)
    throw new UsageError(`--command-timeout must be a number of seconds (0 = no limit), got "${text}"`);
  return value;
}

/** The words after `--` (or the leftover positionals) as one shell command line. */
function runCommandLine(rest: string[], argv: string[]): string {
  const dash = argv.indexOf('--');
  const words = dash >= 0 ? argv.slice(dash + 1) : rest;
  const line = words.join(' ').trim();
  if (!line) throw new UsageError('usage: claw nodes run --node <…> -- <command…>');
  return line;
}
