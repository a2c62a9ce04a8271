/**
 * `claw uninstall [--service] [--state] [--workspace] [--all] [--yes] [--dry-run]`:
 * OpenClaw's scopes. The service goes first; if it cannot be removed, state and workspaces
 * are left alone. --state keeps the workspaces (also those inside the state dir) unless
 * --workspace is given too. claw itself is removed the way it was installed.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isInside } from '../../../../kernel/util/paths.js';
import { printHelp } from '../../help.js';
import { printJson, println, usageError, type Io } from '../../io.js';
import { locations, runningGateway, type Locations } from './locations.js';
import { confirmOrStop, flags, gatewayDaemon, interactive } from './shared.js';

interface Outcome {
  scope: 'service' | 'state' | 'workspace';
  ok: boolean;
  message: string;
  removed?: string[];
}

/** What --state removes: the state dir's entries except the workspaces in it (kept unless --workspace), and a config kept elsewhere. */
export function stateTargets(locs: Locations, keepWorkspaces: boolean): string[] {
  const keep = keepWorkspaces ? locs.workspaces.filter((dir) => isInside(locs.stateDir, dir)) : [];
  const out: string[] = [];
  if (existsSync(locs.stateDir)) {
    if (keep.length === 0) out.push(locs.stateDir);
    else
      for (const name of readdirSync(locs.stateDir)) {
        const path = join(locs.stateDir, name);
        if (!keep.some((dir) => isInside(path, dir))) out.push(path);
      }
  }
  if (!isInside(locs.stateDir, locs.configPath) && existsSync(locs.configPath)) out.push(locs.configPath);
  return [...out, ...locs.agentDirs.filter((dir) => existsSync(dir))];
}

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  if (help) {
    printHelp(io, 'uninstall');
    return 0;
  }
  const { values, positionals } = flags(args, {
    service: { type: 'boolean' },
    state: { type: 'boolean' },
    workspace: { type: 'boolean' },
    all: { type: 'boolean' },
    yes: { type: 'boolean' },
    'non-interactive': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
  });
  if (positionals.length > 0) throw usageError(`unexpected argument "${positionals[0]}" (see claw uninstall --help)`);
  if (values['non-interactive'] && !values.yes) throw usageError('--non-interactive needs --yes');
  let scopes = new Set<Outcome['scope']>();
  if (values.all || values.service) scopes.add('service');
  if (values.all || values.state) scopes.add('state');
  if (values.all || values.workspace) scopes.add('workspace');
  if (scopes.size === 0) {
    if (values['non-interactive'] || !interactive(io))
      throw usageError('say what to remove: --service, --state, --workspace or --all');
    const { multiselect, isCancel } = await import('@clack/prompts');
    const picked = await multiselect({
      message: 'What should be removed?',
      options: [
        { value: 'service', label: 'the gateway service' },
        { value: 'state', label: 'state and config (credentials, sessions, …)' },
        { value: 'workspace', label: 'the agent workspaces' },
      ],
      initialValues: ['service'],
    });
    if (isCancel(picked)) return 1;
    scopes = new Set(picked as Array<Outcome['scope']>);
  }
  const locs = locations(io.env);
  const state = scopes.has('state') ? stateTargets(locs, !scopes.has('workspace')) : [];
  const workspaces = scopes.has('workspace') ? locs.workspaces.filter((dir) => existsSync(dir)) : [];
  const plan = [
    ...(scopes.has('service') ? ['the gateway service (its systemd unit / launchd agent)'] : []),
    ...state,
    ...workspaces,
  ];
  if (values['dry-run']) {
    if (io.json) printJson(io, { ok: true, dryRun: true, remove: plan });
    else println(io, [`Would remove:`, ...plan.map((item) => `  ${item}`)].join('\n'));
    return 0;
  }
  if (scopes.has('state') || scopes.has('workspace'))
    await confirmOrStop(
      io,
      `Remove ${plan.join(', ')}? Take a backup first (claw backup create) to keep them.`,
      values.yes === true,
    );

  const outcomes: Outcome[] = [];
  let blocked = false;
  if (scopes.has('service')) {
    const daemon = await gatewayDaemon(io);
    if (typeof daemon === 'string') {
      outcomes.push({ scope: 'service', ok: false, message: daemon });
      blocked = true;
    } else {
      try {
        outcomes.push({ scope: 'service', ok: true, message: (await daemon.uninstall()).message });
      } catch (error) {
        outcomes.push({ scope: 'service', ok: false, message: (error as Error).message });
        blocked = true;
      }
    }
  }
  const gateway = scopes.has('state') || scopes.has('workspace') ? runningGateway(locs.stateDir) : undefined;
  const removal = (scope: 'state' | 'workspace', paths: string[]) => {
    if (blocked || gateway) {
      const why = blocked
        ? 'left in place: the gateway service could not be removed'
        : `left in place: a gateway is running for ${locs.stateDir} (pid ${gateway!.pid}); stop it first`;
      outcomes.push({ scope, ok: false, message: why });
      return;
    }
    for (const path of paths) rmSync(path, { recursive: true, force: true });
    outcomes.push({
      scope,
      ok: true,
      message: paths.length ? `removed ${paths.length} path(s)` : 'nothing to remove',
      removed: paths,
    });
  };
  if (scopes.has('state')) removal('state', state);
  if (scopes.has('workspace')) removal('workspace', workspaces);
  const ok = outcomes.every((outcome) => outcome.ok);
  if (io.json) printJson(io, { ok, outcomes });
  else {
    for (const outcome of outcomes) {
      println(io, `${outcome.ok ? 'ok  ' : 'FAIL'} ${outcome.scope}: ${outcome.message}`);
      for (const path of outcome.removed ?? []) println(io, `       ${path}`);
    }
    println(io, 'claw itself stays installed: npm uninstall -g @claw-assistant/claw (or delete the clone) removes it.');
  }
  return ok ? 0 : 1;
}
