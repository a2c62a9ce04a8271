/**
 * Models: which model each agent uses (agents.defaults.model, fallbacks, aliases), the
 * catalog the enabled providers offer, and auth profiles with their cooldowns. Offers its
 * ModelService (service.ts, the SDK's ModelService contract) as service "models" — the
 * agent plugin runs turns with it, sessions and /v1/models read it — plus the `models.list`
 * method and `claw models`. It stays when the agent loop is swapped.
 */
import { definePlugin, parseSessionKey, type JsonSchema } from '../../sdk/index.js';
import { modelsCommand, MODELS_HELP } from './cli.js';
import { cliCommand } from '../../sdk/cli.js';
import { registerModelAuthMethods } from './auth-methods.js';
import { modelsAuthStatus } from './auth-status.js';
import { ModelService } from './service.js';

const KEY: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };

export default definePlugin({
  id: 'models',
  register(api) {
    const runtime = new ModelService(api.kernel);
    api.registerService({ id: 'models', api: runtime });

    api.registerGatewayMethod('models.authStatus', {
      scope: 'operator.read',
      // OpenClaw's refresh re-reads its catalog snapshot; claw reads live, so it changes nothing.
      params: {
        type: 'object',
        properties: { agentId: { type: 'string', maxLength: 512 }, refresh: { type: 'boolean' } },
      },
      description:
        "Per provider: status (static key, missing, ok for keyless), its auth profiles (ids, source, cooldown; never a key) and the agent's readiness.",
      handler: (params: { agentId?: string }) => modelsAuthStatus(runtime, params.agentId || runtime.defaultAgent()),
    });
    registerModelAuthMethods(api, runtime);
    api.registerGatewayMethod('models.list', {
      scope: 'operator.read',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: {
          agentId: KEY,
          // The agent of this session (when agentId is not given).
          sessionKey: KEY,
          // OpenClaw's published-model-catalog contract. claw reads the catalogue live on every
          // call, so refresh and preparedOnly change nothing; view and provider filter rows.
          view: { enum: ['default', 'configured', 'provider-config', 'all'] },
          provider: KEY,
          includeDetails: { type: 'boolean' },
          refresh: { type: 'boolean' },
          preparedOnly: { type: 'boolean' },
        },
      },
      handler: async (params: { agentId?: string; sessionKey?: string; view?: string; provider?: string }) => {
        const agentId =
          params.agentId ??
          (params.sessionKey ? parseSessionKey(params.sessionKey).agentId : undefined) ??
          runtime.defaultAgent();
        const settings = runtime.settings(agentId);
        const chain = runtime.models.chain(settings);
        const aliases = new Map(Object.entries(settings.models).map(([ref, value]) => [ref, value?.alias]));
        const catalog = await runtime.models.catalog();
        const refs = new Set(catalog.map((model) => model.ref));
        const rows = [
          ...catalog.map((model) => ({
            ...model,
            ...(aliases.get(model.ref) ? { alias: aliases.get(model.ref) } : {}),
          })),
          // Configured refs the catalog does not list (a model the provider does not advertise).
          ...chain
            .filter((ref) => !refs.has(ref))
            .map((ref) => ({
              ref,
              provider: ref.split('/')[0]!,
              id: ref.slice(ref.indexOf('/') + 1),
              ...(aliases.get(ref) ? { alias: aliases.get(ref) } : {}),
            })),
        ];
        const configured = new Set([...chain, ...aliases.keys()]);
        const models = rows.filter(
          (model) =>
            (params.view !== 'configured' || configured.has(model.ref)) &&
            (params.provider === undefined || model.provider === params.provider),
        );
        return { default: chain[0] ?? null, fallbacks: chain.slice(1), models };
      },
    });

    api.registerCli({
      name: 'models',
      description: 'List models and show provider auth status',
      run: cliCommand(MODELS_HELP, (argv, ctx) => modelsCommand(argv, ctx, runtime)),
    });
  },
});
