/**
 * `claw doctor [--fix] [--json]`: is this installation healthy, and what of an OpenClaw
 * setup does claw leave unused. Checks the config (errors, OpenClaw settings claw ignores,
 * other kept-but-unused entries), the state dir (exists, owner-only modes, credentials),
 * leftovers and damage (temp files of dead writers, abandoned plugin staging folders, JSON
 * that does not parse, JSONL with a cut-off last line) and compatibility (OpenClaw plugins
 * and the adapter they run through). `--fix` makes modes owner-only and removes leftovers;
 * it never deletes or rewrites user data. Exit code 1 while an error remains.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { IGNORED_OPENCLAW_KEY } from '../../../../host/config-checks.js';
import { formatIssue, type Kernel } from '../../../../kernel/index.js';
import { isOpenclawPlugin } from '../../../../host/openclaw-plugins.js';
import { bootKernel } from '../../boot.js';
import { printHelp } from '../../help.js';
import { printJson, println, usageError, type Io } from '../../io.js';
import { fixModes, type FixOutcome } from '../security/fix.js';
import { fsChecks, scanState, workspaceDirs } from '../security/fs-checks.js';
import type { AuditContext } from '../security/types.js';
import { removeStale, scanFiles } from './files.js';
import { parseFlags } from '../../../../sdk/cli.js';

export type Level = 'ok' | 'warn' | 'error';

export interface Check {
  area: 'config' | 'state' | 'files' | 'compat';
  level: Level;
  title: string;
  /** One line each: keys, paths, plugin ids. */
  items?: string[];
  fix?: string;
}

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  if (help) {
    printHelp(io, 'doctor');
    return 0;
  }
  const { values, positionals } = parseFlags(args, { fix: { type: 'boolean' }, repair: { type: 'boolean' } });
  if (positionals.length) throw usageError(`unexpected argument "${positionals[0]}" (see claw doctor --help)`);
  const fix = values.fix === true || values.repair === true;
  let kernel = await bootKernel(io, { strictConfig: false });
  let fixed: { modes: FixOutcome; removed: string[] } | undefined;
  if (fix) {
    const modes: FixOutcome = { fixed: [], failed: [] };
    fixModes(auditContext(kernel, io), scanState(auditContext(kernel, io)), modes);
    const stale = removeStale(scanFiles(kernel.paths.stateDir, skipped(kernel, io)).stale);
    modes.failed.push(...stale.failed);
    fixed = { modes, removed: stale.removed };
    // What is left is judged on the disk as it is now.
    kernel = await bootKernel(io, { strictConfig: false });
  }
  const checks = [
    ...configChecks(kernel),
    ...stateChecks(kernel, io),
    ...fileChecks(kernel, io),
    ...compatChecks(kernel),
  ];
  const ok = !checks.some((check) => check.level === 'error');
  if (io.json) {
    printJson(io, {
      ok,
      configPath: kernel.paths.configPath,
      stateDir: kernel.paths.stateDir,
      checks,
      ...(fixed ? { fixed } : {}),
    });
    return ok ? 0 : 1;
  }
  println(io, `claw doctor: ${kernel.paths.configPath}, state in ${kernel.paths.stateDir}`);
  if (fixed) {
    for (const action of fixed.modes.fixed)
      if (action.kind === 'chmod') println(io, `  fixed: chmod ${action.to} ${action.path} (was ${action.from})`);
    for (const path of fixed.removed) println(io, `  fixed: removed leftover ${path}`);
    for (const failure of fixed.modes.failed) println(io, `  could not fix: ${failure}`);
  }
  const mark: Record<Level, string> = { ok: '✓', warn: '!', error: '✗' };
  for (const check of checks) {
    println(io, `${mark[check.level]} [${check.area}] ${check.title}`);
    for (const item of check.items ?? []) println(io, `    ${item}`);
    if (check.fix && check.level !== 'ok') println(io, `    → ${check.fix}`);
  }
  println(io, ok ? 'No errors.' : 'Errors found.');
  return ok ? 0 : 1;
}

function auditContext(kernel: Kernel, io: Io): AuditContext {
  return {
    config: kernel.config.resolved as AuditContext['config'],
    raw: kernel.config.raw,
    env: io.env,
    stateDir: kernel.paths.stateDir,
    configPath: kernel.paths.configPath,
    workspaceDir: kernel.paths.workspaceDir,
    plugins: kernel.plugins.list(),
  };
}

/** Workspaces (the user's documents) and the config file (JSON5, checked by the config checks). */
function skipped(kernel: Kernel, io: Io): Set<string> {
  return new Set([...workspaceDirs(auditContext(kernel, io), kernel.paths.stateDir), kernel.paths.configPath]);
}

function configChecks(kernel: Kernel): Check[] {
  const issues = kernel.issues();
  const errors = issues.filter((issue) => issue.level === 'error');
  const ignored = issues.filter((issue) => issue.message === IGNORED_OPENCLAW_KEY);
  const other = issues.filter((issue) => issue.level === 'warning' && !ignored.includes(issue));
  const checks: Check[] = [];
  if (!kernel.config.exists)
    checks.push({ area: 'config', level: 'ok', title: 'no config file yet: built-in defaults apply' });
  if (errors.length > 0) {
    checks.push({
      area: 'config',
      level: 'error',
      title: `${errors.length} config ${errors.length === 1 ? 'error' : 'errors'}: the gateway will not start`,
      items: errors.map(formatIssue),
      fix: 'edit the file or use `claw config set/unset`; `claw config validate` re-checks',
    });
  } else if (kernel.config.exists) checks.push({ area: 'config', level: 'ok', title: 'config is valid' });
  if (ignored.length > 0) {
    checks.push({
      area: 'config',
      level: 'warn',
      title: `${ignored.length} OpenClaw ${ignored.length === 1 ? 'setting' : 'settings'} claw does not implement (kept in the file, ignored)`,
      items: ignored.map((issue) => issue.path),
    });
  }
  if (other.length > 0)
    checks.push({ area: 'config', level: 'warn', title: 'kept but unused', items: other.map(formatIssue) });
  return checks;
}

function stateChecks(kernel: Kernel, io: Io): Check[] {
  const { stateDir } = kernel.paths;
  if (!existsSync(stateDir))
    return [
      { area: 'state', level: 'warn', title: `state dir ${stateDir} does not exist yet (created on first start)` },
    ];
  const findings = fsChecks(auditContext(kernel, io), scanState(auditContext(kernel, io)));
  if (findings.length === 0)
    return [{ area: 'state', level: 'ok', title: 'state dir, config and credentials are owner-only' }];
  return findings.map((finding) => ({
    area: 'state' as const,
    level: finding.severity === 'critical' ? ('error' as const) : ('warn' as const),
    title: finding.title,
    items: [finding.detail],
    fix: finding.fixable ? 'claw doctor --fix' : finding.fix,
  }));
}

function fileChecks(kernel: Kernel, io: Io): Check[] {
  const { stateDir } = kernel.paths;
  if (!existsSync(stateDir)) return [];
  const scan = scanFiles(stateDir, skipped(kernel, io));
  const rel = (path: string) => relative(stateDir, path);
  const checks: Check[] = [];
  if (scan.stale.length > 0)
    checks.push({
      area: 'files',
      level: 'warn',
      title: 'leftovers of interrupted writes and installs',
      items: scan.stale.map(rel),
      fix: 'claw doctor --fix removes them',
    });
  if (scan.torn.length > 0) {
    checks.push({
      area: 'files',
      level: 'error',
      title: 'state files that do not parse (kept as they are)',
      items: scan.torn.map((file) => `${rel(file.path)}: ${file.error}`),
      fix: 'restore the file from a backup (.bak beside it, if any) or move it aside',
    });
  }
  if (scan.partial.length > 0) {
    checks.push({
      area: 'files',
      level: 'warn',
      title: 'transcripts ending in a cut-off line (readers skip it)',
      items: scan.partial.map(rel),
    });
  }
  if (checks.length === 0) checks.push({ area: 'files', level: 'ok', title: 'no leftovers or damaged state files' });
  return checks;
}

function compatChecks(kernel: Kernel): Check[] {
  const checks: Check[] = [];
  // OpenClaw keeps sessions in one SQLite database per agent; claw reads its own files.
  const agents = join(kernel.paths.stateDir, 'agents');
  const stores = existsSync(agents)
    ? readdirSync(agents).filter((id) => existsSync(join(agents, id, 'agent', 'openclaw-agent.sqlite')))
    : [];
  if (stores.length > 0) {
    checks.push({
      area: 'compat',
      level: 'warn',
      title: "OpenClaw's SQLite session store found; claw does not read it in place",
      items: stores.map((id) => `agents/${id}/agent/openclaw-agent.sqlite`),
      fix: "`claw sessions import` copies those sessions into claw's store",
    });
  }
  const foreign = kernel.plugins.list().filter(isOpenclawPlugin);
  if (foreign.length === 0) return checks;
  return [
    ...checks,
    {
      area: 'compat',
      level: 'ok',
      title: `${foreign.length} OpenClaw ${foreign.length === 1 ? 'plugin runs' : 'plugins run'} through claw's OpenClaw API adapter`,
      items: foreign.map((record) => `${record.id} (${record.status})`),
      fix: '`claw plugins doctor` loads them and names any OpenClaw API they need that claw lacks',
    },
  ];
}
