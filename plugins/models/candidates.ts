/**
 * What one model ref of a chain is tried with: its route (which plugin, which endpoint) and
 * each key that may pay for it, or the sentence saying why it cannot be tried at all. The
 * failover walk and the readiness check (readiness.ts) ask the same question here, so
 * "ready" means exactly "a turn would try something".
 */
import { parseModelRef, type KernelServices, type ModelRef } from '../../sdk/index.js';
import type { AuthProfile, AuthProfiles } from './auth-profiles.js';
import { envKeyHint } from './env-keys.js';
import { routeProvider, type ProviderRoute } from './provider-routing.js';

export interface Candidate {
  ref: string;
  parsed: ModelRef;
  route: ProviderRoute;
  /** Undefined when the request goes without a key (a local model, a keyless local server). */
  profile?: AuthProfile;
}

/** Every (ref, key) pair for `ref` in the order to try them, or why there is none; nothing is called. */
export async function candidatesFor(
  kernel: KernelServices,
  ref: string,
  agentId: string,
  profiles: AuthProfiles,
): Promise<Candidate[] | string> {
  const parsed = parseModelRef(ref);
  if (!parsed) return `"${ref}" is not a provider/model ref`;
  const route = await routeProvider(kernel, parsed.provider);
  if (typeof route === 'string') return route;
  const { provider, config } = route;
  const unavailable = provider.unavailable?.();
  if (unavailable) return unavailable;
  const keys: Array<AuthProfile | undefined> =
    provider.requiresKey === false
      ? [undefined]
      : profiles.profilesFor(parsed.provider, { configKey: config.apiKey, envKeys: route.envKeys, env: kernel.env });
  if (keys.length === 0) {
    // An OpenAI-compatible local server (Ollama, vLLM) needs no key once a baseUrl is set.
    if (config.baseUrl && provider.keylessWithBaseUrl) keys.push(undefined);
    else {
      const env = envKeyHint(parsed.provider, route.envKeys);
      return `no API key for ${parsed.provider}: set ${env}, models.providers.${parsed.provider}.apiKey, or add a profile to agents/${agentId}/agent/auth-profiles.json`;
    }
  }
  return keys.map((profile) => ({ ref, parsed, route, profile }));
}
