/**
 * The fields OpenClaw's session rows carry beyond claw's own entry (sessions.list rows, its
 * `defaults`, paging), so OpenClaw's Control UI and CLI find every key they read. Values come
 * from claw's session entry and run state where claw has them; claw has no session sharing,
 * participants, fast mode, cloud placement or pinning, so those answer OpenClaw's empty values.
 */
import { parseSessionKey } from '../../sdk/sessions/index.js';

export const THINKING_OPTIONS = ['off', 'minimal', 'low', 'medium', 'high'];

/** claw runs every agent in its own loop: OpenClaw's description of an in-process runtime. */
const AGENT_RUNTIME = {
  id: 'claw',
  cloudPlacementSupported: false,
  cloudPlacementExecutionMode: null,
  devicePlacement: { requiredNodeCommands: [], consumesWorkerSlot: false },
  devicePlacementSupported: false,
  source: 'implicit',
};

export function thinkingChoices(thinkingDefault: string) {
  return {
    thinkingLevels: THINKING_OPTIONS.map((id) => ({ id, label: id })),
    thinkingOptions: THINKING_OPTIONS,
    thinkingDefault,
  };
}

export interface RowFacts {
  key: string;
  agentId: string;
  hasActiveRun: boolean;
  activeRunIds: string[];
  thinkingDefault: string;
  /** provider/model new turns of this session use. */
  modelRef?: string;
  /** `messages.responseUsage` from config: the footer mode of sessions that chose none. */
  responseUsageDefault?: unknown;
  entry: {
    responseUsage?: string;
    channel?: string;
    sessionId: string;
    createdAt: number;
    updatedAt: number;
    inputTokens: number;
    outputTokens: number;
    totalTokens: number;
    model?: string;
    provider?: string;
    lastModel?: string;
    abortedLastRun?: boolean;
    systemSent?: boolean;
    spawnedBy?: string;
    queue?: { mode?: string };
    chatType?: 'direct' | 'group' | 'channel';
  };
}

/**
 * The footer mode `messages.responseUsage` gives a channel: one mode or a per-channel map with
 * a `default` ("on" is OpenClaw's old name for tokens); off when unset. The agent plugin's
 * /usage reads the same setting the same way.
 */
export function defaultResponseUsage(setting: unknown, channel: string | undefined): string {
  const value =
    setting !== null && typeof setting === 'object'
      ? ((channel ? (setting as Record<string, unknown>)[channel] : undefined) ??
        (setting as Record<string, unknown>).default)
      : setting;
  if (value === 'on') return 'tokens';
  return value === 'tokens' || value === 'full' ? value : 'off';
}

/** OpenClaw's session-row fields for one claw session. */
export function openclawRowFields(facts: RowFacts) {
  const { entry } = facts;
  const ref = entry.model && entry.provider ? `${entry.provider}/${entry.model}` : (facts.modelRef ?? entry.lastModel);
  const slash = ref?.indexOf('/') ?? -1;
  const parsed = parseSessionKey(facts.key);
  const chatType: 'direct' | 'group' | 'channel' =
    entry.chatType ?? (parsed.kind === 'group' || parsed.kind === 'channel' ? parsed.kind : 'direct');
  const isMain = parsed.kind === 'main';
  const background = entry.spawnedBy !== undefined || facts.key.includes(':cron:');
  return {
    key: facts.key,
    agentId: facts.agentId,
    sessionId: entry.sessionId,
    visibility: 'shared',
    permissionModePending: false,
    createdVia: entry.spawnedBy ? 'subagent' : 'operator',
    participants: [],
    expandedParticipants: [],
    participantCount: 0,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    lastInteractionAt: entry.updatedAt,
    kind: chatType === 'direct' ? 'direct' : 'group',
    classification: isMain ? 'main' : background ? 'background' : 'conversation',
    isMain: isMain,
    isBackground: background,
    chatType,
    archived: false,
    pinned: false,
    unread: false,
    systemSent: entry.systemSent ?? false,
    abortedLastRun: entry.abortedLastRun ?? false,
    ...thinkingChoices(facts.thinkingDefault),
    effectiveFastMode: false,
    effectiveFastModeSource: 'default',
    fastAutoOnSeconds: null,
    inputTokens: entry.inputTokens,
    outputTokens: entry.outputTokens,
    totalTokens: entry.totalTokens,
    totalTokensFresh: true,
    status: facts.hasActiveRun ? 'running' : entry.abortedLastRun ? 'aborted' : 'done',
    startedAt: null,
    endedAt: null,
    runtimeMs: null,
    lastRunId: null,
    hasAutomation: false,
    effectiveResponseUsage: entry.responseUsage ?? defaultResponseUsage(facts.responseUsageDefault, entry.channel),
    effectiveQueueMode: entry.queue?.mode ?? 'steer',
    modelProvider: ref && slash > 0 ? ref.slice(0, slash) : null,
    model: ref && slash > 0 ? ref.slice(slash + 1) : (ref ?? null),
    modelOverrideSource: entry.model ? 'session' : null,
    runtimeSelectionLocked: false,
    agentRuntime: AGENT_RUNTIME,
    snapshotAt: Date.now(),
    placement: { state: 'local', generation: 0, createdAtMs: entry.createdAt, updatedAtMs: entry.updatedAt },
    hasActiveRun: facts.hasActiveRun,
    activeRunIds: facts.activeRunIds,
    sharingRole: 'admin',
  };
}

/** sessions.list `defaults` beyond the model: context window, runtime, thinking choices. */
export function openclawListDefaults(contextTokens: number | null, thinkingDefault: string) {
  return {
    contextTokens,
    agentRuntime: AGENT_RUNTIME,
    ...thinkingChoices(thinkingDefault),
    modelSelectionTarget: 'session',
  };
}
