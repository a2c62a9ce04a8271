/**
 * `claw reset --scope config|config+creds+sessions|full [--yes] [--dry-run] [--no-backup]`:
 * OpenClaw's scopes. A backup archive is written first (unless --no-backup); the wider
 * scopes stop the gateway's OS service and refuse while any gateway still runs for the
 * state dir. claw itself stays installed.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isInside } from '../../../../kernel/util/paths.js';
import { createBackup } from '../backup/archive.js';
import { printHelp } from '../../help.js';
import { printJson, println, usageError, warn, type Io } from '../../io.js';
import { locations, runningGateway, type Locations } from './locations.js';
import { confirmOrStop, flags, gatewayDaemon, interactive } from './shared.js';

const SCOPES = ['config', 'config+creds+sessions', 'full'] as const;
type Scope = (typeof SCOPES)[number];

/** What a scope removes, existing paths only. */
export function resetTargets(locs: Locations, scope: Scope): string[] {
  const paths = [locs.configPath];
  if (scope === 'full') paths.push(locs.stateDir, ...locs.workspaces, ...locs.agentDirs);
  if (scope === 'config+creds+sessions') {
    paths.push(locs.credentialsDir);
    const agentsDir = join(locs.stateDir, 'agents');
    const agents = existsSync(agentsDir) ? readdirSync(agentsDir) : [];
    for (const agent of agents)
      paths.push(join(agentsDir, agent, 'sessions'), join(agentsDir, agent, 'agent', 'auth-profiles.json'));
    for (const dir of locs.agentDirs) paths.push(join(dir, 'auth-profiles.json'));
  }
  const existing = [...new Set(paths)].filter((path) => existsSync(path));
  // A file inside a folder that goes too is not listed on its own.
  return existing.filter((path) => !existing.some((other) => other !== path && isInside(other, path)));
}

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  if (help) {
    printHelp(io, 'reset');
    return 0;
  }
  const { values, positionals } = flags(args, {
    scope: { type: 'string' },
    yes: { type: 'boolean' },
    'non-interactive': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'no-backup': { type: 'boolean' },
  });
  if (positionals.length > 0) throw usageError(`unexpected argument "${positionals[0]}" (see claw reset --help)`);
  if (values['non-interactive'] && (!values.scope || !values.yes))
    throw usageError('--non-interactive needs --scope and --yes');
  let scope = values.scope as Scope | undefined;
  if (scope !== undefined && !SCOPES.includes(scope))
    throw usageError(`--scope must be config, config+creds+sessions or full, got "${scope}"`);
  if (!scope) {
    if (values['non-interactive'] || !interactive(io))
      throw usageError('--scope is required: config, config+creds+sessions or full');
    const { select, isCancel } = await import('@clack/prompts');
    const picked = await select({
      message: 'What should be reset?',
      options: [
        { value: 'config', label: 'config', hint: 'the config file only' },
        { value: 'config+creds+sessions', label: 'config+creds+sessions', hint: 'also credentials and sessions' },
        { value: 'full', label: 'full', hint: 'the whole state dir and the workspaces' },
      ],
    });
    if (isCancel(picked)) return 1;
    scope = picked as Scope;
  }
  const locs = locations(io.env);
  const targets = resetTargets(locs, scope);
  const dryRun = values['dry-run'] === true;
  if (dryRun || targets.length === 0) {
    if (io.json) printJson(io, { ok: true, scope, dryRun, remove: targets });
    else if (targets.length === 0) println(io, `Nothing to reset for scope ${scope}.`);
    else println(io, [`Would remove (scope ${scope}):`, ...targets.map((path) => `  ${path}`)].join('\n'));
    return 0;
  }
  await confirmOrStop(io, `Remove ${targets.join(', ')}?`, values.yes === true);

  const notes: string[] = [];
  if (scope !== 'config') {
    const daemon = await gatewayDaemon(io);
    if (typeof daemon === 'string') notes.push(`gateway service not checked: ${daemon}`);
    else {
      try {
        const stopped = await daemon.stop();
        if (stopped.done) notes.push(stopped.message);
      } catch (error) {
        notes.push(`gateway service not stopped: ${(error as Error).message}`);
      }
    }
    const gateway = runningGateway(locs.stateDir);
    if (gateway)
      throw usageError(
        `a gateway is still running for ${locs.stateDir} (pid ${gateway.pid}); stop it first (claw gateway stop, or Ctrl-C the foreground one)`,
      );
  }
  let archive: string | undefined;
  // With no state dir left (a half-removed install) there is nothing a backup could hold but the workspaces.
  const backupPossible = scope === 'config' ? existsSync(locs.configPath) : existsSync(locs.stateDir);
  if (!values['no-backup'] && !backupPossible) notes.push('no backup taken: there is no state dir to back up');
  if (!values['no-backup'] && backupPossible) {
    archive = (
      await createBackup(locs, {
        includeWorkspace: true,
        onlyConfig: scope === 'config',
        includeLogs: false,
        dryRun: false,
        cwd: process.cwd(),
        home: io.env.HOME?.trim() || homedir(),
      })
    ).archive;
  }
  for (const path of targets) rmSync(path, { recursive: true, force: true });
  if (io.json) {
    printJson(io, { ok: true, scope, removed: targets, backup: archive ?? null, notes });
    return 0;
  }
  for (const note of notes) warn(io, note);
  if (archive) println(io, `Backup: ${archive} (claw backup restore ${archive} --force puts it back)`);
  println(io, [`Removed (scope ${scope}):`, ...targets.map((path) => `  ${path}`)].join('\n'));
  if (scope !== 'config') println(io, 'Next: claw onboard (or claw setup) to set claw up again.');
  return 0;
}
