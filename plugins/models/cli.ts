/**
 * `claw models list|status`: the models the enabled providers offer with the configured
 * chain and aliases, and each provider's auth profiles with their cooldowns.
 */
import type { CliContext } from '../../sdk/index.js';
import { parseFlags as parse, unknownCommand, UsageError } from '../../sdk/cli.js';
import { configuredProviderIds, unknownAgentProblem } from '../../sdk/agent/index.js';
import { routeProvider } from './provider-routing.js';
import type { ModelService } from './service.js';

export const MODELS_HELP = `Usage: claw models list [--json]      models the enabled providers offer, and the configured chain
       claw models status [--json]    the chain, auth profiles and their cooldowns`;

const COMMON = { help: { type: 'boolean' }, json: { type: 'boolean' } } as const;

export async function modelsCommand(argv: string[], ctx: CliContext, runtime: ModelService): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON, agent: { type: 'string' } });
  const action = positionals[0] ?? 'list';
  const agentProblem =
    values.agent === undefined ? undefined : unknownAgentProblem(runtime.kernel.config(), values.agent as string);
  if (agentProblem) throw new UsageError(agentProblem);
  const agentId = (values.agent as string | undefined) ?? runtime.defaultAgent();
  const settings = runtime.settings(agentId);
  const chain = runtime.models.chain(settings);
  if (action === 'list') {
    const catalog = await runtime.models.catalog();
    const aliases = new Map(Object.entries(settings.models).map(([ref, value]) => [ref, value?.alias]));
    if (values.json) {
      ctx.stdout.write(
        `${JSON.stringify({ default: chain[0] ?? null, fallbacks: chain.slice(1), models: catalog.map((model) => ({ ...model, alias: aliases.get(model.ref) })) }, null, 2)}\n`,
      );
      return 0;
    }
    const lines = [`Default: ${chain[0] ?? '(none: set agents.defaults.model or a provider API key)'}`];
    if (chain.length > 1) lines.push(`Fallbacks: ${chain.slice(1).join(', ')}`);
    lines.push('', 'Models:');
    for (const model of catalog) {
      const flags = [
        aliases.get(model.ref) ? `alias ${aliases.get(model.ref)}` : '',
        model.contextWindow ? `ctx ${Math.round(model.contextWindow / 1000)}k` : '',
        model.reasoning ? 'reasoning' : '',
      ].filter(Boolean);
      lines.push(`  ${model.ref}${flags.length ? `  (${flags.join(', ')})` : ''}`);
    }
    ctx.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  }
  if (action === 'status') {
    const profiles = runtime.authProfiles(agentId);
    const registered = runtime.kernel.capabilities.list('provider').map((info) => info.name);
    const providers = [
      ...registered,
      ...configuredProviderIds(runtime.kernel.config()).filter((id) => !registered.includes(id)),
    ];
    const now = runtime.now();
    const report = await Promise.all(
      providers.map(async (id) => {
        const route = await routeProvider(runtime.kernel, id);
        if (typeof route === 'string')
          return { provider: id, baseUrl: null, needsKey: false, problem: route, profiles: [] };
        const { provider, config } = route;
        const keys =
          provider.requiresKey === false
            ? []
            : profiles.profilesFor(id, { configKey: config.apiKey, envKeys: route.envKeys, env: runtime.kernel.env });
        return {
          provider: id,
          baseUrl: config.baseUrl ?? null,
          ...(route.custom ? { api: config.api } : {}),
          needsKey: provider.requiresKey !== false && !(config.baseUrl && provider.keylessWithBaseUrl),
          profiles: keys.map((profile) => {
            const usage = profiles.usage(profile.id);
            const coolingMs = usage.cooldownUntil && usage.cooldownUntil > now ? usage.cooldownUntil - now : 0;
            // Cooldowns of single models on this key (rate limits, overload): other models still answer.
            const models = Object.entries(usage.models ?? {})
              .filter(([, state]) => (state.cooldownUntil ?? 0) > now)
              .map(([model, state]) => ({
                model,
                coolingDownMs: state.cooldownUntil! - now,
                lastFailure: state.lastFailureKind ?? null,
                errorCount: state.errorCount ?? 0,
              }));
            return {
              id: profile.id,
              source: profile.source,
              coolingDownMs: coolingMs,
              lastFailure: usage.lastFailureKind ?? null,
              errorCount: usage.errorCount ?? 0,
              models,
            };
          }),
        };
      }),
    );
    if (values.json) {
      ctx.stdout.write(
        `${JSON.stringify({ agentId, default: chain[0] ?? null, fallbacks: chain.slice(1), providers: report }, null, 2)}\n`,
      );
      return 0;
    }
    const lines = [
      `Agent ${agentId}: ${chain[0] ?? 'no model configured'}${chain.length > 1 ? ` → ${chain.slice(1).join(' → ')}` : ''}`,
      '',
    ];
    const minutes = (ms: number) => `${Math.ceil(ms / 60_000)} min`;
    for (const entry of report) {
      const state =
        'problem' in entry
          ? entry.problem
          : entry.profiles.length
            ? entry.profiles
                .map((profile) => {
                  const own = profile.coolingDownMs
                    ? `cooling down ${minutes(profile.coolingDownMs)} after ${profile.lastFailure}`
                    : 'ready';
                  const models = profile.models.map(
                    (model) => `${model.model} cooling down ${minutes(model.coolingDownMs)} after ${model.lastFailure}`,
                  );
                  return `${profile.id} [${profile.source}] ${[own, ...models].join(', ')}`;
                })
                .join('; ')
            : entry.needsKey
              ? 'no key'
              : entry.baseUrl
                ? `no key needed (${entry.baseUrl})`
                : 'no key needed';
      lines.push(`  ${entry.provider.padEnd(12)} ${state}`);
    }
    ctx.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  }
  throw unknownCommand('models', String(action), ['list', 'status']);
}
