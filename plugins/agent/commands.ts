/**
 * Slash commands and directives: handled before any model sees the message, and only for
 * authorized senders (operators on the gateway, allow-listed channel senders).
 *
 * - Reset triggers (`/new`, `/reset`, plus `session.resetTriggers`) start a new session id.
 * - Standalone commands (`/stop`, `/status`, `/context`, `/compact`, `/help`, plugin commands).
 * - Directives (`/think`, `/verbose`, `/reasoning`, `/model`, `/queue`): alone they persist on
 *   the session; inside a normal message they are stripped and apply to that message only.
 * - The inline shortcut `/status` runs immediately and is stripped from the rest.
 */
import type { ChatCommandInfo, DispatchInput, SessionEntry, SessionQueueOverride } from '../../sdk/agent/index.js';
import { parseDirectives, queueProblems } from './directives.js';
import type { CommandOutcome } from './dispatcher.js';
import { commandHook } from './internal-hooks.js';
import { contextText, statusText } from './status-report.js';
import type { AgentRuntime } from './runtime.js';
import { costSummary, effectiveMode, nextMode, parseUsageArgs } from './usage-footer.js';
import { genericSkillCommand, runSkillCommand, skillCommands, skillHelpLines } from './skill-commands.js';

export const GREETING_PROMPT =
  'A new session was just started with /new or /reset. Greet the user in one or two short sentences, in your own voice, and ask what they would like to do.';

interface CommandScope {
  runtime: AgentRuntime;
  input: DispatchInput;
  agentId: string;
  sessionKey: string;
}

type Builtin = (scope: CommandScope, args: string, text: string) => Promise<CommandOutcome | undefined>;

const BUILTINS: Record<string, { description: string; run: Builtin }> = {
  stop: { description: 'abort the current run and drop queued messages', run: (scope) => stopCommand(scope) },
  status: {
    description: 'model, context use and session settings',
    run: async (scope) => ({ reply: await statusText(scope) }),
  },
  context: {
    description: 'what fills the context window (list | detail)',
    run: async (scope, args) => ({ reply: await contextText(scope, args) }),
  },
  compact: {
    description: 'summarize older turns now ([instructions])',
    run: async (scope, args) => compactCommand(scope, args),
  },
  help: { description: 'list commands', run: async (scope) => ({ reply: helpText(scope) }) },
  commands: { description: 'list commands', run: async (scope) => ({ reply: helpText(scope) }) },
  think: {
    description: 'thinking level (off | minimal | low | medium | high)',
    run: async (scope, _args, text) => directiveCommand(scope, text),
  },
  verbose: {
    description: 'show tool calls as they happen (on | off | full)',
    run: async (scope, _args, text) => directiveCommand(scope, text),
  },
  reasoning: {
    description: 'send the model’s reasoning too (on | off | stream)',
    run: async (scope, _args, text) => directiveCommand(scope, text),
  },
  model: {
    description: 'show or switch the model (list | status | <model>[@profile] | default)',
    run: async (scope, args, text) => modelCommand(scope, args, text),
  },
  queue: {
    description: 'queue mode for messages during a run (<mode> [debounce:2s cap:25 drop:summarize] | reset)',
    run: async (scope, _args, text) => directiveCommand(scope, text),
  },
  usage: {
    description: 'usage footer on replies (off | tokens | full | reset), or cost for a local cost summary',
    run: async (scope, args) => usageCommand(scope, args),
  },
  skill: {
    description: 'run a skill by name (<name> [input])',
    run: async (scope, args) => genericSkillCommand(scope.runtime, scope.input, reservedNames(), args),
  },
};
for (const alias of ['thinking', 't']) BUILTINS[alias] = BUILTINS.think!;
BUILTINS.v = BUILTINS.verbose!;
BUILTINS.reason = BUILTINS.reasoning!;

/** Names skill commands may not take (plugin commands are added by skill-commands.ts). */
function reservedNames(): string[] {
  return [...Object.keys(BUILTINS), 'new', 'reset'];
}

const ABORT_WORDS = new Set(['stop', 'abort', 'esc']);

export async function handleCommand(runtime: AgentRuntime, input: DispatchInput): Promise<CommandOutcome | undefined> {
  const text = input.message.trim();
  if (!text) return undefined;
  const scope: CommandScope = { runtime, input, agentId: input.agentId!, sessionKey: input.sessionKey! };

  const trigger = runtime.sessions.matchResetTrigger(text);
  if (trigger) return resetCommand(scope, trigger.rest, trigger.trigger);

  // A bare "stop" while something runs means stop; otherwise it is just a word.
  if (ABORT_WORDS.has(text.toLowerCase()) && runtime.hasWork(scope.sessionKey)) return stopCommand(scope);

  const standalone = /^\/([a-z][\w-]*)(?::|\s+|$)([\s\S]*)$/i.exec(text);
  if (standalone) {
    const name = standalone[1]!.toLowerCase();
    const args = standalone[2]!.trim();
    const builtin = BUILTINS[name];
    if (builtin) {
      const outcome = await builtin.run(scope, args, text);
      if (outcome) return outcome;
    } else {
      const plugin =
        (await pluginCommand(scope, name, args)) ??
        (await runSkillCommand(runtime, scope.input, reservedNames(), name, args));
      if (plugin) return plugin;
    }
  }

  // "hey /status": the status goes back now, the rest goes to the model.
  const inline = /(^|\s)\/status(?=\s|$)/i;
  if (inline.test(text)) {
    const rest = text
      .replace(inline, ' ')
      .replace(/\s{2,}/g, ' ')
      .trim();
    if (rest) return { reply: await statusText(scope), continueWith: { message: rest } };
  }
  return undefined;
}

/**
 * Directives inside a normal message: stripped, applied to this message only. Returns the
 * input to run (or an outcome when a directive was unusable and the sender should know).
 */
export async function applyInlineDirectives(runtime: AgentRuntime, input: DispatchInput): Promise<DispatchInput> {
  const directives = parseDirectives(input.message);
  if (directives.found.length === 0) return input;
  const out: DispatchInput = { ...input, message: directives.rest };
  if (directives.thinking) out.thinking = directives.thinking;
  if (directives.verbose) out.verbose = directives.verbose;
  if (directives.reasoning) out.reasoning = directives.reasoning;
  if (directives.queue?.mode) out.queueMode = directives.queue.mode;
  if (directives.model) {
    const [wanted] = directives.model.split('@');
    const settings = runtime.settings(input.agentId!);
    const ref = await runtime.models.resolve(wanted ?? '', settings);
    if (ref) out.model = ref;
  }
  return out;
}

async function resetCommand(scope: CommandScope, rest: string, trigger: string): Promise<CommandOutcome> {
  const { runtime, agentId, sessionKey } = scope;
  let message = rest;
  let model: string | undefined;
  // "/new opus …": the first word picks the new session's model when it names one.
  const first = /^(\S+)(?:\s+([\s\S]*))?$/.exec(rest);
  if (first) {
    const [wanted, profile] = first[1]!.split('@');
    const ref = await runtime.models.resolve(wanted ?? '', runtime.settings(agentId));
    if (ref && (first[1]!.includes('/') || looksLikeModelWord(wanted!, ref, runtime, agentId))) {
      model = ref;
      message = (first[2] ?? '').trim();
      if (profile) await runtime.store(agentId).upsert(sessionKey, { authProfileOverride: profile });
    }
  }
  const previous = await runtime.store(agentId).get(sessionKey);
  const entry = await runtime.resetSession(agentId, sessionKey, model ? { model } : {});
  const hookReplies = await commandHook(runtime, scope.input, trigger.toLowerCase() === '/reset' ? 'reset' : 'new', {
    previous,
    entry,
  });
  const note = `✅ New session started${model ? ` · model ${model}` : ''} (${entry.sessionId.slice(0, 8)}).`;
  const reply = [...(message ? [] : [note]), ...hookReplies].join('\n\n');
  return {
    reply: reply || undefined,
    continueWith: { message: message || GREETING_PROMPT, ...(model ? { model } : {}) },
  };
}

/** "/new hello" must not read "hello" as a model; accept aliases, provider names and exact ids only. */
function looksLikeModelWord(word: string, ref: string, runtime: AgentRuntime, agentId: string): boolean {
  const lower = word.toLowerCase();
  const settings = runtime.settings(agentId);
  if (Object.values(settings.models).some((entry) => entry?.alias?.toLowerCase() === lower)) return true;
  const [provider, model] = [ref.slice(0, ref.indexOf('/')), ref.slice(ref.indexOf('/') + 1)];
  return lower === provider || lower === model.toLowerCase() || model.toLowerCase().startsWith(lower);
}

async function stopCommand(scope: CommandScope): Promise<CommandOutcome> {
  const count = scope.runtime.stop(scope.sessionKey, 'stopped');
  await commandHook(scope.runtime, scope.input, 'stop');
  return { reply: count > 0 ? `⏹️ Stopped ${count} run${count === 1 ? '' : 's'}.` : 'Nothing is running.' };
}

async function compactCommand(scope: CommandScope, instructions: string): Promise<CommandOutcome> {
  const outcome = await scope.runtime.compactSession(scope.agentId, scope.sessionKey, instructions || undefined);
  if (!outcome.compacted) return { reply: `🧹 Nothing to compact${outcome.reason ? ` (${outcome.reason})` : ''}.` };
  return {
    reply: `🧹 Compacted: ${outcome.summarized} older message${outcome.summarized === 1 ? '' : 's'} summarized; compactions: ${outcome.compactions}.`,
  };
}

async function pluginCommand(scope: CommandScope, name: string, args: string): Promise<CommandOutcome | undefined> {
  const capabilities = scope.runtime.kernel.capabilities;
  // "/deploy_now" finds "Deploy-Now": command menus (Telegram's) allow only lowercase and "_".
  const same = (entry: { name: string }) =>
    entry.name.toLowerCase() === name || entry.name.toLowerCase().replace(/-/g, '_') === name.replace(/-/g, '_');
  const info = capabilities.list('command').find(same);
  if (!info) return undefined;
  const command = await capabilities.find('command', info.name);
  if (!command) return undefined;
  if (!command.acceptsArgs && args) return { reply: `/${command.name} takes no arguments.` };
  try {
    const result = await command.handler({
      args,
      sessionKey: scope.sessionKey,
      channel: scope.input.channel,
      senderId: scope.input.from,
    });
    return { reply: result?.text ?? `/${command.name} done.` };
  } catch (error) {
    return { reply: `⚠️ /${command.name} failed: ${(error as Error).message ?? String(error)}` };
  }
}

/** `/usage`: the session's footer mode (persisted, "off" included), or the cost summary. */
async function usageCommand(scope: CommandScope, args: string): Promise<CommandOutcome> {
  const { runtime, agentId, sessionKey } = scope;
  const store = runtime.store(agentId);
  const entry = await store.get(sessionKey);
  const command = parseUsageArgs(args);
  if (command.kind === 'invalid') return { reply: command.text };
  if (command.kind === 'cost')
    return { reply: costSummary(runtime.kernel.paths.stateDir, agentId, entry?.sessionId, runtime.now()) };
  if (command.kind === 'reset') {
    await store.upsert(sessionKey, { responseUsage: undefined });
    const inherited = effectiveMode(runtime.kernel, undefined, scope.input.channel);
    return { reply: `📊 Usage footer: ${inherited} (inherited from messages.responseUsage)` };
  }
  const mode =
    command.kind === 'set' ? command.mode : nextMode(effectiveMode(runtime.kernel, entry, scope.input.channel));
  await store.upsert(sessionKey, { responseUsage: mode });
  return { reply: `📊 Usage footer: ${mode}` };
}

/** A message made only of directives persists them on the session. */
async function directiveCommand(scope: CommandScope, text: string): Promise<CommandOutcome | undefined> {
  const directives = parseDirectives(text);
  if (directives.rest) return undefined; // Per-message hints: the caller strips and runs.
  const { runtime, agentId, sessionKey } = scope;
  const store = runtime.store(agentId);
  const entry = await store.get(sessionKey);
  const lines: string[] = [];
  const patch: Partial<SessionEntry> & Record<string, unknown> = {};
  for (const name of new Set(directives.found)) {
    if (name === 'think') {
      if (directives.thinking) {
        patch.thinkingLevel = directives.thinking;
        lines.push(`🧠 Thinking: ${directives.thinking}`);
      } else
        lines.push(
          `🧠 Thinking: ${entry?.thinkingLevel ?? runtime.settings(agentId).thinkingDefault} (levels: off, minimal, low, medium, high)`,
        );
    } else if (name === 'verbose') {
      if (directives.verbose) {
        patch.verboseLevel = directives.verbose;
        lines.push(`🔎 Verbose: ${directives.verbose}`);
      } else lines.push(`🔎 Verbose: ${entry?.verboseLevel ?? 'off'} (on | off | full)`);
    } else if (name === 'reasoning') {
      if (directives.reasoning) {
        patch.reasoningLevel = directives.reasoning;
        lines.push(`💭 Reasoning: ${directives.reasoning}`);
      } else lines.push(`💭 Reasoning: ${entry?.reasoningLevel ?? 'off'} (on | off | stream)`);
    } else if (name === 'model') {
      const outcome = await modelCommand(scope, directives.model ?? '', `/model ${directives.model ?? ''}`);
      if (outcome?.reply) lines.push(outcome.reply);
    } else if (name === 'queue') {
      const queue = directives.queue;
      if (!queue) {
        const current = runtime.queueSettings(scope.input, entry);
        lines.push(
          `📥 Queue: ${current.mode} (debounce ${current.debounceMs}ms, cap ${current.cap}, drop ${current.drop})`,
        );
        continue;
      }
      const problems = queueProblems(queue);
      if (problems.length > 0) {
        lines.push(`⚠️ /queue: ${problems.join('; ')}`);
        continue;
      }
      if (queue.reset) {
        patch.queue = undefined;
        runtime.cachedQueueOverride.delete(sessionKey);
        const current = runtime.queueSettings(
          { ...scope.input, queueMode: undefined },
          { ...(entry ?? ({} as SessionEntry)), queue: undefined },
        );
        lines.push(
          `📥 Queue reset to ${current.mode} (debounce ${current.debounceMs}ms, cap ${current.cap}, drop ${current.drop})`,
        );
      } else {
        const { reset: _reset, ...override } = queue;
        const merged: SessionQueueOverride = { ...entry?.queue, ...override };
        patch.queue = merged;
        runtime.cachedQueueOverride.set(sessionKey, merged);
        const current = runtime.queueSettings(
          { ...scope.input, queueMode: undefined },
          { ...(entry ?? ({} as SessionEntry)), queue: merged },
        );
        lines.push(
          `📥 Queue: ${current.mode} (debounce ${current.debounceMs}ms, cap ${current.cap}, drop ${current.drop})`,
        );
      }
    }
  }
  if (Object.keys(patch).length > 0) await store.upsert(sessionKey, patch);
  return { reply: lines.join('\n') };
}

async function modelCommand(scope: CommandScope, args: string, text: string): Promise<CommandOutcome | undefined> {
  const { runtime, agentId, sessionKey } = scope;
  const settings = runtime.settings(agentId);
  const lower = args.toLowerCase();
  const entry = await runtime.store(agentId).get(sessionKey);
  const chain = runtime.models.chain(settings, entry?.model);
  if (!args || lower === 'list') {
    const catalog = await runtime.models.catalog();
    const aliases = new Map(Object.entries(settings.models).map(([ref, value]) => [ref, value?.alias]));
    const refs = [...new Set([...chain, ...Object.keys(settings.models), ...catalog.map((item) => item.ref)])];
    const lines = refs.map(
      (ref) => `${ref === chain[0] ? '•' : '-'} ${ref}${aliases.get(ref) ? ` (${aliases.get(ref)})` : ''}`,
    );
    return {
      reply: [`🤖 Model: ${chain[0] ?? 'none configured'}`, ...(lines.length ? ['Available:', ...lines] : [])].join(
        '\n',
      ),
    };
  }
  if (lower === 'status') {
    const profiles = runtime.authProfiles(agentId).snapshot();
    const now = runtime.now();
    const lines = [`🤖 Model: ${chain[0] ?? 'none configured'}`, `Fallbacks: ${chain.slice(1).join(', ') || 'none'}`];
    if (entry?.authProfileOverride) lines.push(`Profile: ${entry.authProfileOverride}`);
    for (const [id, usage] of Object.entries(profiles)) {
      const cooling =
        usage.cooldownUntil && usage.cooldownUntil > now
          ? `cooling down ${Math.ceil((usage.cooldownUntil - now) / 60_000)} min (${usage.lastFailureKind})`
          : 'ready';
      lines.push(`- ${id}: ${cooling}`);
    }
    return { reply: lines.join('\n') };
  }
  if (text.trim().split(/\s+/).length > 2 && !/^\/model\s+\S+$/i.test(text.trim())) return undefined; // "/model x what is…": a per-message hint.
  if (lower === 'default' || lower === 'reset') {
    await runtime.store(agentId).upsert(sessionKey, { model: undefined, authProfileOverride: undefined });
    return { reply: `🤖 Model reset to ${runtime.models.chain(settings)[0] ?? 'none configured'}` };
  }
  const [wanted, profile] = args.split('@');
  const ref = await runtime.models.resolve(wanted ?? '', settings);
  if (!ref) return { reply: `⚠️ Unknown model "${wanted}". Try /model list.` };
  await runtime.store(agentId).upsert(sessionKey, { model: ref, authProfileOverride: profile || undefined });
  return { reply: `🤖 Model set to ${ref}${profile ? ` (profile ${profile})` : ''}` };
}

/** Every command a user can send the agent, once each (aliases left out), for command menus. */
export async function commandList(runtime: AgentRuntime, agentId: string): Promise<ChatCommandInfo[]> {
  const out: ChatCommandInfo[] = [
    {
      name: 'new',
      description: 'start a new session ([model])',
      source: 'builtin',
      aliases: ['reset'],
      acceptsArgs: true,
    },
    {
      name: 'reset',
      description: 'start a new session ([model])',
      source: 'builtin',
      aliases: ['new'],
      acceptsArgs: true,
    },
  ];
  // One entry per command; names sharing a handler (/help, /commands) are each other's aliases.
  const names = new Map<unknown, string[]>();
  for (const [name, command] of Object.entries(BUILTINS)) names.set(command, [...(names.get(command) ?? []), name]);
  for (const [command, [name, ...aliases]] of names) {
    const builtin = command as (typeof BUILTINS)[string];
    // A handler that takes the arguments (a second parameter) accepts them.
    out.push({
      name: name!,
      description: builtin.description,
      source: 'builtin',
      ...(aliases.length ? { aliases } : {}),
      acceptsArgs: builtin.run.length > 1,
    });
  }
  for (const info of runtime.kernel.capabilities.list('command')) {
    const command = await runtime.kernel.capabilities.find('command', info.name).catch(() => undefined);
    out.push({
      name: info.name,
      description: command?.description || `from plugin ${info.pluginId}`,
      source: 'plugin',
      acceptsArgs: command?.acceptsArgs ?? false,
    });
  }
  for (const skill of skillCommands(runtime, { agentId, message: '' }, reservedNames()))
    out.push({
      name: skill.name,
      description: firstLineOf(skill.description) || `skill ${skill.skillName}`,
      source: 'skill',
      acceptsArgs: true,
    });
  return out;
}

function firstLineOf(text: string): string {
  return text.split('\n')[0]!.trim();
}

function helpText(scope: CommandScope): string {
  const seen = new Set<CommandOutcome | unknown>();
  const lines = ['Commands:', '/new [model] · /reset [model] — start a new session'];
  for (const [name, command] of Object.entries(BUILTINS)) {
    if (seen.has(command)) continue;
    seen.add(command);
    lines.push(`/${name} — ${command.description}`);
  }
  for (const info of scope.runtime.kernel.capabilities.list('command'))
    lines.push(`/${info.name} — from plugin ${info.pluginId}`);
  lines.push(...skillHelpLines(scope.runtime, scope.input, reservedNames()));
  return lines.join('\n');
}
