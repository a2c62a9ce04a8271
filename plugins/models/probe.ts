/**
 * The live test `claw onboard` (and the Control UI's setup) runs before saving a provider:
 * one tiny completion with the candidate endpoint and key, straight to the provider plugin.
 * No failover, no auth profiles, no cooldowns recorded and no `llm_input`/`llm_output`: it
 * is a check of credentials that are not the agent's yet, not a turn of any conversation.
 * A candidate `modelPath` (a local GGUF file) goes to the provider in the request's endpoint:
 * llama-cpp loads it for this one answer and frees it.
 */
import { ModelError, parseModelRef, type KernelServices } from '../../sdk/index.js';
import type { ProviderSettings } from '../../sdk/agent/index.js';
import { envApiKeys, envKeyHint } from './env-keys.js';
import { routeProvider } from './provider-routing.js';

/** Long enough for a cold local model to answer one word; a hung server fails the test instead of the wizard. */
const PROBE_TIMEOUT_MS = 60_000;
/** A local file may first need node-llama-cpp installed, then gigabytes read from disk. */
const LOCAL_PROBE_TIMEOUT_MS = 10 * 60_000;

export async function probeModel(
  kernel: KernelServices,
  ref: string,
  candidate: ProviderSettings & { modelPath?: string },
  signal?: AbortSignal,
): Promise<{ text: string }> {
  const parsed = parseModelRef(ref);
  if (!parsed) throw new ModelError('invalid_request', `"${ref}" is not a provider/model ref`);
  const route = await routeProvider(kernel, parsed.provider, candidate);
  if (typeof route === 'string') throw new ModelError('invalid_request', route);
  const { provider, config } = route;
  // The candidate's own key is what is being tested; without one, the environment's first.
  const apiKey = config.apiKey ?? envApiKeys(parsed.provider, route.envKeys, kernel.env).keys[0]?.key;
  if (!apiKey && provider.requiresKey !== false && !(config.baseUrl && provider.keylessWithBaseUrl)) {
    const env = envKeyHint(parsed.provider, route.envKeys);
    throw new ModelError('auth', `no API key for ${parsed.provider} (give one, or set ${env})`);
  }
  const limitMs = candidate.modelPath ? LOCAL_PROBE_TIMEOUT_MS : PROBE_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(limitMs);
  const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const endpoint = {
    baseUrl: config.baseUrl,
    apiKey,
    headers: config.headers,
    api: config.api,
    timeoutMs:
      config.timeoutMs ?? (config.timeoutSeconds !== undefined ? config.timeoutSeconds * 1000 : PROBE_TIMEOUT_MS),
    ...(route.custom ? { provider: route.id } : {}),
    ...(candidate.modelPath ? { modelPath: candidate.modelPath } : {}),
  };
  const request = {
    model: parsed.model,
    messages: [{ role: 'user' as const, content: 'Reply with the single word OK.' }],
    maxTokens: 16,
    endpoint,
  };
  let text = '';
  let done = false;
  try {
    for await (const event of provider.stream(request, { signal: stop })) {
      if (event.type === 'text_delta') text += event.delta;
      else if (event.type === 'done') done = true;
    }
  } catch (error) {
    if (timeout.aborted && !signal?.aborted)
      throw new ModelError('timeout', `${parsed.provider} did not answer within ${limitMs / 1000} s`);
    throw error;
  }
  if (!done) throw new ModelError('timeout', `${parsed.provider} ended its answer without finishing`);
  return { text };
}
