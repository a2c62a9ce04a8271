/**
 * Directives (`/think`, `/verbose`, `/reasoning`, `/model`, `/queue`) found in a message:
 * parsed and stripped here; commands.ts decides whether they persist on the session (a
 * message made only of directives) or apply to this message alone.
 */
import type { ThinkingLevel } from '../../sdk/index.js';
import {
  durationMs,
  type ReasoningLevel,
  type SessionQueueOverride,
  type VerboseLevel,
} from '../../sdk/agent/index.js';
import { normalizeQueueMode, type DropPolicy, type QueueMode } from './queue-settings.js';

export interface QueueDirective extends SessionQueueOverride {
  reset?: boolean;
}

export interface Directives {
  /** The message with every directive removed. */
  rest: string;
  thinking?: ThinkingLevel;
  verbose?: VerboseLevel;
  reasoning?: ReasoningLevel;
  /** What followed `/model` (unresolved: an alias, a ref, a provider name, with an optional @profile). */
  model?: string;
  queue?: QueueDirective;
  /** Directive names seen, in order (also those without a usable argument). */
  found: Array<'think' | 'verbose' | 'reasoning' | 'model' | 'queue'>;
}

const DIRECTIVE_NAMES: Record<string, Directives['found'][number]> = {
  think: 'think',
  thinking: 'think',
  t: 'think',
  verbose: 'verbose',
  v: 'verbose',
  reasoning: 'reasoning',
  reason: 'reasoning',
  model: 'model',
  queue: 'queue',
};

const THINKING_LEVELS: Record<string, ThinkingLevel> = {
  off: 'off',
  none: 'off',
  minimal: 'minimal',
  min: 'minimal',
  low: 'low',
  on: 'low',
  medium: 'medium',
  med: 'medium',
  high: 'high',
  max: 'high',
  xhigh: 'high',
};

const QUEUE_MODES = new Set(['steer', 'followup', 'collect', 'steer-backlog', 'steer+backlog', 'interrupt', 'queue']);

/**
 * Find and remove directives. Arguments are taken only when they are valid for the
 * directive (`/think what is X` keeps "what is X" for the model), except `/model`, whose
 * argument is any single word.
 */
export function parseDirectives(text: string): Directives {
  const tokens = text.split(/(\s+)/);
  const out: Directives = { rest: '', found: [] };
  const kept: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const match = /^\/([a-z]+)(?::(\S*))?$/i.exec(token);
    const name = match ? DIRECTIVE_NAMES[match[1]!.toLowerCase()] : undefined;
    if (!match || !name) {
      kept.push(token);
      continue;
    }
    out.found.push(name);
    // The argument is either glued on with ":" or the next word.
    const glued = match[2] || undefined;
    const nextWordIndex = tokens[i + 1] !== undefined && /^\s+$/.test(tokens[i + 1]!) ? i + 2 : -1;
    const nextWord = nextWordIndex > 0 ? tokens[nextWordIndex] : undefined;
    const take = (accept: (word: string) => boolean): string | undefined => {
      if (glued !== undefined) return accept(glued) ? glued : undefined;
      if (nextWord !== undefined && nextWord !== '' && accept(nextWord)) {
        i = nextWordIndex;
        return nextWord;
      }
      return undefined;
    };
    if (name === 'think') {
      const level = take((word) => word.toLowerCase() in THINKING_LEVELS);
      if (level) out.thinking = THINKING_LEVELS[level.toLowerCase()];
    } else if (name === 'verbose') {
      const level = take((word) => ['on', 'off', 'full'].includes(word.toLowerCase()));
      if (level) out.verbose = level.toLowerCase() as VerboseLevel;
    } else if (name === 'reasoning') {
      const level = take((word) => ['on', 'off', 'stream'].includes(word.toLowerCase()));
      if (level) out.reasoning = level.toLowerCase() as ReasoningLevel;
    } else if (name === 'model') {
      const model = take(() => true);
      if (model) out.model = model;
    } else if (name === 'queue') {
      const queue: QueueDirective = {};
      const mode = take(
        (word) =>
          QUEUE_MODES.has(word.toLowerCase()) || word.toLowerCase() === 'reset' || word.toLowerCase() === 'default',
      );
      if (mode) {
        const lower = mode.toLowerCase();
        if (lower === 'reset' || lower === 'default') queue.reset = true;
        else queue.mode = normalizeQueueMode(lower) as QueueMode;
      }
      // Options: debounce:2s cap:25 drop:summarize, each the next word.
      for (;;) {
        const option = tokens[i + 2];
        if (tokens[i + 1] === undefined || !/^\s+$/.test(tokens[i + 1]!) || !option) break;
        const parsed = /^(debounce|cap|drop):(\S+)$/i.exec(option);
        if (!parsed) break;
        const key = parsed[1]!.toLowerCase();
        const value = parsed[2]!;
        if (key === 'debounce') queue.debounceMs = durationMs(value, NaN);
        else if (key === 'cap') queue.cap = Number(value);
        else if (key === 'drop') queue.drop = value.toLowerCase() as DropPolicy;
        i += 2;
      }
      if (Object.keys(queue).length > 0) out.queue = queue;
    }
    // Drop the whitespace that separated this directive from what came before.
    if (kept.length > 0 && /^\s+$/.test(kept[kept.length - 1]!)) kept.pop();
  }
  out.rest = kept.join('').trim();
  return out;
}

/** Problems with a `/queue` directive's options, in words. */
export function queueProblems(queue: QueueDirective): string[] {
  const problems: string[] = [];
  if (queue.debounceMs !== undefined && !(Number.isFinite(queue.debounceMs) && queue.debounceMs >= 0))
    problems.push('debounce must be a duration such as 500ms, 2s or 1m');
  if (queue.cap !== undefined && !(Number.isInteger(queue.cap) && queue.cap >= 1))
    problems.push('cap must be a whole number ≥ 1');
  if (queue.drop !== undefined && !['old', 'new', 'summarize'].includes(queue.drop))
    problems.push('drop must be old, new or summarize');
  return problems;
}
