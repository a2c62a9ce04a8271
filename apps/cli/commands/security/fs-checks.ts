/**
 * Local disk hygiene. The state dir holds config with secrets, credentials, keys and
 * transcripts: it and everything under it should be owner-only (0700 / 0600). One walk
 * collects every entry with group or other permission bits; the well-known places get
 * their own checkIds, the rest is listed together. Symlinks are never followed, and the
 * contents of agent workspaces (the user's own documents) are left out.
 */
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { expandHome } from '../../../../kernel/index.js';
import { NON_OWNER_BITS } from '../../../../host/private-tree.js';
import { isInside } from '../../../../kernel/util/paths.js';
import { section, type AuditContext, type Finding } from './types.js';

export interface ModeEntry {
  path: string;
  mode: number;
  isDirectory: boolean;
}

export interface StateScan {
  /** lstat of the state dir (undefined: it does not exist yet). */
  root?: { mode: number; symlink: boolean; target: string };
  /** Entries below the state dir with group/other bits (the state dir itself excluded). */
  loose: ModeEntry[];
  /** The config file, when it exists. */
  config?: { mode: number; symlink: boolean; insideState: boolean };
}

const WRITE_BITS = 0o022;
/** For a directory, listing or entering it both count as access. */
const DIR_READ_BITS = 0o055;
const LISTED = 12;

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, '0');

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Workspaces inside the state dir: checked themselves, their contents skipped. */
export function workspaceDirs(ctx: AuditContext, stateRoot: string): Set<string> {
  const dirs = [ctx.workspaceDir, join(ctx.stateDir, 'workspace')];
  try {
    for (const name of readdirSync(stateRoot)) if (name.startsWith('workspace-')) dirs.push(join(stateRoot, name));
  } catch {
    // No state dir yet.
  }
  const agents: unknown[] = Array.isArray(section(ctx.config.agents).list) ? ctx.config.agents.list : [];
  for (const agent of agents.map(section)) {
    if (typeof agent.workspace === 'string') dirs.push(resolve(expandHome(agent.workspace, ctx.env)));
  }
  // The same folders seen through the state dir's real path, when it is a symlink.
  return new Set(dirs.map((dir) => (isInside(ctx.stateDir, dir) ? join(stateRoot, relative(ctx.stateDir, dir)) : dir)));
}

/** Every entry below `root` with group/other bits; symlinks are not followed. */
function walkLoose(root: string, skipContents: ReadonlySet<string>): ModeEntry[] {
  const loose: ModeEntry[] = [];
  const visit = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      const stat = lstatOrUndefined(path);
      if (!stat || stat.isSymbolicLink()) continue;
      if (stat.mode & NON_OWNER_BITS) loose.push({ path, mode: stat.mode, isDirectory: stat.isDirectory() });
      if (stat.isDirectory() && !skipContents.has(path)) visit(path);
    }
  };
  visit(root);
  return loose;
}

export function scanState(ctx: AuditContext): StateScan {
  const scan: StateScan = { loose: [] };
  const rootStat = lstatOrUndefined(ctx.stateDir);
  if (rootStat) {
    const symlink = rootStat.isSymbolicLink();
    let target = ctx.stateDir;
    let mode = rootStat.mode;
    try {
      if (symlink) {
        target = realpathSync(ctx.stateDir);
        mode = statSync(target).mode;
      }
      scan.loose = walkLoose(target, workspaceDirs(ctx, target));
    } catch {
      // A dangling link: reported as a symlink, nothing below it to walk.
      mode = 0o700;
    }
    scan.root = { mode, symlink, target };
  }
  const configStat = lstatOrUndefined(ctx.configPath);
  if (configStat) {
    const symlink = configStat.isSymbolicLink();
    let mode = configStat.mode;
    try {
      if (symlink) mode = statSync(ctx.configPath).mode;
    } catch {
      // A dangling link: reported as a symlink, nothing to read.
    }
    scan.config = { mode, symlink, insideState: isInside(ctx.stateDir, dirname(ctx.configPath)) };
  }
  return scan;
}

function listed(entries: readonly ModeEntry[], root: string): string {
  const names = entries
    .slice(0, LISTED)
    .map(
      (entry) =>
        `${relative(root, entry.path).split(sep).join('/')}${entry.isDirectory ? '/' : ''} (${octal(entry.mode)})`,
    );
  const more = entries.length > LISTED ? `, and ${entries.length - LISTED} more` : '';
  return `${names.join(', ')}${more}`;
}

const writable = (entry: ModeEntry) => (entry.mode & WRITE_BITS) !== 0;
const CHMOD_HINT = 'chmod 700 for directories and 600 for files, or run `claw security audit --fix`.';

function stateDirFindings(ctx: AuditContext, root: NonNullable<StateScan['root']>): Finding[] {
  const findings: Finding[] = [];
  const fixable = !root.symlink;
  if (root.symlink) {
    findings.push({
      checkId: 'fs.state_dir.symlink',
      severity: 'warn',
      title: 'State dir is a symlink',
      detail: `${ctx.stateDir} points to ${root.target}: whoever controls that location (or the link) controls claw's state.`,
      fix: 'Move the state to a real directory, or point OPENCLAW_STATE_DIR at the target itself.',
      fixable: false,
    });
  }
  const mode = root.mode;
  const base = {
    detail: `${root.target} has mode ${octal(mode)} (700 expected).`,
    fix: `chmod 700 ${root.target}${fixable ? ', or run `claw security audit --fix`' : ''}.`,
    fixable,
  };
  if (mode & 0o002)
    findings.push({
      ...base,
      checkId: 'fs.state_dir.perms_world_writable',
      severity: 'critical',
      title: 'Every user can change the state dir',
    });
  else if (mode & 0o020)
    findings.push({
      ...base,
      checkId: 'fs.state_dir.perms_group_writable',
      severity: 'warn',
      title: 'Group members can change the state dir',
    });
  else if (mode & DIR_READ_BITS)
    findings.push({
      ...base,
      checkId: 'fs.state_dir.perms_readable',
      severity: 'warn',
      title: 'Other users can read the state dir',
    });
  return findings;
}

function configFindings(ctx: AuditContext, config: NonNullable<StateScan['config']>): Finding[] {
  const findings: Finding[] = [];
  if (config.symlink) {
    findings.push({
      checkId: 'fs.config.symlink',
      severity: 'warn',
      title: 'Config file is a symlink',
      detail: `${ctx.configPath} is a symlink: config writes replace the link with a file, and the target is another place to protect.`,
      fix: 'Replace it with a regular file, or point OPENCLAW_CONFIG_PATH at the real file.',
      fixable: false,
    });
  }
  const mode = config.mode;
  const base = {
    detail: `${ctx.configPath} has mode ${octal(mode)} (600 expected); it holds tokens, keys and the tool policy.`,
    fix: `chmod 600 ${ctx.configPath}${config.symlink ? '' : ', or run `claw security audit --fix`'}.`,
    fixable: !config.symlink,
  };
  if (mode & WRITE_BITS)
    findings.push({
      ...base,
      checkId: 'fs.config.perms_writable',
      severity: 'critical',
      title: 'Other users can change the config',
    });
  else if (mode & 0o004)
    findings.push({
      ...base,
      checkId: 'fs.config.perms_world_readable',
      severity: 'critical',
      title: 'Every user can read the config',
    });
  else if (mode & 0o040)
    findings.push({
      ...base,
      checkId: 'fs.config.perms_group_readable',
      severity: 'warn',
      title: 'Group members can read the config',
    });
  return findings;
}

interface Area {
  /** checkId prefix, e.g. fs.credentials_dir */
  id: string;
  what: string;
  matches: (rel: string) => boolean;
  /** Whether write access by others gets its own (critical) finding. */
  writableCheck: boolean;
}

const AREAS: readonly Area[] = [
  {
    id: 'fs.credentials_dir',
    what: 'channel credentials and pairing allowlists',
    matches: (rel) => rel === 'credentials' || rel.startsWith('credentials/'),
    writableCheck: true,
  },
  {
    id: 'fs.auth_profiles',
    what: 'model API keys (auth-profiles.json)',
    matches: (rel) => /^agents\/[^/]+\/agent\/auth-profiles\.json$/.test(rel),
    writableCheck: true,
  },
  {
    id: 'fs.sessions_store',
    what: 'session transcripts and metadata',
    matches: (rel) => /^agents\/[^/]+\/sessions(\/|$)/.test(rel),
    writableCheck: false,
  },
  { id: 'fs.log_file', what: 'gateway logs', matches: (rel) => /^logs\/gateway\.log/.test(rel), writableCheck: false },
];

function areaFindings(area: Area, entries: readonly ModeEntry[], root: string): Finding[] {
  const findings: Finding[] = [];
  const open = area.writableCheck ? entries.filter(writable) : [];
  const rest = entries.filter((entry) => !open.includes(entry));
  if (open.length > 0) {
    findings.push({
      checkId: `${area.id}.perms_writable`,
      severity: 'critical',
      title: `Other users can change ${area.what}`,
      detail: `Writable by group or others: ${listed(open, root)}.`,
      fix: CHMOD_HINT,
      fixable: true,
    });
  }
  if (rest.length > 0) {
    findings.push({
      checkId: `${area.id}.perms_readable`,
      severity: 'warn',
      title: `Other users can read ${area.what}`,
      detail: `Readable by group or others: ${listed(rest, root)}.`,
      fix: CHMOD_HINT,
      fixable: true,
    });
  }
  return findings;
}

/** Folder names of the common sync clients: whatever sits below them is copied to other devices. */
const SYNCED = [
  'icloud',
  'mobile documents',
  'dropbox',
  'google drive',
  'googledrive',
  'onedrive',
  'nextcloud',
  'syncthing',
];

function syncedDirFindings(ctx: AuditContext): Finding[] {
  const synced = [ctx.stateDir, ctx.configPath].filter((path) =>
    SYNCED.some((name) => path.toLowerCase().includes(name)),
  );
  if (synced.length === 0) return [];
  return [
    {
      checkId: 'fs.synced_dir',
      severity: 'warn',
      title: 'State or config in a synced folder',
      detail:
        `${[...new Set(synced)].join(' and ')} looks like a synced folder: tokens, credentials and transcripts are copied to every ` +
        `device and service that syncs it.`,
      fix: 'Move the state dir to a local-only disk (OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH).',
      fixable: false,
    },
  ];
}

export function fsChecks(ctx: AuditContext, scan: StateScan): Finding[] {
  const findings: Finding[] = [...syncedDirFindings(ctx)];
  if (scan.root) findings.push(...stateDirFindings(ctx, scan.root));
  if (scan.config) findings.push(...configFindings(ctx, scan.config));
  if (!scan.root) return findings;
  const root = scan.root.target;
  const configInTree = scan.config?.insideState ? join(root, relative(ctx.stateDir, ctx.configPath)) : undefined;
  const remaining = new Set(scan.loose.filter((entry) => entry.path !== configInTree));
  for (const area of AREAS) {
    const entries = [...remaining].filter((entry) => area.matches(relative(root, entry.path).split(sep).join('/')));
    for (const entry of entries) remaining.delete(entry);
    findings.push(...areaFindings(area, entries, root));
  }
  if (remaining.size > 0) {
    findings.push({
      checkId: 'fs.state_dir.contents_perms_loose',
      severity: 'warn',
      title: 'State files open to other users',
      detail: `${remaining.size} ${remaining.size === 1 ? 'entry' : 'entries'} under ${ctx.stateDir} with group or other permissions: ${listed([...remaining], root)}.`,
      fix: CHMOD_HINT,
      fixable: true,
    });
  }
  return findings;
}
