/**
 * The bundled agent loop: holds the `agentLoop` slot and runs one turn — system prompt,
 * the model ↔ tool loop with streaming and steering, memory flush and compaction (turn.ts).
 * Sessions, queueing, commands and delivery belong to the agent plugin, which calls this
 * for every run; another plugin can take the slot and replace only the turn.
 */
import { allowedTools, defineAgentLoop } from '../../sdk/agent/index.js';
import { definePlugin } from '../../sdk/index.js';
import { systemPromptFor, Turn } from './turn.js';

export default definePlugin({
  id: 'agent-loop',
  register(api) {
    api.registerAgentLoop(
      defineAgentLoop({
        runTurn: (input, ctx) => new Turn(ctx).run(input),
        compact: (ctx, options) => new Turn(ctx).compactNow(options),
        async describePrompt(ctx) {
          const provider = ctx.model?.split('/')[0];
          const tools = await allowedTools(ctx.kernel, ctx.settings, provider, ctx.model);
          return systemPromptFor({ settings: ctx.settings, tools, mainSession: ctx.mainSession, skills: ctx.skills, model: ctx.model, thinking: ctx.thinking });
        },
      }),
    );
  },
});
