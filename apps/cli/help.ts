/**
 * `claw --help`. Plugin-provided commands come from a quick scan of manifests (read with
 * the kernel's JSON5 reader, not validated, no kernel, no plugin code), which keeps help
 * fast with many plugins installed. Only commands of plugins that are on are listed, decided
 * by claw's enablement rules, as the kernel is handed them (host/enablement.ts).
 *
 * This module is also compiled to CommonJS (tsconfig.cjs.json) for the `claw` executable,
 * which answers `--help` without starting Node's ESM loader: keep it free of import.meta.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SLOT_NAMES, type PluginOrigin, type SlotName } from '../../kernel/config/keys.js';
import { resolveConfigPath, resolveStateDir, resolveUserPath } from '../../kernel/config/paths.js';
import type { PluginsConfig } from '../../kernel/generated/types.js';
import { resolveEnablement } from '../../host/enablement.js';
import { parseJson5 } from '../../kernel/util/json5.js';

export interface HelpIo {
  stdout: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
}

function println(io: HelpIo, text: string): void {
  io.stdout.write(`${text}\n`);
}

const TOPICS: Record<string, string> = {
  backup: `Usage: claw backup create [--output <file|dir>] [--no-include-workspace] [--only-config]
                          [--include-logs] [--verify] [--dry-run] [--json]
       claw backup verify <archive> [--json]
       claw backup restore <archive> [--target <dir>] [--force] [--dry-run] [--json]

create    A .tar.gz of the state dir (config, credentials, sessions, memory, …), the config file
          and the agents' workspaces and state folders kept outside it. Left out: logs/ (unless
          --include-logs), runtime-deps/, cache/, lock files, extensions/*/node_modules/.
          Written to the current folder (the home folder when that is being backed up), 0600,
          never over an existing file. <root>/manifest.json lists every entry's path, mode,
          size and SHA-256.
verify    Reads the whole archive: every entry matches the manifest; links, devices, absolute
          paths and ".." are refused. Exit code 1 on any problem.
restore   Verifies, then writes each part into a temporary folder beside its destination and
          renames it into place, with the modes it had. Destinations are where the files came
          from (existing ones need --force, never while a gateway runs for that state dir), or
          --target <new dir>, which receives the archive's payload/ layout.`,
  reset: `Usage: claw reset --scope <scope> [--yes] [--non-interactive] [--dry-run] [--no-backup] [--json]

Scopes:
  config                  the config file
  config+creds+sessions   also credentials/, agents' auth-profiles.json and session transcripts
  full                    the whole state dir and every workspace

A backup archive is written first (claw backup create; --no-backup skips it). The wider
scopes stop the gateway service first and refuse while a gateway still runs. Without --yes
the command asks (or, with no terminal, stops and says to pass --yes).`,
  uninstall: `Usage: claw uninstall [--service] [--state] [--workspace] [--all] [--yes] [--non-interactive] [--dry-run] [--json]

  --service     stop and remove the gateway service (claw gateway uninstall)
  --state       remove the state dir and config; workspaces stay unless --workspace
  --workspace   remove the agents' workspaces
  --all         all three
If the service cannot be removed, state and workspaces are left in place. claw itself is
removed the way it was installed (npm uninstall -g @claw-assistant/claw, or delete the clone).`,
  update: `Usage: claw update [status] [--check] [--tag <dist-tag|version>] [--dry-run] [--yes] [--no-restart]
                   [--timeout <seconds>] [--json]

status, --check   this version, the one the dist-tag names (npm view; npm's registry settings
                  apply, e.g. npm_config_registry), and how claw was installed
(no subcommand)   a global npm install: npm install -g @claw-assistant/claw@<version>, then the
                  gateway service restarts (--no-restart skips it); a git clone or a project
                  dependency: prints the command that updates it. An older version needs --yes.`,
  plugins: `Usage: claw plugins <command> [--json]

Commands:
  list [--enabled] [--verbose]     Plugins found, their status and why
  info <id>                        Manifest, capabilities, config and status of one plugin
  enable <id...>                   Turn plugins on (switches exclusive slots)
  disable <id...>                  Turn plugins off
  install <dir|file.tgz|npm-spec>  Install into ~/.openclaw/extensions/<id> [--force] [--link]
                                   [--enable] (a memory/agentLoop/sandbox plugin takes its slot)
  uninstall <id>                   Remove an installed plugin [--keep-files]
  doctor                           Load every enabled plugin and report failures`,
  config: `Usage: claw config <command> [--json]

Commands:
  get <path>             Print a value (secrets redacted)
  set <path> <value>     Set a value; the value is parsed as JSON5, else taken as text [--strict-json]
  unset <path>           Remove a value
  validate               Check the whole config (kernel and every enabled plugin)
  path                   Print the config file location

Paths use dots and brackets: agents.defaults.maxConcurrent, plugins.entries["my-plugin"].config
A negative number is a value (claw config set path -5); a number must be finite and in its range.
With a gateway running, set and unset go through it: the answer says whether the change is
live or the gateway restarts (or must be restarted) to apply it (gateway.reload.mode).
Concurrent writers queue on <config>.lock; none loses another's change.`,
  agents: `Usage: claw agents <command> [--json]

Commands:
  list [--bindings]                          The agents (agents.list; "main" when empty), the default one,
                                             workspaces, models and binding counts; --bindings: each route
  add <id> [--workspace <dir>] [--model <provider/model>] [--agent-dir <dir>] [--bind <channel[:accountId]>]...
                                             Add an agent, create its workspace and state folder, bind channels
  delete <id> [--force]                      Remove an agent from the config (--force: and its bindings);
                                             its workspace and sessions stay on disk

Routing (bindings[], most specific wins): peer > guildId(+roles) > teamId > accountId > channel-wide
> the default agent (agents.list[].default, else the first listed, else "main").`,
  sandbox: `Usage: claw sandbox <command> [--json]

Commands:
  explain [--agent <id>] [--session <key>]   Is this session sandboxed, why, and where do exec and file tools run
  list                                       Sandboxes of the configured backend (plugins.slots.sandbox)
  recreate --all | --agent <id> | --session <key>
                                             Remove sandboxes; the next use recreates them with the current config
  build [--image <name:tag>]                 Build the default sandbox image (Docker backend)

Which sessions are sandboxed: agents.defaults.sandbox.mode (off | non-main | all), per agent
agents.list[].sandbox; the backend: plugins.slots.sandbox ("sandbox-bwrap", "sandbox-docker").`,
  doctor: `Usage: claw doctor [--fix] [--json]

Checks the config (errors; OpenClaw settings claw does not implement, which are kept and
ignored; stale entries), the state dir (exists, owner-only modes for it, the config and the
credentials), leftovers (temp files of interrupted writes, abandoned plugin installs) and
damaged state files (JSON that does not parse, transcripts with a cut-off last line), and
which OpenClaw plugins run through the adapter. Exit code 1 while an error remains.

Options:
  --fix     Make the state dir and everything in it owner-only (0700/0600) and remove
            leftovers; never deletes or rewrites user data (--repair is the same)`,
  security: `Usage: claw security audit [--deep] [--fix] [--json]

Checks gateway exposure and auth, who may message the assistant and which tools they would
reach, elevated and host exec policy, webhooks, break-glass flags, sandbox mounts, models,
file permissions under the state dir and plugins, with OpenClaw's checkIds. Exit code 1
while a critical finding remains.

Options:
  --deep                 Also probe the running gateway (health, and a connect without credentials)
  --token <token>        Token for the probe (default: config, OPENCLAW_GATEWAY_TOKEN)
  --password <password>  Password for the probe
  --fix                  Apply the safe fixes: chmod 700/600 under the state dir and the config,
                         groupPolicy "open" → "allowlist", "*" out of tools.elevated.allowFrom;
                         never changes tokens, auth, bind or DM policies`,
};

/** The commands of the CLI itself (the rest come from plugins), for the overview and "did you mean". */
export const BUILTIN_COMMANDS: ReadonlyArray<readonly [name: string, description: string]> = [
  ['plugins', 'List, inspect, enable, install and diagnose plugins'],
  ['config', 'Read, change and validate openclaw.json'],
  ['agents', 'List, add and delete agents and their routing bindings (agents list|add|delete)'],
  ['sandbox', 'Explain, list and recreate tool sandboxes (sandbox explain|list|recreate|build)'],
  ['security', 'Audit config, file permissions and plugins (security audit [--deep] [--fix])'],
  ['doctor', 'Check config, state dir, permissions and OpenClaw compatibility ([--fix])'],
  ['backup', 'Archive, verify and restore state, config, credentials and workspaces'],
  ['reset', 'Remove config, credentials and sessions, or everything (--scope; backs up first)'],
  ['uninstall', 'Remove the gateway service, state and workspaces (--service --state --workspace)'],
  ['update', 'Check for a newer claw and update an npm -g install (update status)'],
  ['help', 'Show help for a command (claw help plugins)'],
];

interface PluginCommand {
  name: string;
  description: string;
  plugin: string;
}

/** Print help for `topic`, or the command overview (listing commands of plugins found in `bundledDir` and installed ones). */
export function printHelp(io: HelpIo, topic?: string, bundledDir?: string): void {
  if (topic && TOPICS[topic]) {
    println(io, TOPICS[topic]);
    return;
  }
  const lines = [
    'claw — a local-first personal AI assistant, built from plugins',
    '',
    'Usage: claw <command> [options]',
    '',
    'Commands:',
    ...BUILTIN_COMMANDS.map(([name, description]) => `  ${name.padEnd(9)}  ${description}`),
  ];
  const commands = pluginCommands(io.env, bundledDir);
  if (commands.length > 0) {
    const width = Math.max(...commands.map((command) => command.name.length), 9);
    lines.push('', 'Commands from plugins:');
    for (const command of commands) {
      lines.push(`  ${command.name.padEnd(width)}  ${command.description} (${command.plugin})`);
    }
  }
  lines.push(
    '',
    'Options:',
    '  --json              Machine-readable output',
    '  --profile <name>    Use ~/.openclaw-<name> for state and config',
    '  -V, --version       Print the version',
    '  -h, --help          Show help',
    '',
    'Environment: OPENCLAW_CONFIG_PATH, OPENCLAW_STATE_DIR, OPENCLAW_PROFILE',
  );
  println(io, lines.join('\n'));
}

function pluginCommands(env: Record<string, string | undefined>, bundledDir: string | undefined): PluginCommand[] {
  const roots: Array<{ dir: string; origin: PluginOrigin }> = [];
  const configPath = resolveConfigPath(env);
  let plugins: PluginsConfig | undefined;
  try {
    const config = parseJson5(readFileSync(configPath, 'utf8'), configPath) as { plugins?: PluginsConfig } | null;
    plugins = config?.plugins && typeof config.plugins === 'object' ? config.plugins : undefined;
    const paths = plugins?.load?.paths;
    if (Array.isArray(paths)) {
      for (const path of paths)
        if (typeof path === 'string')
          roots.push({ dir: resolveUserPath(path, dirname(configPath), env), origin: 'config' });
    }
  } catch {
    // No config, or a broken one: help still lists what is on by default.
  }
  // Discovery order as the plugin host has it (workspace plugins are off unless enabled; not scanned here).
  if (bundledDir) roots.push({ dir: bundledDir, origin: 'bundled' });
  roots.push({ dir: join(resolveStateDir(env), 'extensions'), origin: 'global' });
  const claimed = new Set<string>();
  const seen = new Map<string, PluginCommand>();
  for (const root of roots) {
    for (const manifest of manifestsIn(root.dir)) {
      // The first directory to claim an id wins, as in discovery.
      if (claimed.has(manifest.id)) continue;
      claimed.add(manifest.id);
      const slots = slotsOf(manifest.kind);
      if (!resolveEnablement(manifest.id, root.origin, slots, manifest.enabledByDefault === true, plugins).enabled)
        continue;
      for (const command of manifest.cliCommands ?? []) {
        if (!seen.has(command.name)) seen.set(command.name, { ...command, plugin: manifest.id });
      }
    }
  }
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name));
}

interface LightManifest {
  id: string;
  kind?: unknown;
  enabledByDefault?: unknown;
  cliCommands?: Array<{ name: string; description: string }>;
}

function slotsOf(kind: unknown): SlotName[] {
  const kinds = Array.isArray(kind) ? kind : kind === undefined ? [] : [kind];
  return kinds.filter((slot): slot is SlotName => (SLOT_NAMES as readonly unknown[]).includes(slot));
}

/**
 * host/manifest.ts's MAX_MANIFEST_BYTES, which discovery enforces (not imported: manifest.ts
 * would bring the kernel and the manifest schemas into `--help`).
 */
export const HELP_MANIFEST_CAP = 256 * 1024;

function manifestsIn(dir: string): LightManifest[] {
  const read = (path: string): LightManifest | undefined => {
    try {
      // Over the cap the plugin host refuses it anyway; parsing it would stall help for seconds.
      if (statSync(path).size > HELP_MANIFEST_CAP) return undefined;
      const manifest = parseJson5(readFileSync(path, 'utf8'), path) as LightManifest | null;
      return manifest && typeof manifest.id === 'string' ? manifest : undefined;
    } catch {
      return undefined;
    }
  };
  const own = read(join(dir, 'openclaw.plugin.json'));
  if (own) return [own];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => !name.startsWith('.') && name !== 'node_modules')
    .sort((a, b) => a.localeCompare(b))
    .map((name) => read(join(dir, name, 'openclaw.plugin.json')))
    .filter((manifest): manifest is LightManifest => manifest !== undefined);
}
