/**
 * The hooks around a turn that belong to the dispatcher, not the loop: it fires the three
 * pre-turn hooks (before_model_resolve → before_prompt_build → before_agent_start) and
 * hands their results to whichever loop holds the slot in its TurnInput, and it binds the
 * run's hook context into the models service the loop calls (llm_input/llm_output fire
 * there). So a replacement loop keeps every hook without firing one itself — heartbeat
 * system events, which ride before_prompt_build, reach its prompt too.
 */
import type { HookContext, TranscriptMessage } from '../../sdk/index.js';
import { parseModelRef } from '../../sdk/index.js';
import type { Models, TurnContext, TurnInput } from '../../sdk/agent/index.js';

/** Where the run's hooks fire: its agent, session and run, and its abort signal. */
export function turnHookContext(
  ctx: Pick<TurnContext, 'settings' | 'sessionKey' | 'session' | 'runId' | 'channel' | 'signal'>,
): HookContext {
  return {
    agentId: ctx.settings.agentId,
    sessionKey: ctx.sessionKey,
    sessionId: ctx.session.sessionId,
    runId: ctx.runId,
    channel: ctx.channel,
    signal: ctx.signal,
  };
}

/** The models service as the loop sees it: every stream call carries the run's hook context unless the loop passes its own. */
export function withHookContext(models: Models, hookContext: HookContext): Models {
  return {
    chain: (settings, override) => models.chain(settings, override),
    catalog: () => models.catalog(),
    info: (ref, settings) => models.info(ref, settings),
    resolve: (input, settings) => models.resolve(input, settings),
    stream: (settings, chain, request, options) => models.stream(settings, chain, request, { hookContext, ...options }),
  };
}

/**
 * The turn's input after the pre-turn hooks: the chain they redirected, the message with
 * what they prepend, and the system prompt they replace or extend.
 */
export async function preparedTurnInput(ctx: TurnContext, input: Omit<TurnInput, 'chain'>): Promise<TurnInput> {
  const hooks = ctx.kernel.hooks;
  const hookContext = turnHookContext(ctx);
  let chain = ctx.models.chain(ctx.settings, input.model ?? ctx.session.model);
  const primary = chain[0] ? parseModelRef(chain[0]) : undefined;
  const resolve = await hooks.runModifying(
    'before_model_resolve',
    { prompt: input.message, provider: primary?.provider, model: primary?.model },
    hookContext,
  );
  chain = overrideChain(chain, resolve.providerOverride, resolve.modelOverride);

  const history = ctx.transcript.messages() as unknown as TranscriptMessage[];
  const build = await hooks.runModifying(
    'before_prompt_build',
    { prompt: input.message, messages: history },
    hookContext,
  );
  let message = joined(build.prependContext, input.message) ?? '';

  const current = chain[0] ? parseModelRef(chain[0]) : undefined;
  const start = await hooks.runModifying(
    'before_agent_start',
    { prompt: message, provider: current?.provider, model: current?.model, messages: history },
    hookContext,
  );
  message = joined(start.prependContext, message) ?? '';
  chain = overrideChain(chain, start.providerOverride, start.modelOverride);

  const systemPrompt = build.systemPrompt ?? start.systemPrompt;
  const appendSystemContext = joined(build.appendSystemContext, start.appendSystemContext);
  return {
    ...input,
    message,
    chain,
    ...(systemPrompt ? { systemPrompt } : {}),
    ...(appendSystemContext ? { appendSystemContext } : {}),
  };
}

function joined(first: string | undefined, second: string | undefined): string | undefined {
  return first && second ? `${first}\n\n${second}` : first || second;
}

/** Apply a hook's provider/model override to the chain's first entry. */
function overrideChain(chain: string[], provider?: string, model?: string): string[] {
  if (!provider && !model) return chain;
  if (model?.includes('/') && !provider) return [model, ...chain.filter((ref) => ref !== model)];
  const current = chain[0] ? parseModelRef(chain[0]) : undefined;
  const p = provider ?? current?.provider;
  const m = model ?? current?.model;
  if (!p || !m) return chain;
  const ref = `${p}/${m}`;
  return [ref, ...chain.filter((item) => item !== ref)];
}
