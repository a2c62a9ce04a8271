/**
 * The "models" service: which model an agent uses, and calling it with failover. The models
 * plugin offers it (the chain, aliases, catalog, auth profiles, retries and cooldowns are its
 * code); the agent plugin, the `agentLoop` slot (TurnContext.models), sessions, the session
 * tools and `/v1/models` ask for it by id. A plugin that replaces the models plugin offers
 * this same contract under the same id.
 *
 *   const models = await requireService<ModelService>(api.kernel, 'models', 'my plugin');
 */
import type { FailureKind } from '../models.js';
import type { HookContext } from '../types/hooks.js';
import type {
  ModelEndpoint,
  ModelInfo,
  ModelRequest,
  ModelStreamEvent,
  StopReason,
  ThinkingPart,
  ToolCallPart,
  Usage,
} from '../types/models.js';
import type { AgentSettings, ProviderSettings } from './settings.js';

/** One model the enabled providers (or `models.providers`) offer, with its "provider/model" ref. */
export interface ModelCatalogEntry extends ModelInfo {
  provider: string;
  ref: string;
}

/**
 * A reset tells listeners to drop the failed attempt's partial output; `retry` when the same
 * model is asked again, `failover` when the next model of the chain is (cause: HTTP status or failure kind).
 */
export type ModelResetEvent = {
  type: 'reset';
  reason: string;
  retry?: { attempt: number; of: number; waitMs: number };
  failover?: { from: string; to: string; cause: string };
};

export interface ModelStreamOptions {
  signal: AbortSignal;
  /** Every event of the attempt in progress; a `reset` means it failed part-way and a fresh one follows. */
  onEvent: (event: ModelStreamEvent | ModelResetEvent) => void;
  onAttempt?: (ref: string, profile?: string) => void;
  /** A session's `/model …@profile` choice: tried first for its provider. */
  preferProfile?: string;
  /** The ref the user chose (`--model`, `/model`): tried even while it cools down. */
  explicit?: string;
  /**
   * Who is calling (agent, session, run): the context `llm_input` and `llm_output` handlers
   * see, since the service fires them around every call. The dispatcher binds the run's
   * context into TurnContext.models, so a loop need not pass it.
   */
  hookContext?: HookContext;
}

/** The answer of the model that finally answered. */
export interface ModelOutcome {
  ref: string;
  provider: string;
  model: string;
  profileId?: string;
  text: string;
  thinking: ThinkingPart[];
  toolCalls: ToolCallPart[];
  stopReason: StopReason;
  usage?: Usage;
}

/** Choosing a model and calling it: what a turn (and a replacement loop) uses. */
export interface Models {
  /** The chain to try: an override first, then the configured primary and fallbacks, aliases resolved. */
  chain(settings: AgentSettings, override?: string): string[];
  /** Every model the enabled providers offer, then the configured-only providers' models. */
  catalog(): Promise<ModelCatalogEntry[]>;
  /** Context window and limits for a ref. */
  info(ref: string, settings: AgentSettings): Promise<ModelInfo & { contextWindow: number }>;
  /** What a person typed (`/model opus`, `/new gpt-4o`) as a ref: an alias, a ref, a provider or a catalog match. */
  resolve(input: string, settings: AgentSettings): Promise<string | undefined>;
  /**
   * One model response, walking the chain on failure; throws a ModelError when nothing could
   * answer. `llm_input` may rewrite the request's system prompt and messages first, and
   * `llm_output` the answer's text.
   */
  stream(
    settings: AgentSettings,
    chain: readonly string[],
    request: Omit<ModelRequest, 'model' | 'endpoint'>,
    options: ModelStreamOptions,
  ): Promise<ModelOutcome>;
}

/** One cooldown streak: of a whole auth profile, or of one model on it. */
export interface CooldownState {
  lastFailureAt?: number;
  lastFailureKind?: FailureKind;
  errorCount?: number;
  cooldownUntil?: number;
}

export interface ProfileUsage extends CooldownState {
  lastUsed?: number;
  billingErrorCount?: number;
  /** Cooldowns scoped to one model id of this profile's provider. */
  models?: Record<string, CooldownState>;
}

/** One agent's API keys (auth profiles) as `/model status` shows them. */
export interface AuthProfiles {
  /** Every profile id with its provider and usage (cooldowns included). */
  snapshot(): Record<string, ProfileUsage & { provider: string }>;
}

/**
 * The service: one per process, so the cooldowns a run records are what `models.list`,
 * `/model` and the next run see.
 */
export interface ModelService {
  readonly models: Models;
  /** `agents.defaults` merged with the agent's `agents.list[]` entry. */
  settings(agentId: string): AgentSettings;
  defaultAgent(): string;
  authProfiles(agentId: string): AuthProfiles;
  /** claw onboard's live test: one short answer from `ref` with candidate settings, no failover, nothing saved. */
  probe(ref: string, provider: ProviderSettings & ModelEndpoint, signal?: AbortSignal): Promise<{ text: string }>;
  /** Whether the agent's (default: the default agent's) chain has a model with what it needs, without calling it. */
  readiness(agentId?: string): Promise<{ ok: boolean; primary: string | null; problem?: string; fix?: string }>;
}
