/**
 * Finding sessions the way OpenClaw's clients do: `sessions.resolve` (by key, session id,
 * label, the short id of a dashboard key or a key reference) and `sessions.search` (the
 * words of user and assistant messages). claw keeps no search index; transcripts are read
 * when asked, newest sessions first, so a search costs what the transcripts weigh.
 */
import { existsSync } from 'node:fs';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { isMessageEntry, parseSessionKey } from '../../sdk/agent/index.js';
import { KEY, LIST_PARAMS, listSessions, type SessionListOptions, type SessionsDeps } from './methods.js';
import { Transcript } from './transcript.js';

type Row = Awaited<ReturnType<typeof listSessions>>[number] & { label?: string; displayName?: string };

const SEARCH_LIMIT_MAX = 25;
const SNIPPET_CHARS = 240;

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

interface ResolveParams {
  key?: string;
  sessionId?: string;
  label?: string;
  shortId?: string;
  slugHint?: string;
  reference?: { key: string; slug?: string };
  agentId?: string;
  spawnedBy?: string;
  includeGlobal?: boolean;
  includeUnknown?: boolean;
  allowMissing?: boolean;
}

const RESOLVE_PARAMS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    key: KEY,
    sessionId: KEY,
    label: { type: 'string', minLength: 1, maxLength: 200 },
    shortId: KEY,
    slugHint: KEY,
    reference: {
      type: 'object',
      required: ['key'],
      additionalProperties: false,
      properties: { key: KEY, slug: KEY },
    },
    agentId: KEY,
    spawnedBy: KEY,
    // claw has no global or unknown-origin sessions: every session belongs to an agent.
    includeGlobal: { type: 'boolean' },
    includeUnknown: { type: 'boolean' },
    allowMissing: { type: 'boolean' },
  },
};

/** OpenClaw's candidate: the key, its agent and the name a list shows. */
function candidate(row: Row) {
  const displayName = row.label ?? row.displayName;
  return { key: row.key, agentId: row.agentId, ...(displayName ? { displayName } : {}) };
}

/** The dashes-free trailing UUID of a key (`agent:main:dashboard:<uuid>`), lower-cased. */
function trailingUuid(key: string): string | undefined {
  const match = /([0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})$/i.exec(key);
  return match?.[1]?.replace(/-/g, '').toLowerCase();
}

function slugOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

async function resolveSession(deps: SessionsDeps, params: ResolveParams) {
  const selectors = (['key', 'sessionId', 'label', 'shortId', 'reference'] as const).filter(
    (name) => params[name] !== undefined,
  );
  if (params.slugHint !== undefined && params.shortId === undefined) throw invalid('slugHint requires shortId');
  if (selectors.length > 1) throw invalid('Provide either key, sessionId, label, shortId, or reference (not multiple)');
  if (selectors.length === 0) throw invalid('Either key, sessionId, label, shortId, or reference is required');
  const listed = (options: SessionListOptions = {}) =>
    listSessions(deps, {
      archived: 'all',
      ...(params.agentId ? { agentId: params.agentId } : {}),
      ...(params.spawnedBy ? { spawnedBy: params.spawnedBy } : {}),
      ...options,
    }) as Promise<Row[]>;
  let matches: Row[];
  let what: string;
  if (params.key !== undefined || params.reference !== undefined) {
    const raw = params.key ?? params.reference!.key;
    const { sessionKey } = deps.sessions.resolveTarget({
      sessionKey: raw,
      ...(params.agentId ? { agentId: params.agentId } : {}),
    });
    matches = await listed({ key: sessionKey });
    const slug = params.reference?.slug;
    if (slug) matches = matches.filter((row) => slugOf(row.label ?? row.displayName ?? '') === slugOf(slug));
    what = `key ${raw}`;
  } else if (params.sessionId !== undefined) {
    matches = (await listed()).filter((row) => row.sessionId === params.sessionId || row.key === params.sessionId);
    what = `sessionId ${params.sessionId}`;
  } else if (params.label !== undefined) {
    matches = (await listed()).filter((row) => row.label === params.label);
    what = `label ${params.label}`;
  } else {
    const shortId = params.shortId!.toLowerCase();
    if (!/^[0-9a-f]{8,32}$/.test(shortId)) throw invalid('shortId must be 8-32 hexadecimal characters');
    matches = (await listed()).filter((row) => trailingUuid(row.key)?.startsWith(shortId));
    if (matches.length > 1 && params.slugHint) {
      const hinted = matches.filter((row) => slugOf(row.label ?? row.displayName ?? '') === slugOf(params.slugHint!));
      if (hinted.length) matches = hinted;
    }
    what = `shortId ${params.shortId}`;
  }
  if (matches.length === 1) return { ok: true, ...candidate(matches[0]!) };
  if (matches.length > 1) return { ok: false, candidates: matches.slice(0, 10).map(candidate) };
  if (params.allowMissing) return { ok: false };
  throw invalid(`No session found: ${what}`);
}

interface SearchParams {
  query: string;
  agentId?: string;
  sessionKeys?: string[];
  scope?: SessionListOptions & { excludeSubagents?: boolean; excludeCron?: boolean };
  limit?: number;
}

const SCOPE_FIELDS = ['agentId', 'activeMinutes', 'activeOnly', 'label', 'spawnedBy', 'search', 'archived'];

const SEARCH_PARAMS: JsonSchema = {
  type: 'object',
  required: ['query'],
  additionalProperties: false,
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 4096 },
    agentId: KEY,
    sessionKeys: { type: 'array', items: KEY, minItems: 1, maxItems: 200 },
    // The roster to search, picked by sessions.list's filters (those claw's sessions carry).
    scope: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ...Object.fromEntries(
          SCOPE_FIELDS.map((name) => [name, (LIST_PARAMS.properties as Record<string, JsonSchema>)[name]!]),
        ),
        configuredAgentsOnly: { type: 'boolean' },
        excludeSubagents: { type: 'boolean' },
        excludeCron: { type: 'boolean' },
      },
    },
    limit: { type: 'integer', minimum: 1, maximum: SEARCH_LIMIT_MAX },
  },
};

/** The text parts of a message, joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join(' ');
}

/** The words around the first match, as OpenClaw's snippets show them. */
function snippet(text: string, at: number, length: number): string {
  const flat = text.replace(/\s+/g, ' ');
  const start = Math.max(0, at - SNIPPET_CHARS / 2);
  const end = Math.min(flat.length, at + length + SNIPPET_CHARS / 2);
  return `${start > 0 ? '… ' : ''}${flat.slice(start, end).trim()}${end < flat.length ? ' …' : ''}`;
}

async function searchSessions(deps: SessionsDeps, params: SearchParams) {
  const query = params.query.trim();
  if (!query) throw invalid('query must not be empty');
  if (params.scope && (params.agentId || params.sessionKeys))
    throw invalid('scope picks the sessions itself: leave out agentId and sessionKeys');
  let rows: Row[];
  if (params.scope) {
    const { excludeSubagents, excludeCron, ...list } = params.scope;
    rows = ((await listSessions(deps, list)) as Row[]).filter(
      (row) =>
        !(excludeSubagents && row.spawnedBy) && !(excludeCron && parseSessionKey(row.key).rest.startsWith('cron:')),
    );
  } else if (params.sessionKeys) {
    const keys = new Set(
      params.sessionKeys.map(
        (key) =>
          deps.sessions.resolveTarget({ sessionKey: key, ...(params.agentId ? { agentId: params.agentId } : {}) })
            .sessionKey,
      ),
    );
    rows = ((await listSessions(deps, { archived: 'all' })) as Row[]).filter((row) => keys.has(row.key));
  } else {
    rows = (await listSessions(deps, { agentId: params.agentId ?? deps.sessions.defaultAgent() })) as Row[];
  }
  const limit = params.limit ?? 10;
  const needle = query.toLowerCase();
  const hits: Array<{
    sessionKey: string;
    sessionId: string;
    messageId: string;
    role: 'user' | 'assistant';
    timestamp: number;
    snippet: string;
    score: number;
  }> = [];
  for (const row of rows) {
    const file = deps.sessions.store(row.agentId).transcriptPath(row.sessionId, parseSessionKey(row.key).threadId);
    if (!existsSync(file)) continue;
    for (const entry of new Transcript(file).entries()) {
      if (!isMessageEntry(entry)) continue;
      const role = entry.message.role;
      if (role !== 'user' && role !== 'assistant') continue;
      const text = textOf(entry.message.content);
      const lower = text.toLowerCase();
      const at = lower.indexOf(needle);
      if (at < 0) continue;
      const count = lower.split(needle).length - 1;
      hits.push({
        sessionKey: row.key,
        sessionId: row.sessionId,
        messageId: entry.id,
        role,
        timestamp: Date.parse(entry.timestamp) || 0,
        snippet: snippet(text, at, needle.length),
        score: count,
      });
    }
  }
  hits.sort((a, b) => b.score - a.score || b.timestamp - a.timestamp || a.messageId.localeCompare(b.messageId));
  const results = hits.slice(0, limit);
  const truncated = hits.length > limit ? { truncated: true } : {};
  if (!params.scope) return { results, ...truncated };
  const referenced = new Set(results.map((hit) => hit.sessionKey));
  return { results, sessions: rows.filter((row) => referenced.has(row.key)).slice(0, SEARCH_LIMIT_MAX), ...truncated };
}

export function registerSessionLookup(api: PluginApi, deps: SessionsDeps): void {
  api.registerGatewayMethod('sessions.resolve', {
    scope: 'operator.read',
    params: RESOLVE_PARAMS,
    description:
      'One session by key, sessionId, label, shortId (hex prefix of a dashboard key) or reference: {ok, key, agentId, displayName?}; several: {ok:false, candidates}.',
    handler: (params: ResolveParams) => resolveSession(deps, params),
  });
  api.registerGatewayMethod('sessions.search', {
    scope: 'operator.read',
    params: SEARCH_PARAMS,
    description:
      "Words in sessions' user and assistant messages: {results: [{sessionKey, sessionId, messageId, role, timestamp, snippet, score}]}.",
    handler: (params: SearchParams) => searchSessions(deps, params),
  });
}
