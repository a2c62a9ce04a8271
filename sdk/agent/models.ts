/**
 * Choosing a model and calling it. A model ref is "provider/model" (split at the first
 * "/"); aliases come from `agents.defaults.models`; the chain is the primary model then its
 * fallbacks. Calling walks the chain: for each model, each usable auth profile of its
 * provider; a failure that is about the key (auth, billing, rate limit, timeout, overload)
 * cools that profile down and moves on, first to the next profile, then the next model.
 */
import type { KernelServices } from '../types/plugin.js';
import type { ModelInfo, ModelProvider, ModelRequest, ModelStreamEvent, StopReason, ThinkingPart, ToolCallPart, Usage } from '../types/models.js';
import { isModelError, ModelError, parseModelRef, type ModelRef } from '../models.js';
import { AuthProfiles, PROFILE_FAILURES, type AuthProfile } from './auth-profiles.js';
import { providerSettings, type AgentSettings, type ModelSetting } from './settings.js';

export const DEFAULT_CONTEXT_WINDOW = 200_000;

/** Well-known defaults when a provider has a key but no model is configured. */
const AUTO_DEFAULTS: Array<{ env: string; ref: string }> = [
  { env: 'ANTHROPIC_API_KEY', ref: 'anthropic/claude-sonnet-4-20250514' },
  { env: 'OPENAI_API_KEY', ref: 'openai/gpt-4.1' },
];

export function modelChain(setting: ModelSetting | undefined): string[] {
  if (!setting) return [];
  if (typeof setting === 'string') return [setting];
  return [setting.primary, ...(setting.fallbacks ?? [])].filter((ref): ref is string => typeof ref === 'string' && ref.length > 0);
}

export function aliasTable(settings: AgentSettings): Map<string, string> {
  const table = new Map<string, string>();
  for (const [ref, entry] of Object.entries(settings.models)) if (entry?.alias) table.set(entry.alias.toLowerCase(), ref);
  return table;
}

export interface ModelCatalogEntry extends ModelInfo {
  provider: string;
  ref: string;
}

/**
 * Resolve what a person typed (`/model opus`, `/new gpt-4o`) to a ref: an alias, a full
 * "provider/model", a provider name (its first catalog model), or a unique catalog match.
 */
export function resolveModelInput(input: string, settings: AgentSettings, catalog: readonly ModelCatalogEntry[]): string | undefined {
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
  const partial = catalog.filter((entry) => entry.ref.toLowerCase().includes(lower) || (entry.name ?? '').toLowerCase().includes(lower));
  return partial.length === 1 ? partial[0]!.ref : undefined;
}

export class Models {
  constructor(
    private readonly kernel: KernelServices,
    private readonly profilesFor: (agentId: string) => AuthProfiles,
  ) {}

  /** The chain to try: an override first, then the configured primary and fallbacks, else an automatic pick. */
  chain(settings: AgentSettings, override?: string): string[] {
    const aliases = aliasTable(settings);
    const configured = modelChain(settings.model);
    const chain = [override, ...configured].filter((ref): ref is string => Boolean(ref)).map((ref) => aliases.get(ref.toLowerCase()) ?? ref);
    if (chain.length > 0) return [...new Set(chain)];
    const auto = AUTO_DEFAULTS.find((candidate) => this.kernel.env[candidate.env]?.trim());
    if (auto) return [auto.ref];
    const local = (this.kernel.config().plugins as { entries?: Record<string, { config?: { modelPath?: string } }> } | undefined)?.entries?.['llama-cpp']?.config?.modelPath;
    return local ? ['llama-cpp/local'] : [];
  }

  async catalog(): Promise<ModelCatalogEntry[]> {
    const out: ModelCatalogEntry[] = [];
    for (const info of this.kernel.capabilities.list('provider')) {
      const provider = await this.kernel.capabilities.find('provider', info.name).catch(() => undefined);
      const fromConfig = providerSettings(this.kernel.config(), info.name).models ?? [];
      const fromProvider = provider?.models ? await Promise.resolve(provider.models()).catch(() => []) : [];
      const seen = new Set<string>();
      for (const model of [...fromConfig, ...fromProvider]) {
        if (seen.has(model.id)) continue;
        seen.add(model.id);
        out.push({ ...model, provider: info.name, ref: `${info.name}/${model.id}` });
      }
    }
    return out;
  }

  /** Context window and limits for a ref: config catalog, then the provider's list, then defaults. */
  async info(ref: string, settings: AgentSettings): Promise<ModelInfo & { contextWindow: number }> {
    const parsed = parseModelRef(ref);
    let info: ModelInfo | undefined;
    if (parsed) {
      info = (providerSettings(this.kernel.config(), parsed.provider).models ?? []).find((model) => model.id === parsed.model);
      if (!info) {
        const provider = await this.kernel.capabilities.find('provider', parsed.provider).catch(() => undefined);
        const listed = provider?.models ? await Promise.resolve(provider.models()).catch(() => []) : [];
        info = listed.find((model) => model.id === parsed.model) ?? (listed.length === 1 && parsed.provider === 'llama-cpp' ? listed[0] : undefined);
      }
    }
    const window = info?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    return { id: parsed?.model ?? ref, ...info, contextWindow: settings.contextTokens ? Math.min(window, settings.contextTokens) : window };
  }

  /**
   * Stream one model response with failover. `onEvent` sees every event of the attempt in
   * progress; a `reset` event means the attempt failed part-way and a fresh one follows.
   */
  async stream(
    settings: AgentSettings,
    chain: readonly string[],
    request: Omit<ModelRequest, 'model' | 'endpoint'>,
    options: {
      signal: AbortSignal;
      onEvent: (event: ModelStreamEvent | { type: 'reset'; reason: string }) => void;
      onAttempt?: (ref: string, profile?: string) => void;
      /** A session's `/model …@profile` choice: tried first for its provider. */
      preferProfile?: string;
    },
  ): Promise<ModelOutcome> {
    if (chain.length === 0) {
      throw new ModelError('invalid_request', 'no model is configured: set agents.defaults.model (for example "openai/gpt-4.1") or an API key such as OPENAI_API_KEY');
    }
    const profiles = this.profilesFor(settings.agentId);
    const problems: string[] = [];
    let lastError: ModelError | undefined;
    for (const ref of chain) {
      const parsed = parseModelRef(ref);
      if (!parsed) {
        problems.push(`"${ref}" is not a provider/model ref`);
        continue;
      }
      const provider = await this.kernel.capabilities.find('provider', parsed.provider).catch(() => undefined);
      if (!provider) {
        problems.push(`no provider plugin "${parsed.provider}" is enabled`);
        continue;
      }
      const config = providerSettings(this.kernel.config(), parsed.provider);
      const candidates: Array<AuthProfile | undefined> =
        provider.requiresKey === false
          ? [undefined]
          : profiles.profilesFor(parsed.provider, { configKey: config.apiKey, envKeys: provider.envKeys, env: this.kernel.env });
      const preferred = candidates.findIndex((profile) => profile?.id === options.preferProfile);
      if (preferred > 0) candidates.unshift(...candidates.splice(preferred, 1));
      if (candidates.length === 0) {
        // An OpenAI-compatible local server (Ollama, vLLM) needs no key once a baseUrl is set.
        if (config.baseUrl && provider.keylessWithBaseUrl) candidates.push(undefined);
        else {
          const env = (provider.envKeys ?? []).join(' or ');
          problems.push(`no API key for ${parsed.provider}: set ${env ? `${env}, ` : ''}models.providers.${parsed.provider}.apiKey, or add a profile to agents/${settings.agentId}/agent/auth-profiles.json`);
        }
      }
      for (const profile of candidates) {
        if (profile && !profiles.available(profile.id)) {
          problems.push(`${profile.id} is cooling down`);
          continue;
        }
        options.onAttempt?.(ref, profile?.id);
        try {
          const outcome = await this.attempt(provider, parsed, request, profile, config, options);
          if (profile) profiles.markSuccess(profile.id);
          return { ...outcome, ref, provider: parsed.provider, model: parsed.model, profileId: profile?.id };
        } catch (error) {
          const failure = isModelError(error) ? error : new ModelError('unknown', (error as Error)?.message ?? String(error), { cause: error });
          if (options.signal.aborted || failure.kind === 'aborted') throw new ModelError('aborted', 'the run was aborted');
          if (failure.kind === 'context_overflow' || failure.kind === 'invalid_request') throw failure;
          lastError = failure;
          problems.push(`${ref}${profile ? ` (${profile.id})` : ''}: ${failure.message}`);
          options.onEvent({ type: 'reset', reason: failure.message });
          if (profile && PROFILE_FAILURES.has(failure.kind)) profiles.markFailure(profile.id, failure.kind, failure.retryAfterMs);
          // Not a key problem (or no key to rotate): the next model may still work.
          if (!profile || !PROFILE_FAILURES.has(failure.kind)) break;
        }
      }
    }
    const summary = problems.join('; ');
    throw new ModelError(lastError?.kind ?? 'unknown', `no model could answer: ${summary}`, { status: lastError?.status, retryAfterMs: lastError?.retryAfterMs });
  }

  private async attempt(
    provider: ModelProvider,
    ref: ModelRef,
    request: Omit<ModelRequest, 'model' | 'endpoint'>,
    profile: AuthProfile | undefined,
    config: ReturnType<typeof providerSettings>,
    options: { signal: AbortSignal; onEvent: (event: ModelStreamEvent) => void },
  ): Promise<Omit<ModelOutcome, 'ref' | 'provider' | 'model' | 'profileId'>> {
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
      timeoutMs: config.timeoutMs,
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
      }
      else if (event.type === 'tool_call') toolCalls.push({ type: 'toolCall', id: event.id, name: event.name, arguments: event.arguments });
      else if (event.type === 'done') {
        stopReason = event.stopReason;
        usage = event.usage;
        done = true;
      }
    }
    if (!done) throw new ModelError('timeout', `${ref.provider} stream ended without finishing`);
    return { text: text.join(''), thinking: thinking.filter((part) => part.thinking || part.signature), toolCalls, stopReason, usage };
  }
}

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
