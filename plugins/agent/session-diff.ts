/**
 * sessions.diff as OpenClaw's Control UI reads it: the git changes in the checkout the
 * session's workspace lives in. claw gives a session no branch or worktree of its own, so
 * the base is the checkout's HEAD: "all" and "uncommitted" are both the working tree against
 * HEAD (untracked files included), and no commit lies between base and HEAD, so scope
 * "commit" answers OpenClaw's unknown_commit. A workspace outside git answers not_git.
 * git runs with the repository's programs switched off (fsmonitor, external diff, textconv),
 * so reading a diff never runs code a repository's config names.
 */
import { execFile } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import type { AgentRuntime } from './runtime.js';
import { insideGitCheckout, sessionWorkspace } from './session-files.js';

const MAX_FILE_PATCH_BYTES = 64 * 1024;
const MAX_TOTAL_PATCH_BYTES = 1024 * 1024;
const MAX_FILES = 500;
const GIT_TIMEOUT_MS = 15_000;
const SAFE_GIT = ['-c', 'core.fsmonitor=false', '-c', 'core.quotePath=false', '-c', 'diff.external='];
const DIFF = ['diff', '--no-ext-diff', '--no-textconv', '-M'];
const KEY: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };

interface DiffFile {
  path: string;
  oldPath?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  additions: number;
  deletions: number;
  binary?: boolean;
  untracked?: boolean;
  patch?: string;
  truncated?: boolean;
}

function git(cwd: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      'git',
      [...SAFE_GIT, '-C', cwd, ...args],
      { timeout: GIT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } },
      (error, stdout) => resolve(error ? undefined : stdout),
    );
  });
}

const STATUS: Record<string, DiffFile['status']> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  T: 'modified',
};

/** `--name-status -z` and `--numstat -z` of one diff, joined per file. */
function parseDiff(nameStatus: string, numstat: string): DiffFile[] {
  const files: DiffFile[] = [];
  const fields = nameStatus.split('\0');
  for (let i = 0; i < fields.length - 1;) {
    const code = fields[i++]![0]!;
    if (code === 'R' || code === 'C') {
      const oldPath = fields[i++]!;
      files.push({ path: fields[i++]!, oldPath, status: 'renamed', additions: 0, deletions: 0 });
    } else files.push({ path: fields[i++]!, status: STATUS[code] ?? 'modified', additions: 0, deletions: 0 });
  }
  const counts = numstat.split('\0');
  for (let i = 0; i < counts.length - 1;) {
    const [added, deleted, path] = counts[i++]!.split('\t');
    // A rename's line ends in a tab, then the old and new names follow as fields of their own.
    const name = path ? path : (i++, counts[i++]!);
    const file = files.find((candidate) => candidate.path === name);
    if (!file) continue;
    if (added === '-') file.binary = true;
    else {
      file.additions = Number(added);
      file.deletions = Number(deleted);
    }
  }
  return files;
}

function takePatch(file: DiffFile, patch: string, budget: { remaining: number }): void {
  const bytes = Buffer.byteLength(patch);
  if (bytes > MAX_FILE_PATCH_BYTES || bytes > budget.remaining) {
    file.truncated = true;
    return;
  }
  budget.remaining -= bytes;
  file.patch = patch;
}

/** An untracked file as an addition, its patch written out here (git has no diff for it). */
function untrackedFile(root: string, path: string, budget: { remaining: number }): DiffFile | undefined {
  const full = join(root, path);
  let stats;
  try {
    stats = lstatSync(full);
  } catch {
    return undefined;
  }
  if (!stats.isFile()) return undefined;
  const file: DiffFile = { path, status: 'added', additions: 0, deletions: 0, untracked: true };
  if (stats.size > MAX_FILE_PATCH_BYTES) return { ...file, truncated: true };
  const data = readFileSync(full);
  if (data.includes(0)) return { ...file, binary: true };
  const lines = data.toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  file.additions = lines.length;
  const hunk = lines.length ? `@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join('\n')}\n` : '';
  takePatch(file, `diff --git a/${path} b/${path}\nnew file\n--- /dev/null\n+++ b/${path}\n${hunk}`, budget);
  return file;
}

export function registerSessionDiff(api: PluginApi, runtime: AgentRuntime): void {
  api.registerGatewayMethod('sessions.diff', {
    scope: 'operator.read',
    params: {
      type: 'object',
      required: ['sessionKey'],
      properties: {
        sessionKey: KEY,
        agentId: KEY,
        scope: { enum: ['all', 'uncommitted', 'commit'] },
        commit: KEY,
      },
    },
    description:
      'The git changes of the checkout the session’s workspace is in, against HEAD: {sessionKey, root, branch?, baseRef, files, additions, deletions, truncated?, unavailableReason?}.',
    handler: async (params: { sessionKey: string; agentId?: string; scope?: string; commit?: string }) => {
      if (((params.scope ?? 'all') === 'commit') !== (params.commit !== undefined))
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          'invalid sessions.diff params: commit must be set if and only if scope is commit',
        );
      const empty = (unavailableReason: string, extra: Record<string, unknown> = {}) => ({
        sessionKey: params.sessionKey,
        ...extra,
        files: [],
        additions: 0,
        deletions: 0,
        unavailableReason,
      });
      const session = await sessionWorkspace(api, runtime, params);
      if (!session.root) return empty('unknown_session');
      if (!insideGitCheckout(session.root)) return empty('not_git');
      const root = (await git(session.root, ['rev-parse', '--show-toplevel']))?.trim();
      if (!root) return empty('not_git');
      const head = (await git(root, ['rev-parse', '--verify', '--quiet', 'HEAD']))?.trim();
      const branch = (await git(root, ['symbolic-ref', '--short', '--quiet', 'HEAD']))?.trim();
      const repository = { root, ...(branch ? { branch } : {}), ...(head ? { baseRef: 'HEAD' } : {}) };
      if (params.scope === 'commit') return empty('unknown_commit', repository);
      const base = head ?? (await git(root, ['hash-object', '-t', 'tree', '/dev/null']))?.trim();
      if (!base) return empty('not_git');
      const [nameStatus, numstat, untracked] = await Promise.all([
        git(root, [...DIFF, '-z', '--name-status', base, '--']),
        git(root, [...DIFF, '-z', '--numstat', base, '--']),
        git(root, ['ls-files', '--others', '--exclude-standard', '-z']),
      ]);
      const budget = { remaining: MAX_TOTAL_PATCH_BYTES };
      const tracked = parseDiff(nameStatus ?? '', numstat ?? '');
      let truncated = tracked.length > MAX_FILES;
      const files = tracked.slice(0, MAX_FILES);
      for (const file of files) {
        if (file.binary) continue;
        const patch = await git(root, [...DIFF, base, '--', ...(file.oldPath ? [file.oldPath] : []), file.path]);
        if (patch !== undefined) takePatch(file, patch, budget);
      }
      for (const path of (untracked ?? '').split('\0').filter(Boolean)) {
        if (files.length >= MAX_FILES) {
          truncated = true;
          break;
        }
        const file = untrackedFile(root, path, budget);
        if (file) files.push(file);
      }
      truncated ||= files.some((file) => file.truncated);
      return {
        sessionKey: params.sessionKey,
        ...repository,
        files,
        additions: files.reduce((sum, file) => sum + file.additions, 0),
        deletions: files.reduce((sum, file) => sum + file.deletions, 0),
        ...(truncated ? { truncated } : {}),
      };
    },
  });
}
