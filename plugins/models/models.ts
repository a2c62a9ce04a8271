/**
 * Choosing a model and calling it. A model ref is "provider/model" (split at the first
 * "/"); aliases come from `agents.defaults.models`; the chain is the primary model then its
 * fallbacks. Calling walks the chain (OpenClaw's model failover): for each model, each
 * auth profile of its provider.
 *
 *  - A transient failure (429, 5xx, network, timeout) is first retried on the same model
 *    and key with backoff (retry-policy.ts); a rate limit rotates at once to another key
 *    that is free.
 *  - What is left cools down the (profile, model) pair — or the whole profile for auth and
 *    billing — so a sibling model of the same provider is still tried.
 *  - A pair cooling down is skipped, except: the model the user chose explicitly is always
 *    tried; a transient cooldown is probed (at most once per provider per call, and once
 *    per 30 s per pair) when it is the primary's and nearly over, or when nothing later in
 *    the chain could answer, so a single-key user is not benched for the whole cooldown;
 *    and the first request after a cooldown is itself a probe (one attempt, no retries)
 *    when a fallback could answer, so a still-broken endpoint does not stall a run through
 *    a second full recovery.
 *
 * `llm_input` and `llm_output` fire here, once around each call (not per attempt), so every
 * caller's model calls are seen, whichever agent loop makes them.
 *
 * This is the models plugin's implementation of the SDK's `Models` contract
 * (sdk/agent/model-service.ts); a plugin that replaces this one brings its own.
 */
import {
  isModelError,
  ModelError,
  parseModelRef,
  type KernelServices,
  type ModelCost,
  type ModelInfo,
  type ModelRequest,
} from '../../sdk/index.js';
import type {
  ModelStreamEvent,
  StopReason,
  ThinkingPart,
  ToolCallPart,
  TranscriptMessage,
  Usage,
} from '../../sdk/index.js';
import {
  agentValue,
  configuredProviderIds,
  modelChain,
  providerSettings,
  type AgentSettings,
  type ModelCatalogEntry,
  type ModelOutcome,
  type ModelResetEvent,
  type Models as ModelsContract,
  type ModelStreamOptions,
} from '../../sdk/agent/index.js';
import { AuthProfiles, PROFILE_FAILURES } from './auth-profiles.js';
import { candidatesFor, type Candidate } from './candidates.js';
import { envApiKeys } from './env-keys.js';
import type { ProviderRetry } from './generated/types.js';
import { KeylessCooldowns } from './keyless-cooldowns.js';
import { costOf, listedModel } from './prices.js';
import {
  abortableSleep,
  DEFAULT_RETRY_POLICY,
  retryDecision,
  retryPolicyFrom,
  TRANSIENT_FAILURES,
  type RetryPolicy,
} from './retry-policy.js';

export const DEFAULT_CONTEXT_WINDOW = 200_000;

/** Well-known defaults when a provider has a key in the environment but no model is configured. */
const AUTO_DEFAULTS: Array<{ provider: string; ref: string }> = [
  { provider: 'anthropic', ref: 'anthropic/claude-sonnet-4-20250514' },
  { provider: 'openai', ref: 'openai/gpt-4.1' },
];

export function aliasTable(settings: AgentSettings): Map<string, string> {
  const table = new Map<string, string>();
  for (const [ref, entry] of Object.entries(settings.models))
    if (entry?.alias) table.set(entry.alias.toLowerCase(), ref);
  return table;
}

/** A cooling (profile, model) is probed at most this often. */
export const PROBE_INTERVAL_MS = 30_000;
/** The primary's cooldown ending within this long may be probed even while other candidates remain. */
export const PROBE_MARGIN_MS = 15_000;

export interface ModelsOptions {
  now?: () => number;
  /** Waits between retries; tests pass one that records the wait and returns at once. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  retry?: Partial<RetryPolicy>;
  random?: () => number;
}

/**
 * Resolve what a person typed (`/model opus`, `/new gpt-4o`) to a ref: an alias, a full
 * "provider/model", a provider name (its first catalog model), or a unique catalog match.
 */
export function resolveModelInput(
  input: string,
  settings: AgentSettings,
  catalog: readonly ModelCatalogEntry[],
): string | undefined {
  const text = input.trim();
  if (!text) return undefined;
  const alias = aliasTable(settings).get(text.toLowerCase());
  if (alias) return alias;
  if (parseModelRef(text)) return text;
  const lower = text.toLowerCase();
  const byProvider = catalog.find((entry) => entry.provider === lower);
  if (byProvider) return byProvider.ref;
  const exact = catalog.find((entry) => entry.id.toLowerCase() === lower);
  if (exact) return exact.ref;
  const partial = catalog.filter(
    (entry) => entry.ref.toLowerCase().includes(lower) || (entry.name ?? '').toLowerCase().includes(lower),
  );
  return partial.length === 1 ? partial[0]!.ref : undefined;
}

export class Models implements ModelsContract {
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly policy: RetryPolicy;
  private readonly random: () => number;
  /** When each (agent, profile, model) was last probed while cooling down. */
  private readonly probedAt = new Map<string, number>();
  private readonly keyless: KeylessCooldowns;

  constructor(
    private readonly kernel: KernelServices,
    private readonly profilesFor: (agentId: string) => AuthProfiles,
    options: ModelsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? abortableSleep;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.random = options.random ?? Math.random;
    this.keyless = new KeylessCooldowns(this.now);
  }

  /** The chain to try: an override first, then the configured primary and fallbacks, else an automatic pick. */
  chain(settings: AgentSettings, override?: string): string[] {
    const aliases = aliasTable(settings);
    const configured = modelChain(settings.model);
    const chain = [override, ...configured]
      .filter((ref): ref is string => Boolean(ref))
      .map((ref) => aliases.get(ref.toLowerCase()) ?? ref);
    if (chain.length > 0) return [...new Set(chain)];
    const auto = AUTO_DEFAULTS.find((candidate) => envApiKeys(candidate.provider, [], this.kernel.env).keys.length > 0);
    if (auto) return [auto.ref];
    const local = (
      this.kernel.config().plugins as { entries?: Record<string, { config?: { modelPath?: string } }> } | undefined
    )?.entries?.['llama-cpp']?.config?.modelPath;
    return local ? ['llama-cpp/local'] : [];
  }

  /** Every model the enabled providers offer, then the configured-only providers' models. */
  async catalog(): Promise<ModelCatalogEntry[]> {
    const out: ModelCatalogEntry[] = [];
    const registered = this.kernel.capabilities.list('provider').map((info) => info.name);
    // "replace": only the models config lists, not the providers' built-in catalogs.
    const replace = (this.kernel.config().models as { mode?: string } | undefined)?.mode === 'replace';
    for (const id of [
      ...registered,
      ...configuredProviderIds(this.kernel.config()).filter((id) => !registered.includes(id)),
    ]) {
      const provider = registered.includes(id)
        ? await this.kernel.capabilities.find('provider', id).catch(() => undefined)
        : undefined;
      const fromConfig = providerSettings(this.kernel.config(), id).models ?? [];
      const fromProvider = provider?.models && !replace ? await Promise.resolve(provider.models()).catch(() => []) : [];
      const seen = new Set<string>();
      for (const model of [...fromConfig, ...fromProvider]) {
        if (seen.has(model.id)) continue;
        seen.add(model.id);
        out.push({ ...model, provider: id, ref: `${id}/${model.id}` });
      }
    }
    return out;
  }

  /** What a person typed, as a ref (resolveModelInput against this catalog). */
  async resolve(input: string, settings: AgentSettings): Promise<string | undefined> {
    return resolveModelInput(input, settings, await this.catalog());
  }

  /** Context window and limits for a ref: config catalog, then the provider's list, then defaults. */
  async info(ref: string, settings: AgentSettings): Promise<ModelInfo & { contextWindow: number }> {
    const parsed = parseModelRef(ref);
    let info: ModelInfo | undefined;
    if (parsed) {
      info = (providerSettings(this.kernel.config(), parsed.provider).models ?? []).find(
        (model) => model.id === parsed.model,
      );
      if (!info) {
        const provider = await this.kernel.capabilities.find('provider', parsed.provider).catch(() => undefined);
        const listed = provider?.models ? await Promise.resolve(provider.models()).catch(() => []) : [];
        info =
          listed.find((model) => model.id === parsed.model) ??
          (listed.length === 1 && parsed.provider === 'llama-cpp' ? listed[0] : undefined);
      }
    }
    const window = info?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    return {
      id: parsed?.model ?? ref,
      ...info,
      contextWindow: settings.contextTokens ? Math.min(window, settings.contextTokens) : window,
    };
  }

  /** A model's price per million tokens: configured, then the provider's own table; undefined when unknown. */
  private async price(providerId: string, model: string): Promise<ModelCost | undefined> {
    const configured = listedModel(providerSettings(this.kernel.config(), providerId).models ?? [], model)?.cost;
    if (configured) return configured;
    const provider = await this.kernel.capabilities.find('provider', providerId).catch(() => undefined);
    const listed = provider?.models ? await Promise.resolve(provider.models()).catch(() => []) : [];
    // The local provider serves its one configured file under any id.
    return (listedModel(listed, model) ?? (providerId === 'llama-cpp' && listed.length === 1 ? listed[0] : undefined))
      ?.cost;
  }

  /**
   * Stream one model response with failover. `onEvent` sees every event of the attempt in
   * progress; a `reset` event means the attempt failed part-way and a fresh one follows.
   */
  async stream(
    settings: AgentSettings,
    chain: readonly string[],
    request: Omit<ModelRequest, 'model' | 'endpoint'>,
    options: ModelStreamOptions,
  ): Promise<ModelOutcome> {
    if (chain.length === 0) {
      throw new ModelError(
        'invalid_request',
        'no model is configured: set agents.defaults.model (for example "openai/gpt-4.1") or an API key such as OPENAI_API_KEY',
      );
    }
    const hooks = this.kernel.hooks;
    const ctx = { ...options.hookContext, signal: options.signal };
    const first = parseModelRef(chain[0]!);
    const input = await hooks.runModifying(
      'llm_input',
      {
        provider: first?.provider ?? '',
        model: first?.model ?? '',
        systemPrompt: request.systemPrompt ?? '',
        messages: request.messages as unknown as TranscriptMessage[],
        tools: (request.tools ?? []).map((tool) => tool.name),
      },
      ctx,
    );
    const rewritten = {
      ...request,
      systemPrompt: input.systemPrompt ?? request.systemPrompt,
      messages: (input.messages as unknown as ModelRequest['messages'] | undefined) ?? request.messages,
    };
    const answered = await this.failover(settings, chain, rewritten, options);
    const price = answered.usage ? await this.price(answered.provider, answered.model) : undefined;
    const outcome =
      answered.usage && price
        ? { ...answered, usage: { ...answered.usage, cost: costOf(answered.usage, price) } }
        : answered;
    const output = await hooks.runModifying(
      'llm_output',
      {
        provider: outcome.provider,
        model: outcome.model,
        content: outcome.text,
        toolCalls: outcome.toolCalls.map((call) => ({ id: call.id, name: call.name, params: call.arguments })),
        usage: outcome.usage,
      },
      ctx,
    );
    return output.content === undefined ? outcome : { ...outcome, text: output.content };
  }

  /** Each candidate of the chain in turn until one answers. */
  private async failover(
    settings: AgentSettings,
    chain: readonly string[],
    request: Omit<ModelRequest, 'model' | 'endpoint'>,
    options: ModelStreamOptions,
  ): Promise<ModelOutcome> {
    const agentId = settings.agentId;
    const profiles = this.profilesFor(agentId);
    const policy = retryPolicyFrom(
      this.policy,
      agentValue<{ provider?: ProviderRetry }>(this.kernel.config(), agentId, 'retry')?.provider,
    );
    const problems: string[] = [];
    const candidates = await this.candidates(settings, chain, profiles, options.preferProfile, problems);
    const probedProviders = new Set<string>();
    let lastError: ModelError | undefined;
    // The candidate that failed last, so the next attempt can say what it replaces.
    let failed: { ref: string; failure: ModelError } | undefined;
    const cooldownOf = (candidate: Candidate) =>
      candidate.profile
        ? profiles.cooldown(candidate.profile.id, candidate.parsed.model)
        : this.keyless.cooldown(agentId, candidate.ref);
    const usable = (candidate: Candidate) => cooldownOf(candidate) === undefined;
    for (let index = 0; index < candidates.length; index++) {
      const candidate = candidates[index]!;
      const { ref, profile, parsed } = candidate;
      const later = candidates.slice(index + 1);
      let probe = false;
      const cooldown = ref === options.explicit ? undefined : cooldownOf(candidate);
      if (cooldown) {
        const who = profile ? `${ref} (${profile.id})` : ref;
        const probeKey = `${agentId}|${profile?.id ?? ''}|${parsed.model}`;
        const now = this.now();
        const mayProbe =
          TRANSIENT_FAILURES.has(cooldown.kind ?? 'unknown') &&
          !probedProviders.has(candidate.route.id) &&
          now - (this.probedAt.get(probeKey) ?? -Infinity) >= PROBE_INTERVAL_MS &&
          ((ref === chain[0] && cooldown.until - now <= PROBE_MARGIN_MS) || !later.some(usable));
        if (!mayProbe) {
          problems.push(
            `${who} is cooling down for ${Math.ceil((cooldown.until - now) / 1000)} s after ${cooldown.kind ?? 'a failure'}`,
          );
          continue;
        }
        probe = true;
        probedProviders.add(candidate.route.id);
        this.probedAt.set(probeKey, now);
      } else if (ref !== options.explicit) {
        // With nothing else to fall back on, a full recovery beats a quick failure.
        const recovering = profile
          ? profiles.recovering(profile.id, parsed.model)
          : this.keyless.recovering(agentId, ref);
        probe = recovering && later.some(usable);
      }
      if (failed) {
        options.onEvent({
          type: 'reset',
          reason: failed.failure.message,
          failover: { from: failed.ref, to: ref, cause: String(failed.failure.status ?? failed.failure.kind) },
        });
        failed = undefined;
      }
      options.onAttempt?.(ref, profile?.id);
      try {
        const outcome = await this.attemptWithRecovery(candidate, request, options, policy, {
          probe,
          // Another key of this model that is free now: a rate limit rotates to it at once.
          canRotate: later.some((other) => other.ref === ref && other.profile !== undefined && usable(other)),
          hasFallback: later.some(usable),
        });
        if (profile) profiles.markSuccess(profile.id, parsed.model);
        else this.keyless.markSuccess(agentId, ref);
        return { ...outcome, ref, provider: parsed.provider, model: parsed.model, profileId: profile?.id };
      } catch (error) {
        const failure = asModelError(error);
        if (options.signal.aborted || failure.kind === 'aborted')
          throw new ModelError('aborted', 'the run was aborted');
        if (failure.kind === 'context_overflow' || failure.kind === 'invalid_request') throw failure;
        lastError = failure;
        failed = { ref, failure };
        problems.push(`${ref}${profile ? ` (${profile.id})` : ''}: ${failure.message}`);
        if (PROFILE_FAILURES.has(failure.kind)) {
          if (profile) profiles.markFailure(profile.id, failure.kind, failure.retryAfterMs, parsed.model);
          else this.keyless.markFailure(agentId, ref, failure.kind, failure.retryAfterMs);
        }
        // Only a failure about the key makes another key of the same model worth a try.
        if (!profile || !KEY_ROTATION.has(failure.kind)) {
          while (candidates[index + 1]?.ref === ref) index++;
        }
      }
    }
    const summary = problems.join('; ');
    throw new ModelError(lastError?.kind ?? 'unknown', `no model could answer: ${summary}`, {
      status: lastError?.status,
      retryAfterMs: lastError?.retryAfterMs,
    });
  }

  /** Every (model, profile) pair to try, in order; refs that cannot be tried at all go to `problems`. */
  private async candidates(
    settings: AgentSettings,
    chain: readonly string[],
    profiles: AuthProfiles,
    preferProfile: string | undefined,
    problems: string[],
  ): Promise<Candidate[]> {
    const out: Candidate[] = [];
    for (const ref of chain) {
      const found = await candidatesFor(this.kernel, ref, settings.agentId, profiles);
      if (typeof found === 'string') {
        problems.push(found);
        continue;
      }
      const preferred = found.findIndex((candidate) => candidate.profile?.id === preferProfile);
      if (preferred > 0) found.unshift(...found.splice(preferred, 1));
      out.push(...found);
    }
    return out;
  }

  /** One candidate, asked again after transient failures as the retry policy allows. */
  private async attemptWithRecovery(
    candidate: Candidate,
    request: Omit<ModelRequest, 'model' | 'endpoint'>,
    options: { signal: AbortSignal; onEvent: (event: ModelStreamEvent | ModelResetEvent) => void },
    policy: RetryPolicy,
    mode: { probe: boolean; canRotate: boolean; hasFallback: boolean },
  ): Promise<Omit<ModelOutcome, 'ref' | 'provider' | 'model' | 'profileId'>> {
    const started = this.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(candidate, request, options);
      } catch (error) {
        const failure = asModelError(error);
        if (options.signal.aborted || failure.kind === 'aborted') throw failure;
        if (failure.kind === 'context_overflow' || failure.kind === 'invalid_request') throw failure;
        const decision =
          mode.probe || (failure.kind === 'rate_limit' && mode.canRotate)
            ? undefined
            : retryDecision(policy, failure, attempt, this.now() - started, {
                hasFallback: mode.hasFallback,
                random: this.random,
              });
        if (!decision?.retry) {
          options.onEvent({ type: 'reset', reason: failure.message });
          throw failure;
        }
        options.onEvent({
          type: 'reset',
          reason: failure.message,
          retry: { attempt: attempt + 1, of: decision.maxAttempts, waitMs: decision.waitMs },
        });
        await this.sleep(decision.waitMs, options.signal);
      }
    }
  }

  private async attempt(
    candidate: Candidate,
    request: Omit<ModelRequest, 'model' | 'endpoint'>,
    options: { signal: AbortSignal; onEvent: (event: ModelStreamEvent) => void },
  ): Promise<Omit<ModelOutcome, 'ref' | 'provider' | 'model' | 'profileId'>> {
    const { route, parsed: ref, profile } = candidate;
    const { provider, config } = route;
    const text: string[] = [];
    // Anthropic may send several thinking blocks, each with its own signature; keep them apart.
    const thinking: ThinkingPart[] = [];
    let open: ThinkingPart | undefined;
    const toolCalls: ToolCallPart[] = [];
    let stopReason: StopReason = 'stop';
    let usage: Usage | undefined;
    let done = false;
    const endpoint = {
      baseUrl: profile?.baseUrl ?? config.baseUrl,
      apiKey: profile?.key,
      headers: config.headers,
      api: config.api,
      timeoutMs: config.timeoutMs ?? (config.timeoutSeconds !== undefined ? config.timeoutSeconds * 1000 : undefined),
      ...(route.custom ? { provider: route.id } : {}),
    };
    for await (const event of provider.stream({ ...request, model: ref.model, endpoint }, { signal: options.signal })) {
      if (options.signal.aborted) throw new ModelError('aborted', 'the run was aborted');
      options.onEvent(event);
      if (event.type === 'text_delta') text.push(event.delta);
      else if (event.type === 'thinking_delta') {
        if (!open) {
          open = { type: 'thinking', thinking: '' };
          thinking.push(open);
        }
        open.thinking += event.delta;
        if (event.signature) {
          open.signature = event.signature;
          open = undefined;
        }
      } else if (event.type === 'tool_call')
        toolCalls.push({ type: 'toolCall', id: event.id, name: event.name, arguments: event.arguments });
      else if (event.type === 'done') {
        stopReason = event.stopReason;
        usage = event.usage;
        done = true;
      }
    }
    if (!done) throw new ModelError('timeout', `${ref.provider} stream ended without finishing`);
    return {
      text: text.join(''),
      thinking: thinking.filter((part) => part.thinking || part.signature),
      toolCalls,
      stopReason,
      usage,
    };
  }
}

/** Failures that rotate to another key of the same model. */
const KEY_ROTATION: ReadonlySet<string> = new Set(['auth', 'billing', 'rate_limit']);

function asModelError(error: unknown): ModelError {
  return isModelError(error)
    ? error
    : new ModelError('unknown', (error as Error)?.message ?? String(error), { cause: error });
}
