/**
 * Whether an agent could answer at all, decided without calling anyone: its chain names a
 * model whose provider is enabled and has what it needs (a key from config, the environment
 * or an auth profile; a baseUrl for a keyless local server; a local model file). The gateway
 * log, `health`, `claw status` and the Control UI say so when it cannot, and how to fix it.
 * Cooldowns and a server that does not answer are a turn's business, not this check's.
 */
import type { KernelServices } from '../../sdk/index.js';
import type { AgentSettings, ModelService } from '../../sdk/agent/index.js';
import type { AuthProfiles } from './auth-profiles.js';
import { candidatesFor } from './candidates.js';
import type { Models } from './models.js';

export type ModelReadiness = Awaited<ReturnType<ModelService['readiness']>>;

/** How a person makes a model usable; the Setup view is the Control UI's `#/setup`. */
export const READINESS_FIX = 'run `claw onboard`, or open Setup in the Control UI (#/setup)';

export async function modelReadiness(
  kernel: KernelServices,
  models: Models,
  settings: AgentSettings,
  profiles: AuthProfiles,
): Promise<ModelReadiness> {
  const chain = models.chain(settings);
  if (chain.length === 0) {
    return {
      ok: false,
      primary: null,
      problem: `no model is configured for agent "${settings.agentId}": agents.defaults.model is not set and no provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY) is in the environment`,
      fix: READINESS_FIX,
    };
  }
  const problems: string[] = [];
  for (const ref of chain) {
    const found = await candidatesFor(kernel, ref, settings.agentId, profiles);
    if (typeof found !== 'string') return { ok: true, primary: chain[0]! };
    problems.push(`${ref}: ${found}`);
  }
  return { ok: false, primary: chain[0]!, problem: problems.join('; '), fix: READINESS_FIX };
}
