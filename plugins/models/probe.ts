/**
 * The live test `claw onboard` (and the Control UI's setup) runs before saving a provider:
 * one tiny completion with the candidate endpoint and key, straight to the provider plugin.
 * No failover, no auth profiles, no cooldowns recorded and no `llm_input`/`llm_output`: it
 * is a check of credentials that are not the agent's yet, not a turn of any conversation.
 */
import { ModelError, parseModelRef, type KernelServices } from '../../sdk/index.js';
import type { ProviderSettings } from '../../sdk/agent/index.js';
import { routeProvider } from './provider-routing.js';

/** Long enough for a cold local model to answer one word; a hung server fails the test instead of the wizard. */
const PROBE_TIMEOUT_MS = 60_000;

export async function probeModel(
  kernel: KernelServices,
  ref: string,
  candidate: ProviderSettings,
  signal?: AbortSignal,
): Promise<{ text: string }> {
  const parsed = parseModelRef(ref);
  if (!parsed) throw new ModelError('invalid_request', `"${ref}" is not a provider/model ref`);
  const route = await routeProvider(kernel, parsed.provider, candidate);
  if (typeof route === 'string') throw new ModelError('invalid_request', route);
  const { provider, config } = route;
  const apiKey =
    config.apiKey ?? route.envKeys.map((name) => kernel.env[name]?.trim()).find((value) => value) ?? undefined;
  if (!apiKey && provider.requiresKey !== false && !(config.baseUrl && provider.keylessWithBaseUrl)) {
    const env = route.envKeys.join(' or ');
    throw new ModelError('auth', `no API key for ${parsed.provider}${env ? ` (give one, or set ${env})` : ''}`);
  }
  const timeout = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const endpoint = {
    baseUrl: config.baseUrl,
    apiKey,
    headers: config.headers,
    api: config.api,
    timeoutMs:
      config.timeoutMs ?? (config.timeoutSeconds !== undefined ? config.timeoutSeconds * 1000 : PROBE_TIMEOUT_MS),
    ...(route.custom ? { provider: route.id } : {}),
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
      throw new ModelError('timeout', `${parsed.provider} did not answer within ${PROBE_TIMEOUT_MS / 1000} s`);
    throw error;
  }
  if (!done) throw new ModelError('timeout', `${parsed.provider} ended its answer without finishing`);
  return { text };
}
