/**
 * OpenClaw's model credential methods over claw's auth profiles (the agent's
 * auth-profiles.json): test a provider's keys (models.probe), save an API key, remove
 * profiles, set the order keys are tried in, and re-read the profiles. Keys never leave the
 * gateway: answers name profiles, never their keys. claw keeps API keys only (no OAuth), so
 * every saved profile is an api_key profile.
 */
import { ErrorCodes, ModelError, ProtocolError, type PluginApi } from '../../sdk/index.js';
import { providerSettings, unknownAgentProblem } from '../../sdk/agent/index.js';
import { routeProvider } from './provider-routing.js';
import type { ModelService } from './service.js';

const DEFAULT_PROBE_TIMEOUT_MS = 15_000;
const MAX_PROBE_TIMEOUT_MS = 60_000;

type ProbeStatus = 'ok' | 'auth' | 'rate_limit' | 'billing' | 'timeout' | 'format' | 'unknown' | 'no_model';

/** Fixed texts: a provider's own error could quote what it was sent. */
const PROBE_ERRORS: Record<Exclude<ProbeStatus, 'ok'>, string> = {
  auth: 'The provider rejected the credential.',
  rate_limit: 'The provider is rate limiting this credential.',
  billing: 'The provider reports a billing problem for this credential.',
  timeout: 'The provider did not answer in time.',
  format: 'The provider refused the test request.',
  unknown: 'The connection test failed.',
  no_model: 'No model of this provider is configured or listed to test with.',
};

function probeStatus(error: unknown): Exclude<ProbeStatus, 'ok' | 'no_model'> {
  const kind =
    error instanceof ModelError || (error as { kind?: unknown })?.kind ? (error as ModelError).kind : undefined;
  if (kind === 'auth' || kind === 'rate_limit' || kind === 'billing' || kind === 'timeout') return kind;
  if (kind === 'invalid_request' || kind === 'context_overflow') return 'format';
  if (kind === 'overloaded') return 'rate_limit';
  return 'unknown';
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || !value.trim()) throw invalid(`${what} is required`);
  return value.trim();
}

export function registerModelAuthMethods(api: PluginApi, runtime: ModelService): void {
  const kernel = runtime.kernel;
  const agentOf = (raw: unknown): string => {
    if (raw === undefined || raw === '') return runtime.defaultAgent();
    const problem = unknownAgentProblem(kernel.config(), String(raw));
    if (problem) throw invalid(problem);
    return String(raw);
  };
  /** The profiles of `provider` that could answer: the file's, config's and the environment's. */
  const keysOf = async (provider: string, agentId: string) => {
    const route = await routeProvider(kernel, provider);
    if (typeof route === 'string') return { route, keys: [] };
    return {
      route,
      keys: runtime
        .authProfiles(agentId)
        .profilesFor(provider, { configKey: route.config.apiKey, envKeys: route.envKeys, env: kernel.env }),
    };
  };

  api.registerGatewayMethod('models.probe', {
    params: { type: 'object', required: ['provider'] },
    scope: 'operator.admin',
    description:
      "Test a provider's credentials with one tiny completion each: {provider, status, latencyMs?, error?, results: [{profileId?, label, status, latencyMs?, error?}]}.",
    handler: async (
      params: { provider?: unknown; profileId?: unknown; timeoutMs?: unknown; agentId?: unknown },
      ctx,
    ) => {
      const provider = text(params.provider, 'provider');
      if (params.profileId !== undefined) text(params.profileId, 'profileId');
      const agentId = agentOf(params.agentId);
      const timeoutMs = Math.min(
        MAX_PROBE_TIMEOUT_MS,
        Math.max(1, typeof params.timeoutMs === 'number' ? params.timeoutMs : DEFAULT_PROBE_TIMEOUT_MS),
      );
      const { route, keys } = await keysOf(provider, agentId);
      if (typeof route === 'string') throw invalid(route);
      const ref = await modelToTest(runtime, agentId, provider);
      const keyless = route.provider.requiresKey === false;
      const targets: Array<{ profileId?: string; label: string; key?: string; baseUrl?: string }> = keys
        .filter((profile) => params.profileId === undefined || profile.id === String(params.profileId).trim())
        .map((profile) => ({ profileId: profile.id, label: profile.id, key: profile.key, baseUrl: profile.baseUrl }));
      if (params.profileId !== undefined && targets.length === 0)
        throw invalid(`profileId ${String(params.profileId)} is unavailable for provider ${provider}`);
      if (targets.length === 0 && keyless) targets.push({ label: `${provider} (no key needed)` });
      const results = await Promise.all(
        targets.map(async (target) => {
          const base = { ...(target.profileId ? { profileId: target.profileId } : {}), label: target.label };
          if (!ref) return { ...base, status: 'no_model' as ProbeStatus, error: PROBE_ERRORS.no_model };
          const started = Date.now();
          const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(ctx.signal ? [ctx.signal] : [])]);
          const settings = providerSettings(kernel.config(), provider);
          const candidate = {
            ...settings,
            ...(target.key ? { apiKey: target.key } : {}),
            ...(target.baseUrl ? { baseUrl: target.baseUrl } : {}),
          };
          try {
            await runtime.probe(ref, candidate, signal);
            return { ...base, status: 'ok' as ProbeStatus, latencyMs: Date.now() - started };
          } catch (error) {
            const status = signal.aborted ? 'timeout' : probeStatus(error);
            return {
              ...base,
              status: status as ProbeStatus,
              latencyMs: Date.now() - started,
              error: PROBE_ERRORS[status],
            };
          }
        }),
      );
      const order: ProbeStatus[] = ['ok', 'auth', 'billing', 'rate_limit', 'timeout', 'format', 'no_model', 'unknown'];
      const status = order.find((candidate) => results.some((result) => result.status === candidate)) ?? 'unknown';
      const latencies = results
        .filter((result) => result.status === status && 'latencyMs' in result)
        .map((result) => (result as { latencyMs: number }).latencyMs);
      return {
        provider,
        status,
        ...(latencies.length > 0 ? { latencyMs: Math.min(...latencies) } : {}),
        ...(results.length === 0
          ? { error: 'No probe targets are available for this provider.' }
          : status !== 'ok'
            ? { error: PROBE_ERRORS[status] }
            : {}),
        results,
      };
    },
  });

  api.registerGatewayMethod('models.authSetApiKey', {
    params: { type: 'object', required: ['provider', 'apiKey'] },
    scope: 'operator.admin',
    description:
      "Save an API key as the provider's <provider>:default profile in the agent's auth-profiles.json (owner-only): {provider, profileId, warning?}.",
    handler: async (params: { provider?: unknown; apiKey?: unknown; agentId?: unknown }) => {
      const provider = text(params.provider, 'provider');
      const apiKey = text(params.apiKey, 'apiKey');
      const agentId = agentOf(params.agentId);
      const route = await routeProvider(kernel, provider);
      if (typeof route === 'string') throw invalid(route);
      // Logged and answered masked from here on, whatever path it takes.
      kernel.redact.add(apiKey);
      const profileId = runtime.authProfiles(agentId).saveKey(provider, apiKey);
      const pinned = runtime
        .authProfiles(agentId)
        .profilesFor(provider, { envKeys: route.envKeys, env: kernel.env })
        .every((profile) => profile.source === 'env');
      return {
        provider,
        profileId,
        ...(pinned
          ? { warning: `OPENCLAW_LIVE_${provider.toUpperCase()}_KEY is set, so only that key is used while it is.` }
          : {}),
      };
    },
  });

  api.registerGatewayMethod('models.authLogout', {
    params: { type: 'object', required: ['provider'] },
    scope: 'operator.admin',
    description:
      "Remove the provider's saved profiles (all, the api_key ones, or profileIds) from auth-profiles.json: {provider, removedProfiles, abortedRunIds}.",
    handler: (params: { provider?: unknown; profileIds?: unknown; credentialType?: unknown; agentId?: unknown }) => {
      const provider = text(params.provider, 'provider');
      if (
        params.profileIds !== undefined &&
        (!Array.isArray(params.profileIds) ||
          params.profileIds.length === 0 ||
          params.profileIds.some((id) => typeof id !== 'string' || !id.trim()))
      )
        throw invalid('profileIds must be a non-empty list of profile ids');
      if (
        params.credentialType !== undefined &&
        (params.credentialType !== 'api_key' || params.profileIds !== undefined)
      )
        throw invalid('Choose either API keys or specific profiles');
      const profiles = runtime.authProfiles(agentOf(params.agentId));
      const available = profiles.savedIds(provider);
      const wanted = (params.profileIds as string[] | undefined)?.map((id) => id.trim());
      if (wanted?.some((id) => !available.includes(id))) throw invalid('profileIds contain unavailable auth profiles');
      const removedProfiles = wanted ?? available;
      profiles.remove(removedProfiles);
      // Runs keep the key they started with; claw cancels none for a logout.
      return { provider, removedProfiles, abortedRunIds: [] };
    },
  });

  api.registerGatewayMethod('models.authOrderSet', {
    params: { type: 'object', required: ['provider'] },
    scope: 'operator.admin',
    description:
      "Set the order the provider's saved profiles are tried in (every one, once), or clear it (no profileIds): {provider, profileIds}.",
    handler: (params: { provider?: unknown; profileIds?: unknown; agentId?: unknown }) => {
      const provider = text(params.provider, 'provider');
      const profiles = runtime.authProfiles(agentOf(params.agentId));
      const ids = params.profileIds;
      if (ids !== undefined && (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string')))
        throw invalid('profileIds must be a non-empty list of profile ids');
      const order = (ids as string[] | undefined) ?? null;
      if (order) {
        if (new Set(order).size !== order.length) throw invalid('profileIds must not repeat a profile');
        const available = profiles.savedIds(provider);
        const unknown = order.find((id) => !available.includes(id));
        if (unknown) throw invalid(`profileId ${unknown} is unavailable for provider ${provider}`);
        if (order.length !== available.length)
          throw invalid(`profileIds must include every available profile for provider ${provider}`);
      }
      profiles.setOrder(provider, order);
      return { provider, profileIds: order };
    },
  });

  api.registerGatewayMethod('models.authRefresh', {
    params: { type: 'object', required: ['operation'] },
    scope: 'operator.admin',
    description:
      'After credentials changed outside the gateway (login, logout, update): re-read the profiles file now: {refreshed: true}.',
    handler: (params: { operation?: unknown; agentId?: unknown }) => {
      if (!['login', 'logout', 'update'].includes(String(params.operation)))
        throw invalid('operation must be login, logout or update');
      const agentId = agentOf(params.agentId);
      // The profiles file is re-read when it changed; asking for its ids makes that happen now.
      runtime.authProfiles(agentId).snapshot();
      return { refreshed: true };
    },
  });
}

/** The model a probe asks: the agent's own of that provider first, else the first the provider lists. */
async function modelToTest(runtime: ModelService, agentId: string, provider: string): Promise<string | undefined> {
  const chain = runtime.models.chain(runtime.settings(agentId));
  const configured = chain.find((ref) => ref.startsWith(`${provider}/`));
  if (configured) return configured;
  const catalog = await runtime.models.catalog().catch(() => []);
  return catalog.find((model) => model.provider === provider)?.ref;
}
