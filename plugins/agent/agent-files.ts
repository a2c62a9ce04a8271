/**
 * An agent's workspace documents as OpenClaw's Control UI edits them (agents.files.list/get/set)
 * and previews any workspace file (agents.workspace.get), in OpenClaw's shapes. Only the
 * bootstrap documents the agent reads into its prompt may be written, and every path stays
 * inside the agent's workspace: a symlink or hard link out of it is refused, not followed.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, extname, isAbsolute, join, posix, relative, sep } from 'node:path';
import { agentIds, agentPaths } from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  normalizeAgentId,
  ProtocolError,
  writeFileAtomic,
  type JsonSchema,
  type KernelConfig,
  type PluginApi,
} from '../../sdk/index.js';

/** The documents the agent reads at the start of a run, in prompt order (OpenClaw's list). */
const WORKSPACE_DOCUMENTS = ['AGENTS.md', 'SOUL.md', 'IDENTITY.md', 'USER.md', 'BOOTSTRAP.md', 'MEMORY.md'];
/** IDENTITY.md is edited through the agent's identity, so the file list leaves it out, as OpenClaw. */
const LISTED_DOCUMENTS = WORKSPACE_DOCUMENTS.filter((name) => name !== 'IDENTITY.md');
/** Documents a fresh workspace may well lack: the UI shows them as "not written yet", not as broken. */
const OPTIONAL_DOCUMENTS = new Set(['SOUL.md', 'IDENTITY.md', 'USER.md', 'MEMORY.md']);
const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
const MAX_TEXT_PREVIEW_BYTES = 256 * 1024;
const MAX_IMAGE_PREVIEW_BYTES = 5 * 1024 * 1024;

const AGENT_ID = { type: ['string', 'number'] } as const;
// OpenClaw's clients may send newer optional params: tolerated, not refused.
const FILES_LIST: JsonSchema = { type: 'object', required: ['agentId'], properties: { agentId: AGENT_ID } };
const FILES_GET: JsonSchema = {
  type: 'object',
  required: ['agentId', 'name'],
  properties: { agentId: AGENT_ID, name: { type: 'string' } },
};
const FILES_SET: JsonSchema = {
  type: 'object',
  required: ['agentId', 'name', 'content'],
  properties: {
    agentId: AGENT_ID,
    name: { type: 'string' },
    content: { type: 'string' },
    expectedHash: { type: 'string' },
  },
};
const WORKSPACE_GET: JsonSchema = {
  type: 'object',
  required: ['agentId'],
  properties: { agentId: AGENT_ID, path: { type: 'string' } },
};

interface FileMeta {
  size: number;
  updatedAtMs: number;
}

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

function invalid(message: string, details?: Record<string, unknown>): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message, details);
}

/** A regular file with one link, or undefined when absent; anything else is refused as unsafe. */
function regularFile(path: string, label: string): FileMeta | undefined {
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    return undefined;
  }
  if (!stats.isFile() || stats.nlink > 1) throw invalid(`unsafe workspace file "${label}"`);
  return { size: stats.size, updatedAtMs: Math.floor(stats.mtimeMs) };
}

/** PNG, JPEG, GIF and WebP by their leading bytes: a renamed text file is not an image. */
function imageMime(data: Buffer): string | undefined {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') {
    return 'image/webp';
  }
  return undefined;
}

const IMAGE_EXTENSIONS = new Set(['.avif', '.bmp', '.gif', '.heic', '.heif', '.jpeg', '.jpg', '.png', '.webp']);

export function registerAgentFileMethods(api: PluginApi): void {
  const kernel = api.kernel;
  const config = () => kernel.config() as KernelConfig;

  const agentOf = (raw: unknown) => {
    const agentId = normalizeAgentId(String(raw ?? ''));
    const known = new Set(agentIds(config()).map((id) => normalizeAgentId(id)));
    if (!String(raw ?? '').trim() || !known.has(agentId)) throw invalid(`agent "${String(raw)}" not found`);
    return { agentId, workspace: agentPaths(config(), agentId, kernel.paths).workspaceDir };
  };

  const documentOf = (params: { agentId: unknown; name: string }) => {
    const { agentId, workspace } = agentOf(params.agentId);
    const name = params.name.trim();
    if (!WORKSPACE_DOCUMENTS.includes(name)) throw invalid(`unsupported file "${name}"`);
    return { agentId, workspace, name, path: join(workspace, name) };
  };

  const missing = (name: string, path: string) => ({
    name,
    path,
    missing: true,
    expectedAbsent: OPTIONAL_DOCUMENTS.has(name),
  });

  api.registerGatewayMethod('agents.files.list', {
    params: FILES_LIST,
    scope: 'operator.read',
    description:
      "An agent's workspace documents: {agentId, workspace, files: [{name, path, missing, size?, updatedAtMs?, expectedAbsent?}]}.",
    handler: (params: { agentId: unknown }) => {
      const { agentId, workspace } = agentOf(params.agentId);
      // Once the first-run ritual is done (BOOTSTRAP.md gone, AGENTS.md there) it is not offered again.
      const setUp =
        !regularFileQuiet(join(workspace, 'BOOTSTRAP.md')) && !!regularFileQuiet(join(workspace, 'AGENTS.md'));
      const names = setUp ? LISTED_DOCUMENTS.filter((name) => name !== 'BOOTSTRAP.md') : LISTED_DOCUMENTS;
      const files = names.map((name) => {
        const path = join(workspace, name);
        const meta = regularFileQuiet(path);
        return meta ? { name, path, missing: false, ...meta } : missing(name, path);
      });
      return { agentId, workspace, files };
    },
  });

  api.registerGatewayMethod('agents.files.get', {
    params: FILES_GET,
    scope: 'operator.read',
    description:
      'One workspace document with its content and sha256: {agentId, workspace, file: {name, path, missing, size, updatedAtMs, hash, content}}.',
    handler: (params: { agentId: unknown; name: string }) => {
      const doc = documentOf(params);
      const meta = regularFile(doc.path, doc.name);
      if (!meta) return { agentId: doc.agentId, workspace: doc.workspace, file: missing(doc.name, doc.path) };
      const data = readFileSync(doc.path);
      return {
        agentId: doc.agentId,
        workspace: doc.workspace,
        file: {
          name: doc.name,
          path: doc.path,
          missing: false,
          ...meta,
          hash: sha256(data),
          content: data.toString('utf8'),
        },
      };
    },
  });

  api.registerGatewayMethod('agents.files.set', {
    params: FILES_SET,
    scope: 'operator.admin',
    description:
      'Writes one workspace document (atomically); with expectedHash, only if the file still has that sha256 (else an agent_file_conflict error).',
    handler: (params: { agentId: unknown; name: string; content: string; expectedHash?: string }) => {
      const doc = documentOf(params);
      if (Buffer.byteLength(params.content) > MAX_DOCUMENT_BYTES) {
        throw invalid(`agent file "${doc.name}" is larger than ${MAX_DOCUMENT_BYTES} bytes`);
      }
      const current = regularFile(doc.path, doc.name) ? sha256(readFileSync(doc.path)) : undefined;
      const expected = params.expectedHash?.toLowerCase();
      if (expected && expected !== current) {
        throw invalid(`agent file "${doc.name}" changed since it was read`, {
          type: 'agent_file_conflict',
          name: doc.name,
          ...(current ? { currentHash: current } : {}),
        });
      }
      mkdirSync(doc.workspace, { recursive: true });
      writeFileAtomic(doc.path, params.content);
      const meta = regularFile(doc.path, doc.name);
      return {
        ok: true,
        agentId: doc.agentId,
        workspace: doc.workspace,
        file: {
          name: doc.name,
          path: doc.path,
          missing: false,
          size: Buffer.byteLength(params.content),
          ...(meta ? { updatedAtMs: meta.updatedAtMs } : {}),
          hash: sha256(params.content),
          content: params.content,
        },
      };
    },
  });

  api.registerGatewayMethod('agents.workspace.get', {
    params: WORKSPACE_GET,
    scope: 'operator.read',
    description:
      'Previews one file of the agent workspace (UTF-8 text up to 256 KiB, or a PNG/JPEG/GIF/WebP image as base64): {agentId, file: {path, name, size, updatedAtMs, mimeType, encoding, content}}.',
    handler: (params: { agentId: unknown; path?: string }) => {
      const { agentId, workspace } = agentOf(params.agentId);
      const raw = params.path ?? '';
      const portable = raw.replaceAll('\\', '/');
      if (posix.isAbsolute(portable) || isAbsolute(raw) || /^[a-zA-Z]:/.test(raw)) {
        throw invalid('path must be workspace-relative', { type: 'workspace_path_invalid', path: raw });
      }
      const path = posix
        .normalize(portable)
        .replace(/^(\.\/)+/, '')
        .replace(/\/+$/, '');
      if (path === '..' || path.startsWith('../')) {
        throw invalid('path escapes the agent workspace', { type: 'workspace_path_invalid', path: raw });
      }
      const notFound = () => invalid('workspace file not found', { type: 'workspace_file_not_found', path });
      if (!path || path === '.') throw notFound();
      const full = join(workspace, ...path.split('/'));
      let real: string;
      try {
        real = realpathSync(full);
      } catch {
        throw notFound();
      }
      // A symlink inside the workspace may point anywhere: resolve it and insist it lands inside.
      const inside = relative(realpathSync(workspace), real);
      if (inside.startsWith('..') || isAbsolute(inside) || inside.split(sep).includes('..')) throw notFound();
      const stats = lstatSync(real);
      if (!stats.isFile()) throw notFound();
      const image = IMAGE_EXTENSIONS.has(extname(path).toLowerCase());
      const maxBytes = image ? MAX_IMAGE_PREVIEW_BYTES : MAX_TEXT_PREVIEW_BYTES;
      if (stats.size > maxBytes) {
        throw invalid('workspace file is too large to preview', {
          type: 'workspace_file_too_large',
          maxBytes,
          path,
          size: stats.size,
        });
      }
      const data = readFileSync(real);
      const unsupported = () =>
        invalid('workspace file is not UTF-8 text or a supported image', { type: 'workspace_file_unsupported', path });
      const common = { path, name: basename(path), size: stats.size, updatedAtMs: Math.floor(stats.mtimeMs) };
      if (image) {
        const mimeType = imageMime(data);
        if (!mimeType) throw unsupported();
        return { agentId, file: { ...common, mimeType, encoding: 'base64', content: data.toString('base64') } };
      }
      let content: string;
      try {
        content = new TextDecoder('utf-8', { fatal: true }).decode(data);
      } catch {
        throw unsupported();
      }
      return { agentId, file: { ...common, mimeType: 'text/plain', encoding: 'utf8', content } };
    },
  });
}

/** For listing: an unsafe entry is shown as missing rather than failing the whole list. */
function regularFileQuiet(path: string): FileMeta | undefined {
  try {
    return regularFile(path, path);
  } catch {
    return undefined;
  }
}
