/**
 * Slash commands of user-invocable skills (the skills plugin's service lists them):
 * `/<skill>` and the generic `/skill <name> [input]` run the agent with an instruction to
 * follow that skill; a skill with `command-dispatch: tool` runs its tool directly through
 * the kernel's tool choke point instead. Built-in and plugin commands keep their names: a
 * clashing skill gets a suffixed one (`/status_2`), chosen by the service.
 */
import type { DispatchInput, SkillCommand } from '../../sdk/agent/index.js';
import type { CommandOutcome } from './dispatcher.js';
import type { AgentRuntime } from './runtime.js';

/** Skill commands of this input's agent; `reserved` are the names built-in and plugin commands hold. */
export function skillCommands(
  runtime: AgentRuntime,
  input: DispatchInput,
  reserved: readonly string[],
): SkillCommand[] {
  if (!runtime.skills) return [];
  const agentId = input.agentId!;
  const plugins = runtime.kernel.capabilities.list('command').map((info) => info.name.toLowerCase());
  return runtime.skills.commands(
    { agentId, workspaceDir: runtime.settings(agentId).workspaceDir, sessionKey: input.sessionKey },
    [...reserved, ...plugins],
  );
}

/** `/<name> args` when `name` is a skill command (hyphens read as underscores). */
export async function runSkillCommand(
  runtime: AgentRuntime,
  input: DispatchInput,
  reserved: readonly string[],
  name: string,
  args: string,
): Promise<CommandOutcome | undefined> {
  const wanted = name.toLowerCase().replace(/-/g, '_');
  const command = skillCommands(runtime, input, reserved).find((entry) => entry.name === wanted);
  return command ? invoke(runtime, input, command, args) : undefined;
}

/** `/skill <name> [input]`: by skill name or command name. */
export async function genericSkillCommand(
  runtime: AgentRuntime,
  input: DispatchInput,
  reserved: readonly string[],
  args: string,
): Promise<CommandOutcome> {
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(args.trim());
  const commands = skillCommands(runtime, input, reserved);
  if (!match) {
    return {
      reply: commands.length
        ? `Usage: /skill <name> [input]. Skills: ${commands.map((entry) => entry.skillName).join(', ')}`
        : 'No user-invocable skills are available (see claw skills check).',
    };
  }
  const wanted = match[1]!.toLowerCase();
  const command = commands.find(
    (entry) => entry.skillName.toLowerCase() === wanted || entry.name === wanted.replace(/-/g, '_'),
  );
  if (!command)
    return {
      reply:
        `⚠️ No usable skill "${match[1]}". ${commands.length ? `Skills: ${commands.map((entry) => entry.skillName).join(', ')}.` : ''} (claw skills check says why a skill is missing.)`.trim(),
    };
  return invoke(runtime, input, command, match[2] ?? '');
}

async function invoke(
  runtime: AgentRuntime,
  input: DispatchInput,
  command: SkillCommand,
  args: string,
): Promise<CommandOutcome> {
  if (!command.tool) return { continueWith: { message: skillCommandPrompt(command, args) } };
  const agentId = input.agentId!;
  const outcome = await runtime.kernel.tools.invoke({
    name: command.tool,
    params: { command: args, commandName: command.name, skillName: command.skillName },
    toolCallId: `skill-${command.name}-${Date.now().toString(36)}`,
    context: { agentId, sessionKey: input.sessionKey, workspaceDir: runtime.settings(agentId).workspaceDir },
  });
  const text = outcome.result.content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('\n')
    .trim();
  return { reply: outcome.result.isError ? `⚠️ /${command.name}: ${text}` : text || `/${command.name} done.` };
}

/** Lines for /help. */
export function skillHelpLines(runtime: AgentRuntime, input: DispatchInput, reserved: readonly string[]): string[] {
  const commands = skillCommands(runtime, input, reserved);
  if (commands.length === 0) return [];
  return [
    'Skills (/skill <name> [input] works too):',
    ...commands.map((entry) => `/${entry.name} — ${firstLine(entry.description)}`),
  ];
}

function firstLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/** The message a skill command runs the agent with: the request, and which skill to follow for it. */
export function skillCommandPrompt(
  command: Pick<SkillCommand, 'skillName' | 'location' | 'settings'>,
  args: string,
): string {
  const request = args.trim() || '(no further input: follow the skill with what you know)';
  const settings =
    command.settings && Object.keys(command.settings).length
      ? `\nSettings for this skill (skills.entries): ${JSON.stringify(command.settings)}`
      : '';
  return `Use the "${command.skillName}" skill for this request. Read its instructions first with the read tool: ${command.location}${settings}\n\nRequest: ${request}`;
}
