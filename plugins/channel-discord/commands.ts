/**
 * The bot's native slash commands: the kernel's chat commands (handled by the agent before
 * any model sees the message) and the commands plugins register, as Discord application
 * commands. Each takes its arguments as one optional text option, so `/model gpt-5` arrives
 * as the same "/model gpt-5" a typed message would be.
 */

export interface NativeCommand {
  name: string;
  description: string;
  acceptsArgs: boolean;
}

/** The agent's built-in commands (plugins/agent/commands.ts), with the reset triggers. */
export const BUILTIN_COMMANDS: readonly NativeCommand[] = [
  { name: 'new', description: 'Start a new session', acceptsArgs: true },
  { name: 'reset', description: 'Start a new session', acceptsArgs: true },
  { name: 'stop', description: 'Abort the current run and drop queued messages', acceptsArgs: false },
  { name: 'status', description: 'Model, context use and session settings', acceptsArgs: false },
  { name: 'context', description: 'What fills the context window (list | detail)', acceptsArgs: true },
  { name: 'compact', description: 'Summarize older turns now', acceptsArgs: true },
  { name: 'help', description: 'List commands', acceptsArgs: false },
  { name: 'think', description: 'Thinking level (off | minimal | low | medium | high)', acceptsArgs: true },
  { name: 'verbose', description: 'Show tool calls as they happen (on | off | full)', acceptsArgs: true },
  { name: 'reasoning', description: 'Send the model’s reasoning too (on | off | stream)', acceptsArgs: true },
  { name: 'model', description: 'Show or switch the model', acceptsArgs: true },
  { name: 'queue', description: 'Queue mode for messages during a run', acceptsArgs: true },
  { name: 'skill', description: 'Run a skill by name', acceptsArgs: true },
];

/** Commands Discord's own client already has (`/tts`), offered under another name, as OpenClaw does. */
export const NATIVE_RENAMES: Readonly<Record<string, string>> = { tts: 'voice' };

/** The chat command a native invocation stands for (`/voice` is `/tts`). */
export function chatCommandName(native: string): string {
  return Object.entries(NATIVE_RENAMES).find(([, renamed]) => renamed === native)?.[0] ?? native;
}

/** Discord's rules for a chat-input command name. */
const NAME = /^[-_\p{Ll}\p{N}]{1,32}$/u;

/** Built-ins plus plugin commands, as the body of `PUT /applications/{id}/commands`. */
export function applicationCommands(pluginCommands: ReadonlyArray<{ name: string; pluginId: string }>): unknown[] {
  const commands = new Map<string, NativeCommand>(BUILTIN_COMMANDS.map((command) => [command.name, command]));
  for (const command of pluginCommands) {
    const name = NATIVE_RENAMES[command.name.toLowerCase()] ?? command.name.toLowerCase();
    const what = name === command.name.toLowerCase() ? '' : ` (/${command.name.toLowerCase()})`;
    if (!commands.has(name))
      commands.set(name, {
        name,
        description: `From plugin ${command.pluginId}${what}`.slice(0, 100),
        acceptsArgs: true,
      });
  }
  return [...commands.values()]
    .filter((command) => NAME.test(command.name))
    .map((command) => ({
      name: command.name,
      description: command.description.slice(0, 100),
      type: 1,
      ...(command.acceptsArgs
        ? { options: [{ type: 3, name: 'args', description: 'Arguments', required: false }] }
        : {}),
    }));
}
