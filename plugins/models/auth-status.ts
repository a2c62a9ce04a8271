/**
 * models.authStatus in OpenClaw's shape: per provider, whether it has what it needs and which
 * auth profiles (the profiles file, config, environment) stand behind it, with their
 * cooldowns. claw's keys are static API keys — no OAuth expiry, no provider usage windows —
 * so those fields stay empty. Keys themselves never appear; an environment key names its
 * variable, as OpenClaw does.
 */
import { configuredProviderIds } from '../../sdk/agent/index.js';
import type { AuthProfile } from './auth-profiles.js';
import { routeProvider } from './provider-routing.js';
import type { ModelService } from './service.js';

const PROFILE_SOURCE: Record<AuthProfile['source'], string> = { file: 'saved', config: 'config', env: 'external' };

function apiKeySource(keys: AuthProfile[]) {
  const first = keys.find((profile) => profile.source !== 'file');
  if (!first) return undefined;
  if (first.source === 'config') return { source: 'config' };
  return { source: 'env', envVar: first.id.slice(`${first.provider}:env:`.length) };
}

export async function modelsAuthStatus(runtime: ModelService, agentId: string) {
  const kernel = runtime.kernel;
  const profiles = runtime.authProfiles(agentId);
  const registered = kernel.capabilities.list('provider').map((info) => info.name);
  const ids = [...registered, ...configuredProviderIds(kernel.config()).filter((id) => !registered.includes(id))];
  const now = runtime.now();
  const providers = await Promise.all(
    ids.map(async (id) => {
      const route = await routeProvider(kernel, id);
      const keyless = typeof route !== 'string' && route.provider.requiresKey === false;
      const keys =
        typeof route === 'string' || keyless
          ? []
          : profiles.profilesFor(id, { configKey: route.config.apiKey, envKeys: route.envKeys, env: kernel.env });
      const apiKey = apiKeySource(keys);
      return {
        provider: id,
        authProvider: id,
        displayName: id,
        // A keyless local server needs nothing; OpenClaw calls a configured key "static".
        status: keyless ? 'ok' : keys.length > 0 ? 'static' : 'missing',
        profiles: keys.map((profile) => {
          const usage = profiles.usage(profile.id);
          const cooling = (usage.cooldownUntil ?? 0) > now;
          return {
            profileId: profile.id,
            type: profile.type,
            status: 'static',
            ...(cooling ? { reasonCode: usage.lastFailureKind ?? 'cooldown', cooldownUntil: usage.cooldownUntil } : {}),
            source: PROFILE_SOURCE[profile.source],
          };
        }),
        ...(apiKey ? { apiKey } : {}),
        ...(typeof route === 'string' ? { problem: route } : {}),
      };
    }),
  );
  const readiness = await runtime.readiness(agentId);
  return { ts: now, providers, providerCapabilities: [], readiness };
}
