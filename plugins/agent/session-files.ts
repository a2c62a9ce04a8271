/**
 * A session's files as OpenClaw's Control UI browses them (sessions.files.list/get/set/reveal):
 * the files the session's tool calls read or changed (read, write, edit, apply_patch in its
 * transcript) and a browser of the agent workspace the session runs in. Every path stays
 * inside that workspace: `..` and absolute paths outside it are refused, a symlink is resolved
 * and must land inside, the browser lists no symlinks, writes replace only an existing
 * regular file (atomically, compare-and-swap on its sha256) and previews are capped.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, type Dirent } from 'node:fs';
import { basename, dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { agentPaths, isMessageEntry, parseSessionKey } from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  ProtocolError,
  writeFileAtomic,
  type JsonSchema,
  type KernelConfig,
  type PluginApi,
} from '../../sdk/index.js';
import type { AgentRuntime } from './runtime.js';

/** OpenClaw's preview cap; a larger file is listed but not read or written through the UI. */
const MAX_PREVIEW_BYTES = 256 * 1024;
const MAX_BROWSER_ENTRIES = 250;
const MAX_SEARCH_ENTRIES = 500;
const MAX_SEARCH_VISITED = 5000;
const SEARCH_SKIP_DIRS = new Set(['.git', '.hg', '.next', '.turbo', '.yarn', 'coverage', 'dist', 'node_modules']);

const KEY: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };
const PATH: JsonSchema = { type: 'string', minLength: 1, maxLength: 4096 };

type TouchKind = 'read' | 'modified';
interface Touched {
  path: string;
  kind: TouchKind;
}

export interface SessionWorkspace {
  sessionKey: string;
  agentId: string;
  /** The agent workspace; undefined when the session does not exist. */
  root?: string;
  touched: Touched[];
}

function fileError(type: string, message: string, details: Record<string, unknown>): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message, { type, ...details });
}

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && !rel.split(sep).includes('..'));
}

/** The path's place in the workspace as "a/b.txt" (resolving a symlink), or undefined when it leaves it. */
function containedPath(root: string, raw: string): string | undefined {
  const full = resolve(root, raw.replaceAll('\\', '/'));
  if (!isInside(root, full)) return undefined;
  let real: string;
  try {
    real = realpathSync(full);
  } catch {
    // Not there (yet): judged by its resolved name, which is inside.
    return relative(root, full).split(sep).join('/');
  }
  const realRoot = realpathSync(root);
  return isInside(realRoot, real) ? relative(realRoot, real).split(sep).join('/') : undefined;
}

function addTouched(files: Map<string, Touched>, path: unknown, kind: TouchKind): void {
  if (typeof path !== 'string' || !path.trim()) return;
  const existing = files.get(path);
  if (existing?.kind === 'modified' || (existing && kind === 'read')) return;
  files.set(path, { path, kind });
}

/** What the transcript's tool calls touched, modified first, as OpenClaw orders them. */
function touchedFiles(messages: unknown[]): Touched[] {
  const files = new Map<string, Touched>();
  for (const message of messages) {
    const record = message as { role?: string; content?: unknown };
    if (record?.role !== 'assistant' || !Array.isArray(record.content)) continue;
    for (const block of record.content as Array<Record<string, unknown>>) {
      const type = String(block?.type ?? '')
        .toLowerCase()
        .replace(/[_-]/g, '');
      if (type !== 'toolcall' && type !== 'tooluse') continue;
      const args = (block.arguments ?? block.input ?? block.args) as Record<string, unknown> | undefined;
      const name = String(block.name ?? '').toLowerCase();
      if (!args || typeof args !== 'object') continue;
      const path = args.path ?? args.file_path ?? args.filePath ?? args.file;
      if (name === 'read') addTouched(files, path, 'read');
      else if (name === 'write' || name === 'edit') addTouched(files, path, 'modified');
      else if (name === 'apply_patch' && typeof args.input === 'string') {
        for (const match of args.input.matchAll(/^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm))
          addTouched(files, match[1]!.trim(), 'modified');
      }
    }
  }
  return [...files.values()].sort((a, b) =>
    a.kind !== b.kind ? (a.kind === 'modified' ? -1 : 1) : a.path.localeCompare(b.path),
  );
}

export async function sessionWorkspace(
  api: PluginApi,
  runtime: AgentRuntime,
  params: { sessionKey: string; agentId?: string },
): Promise<SessionWorkspace> {
  const { agentId, sessionKey } = runtime.resolveTarget({
    sessionKey: params.sessionKey,
    ...(params.agentId ? { agentId: params.agentId } : {}),
  });
  const store = runtime.store(agentId);
  const entry = await store.get(sessionKey);
  if (!entry) return { sessionKey, agentId, touched: [] };
  const root = agentPaths(api.kernel.config() as KernelConfig, agentId, api.kernel.paths).workspaceDir;
  const file = store.transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId);
  const messages = existsSync(file)
    ? runtime.sessions
        .transcript(file)
        .entries()
        .filter(isMessageEntry)
        .map((item) => item.message)
    : [];
  return { sessionKey, agentId, root, touched: touchedFiles(messages) };
}

/** Whether the folder is inside a git checkout (a `.git` in it or any parent). */
export function insideGitCheckout(dir: string): boolean {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return true;
    if (dirname(at) === at) return false;
  }
}

interface FileStat {
  size: number;
  updatedAtMs: number;
  mode: number;
}

/** A regular file with one link inside the workspace, else undefined (absent, a folder, a link out). */
function regularFile(root: string, workspacePath: string): FileStat | undefined {
  try {
    const stats = lstatSync(join(root, ...workspacePath.split('/')));
    if (!stats.isFile() || stats.nlink > 1) return undefined;
    return { size: stats.size, updatedAtMs: Math.floor(stats.mtimeMs), mode: stats.mode & 0o777 };
  } catch {
    return undefined;
  }
}

function imageMime(data: Buffer): string | undefined {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  return undefined;
}

function utf8(data: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return undefined;
  }
}

/** OpenClaw's session file entry; with content, the preview (text with its hash, image, or unsupported). */
function fileEntry(root: string, touched: Touched, withContent: boolean) {
  const base = { path: touched.path, name: basename(touched.path) || touched.path, kind: touched.kind };
  const workspacePath = containedPath(root, touched.path);
  const stat = workspacePath ? regularFile(root, workspacePath) : undefined;
  if (!workspacePath || !stat) return { ...base, missing: true };
  const entry: Record<string, unknown> = {
    ...base,
    workspacePath,
    missing: false,
    size: stat.size,
    updatedAtMs: stat.updatedAtMs,
  };
  if (!withContent || stat.size > MAX_PREVIEW_BYTES) return entry;
  const data = readFileSync(join(root, ...workspacePath.split('/')));
  const image = imageMime(data);
  const text = image ? undefined : utf8(data);
  if (image) Object.assign(entry, { mimeType: image, contentEncoding: 'base64', previewKind: 'image' });
  if (image) entry.content = data.toString('base64');
  else if (text !== undefined && !text.includes('\0'))
    Object.assign(entry, {
      mimeType: 'text/plain',
      contentEncoding: 'utf8',
      previewKind: 'text',
      content: text,
      hash: sha256(data),
    });
  else entry.previewKind = 'unsupported';
  return entry;
}

interface BrowserEntry {
  path: string;
  name: string;
  kind: 'file' | 'directory';
  size?: number;
  updatedAtMs?: number;
  sessionKind?: 'read' | 'modified' | 'mixed';
}

/** Symlinks and other special files are left out: the browser never leads outside the workspace. */
function browserEntry(dir: string, browserPath: string, dirent: Dirent, relevance: Map<string, TouchKind>) {
  const kind = dirent.isFile() ? 'file' : dirent.isDirectory() ? 'directory' : undefined;
  if (!kind) return undefined;
  let stats;
  try {
    stats = lstatSync(join(dir, dirent.name));
  } catch {
    return undefined;
  }
  let sessionKind: BrowserEntry['sessionKind'];
  if (kind === 'file') sessionKind = relevance.get(browserPath);
  else
    for (const [path, touched] of relevance)
      if (path.startsWith(`${browserPath}/`)) sessionKind = !sessionKind || sessionKind === touched ? touched : 'mixed';
  const entry: BrowserEntry = { path: browserPath, name: dirent.name, kind };
  if (kind === 'file') entry.size = stats.size;
  entry.updatedAtMs = Math.floor(stats.mtimeMs);
  if (sessionKind) entry.sessionKind = sessionKind;
  return entry;
}

function sortEntries(entries: BrowserEntry[]): BrowserEntry[] {
  return entries.sort((a, b) => (a.kind !== b.kind ? (a.kind === 'directory' ? -1 : 1) : a.path.localeCompare(b.path)));
}

function readDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return [];
  }
}

function browse(root: string, touched: Touched[], path: string | undefined, search: string | undefined) {
  const relevance = new Map<string, TouchKind>();
  for (const file of touched) {
    const at = containedPath(root, file.path);
    if (at) relevance.set(at, file.kind);
  }
  const query = search?.trim().toLowerCase();
  if (query) {
    const entries: BrowserEntry[] = [];
    let visited = 0;
    let truncated = false;
    const visit = (dir: string, prefix: string) => {
      for (const dirent of readDir(dir)) {
        if (entries.length >= MAX_SEARCH_ENTRIES || visited >= MAX_SEARCH_VISITED) return void (truncated = true);
        visited++;
        const browserPath = prefix ? `${prefix}/${dirent.name}` : dirent.name;
        if (browserPath.toLowerCase().includes(query)) {
          const entry = browserEntry(dir, browserPath, dirent, relevance);
          if (entry) entries.push(entry);
        }
        if (dirent.isDirectory() && !SEARCH_SKIP_DIRS.has(dirent.name)) visit(join(dir, dirent.name), browserPath);
      }
    };
    visit(root, '');
    return { path: '', search: search!.trim(), entries: sortEntries(entries), ...(truncated ? { truncated } : {}) };
  }
  const browserPath = path ? containedPath(root, path) : '';
  if (browserPath === undefined) return undefined;
  const dir = join(root, ...browserPath.split('/').filter(Boolean));
  try {
    if (!lstatSync(dir).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  const all = readDir(dir);
  const entries = all
    .slice(0, MAX_BROWSER_ENTRIES)
    .map((dirent) => browserEntry(dir, browserPath ? `${browserPath}/${dirent.name}` : dirent.name, dirent, relevance))
    .filter((entry): entry is BrowserEntry => entry !== undefined);
  const parent = posix.dirname(browserPath);
  return {
    path: browserPath,
    ...(browserPath ? { parentPath: parent === '.' ? '' : parent } : {}),
    entries: sortEntries(entries),
    ...(all.length > MAX_BROWSER_ENTRIES ? { truncated: true } : {}),
  };
}

export function registerSessionFileMethods(api: PluginApi, runtime: AgentRuntime): void {
  const workspaceOf = (params: { sessionKey: string; agentId?: string }) => sessionWorkspace(api, runtime, params);
  const notFound = (path: string) => fileError('session_file_not_found', 'session file not found', { path });
  const outside = (path: string) =>
    fileError('session_file_not_found', `session file not found: "${path}" is outside the session's workspace`, {
      path,
    });

  api.registerGatewayMethod('sessions.files.list', {
    scope: 'operator.read',
    params: {
      type: 'object',
      required: ['sessionKey'],
      properties: {
        sessionKey: KEY,
        agentId: KEY,
        path: { type: 'string', maxLength: 4096 },
        search: { type: 'string', maxLength: 512 },
      },
    },
    description:
      'The files a session’s tool calls read or changed, and a browser of its workspace: {sessionKey, root?, gitCheckout?, files, browser?}.',
    handler: async (params: { sessionKey: string; agentId?: string; path?: string; search?: string }) => {
      const session = await workspaceOf(params);
      if (!session.root) return { sessionKey: params.sessionKey, files: [] };
      const root = session.root;
      const files = session.touched.filter((file) => containedPath(root, file.path) !== undefined);
      const browser = existsSync(root) ? browse(root, files, params.path, params.search) : undefined;
      return {
        sessionKey: params.sessionKey,
        root,
        gitCheckout: insideGitCheckout(root),
        files: files.map((file) => fileEntry(root, file, false)),
        ...(browser ? { browser } : {}),
      };
    },
  });

  api.registerGatewayMethod('sessions.files.get', {
    scope: 'operator.read',
    params: {
      type: 'object',
      required: ['sessionKey', 'path'],
      properties: { sessionKey: KEY, path: PATH, agentId: KEY },
    },
    description:
      'One file of the session’s workspace with its preview (UTF-8 text and its sha256, or an image as base64): {sessionKey, root, file}.',
    handler: async (params: { sessionKey: string; agentId?: string; path: string }) => {
      const session = await workspaceOf(params);
      if (!session.root) throw notFound(params.path);
      const workspacePath = containedPath(session.root, params.path);
      if (workspacePath === undefined) throw outside(params.path);
      const touched = session.touched.find((file) => containedPath(session.root!, file.path) === workspacePath);
      const file = fileEntry(session.root, { path: params.path, kind: touched?.kind ?? 'read' }, true);
      if (file.missing) throw notFound(params.path);
      if (
        typeof (file as { content?: unknown }).content !== 'string' &&
        (file as { previewKind?: string }).previewKind !== 'unsupported'
      )
        throw fileError('session_file_too_large', 'session file is too large to preview', {
          maxPreviewBytes: MAX_PREVIEW_BYTES,
          path: params.path,
          size: (file as { size?: number }).size,
        });
      return { sessionKey: params.sessionKey, root: session.root, file };
    },
  });

  api.registerGatewayMethod('sessions.files.set', {
    scope: 'operator.admin',
    params: {
      type: 'object',
      required: ['sessionKey', 'path', 'content', 'expectedHash'],
      properties: {
        sessionKey: KEY,
        path: PATH,
        agentId: KEY,
        content: { type: 'string' },
        expectedHash: { type: 'string', pattern: '^[a-f0-9]{64}$' },
      },
    },
    description:
      'Replaces one existing file of the session’s workspace (atomically) if it still has expectedHash: {sessionKey, root, file}.',
    handler: async (params: {
      sessionKey: string;
      agentId?: string;
      path: string;
      content: string;
      expectedHash: string;
    }) => {
      const size = Buffer.byteLength(params.content, 'utf8');
      if (size > MAX_PREVIEW_BYTES)
        throw fileError('session_file_too_large', 'session file content is too large', {
          maxPreviewBytes: MAX_PREVIEW_BYTES,
          path: params.path,
          size,
        });
      if (params.content.includes('\0') || Buffer.from(params.content, 'utf8').toString('utf8') !== params.content)
        throw fileError('session_file_unsafe', 'session file could not be written safely', { path: params.path });
      const session = await workspaceOf(params);
      if (!session.root) throw notFound(params.path);
      const workspacePath = containedPath(session.root, params.path);
      if (workspacePath === undefined) throw outside(params.path);
      const stat = regularFile(session.root, workspacePath);
      if (!stat) throw notFound(params.path);
      const file = join(session.root, ...workspacePath.split('/'));
      const currentHash = sha256(readFileSync(file));
      if (currentHash !== params.expectedHash)
        throw fileError('session_file_conflict', 'session file changed since it was read', {
          path: params.path,
          currentHash,
        });
      writeFileAtomic(file, params.content, { mode: stat.mode });
      const written = regularFile(session.root, workspacePath);
      return {
        sessionKey: params.sessionKey,
        root: session.root,
        file: {
          path: params.path,
          workspacePath,
          name: basename(workspacePath),
          kind: 'modified',
          missing: false,
          size,
          updatedAtMs: written?.updatedAtMs ?? Date.now(),
          hash: sha256(params.content),
        },
      };
    },
  });

  // OpenClaw's desktop app opens the folder in the host's file manager; claw's gateway is a
  // headless server, so it answers OpenClaw's own "cannot open here" shape with the path.
  api.registerGatewayMethod('sessions.files.reveal', {
    scope: 'operator.admin',
    params: { type: 'object', required: ['key'], properties: { key: KEY, agentId: KEY } },
    description:
      'Would open the session’s workspace in a file manager; claw’s headless gateway answers {ok:false, path, error}.',
    handler: async (params: { key: string; agentId?: string }) => {
      const session = await workspaceOf({
        sessionKey: params.key,
        ...(params.agentId ? { agentId: params.agentId } : {}),
      });
      if (!session.root) return { ok: false, error: 'No workspace root is available for this session.' };
      return {
        ok: false,
        path: session.root,
        error: `claw's gateway is headless and opens no file manager; the session's workspace is ${session.root}`,
      };
    },
  });
}
