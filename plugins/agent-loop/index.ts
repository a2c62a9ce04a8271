/**
 * The bundled agent loop: holds the `agentLoop` slot and runs one turn — system prompt,
 * the model ↔ tool loop with streaming and steering, memory flush and compaction (turn.ts).
 * Sessions, queueing, commands and delivery belong to the agent plugin, which calls this
 * for every run; another plugin can take the slot and replace only the turn.
 */
import { allowedTools, defineAgentLoop, type SessionService, type TurnContext } from '../../sdk/agent/index.js';
import { definePlugin } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { systemPromptFor, Turn } from './turn.js';

/** The sessions plugin's service: what the model sees of a transcript keeps every tool call paired with its result. */
const sessionsOf = (ctx: TurnContext) => requireService<SessionService>(ctx.kernel, 'sessions', 'the agent loop');

export default definePlugin({
  id: 'agent-loop',
  register(api) {
    api.registerAgentLoop(
      defineAgentLoop({
        runTurn: async (input, ctx) => new Turn(ctx, await sessionsOf(ctx)).run(input),
        compact: async (ctx, options) => new Turn(ctx, await sessionsOf(ctx)).compactNow(options),
        async describePrompt(ctx) {
          const provider = ctx.model?.split('/')[0];
          const tools = await allowedTools(ctx.kernel, ctx.settings, provider, ctx.model);
          return systemPromptFor({
            settings: ctx.settings,
            tools,
            mainSession: ctx.mainSession,
            skills: ctx.skills,
            model: ctx.model,
            thinking: ctx.thinking,
          });
        },
      }),
    );
  },
});
