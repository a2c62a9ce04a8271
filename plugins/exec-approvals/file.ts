/**
 * `<stateDir>/exec-approvals.json`, OpenClaw's approvals document: `defaults` and per-agent
 * policy (`agents.<id>`, `"*"` for every agent) with allowlists. Read fresh on every check so
 * an edit by `claw approvals set` applies to the next command; written atomically, 0600.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { compileSchema, parseJson5, writeJsonAtomic, type JsonSchema, withFileLock } from '../../sdk/index.js';

export type Security = 'deny' | 'allowlist' | 'full';
export type Ask = 'off' | 'on-miss' | 'always';

export interface AllowlistEntry {
  id?: string;
  /** Resolved binary path glob, or a bare command-name glob for commands run through PATH. */
  pattern: string;
  /** ECMAScript regex over the arguments joined by single spaces. */
  argPattern?: string;
  /** allow-always entries are bound to the directory they were approved in. */
  cwd?: string;
  source?: string;
  lastUsedAt?: number;
  lastUsedCommand?: string;
  lastResolvedPath?: string;
}

/** An allow-always grant for one MCP tool of one configured server, with any arguments (OpenClaw's `mcpTools`). */
export interface McpToolGrant {
  server: string;
  tool: string;
  source?: string;
  addedAt?: number;
  lastUsedAt?: number;
}

export interface ApprovalsLevel {
  security?: Security;
  ask?: Ask;
  askFallback?: Security;
  allowlist?: AllowlistEntry[];
  mcpTools?: McpToolGrant[];
}

export interface ApprovalsDocument {
  version: 1;
  defaults?: Omit<ApprovalsLevel, 'allowlist'>;
  agents?: Record<string, ApprovalsLevel>;
}

const SECURITY: JsonSchema = { enum: ['deny', 'allowlist', 'full'] };
const ASK: JsonSchema = { enum: ['off', 'on-miss', 'always'] };
// OpenClaw's `socket` (its macOS app's IPC) and `autoAllowSkills` have nothing to act on
// here, so they are refused rather than accepted and ignored.
const LEVEL_FIELDS = { security: SECURITY, ask: ASK, askFallback: SECURITY };
const ENTRY: JsonSchema = {
  type: 'object',
  required: ['pattern'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    pattern: { type: 'string', minLength: 1 },
    argPattern: { type: 'string' },
    cwd: { type: 'string' },
    source: { type: 'string' },
    lastUsedAt: { type: 'number' },
    lastUsedCommand: { type: 'string' },
    lastResolvedPath: { type: 'string' },
  },
};
const MCP_GRANT: JsonSchema = {
  type: 'object',
  required: ['server', 'tool'],
  additionalProperties: false,
  properties: {
    server: { type: 'string', minLength: 1 },
    tool: { type: 'string', minLength: 1 },
    source: { type: 'string' },
    addedAt: { type: 'number' },
    lastUsedAt: { type: 'number' },
  },
};
export const DOCUMENT_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['version'],
  additionalProperties: false,
  properties: {
    version: { const: 1 },
    defaults: { type: 'object', additionalProperties: false, properties: LEVEL_FIELDS },
    agents: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...LEVEL_FIELDS,
          allowlist: { type: 'array', items: ENTRY },
          mcpTools: { type: 'array', items: MCP_GRANT },
        },
      },
    },
  },
};
const validate = compileSchema(DOCUMENT_SCHEMA);

export function approvalsFile(stateDir: string): string {
  return join(stateDir, 'exec-approvals.json');
}

/** A document from JSON5 text; a clear error naming the first problem otherwise. */
export function parseDocument(text: string, source: string): ApprovalsDocument {
  let value: unknown;
  try {
    value = parseJson5(text);
  } catch (error) {
    throw new Error(`${source} is not valid JSON5: ${(error as Error).message}`);
  }
  if (!validate(value)) {
    const first = validate.errors?.[0];
    const extra = (first?.params as { additionalProperty?: string } | undefined)?.additionalProperty;
    const problem = extra ? `has "${extra}", which claw does not support` : (first?.message ?? 'is invalid');
    throw new Error(`${source} is not an exec approvals document: ${first?.instancePath || '(root)'} ${problem}`);
  }
  const doc = value as ApprovalsDocument;
  for (const [agent, level] of Object.entries(doc.agents ?? {})) {
    for (const entry of level.allowlist ?? []) {
      if (entry.argPattern === undefined) continue;
      try {
        new RegExp(entry.argPattern);
      } catch {
        throw new Error(`${source}: agents.${agent}.allowlist pattern "${entry.pattern}" has an invalid argPattern`);
      }
    }
  }
  return doc;
}

/**
 * The document with what OpenClaw's `exec.approvals.get` sends beside it: whether the file
 * exists and a hash of its bytes, which `exec.approvals.set {baseHash}` checks so a stale
 * read-modify-write is refused instead of overwriting someone's edit.
 */
export interface DocumentSnapshot {
  exists: boolean;
  hash: string;
  file: ApprovalsDocument;
}

export function readSnapshot(stateDir: string): DocumentSnapshot {
  const path = approvalsFile(stateDir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // OpenClaw's hash of a missing document.
    return { exists: false, hash: `missing:${sha256('')}`, file: { version: 1 } };
  }
  return { exists: true, hash: sha256(text), file: parseDocument(text, path) };
}

/** The document on disk; none yet means OpenClaw's empty one. A broken file is an error, never "no policy". */
export function readDocument(stateDir: string): ApprovalsDocument {
  return readSnapshot(stateDir).file;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export class StaleDocumentError extends Error {}

/** Replace the document, unless `baseHash` is given and the file changed since it was read. */
export function replaceDocument(
  stateDir: string,
  doc: ApprovalsDocument,
  baseHash?: string,
): Promise<DocumentSnapshot> {
  return withFileLock(
    `${approvalsFile(stateDir)}.lock`,
    () => {
      if (baseHash !== undefined && readSnapshot(stateDir).hash !== baseHash) {
        throw new StaleDocumentError('exec approvals changed since last load; re-run exec.approvals.get and retry');
      }
      writeDocument(stateDir, doc);
      return readSnapshot(stateDir);
    },
    { purpose: 'exec approvals' },
  );
}

/**
 * Read, change and write the document under its lock, so the gateway remembering an
 * allow-always and `claw approvals allowlist add` in another process never lose each other's edit.
 * `change` returns false to leave the file as it is.
 */
export function updateDocument(
  stateDir: string,
  change: (doc: ApprovalsDocument) => boolean,
): Promise<ApprovalsDocument> {
  return withFileLock(
    `${approvalsFile(stateDir)}.lock`,
    () => {
      const doc = readDocument(stateDir);
      if (change(doc)) writeDocument(stateDir, doc);
      return doc;
    },
    { purpose: 'exec approvals' },
  );
}

export function writeDocument(stateDir: string, doc: ApprovalsDocument): void {
  for (const level of Object.values(doc.agents ?? {}))
    for (const entry of level.allowlist ?? []) entry.id ??= randomUUID();
  writeJsonAtomic(approvalsFile(stateDir), doc);
}

/** Add `entry` to `agent`'s allowlist unless the same pattern (and binding) is there; true when it changed. */
export function addAllowlistEntry(doc: ApprovalsDocument, agent: string, entry: AllowlistEntry): boolean {
  const agents = (doc.agents ??= {});
  const level = (agents[agent] ??= {});
  const list = (level.allowlist ??= []);
  if (
    list.some(
      (other) => other.pattern === entry.pattern && other.argPattern === entry.argPattern && other.cwd === entry.cwd,
    )
  )
    return false;
  list.push({ id: randomUUID(), ...entry });
  return true;
}

export function removeAllowlistPattern(doc: ApprovalsDocument, agent: string, pattern: string): boolean {
  const level = doc.agents?.[agent];
  const before = level?.allowlist?.length ?? 0;
  if (!level?.allowlist) return false;
  level.allowlist = level.allowlist.filter((entry) => entry.pattern !== pattern);
  return level.allowlist.length !== before;
}
