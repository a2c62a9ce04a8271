/**
 * `claw sessions import`: sessions from an OpenClaw state dir into claw's stores. Two
 * formats are read:
 *  - OpenClaw's current store, one SQLite database per agent
 *    (`agents/<id>/agent/openclaw-agent.sqlite`): `session_nodes` holds each session key's
 *    entry (`entry_json`) and current session id, `transcript_events` the transcript
 *    entries of each session id in `seq` order (`event_json`, or zstd-compressed
 *    `event_zstd` for large ones);
 *  - its legacy files (`agents/<id>/sessions/sessions.json` and `<sessionId>.jsonl`),
 *    which is claw's own format, when they are in another state dir.
 * Transcripts are written first (atomically, owner-only), then the entry: an interruption
 * leaves at most a transcript no entry points to, and a rerun finishes the job. Nothing in
 * claw's stores is overwritten: a key claw already has with another session is reported.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as zlib from 'node:zlib';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../../sdk/index.js';
import { loadSqlite } from '../../sdk/sqlite.js';
import type { SessionEntry, SessionService } from '../../sdk/agent/index.js';
import { TRANSCRIPT_VERSION } from './transcript.js';
import { activeBranch } from './import-branch.js';

export interface ImportReport {
  from: string;
  imported: Array<{ agentId: string; key: string; sessionId: string; source: 'sqlite' | 'jsonl'; entries: number }>;
  /** Already in claw's store with the same session id. */
  unchanged: number;
  conflicts: Array<{ agentId: string; key: string; reason: string }>;
  /** Transcript entries that could not be read (compressed without zstd support, broken JSON). */
  skippedEntries: number;
  /** Entries left behind on abandoned branches (OpenClaw's rewinds and branch switches). */
  abandonedEntries: number;
  notes: string[];
}

interface FoundSession {
  key: string;
  sessionId: string;
  entry: Record<string, unknown>;
  /** Transcript lines (JSON text), header first when the source had one. */
  lines: string[];
  source: 'sqlite' | 'jsonl';
}

/** Fields of OpenClaw's session entry that mean the same in claw's (store.ts). */
const ENTRY_FIELDS = [
  'model',
  'provider',
  'lastModel',
  'thinkingLevel',
  'verboseLevel',
  'reasoningLevel',
  'elevatedLevel',
  'label',
  'displayName',
  'channel',
  'chatType',
  'subject',
  'room',
  'space',
  'origin',
  'lastChannel',
  'lastTo',
  'lastAccountId',
  'lastThreadId',
  'deliveryContext',
  'sendPolicy',
  'spawnedBy',
  'spawnDepth',
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'contextTokens',
  'compactionCount',
  'createdAt',
  'updatedAt',
  'archivedAt',
] as const;

const zstd = (zlib as { zstdDecompressSync?: (data: Uint8Array) => Buffer }).zstdDecompressSync;

function readSqlite(file: string, report: ImportReport): FoundSession[] {
  const Database = loadSqlite();
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const nodes = db
      .prepare('SELECT session_key, current_session_id, entry_json, updated_at FROM session_nodes')
      .all() as Array<{ session_key: string; current_session_id: string; entry_json: string; updated_at: number }>;
    const events = db.prepare('SELECT event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq');
    return nodes.map((node) => {
      const lines: string[] = [];
      for (const row of events.all(node.current_session_id) as Array<{
        event_json: string | null;
        event_zstd: Buffer | null;
      }>) {
        if (row.event_json !== null) lines.push(row.event_json);
        else if (row.event_zstd && zstd) lines.push(zstd(row.event_zstd).toString('utf8'));
        else report.skippedEntries++;
      }
      let entry: Record<string, unknown> = {};
      try {
        entry = JSON.parse(node.entry_json) as Record<string, unknown>;
      } catch {
        report.notes.push(`${file}: the entry of "${node.session_key}" is not JSON; imported with defaults`);
      }
      return {
        key: node.session_key,
        sessionId: node.current_session_id,
        entry: { updatedAt: node.updated_at, ...entry },
        lines,
        source: 'sqlite' as const,
      };
    });
  } finally {
    db.close();
  }
}

function readLegacy(dir: string): FoundSession[] {
  const store = JSON.parse(readFileSync(join(dir, 'sessions.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  return Object.entries(store).flatMap(([key, entry]) => {
    const sessionId = entry?.sessionId;
    if (typeof sessionId !== 'string') return [];
    const file = join(dir, `${sessionId}.jsonl`);
    const lines = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
      : [];
    return [{ key, sessionId, entry, lines, source: 'jsonl' as const }];
  });
}

function transcriptText(found: FoundSession, report: ImportReport): { text: string; entries: number } {
  const parsed = found.lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      report.skippedEntries++;
      return [];
    }
  });
  const branch = activeBranch(parsed.filter((entry) => entry.type !== 'session'));
  report.abandonedEntries += branch.dropped;
  const body = branch.entries;
  const timestamp = new Date(Number(found.entry.createdAt) || Date.now()).toISOString();
  const given = parsed.find((entry) => entry.type === 'session');
  const source = given ?? { type: 'session', version: TRANSCRIPT_VERSION, id: found.sessionId, timestamp };
  // The key this transcript is imported under: a store rebuilt from the transcripts finds it again.
  const header = { ...source, sessionKey: found.key };
  return { text: [header, ...body].map((entry) => JSON.stringify(entry)).join('\n') + '\n', entries: body.length };
}

function toEntry(found: FoundSession): SessionEntry {
  const entry: Record<string, unknown> = { sessionId: found.sessionId };
  for (const field of ENTRY_FIELDS)
    if (found.entry[field] !== undefined && found.entry[field] !== null) entry[field] = found.entry[field];
  const now = Date.now();
  for (const field of ['inputTokens', 'outputTokens', 'totalTokens', 'contextTokens', 'compactionCount'] as const)
    if (typeof entry[field] !== 'number') entry[field] = 0;
  if (typeof entry.updatedAt !== 'number') entry.updatedAt = now;
  if (typeof entry.createdAt !== 'number') entry.createdAt = entry.updatedAt;
  return entry as unknown as SessionEntry;
}

export async function importSessions(
  sessions: SessionService,
  stateDir: string,
  options: { from: string; agentId?: string },
): Promise<ImportReport> {
  const from = resolve(options.from);
  const report: ImportReport = {
    from,
    imported: [],
    unchanged: 0,
    conflicts: [],
    skippedEntries: 0,
    abandonedEntries: 0,
    notes: [],
  };
  const agentsDir = join(from, 'agents');
  if (!existsSync(agentsDir)) throw new Error(`no OpenClaw sessions under ${from} (expected ${agentsDir})`);
  const sameDir = from === resolve(stateDir);
  const agents = readdirSync(agentsDir).filter((id) => options.agentId === undefined || id === options.agentId);
  for (const agentId of agents) {
    const found: FoundSession[] = [];
    const database = join(agentsDir, agentId, 'agent', 'openclaw-agent.sqlite');
    if (existsSync(database)) found.push(...readSqlite(database, report));
    const legacy = join(agentsDir, agentId, 'sessions');
    if (existsSync(join(legacy, 'sessions.json'))) {
      // In claw's own state dir the legacy files are claw's store already.
      if (sameDir) report.notes.push(`${legacy}: legacy JSONL sessions are claw's own format and already in place`);
      else found.push(...readLegacy(legacy).filter((session) => !found.some((other) => other.key === session.key)));
    }
    const store = sessions.store(agentId);
    for (const session of found) {
      const existing = await store.get(session.key);
      if (existing?.sessionId === session.sessionId) {
        report.unchanged++;
        continue;
      }
      if (existing) {
        report.conflicts.push({
          agentId,
          key: session.key,
          reason: `claw already has this key with session ${existing.sessionId}; left as it is`,
        });
        continue;
      }
      const path = store.transcriptPath(session.sessionId);
      const { text, entries } = transcriptText(session, report);
      if (existsSync(path)) report.notes.push(`${path} exists; kept (not overwritten)`);
      else writeFileAtomic(path, text);
      const entry = toEntry(session);
      await store.upsert(session.key, () => entry);
      report.imported.push({
        agentId,
        key: session.key,
        sessionId: session.sessionId,
        source: session.source,
        entries,
      });
    }
  }
  if (report.skippedEntries > 0 && !zstd)
    report.notes.push('compressed transcript entries (event_zstd) need Node 22.15 or later to read; they were skipped');
  return report;
}
