/**
 * OpenClaw's memory methods over claw's memory slot (memory-sqlite, memory-minisearch,
 * memory-qmd: whichever holds it): memory.search and doctor.memory.status ask the backend, the
 * same one the agent's memory_search tool uses. claw has no "dreaming" (OpenClaw's scheduled
 * promotion of short-term notes into long-term memory), so that part of the status is off
 * and empty; doctor.memory.dreamDiary still reads a DREAMS.md the workspace may hold.
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentPaths, defaultAgentId, unknownAgentProblem } from '../../sdk/agent/index.js';
import { ErrorCodes, normalizeAgentId, ProtocolError, type KernelConfig, type PluginApi } from '../../sdk/index.js';

const DEFAULT_MAX_RESULTS = 20;
const MAX_RESULTS = 50;
const DREAM_DIARY_FILES = ['DREAMS.md', 'dreams.md'];

/** Dreaming, off: no phases run, nothing is recalled or promoted. */
const NO_DREAMING = {
  enabled: false,
  verboseLogging: false,
  storageMode: 'inline',
  separateReports: false,
  shortTermEntries: [],
  signalEntries: [],
  promotedEntries: [],
  shortTermCount: 0,
  recallSignalCount: 0,
  dailySignalCount: 0,
  groundedSignalCount: 0,
  totalSignalCount: 0,
  phaseSignalCount: 0,
  lightPhaseHitCount: 0,
  remPhaseHitCount: 0,
  promotedTotal: 0,
  promotedToday: 0,
  phases: { light: { enabled: false }, deep: { enabled: false }, rem: { enabled: false } },
};

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

export function registerMemoryMethods(api: PluginApi): void {
  const kernel = api.kernel;
  const config = () => kernel.config() as KernelConfig;
  const agentOf = (raw: unknown): string => {
    if (raw === undefined) return defaultAgentId(config());
    if (typeof raw !== 'string' || unknownAgentProblem(config(), raw)) throw invalid('unknown agentId');
    return normalizeAgentId(raw);
  };
  const backend = () => kernel.capabilities.slot('memory');

  api.registerGatewayMethod('memory.search', {
    params: { type: 'object' },
    scope: 'operator.read',
    description:
      "Search an agent's memory files as memory_search does: {agentId, provider, searchMode, results: [{path, startLine, endLine, score, snippet, source?}], warning?}.",
    handler: async (params: { query?: unknown; maxResults?: unknown; minScore?: unknown; agentId?: unknown }) => {
      const query = typeof params.query === 'string' ? params.query.trim() : '';
      if (!query) throw invalid('query must be a non-empty string');
      for (const value of [params.maxResults, params.minScore])
        if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value)))
          throw invalid('maxResults and minScore must be finite numbers when provided');
      const agentId = agentOf(params.agentId);
      const memory = await backend().catch((error: Error) => {
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, `memory search unavailable: ${error.message}`);
      });
      if (!memory)
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, 'memory search unavailable: plugins.slots.memory is "none"');
      const maxResults = Math.min(
        MAX_RESULTS,
        Math.max(1, Math.floor((params.maxResults as number) ?? DEFAULT_MAX_RESULTS)),
      );
      let found;
      try {
        found = await memory.search(query, {
          agentId,
          maxResults,
          ...(params.minScore !== undefined ? { minScore: params.minScore as number } : {}),
        });
      } catch (error) {
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, `memory search failed: ${(error as Error).message}`);
      }
      return {
        agentId,
        provider: found.provider ?? 'none',
        searchMode: found.mode === 'keyword' ? 'fts-only' : 'hybrid',
        results: found.results,
        ...(found.notice ? { warning: found.notice } : {}),
        // claw's own fields, so `claw memory search` prints the same through a gateway as alone.
        backend: found.backend,
        mode: found.mode,
        ...(found.model ? { model: found.model } : {}),
      };
    },
  });

  api.registerGatewayMethod('doctor.memory.status', {
    params: { type: 'object' },
    scope: 'operator.read',
    description:
      "The memory index of an agent as the doctor sees it: {agentId, provider, embedding: {ok, checked, error?}, dreaming} (claw's dreaming is off), or {agentId, searchRuntimeRegistered: false, embedding} without a memory backend.",
    handler: async (params: { agentId?: unknown }) => {
      const agentId = agentOf(params.agentId);
      let memory: Awaited<ReturnType<typeof backend>>;
      try {
        memory = await backend();
      } catch (error) {
        return { agentId, searchRuntimeRegistered: false, embedding: { ok: false, error: (error as Error).message } };
      }
      if (!memory)
        return {
          agentId,
          searchRuntimeRegistered: false,
          embedding: { ok: false, error: 'memory search unavailable: plugins.slots.memory is "none"' },
        };
      try {
        const status = (await memory.status({ agentId })) as Record<string, unknown>;
        const provider = typeof status.provider === 'string' ? status.provider : 'none';
        const embedding =
          provider === 'none'
            ? { ok: false, checked: false, error: 'memory search runs without embeddings (keyword only)' }
            : { ok: true, checked: false };
        return { agentId, provider, embedding, dreaming: NO_DREAMING };
      } catch (error) {
        return { agentId, embedding: { ok: false, error: `gateway memory probe failed: ${(error as Error).message}` } };
      }
    },
  });

  api.registerGatewayMethod('doctor.memory.dreamDiary', {
    params: { type: 'object' },
    scope: 'operator.read',
    description:
      "The agent workspace's DREAMS.md, if any (claw writes none itself): {agentId, found, path, content?, updatedAtMs?}.",
    handler: async (params: { agentId?: unknown }) => {
      const agentId = agentOf(params.agentId);
      const workspace = agentPaths(config(), agentId, kernel.paths).workspaceDir;
      for (const name of DREAM_DIARY_FILES) {
        const file = join(workspace, name);
        const info = await lstat(file).catch(() => undefined);
        // A symlink could point anywhere on the host: only a plain file in the workspace is read.
        if (!info || info.isSymbolicLink() || !info.isFile()) continue;
        const content = await readFile(file, 'utf8').catch(() => undefined);
        if (content === undefined) return { agentId, found: false, path: name };
        return { agentId, found: true, path: name, content, updatedAtMs: Math.floor(info.mtimeMs) };
      }
      return { agentId, found: false, path: DREAM_DIARY_FILES[0] };
    },
  });
}
