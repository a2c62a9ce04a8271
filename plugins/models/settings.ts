/**
 * An agent's settings as the "models" service resolves them (ModelService.settings):
 * `agents.defaults` merged with the agent's `agents.list[]` entry, with OpenClaw's documented
 * defaults for timeouts, compaction, context pruning and block streaming.
 */
import type { KernelConfig, ThinkingLevel, ToolsConfig } from '../../sdk/index.js';
import {
  agentEntry,
  agentPaths,
  agentValue,
  durationMs,
  type AgentSettings,
  type ModelSetting,
} from '../../sdk/agent/index.js';

type AnyRecord = Record<string, any>;

const MEMORY_FLUSH_SYSTEM = 'Session nearing compaction. Store durable memories now.';
const MEMORY_FLUSH_PROMPT =
  'Pre-compaction memory flush: append anything worth keeping (decisions, facts about the user, open tasks) to memory/YYYY-MM-DD.md in the workspace. If there is nothing to store, reply with NO_REPLY.';

export function agentSettings(
  config: KernelConfig,
  agentId: string,
  stateDir: string,
  defaultWorkspace: string,
): AgentSettings {
  const defaults = ((config.agents as AnyRecord | undefined)?.defaults ?? {}) as AnyRecord;
  const entry = agentEntry(config, agentId) ?? {};
  const pick = <T>(key: string): T | undefined => agentValue<T>(config, agentId, key);
  const compaction = (defaults.compaction ?? {}) as AnyRecord;
  const flush = (compaction.memoryFlush ?? {}) as AnyRecord;
  const pruning = (defaults.contextPruning ?? {}) as AnyRecord;
  const chunk = (defaults.blockStreamingChunk ?? {}) as AnyRecord;
  return {
    agentId,
    ...agentPaths(config, agentId, { stateDir, workspaceDir: defaultWorkspace }),
    model: pick<ModelSetting>('model'),
    models: { ...(defaults.models ?? {}), ...(entry.models ?? {}) },
    timeoutSeconds: Number(pick('timeoutSeconds') ?? 600),
    bootstrapMaxChars: Number(pick('bootstrapMaxChars') ?? 20_000),
    userTimezone: pick<string>('userTimezone'),
    thinkingDefault: (pick<ThinkingLevel>('thinkingDefault') ?? 'off') as ThinkingLevel,
    contextTokens: pick<number>('contextTokens'),
    compaction: {
      reserveTokensFloor: Number(compaction.reserveTokensFloor ?? 20_000),
      keepRecentTokens: Number(compaction.keepRecentTokens ?? 20_000),
      memoryFlush: {
        enabled: flush.enabled !== false,
        softThresholdTokens: Number(flush.softThresholdTokens ?? 4000),
        systemPrompt: String(flush.systemPrompt ?? MEMORY_FLUSH_SYSTEM),
        prompt: String(flush.prompt ?? MEMORY_FLUSH_PROMPT),
      },
    },
    pruning: {
      mode: pruning.mode === 'cache-ttl' ? 'cache-ttl' : 'off',
      ttlMs: durationMs(pruning.ttl, 5 * 60_000),
      keepLastAssistants: Number(pruning.keepLastAssistants ?? 3),
      softTrimRatio: Number(pruning.softTrimRatio ?? 0.3),
      hardClearRatio: Number(pruning.hardClearRatio ?? 0.5),
      minPrunableToolChars: Number(pruning.minPrunableToolChars ?? 50_000),
      softTrim: { maxChars: 4000, headChars: 1500, tailChars: 1500, ...(pruning.softTrim ?? {}) },
      hardClear: { enabled: true, placeholder: '[Old tool result content cleared]', ...(pruning.hardClear ?? {}) },
      tools: pruning.tools,
    },
    blockStreaming: {
      enabled: defaults.blockStreamingDefault === 'on',
      minChars: Number(chunk.minChars ?? 800),
      maxChars: Number(chunk.maxChars ?? 1200),
    },
    tools: entry.tools as ToolsConfig | undefined,
    maxResultChars: Number(pick('toolResultMaxChars') ?? 100_000),
  };
}
