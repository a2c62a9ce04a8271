/**
 * `claw agents list [--bindings] | add <id> | delete <id>`: the agents of `agents.list[]`
 * (the implicit "main" while the list is empty) and the routing bindings that send chats to
 * them. Changes go through the running gateway like `claw config set` (validated, applied
 * live) or, without one, into the file under the config lock. `add` creates the agent's
 * workspace and state folder; `delete` removes the config entry and its bindings and
 * leaves the folders on disk (say where), so nothing the agent kept is lost.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  expandHome,
  readConfigFile,
  resolveConfigPath,
  resolveStateDir,
  type KernelConfig,
} from '../../../kernel/index.js';
import { ensurePrivateDir } from '../../../sdk/fs.js';
import {
  agentEntry,
  agentIds,
  agentPaths,
  agentValue,
  defaultAgentId,
  ensureWorkspace,
  resolveAgentIdentity,
  type ModelSetting,
} from '../../../sdk/agent/index.js';
import { bindingTier, configuredBindings, type Binding } from '../../../sdk/channels/index.js';
import { normalizeAgentId } from '../../../sdk/sessions/keys.js';
import { changeConfig, type ConfigChange } from '../config-change.js';
import { bootKernel } from '../boot.js';
import { printHelp } from '../help.js';
import { CliError, printJson, println, table, usageError, type Io } from '../io.js';
import { parseFlags, unknownCommand } from '../../../sdk/cli.js';

type AnyRecord = Record<string, any>;
const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

function parse(
  args: string[],
  options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>,
  positionals: number,
) {
  const parsed = parseFlags(args, options);
  if (parsed.positionals.length !== positionals)
    throw usageError(
      `expected ${positionals === 0 ? 'no arguments' : `${positionals} argument${positionals === 1 ? '' : 's'}`} (see claw agents --help)`,
    );
  return {
    values: parsed.values as Record<string, string | boolean | string[] | undefined>,
    positionals: parsed.positionals,
  };
}

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  const [sub = 'list', ...rest] = args;
  if (help) {
    printHelp(io, 'agents');
    return 0;
  }
  switch (sub) {
    case 'list':
      return list(rest, io);
    case 'add':
      return add(rest, io);
    case 'delete':
      return remove(rest, io);
    default:
      throw unknownCommand('agents', sub, ['list', 'add', 'delete']);
  }
}

/** The config as the running system sees it (env references resolved). */
function currentConfig(io: Io): KernelConfig {
  const file = readConfigFile(resolveConfigPath(io.env), io.env);
  const broken = file.issues.find((issue) => issue.path === '<file>');
  if (broken) throw new CliError(`cannot read ${file.path}: ${broken.message}`);
  return file.resolved;
}

/** A binding in words, as `list --bindings` prints it: "telegram account ops", "discord guild 123". */
export function describeBinding(binding: Binding): string {
  const match = binding.match;
  const parts = [match.channel ?? 'any channel'];
  if (match.accountId) parts.push(match.accountId === '*' ? 'any account' : `account ${match.accountId}`);
  if (match.peer) parts.push(`${match.peer.kind ?? 'peer'} ${match.peer.id}`);
  if (match.guildId) parts.push(`guild ${match.guildId}`);
  if (match.teamId) parts.push(`team ${match.teamId}`);
  if (match.roles?.length) parts.push(`roles ${match.roles.join(',')}`);
  return `${parts.join(' ')} (${bindingTier(match).replace('binding.', '')})`;
}

async function list(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { bindings: { type: 'boolean' } }, 0);
  const kernel = await bootKernel(io, { strictConfig: false });
  let rows: AnyRecord[];
  try {
    const config = kernel.config.resolved;
    const bindings = configuredBindings(config);
    const fallback = defaultAgentId(config);
    rows = [...new Set(agentIds(config).map((id) => normalizeAgentId(id)))].map((id) => {
      const entry = agentEntry(config, id) ?? {};
      const paths = agentPaths(config, id, kernel.paths);
      const identity = resolveAgentIdentity(config, id, paths.workspaceDir);
      const own = bindings.filter((binding) => normalizeAgentId(binding.agentId) === id);
      const setting = agentValue<ModelSetting>(config, id, 'model');
      const model = typeof setting === 'string' ? setting : setting?.primary;
      return {
        id,
        ...(entry.name ? { name: entry.name } : {}),
        ...(identity.name ? { identityName: identity.name } : {}),
        ...(identity.emoji ? { identityEmoji: identity.emoji } : {}),
        workspace: paths.workspaceDir,
        agentDir: paths.agentDir,
        ...(model ? { model } : {}),
        bindings: own.length,
        isDefault: id === fallback,
        routes:
          own.length > 0 ? own.map(describeBinding) : id === fallback ? ['default (no binding routes elsewhere)'] : [],
        ...(values.bindings ? { bindingDetails: own.map((binding) => binding.match) } : {}),
      };
    });
  } finally {
    await kernel.stop();
  }
  if (io.json) {
    printJson(io, rows);
    return 0;
  }
  println(
    io,
    table(
      rows.map((row) => [
        `${row.id}${row.isDefault ? ' (default)' : ''}`,
        row.identityName ?? row.name ?? '',
        row.model ?? '',
        row.workspace,
        String(row.bindings),
      ]),
      ['AGENT', 'NAME', 'MODEL', 'WORKSPACE', 'BINDINGS'],
    ),
  );
  if (values.bindings) {
    println(io);
    for (const row of rows) for (const route of row.routes as string[]) println(io, `${row.id} ← ${route}`);
  }
  return 0;
}

/** `--bind telegram`, `--bind telegram:ops`, `--bind telegram:*` → a binding's match. */
function parseBind(spec: string): Binding['match'] {
  const [channel, accountId, extra] = spec.split(':');
  if (!channel || extra !== undefined || accountId === '')
    throw usageError(`--bind "${spec}" is not channel or channel:accountId (e.g. telegram, telegram:ops, telegram:*)`);
  return { channel, ...(accountId ? { accountId } : {}) };
}

const sameMatch = (a: Binding['match'], b: Binding['match']) => JSON.stringify(a) === JSON.stringify(b);

async function add(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      workspace: { type: 'string' },
      model: { type: 'string' },
      'agent-dir': { type: 'string' },
      bind: { type: 'string', multiple: true },
      'non-interactive': { type: 'boolean' },
    },
    1,
  );
  const id = positionals[0]!.trim().toLowerCase();
  if (!AGENT_ID.test(id))
    throw usageError(
      `agent id "${positionals[0]}" must be 1-64 letters, digits, "-" or "_", starting with a letter or digit`,
    );
  const matches = ((values.bind as string[] | undefined) ?? []).map(parseBind);
  const workspace = typeof values.workspace === 'string' ? expandHome(values.workspace, io.env) : undefined;
  const agentDir = typeof values['agent-dir'] === 'string' ? expandHome(values['agent-dir'], io.env) : undefined;

  const change = await changeConfig(io, `claw agents add ${id}`, (raw) => {
    const agents = (raw.agents ??= {}) as AnyRecord;
    const list = (agents.list ??= []) as AnyRecord[];
    if (list.length === 0 && id !== 'main') list.push({ id: 'main' }); // the implicit default agent stays the default
    if (list.some((agent) => normalizeAgentId(agent?.id) === id))
      throw new CliError(`agent "${id}" already exists (agents.list); pick another id or edit it with claw config set`);
    list.push({
      id,
      ...(workspace ? { workspace } : {}),
      ...(agentDir ? { agentDir } : {}),
      ...(typeof values.model === 'string' ? { model: values.model } : {}),
    });
    const bindings = (raw.bindings ??= []) as Binding[];
    for (const match of matches) {
      const owner = bindings.find((binding) => binding?.match && sameMatch(binding.match, match));
      if (owner)
        throw new CliError(
          `--bind ${match.channel}${match.accountId ? `:${match.accountId}` : ''} already routes to agent "${owner.agentId}" (bindings); remove that binding first`,
        );
      bindings.push({ agentId: id, match });
    }
    if (bindings.length === 0) delete raw.bindings;
  });

  // Folders only once the agent exists in the config.
  const kernel = await bootKernel(io, { strictConfig: false });
  let settings: ReturnType<typeof agentPaths>;
  let seeded: string[] = [];
  try {
    settings = agentPaths(currentConfig(io), id, kernel.paths);
    const pluginDir = kernel.plugins.get('agent')?.dir;
    if (pluginDir && existsSync(join(pluginDir, 'templates')))
      seeded = ensureWorkspace(settings.workspaceDir, join(pluginDir, 'templates')).created;
    else ensurePrivateDir(settings.workspaceDir);
  } finally {
    await kernel.stop();
  }
  ensurePrivateDir(settings.agentDir);
  const summary = {
    agentId: id,
    workspace: settings.workspaceDir,
    agentDir: settings.agentDir,
    ...(typeof values.model === 'string' ? { model: values.model } : {}),
    bindings: matches,
    seeded,
  };
  report(
    io,
    change,
    `Added agent "${id}": workspace ${settings.workspaceDir}, state ${settings.agentDir}${matches.length ? `, bound to ${matches.map((match) => `${match.channel}${match.accountId ? `:${match.accountId}` : ''}`).join(', ')}` : ''}.`,
    summary,
  );
  return 0;
}

async function remove(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { force: { type: 'boolean' } }, 1);
  const id = normalizeAgentId(positionals[0]);
  const before = currentConfig(io);
  const entries = ((before.agents as AnyRecord | undefined)?.list ?? []) as AnyRecord[];
  if (!entries.some((agent) => normalizeAgentId(agent?.id) === id)) {
    throw new CliError(
      entries.length === 0
        ? `agent "${id}" is not in agents.list (the implicit "main" agent cannot be deleted)`
        : `unknown agent "${id}": the configured agents are ${agentIds(before).join(', ')}`,
    );
  }
  const routed = configuredBindings(before).filter((binding) => normalizeAgentId(binding.agentId) === id);
  if (routed.length > 0 && !values.force) {
    throw new CliError(
      `agent "${id}" has ${routed.length} binding${routed.length === 1 ? '' : 's'} (${routed.map(describeBinding).join('; ')}); pass --force to delete it and its bindings`,
    );
  }
  const settings = agentPaths(before, id, { stateDir: resolveStateDir(io.env), workspaceDir: '' });
  const change = await changeConfig(io, `claw agents delete ${id}`, (raw) => {
    const agents = (raw.agents ?? {}) as AnyRecord;
    agents.list = ((agents.list ?? []) as AnyRecord[]).filter((agent) => normalizeAgentId(agent?.id) !== id);
    if (agents.list.length === 0) delete agents.list;
    if (Array.isArray(raw.bindings)) {
      raw.bindings = (raw.bindings as Binding[]).filter((binding) => normalizeAgentId(binding?.agentId) !== id);
      if ((raw.bindings as Binding[]).length === 0) delete raw.bindings;
    }
  });
  const kept = [
    settings.workspaceDir,
    settings.agentDir,
    join(resolveStateDir(io.env), 'agents', id, 'sessions'),
  ].filter((dir) => dir && existsSync(dir));
  report(
    io,
    change,
    `Deleted agent "${id}"${routed.length ? ` and ${routed.length} binding${routed.length === 1 ? '' : 's'}` : ''}.${kept.length ? ` Its files are kept: ${kept.join(', ')}` : ''}`,
    { agentId: id, removedBindings: routed.length, kept },
  );
  return 0;
}

function report(io: Io, change: ConfigChange, done: string, fields: Record<string, unknown>): void {
  const reload = change.reload;
  if (io.json) printJson(io, { ok: true, ...fields, via: change.via, ...(reload ? { reload } : {}) });
  else println(io, reload && change.changed ? `${done} ${reload.message}` : done);
}
