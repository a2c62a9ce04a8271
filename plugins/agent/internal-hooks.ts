/**
 * The command events internal hooks see (`command:new`, `command:reset`, `command:stop`),
 * emitted from the slash-command path with OpenClaw's context fields. What handlers push
 * to `event.messages` on /new and /reset goes back to the sender with the command's reply.
 */
import type { DispatchInput, SessionEntry } from '../../sdk/agent/index.js';
import { emitInternalHook } from '../../sdk/index.js';
import type { AgentRuntime } from './runtime.js';

export async function commandHook(
  runtime: AgentRuntime,
  input: DispatchInput,
  action: 'new' | 'reset' | 'stop',
  sessions: { previous?: SessionEntry; entry?: SessionEntry } = {},
): Promise<string[]> {
  const agentId = input.agentId!;
  const sessionKey = input.sessionKey!;
  const event = await emitInternalHook(runtime.kernel, 'command', action, sessionKey, () => {
    const store = runtime.store(agentId);
    return {
      agentId,
      commandSource: input.channel ?? 'gateway',
      ...(input.from ? { senderId: input.from } : {}),
      workspaceDir: runtime.settings(agentId).workspaceDir,
      storePath: store.dir,
      ...(sessions.entry ? { sessionEntry: sessions.entry } : {}),
      ...(sessions.previous
        ? {
            previousSessionEntry: sessions.previous,
            sessionFile: store.transcriptPath(sessions.previous.sessionId, input.threadId),
          }
        : {}),
    };
  });
  return event?.messages.filter((message) => typeof message === 'string' && message.trim() !== '') ?? [];
}
