/**
 * Keeping a session inside the model's context window. Token counts are estimated at four
 * characters per token. Compaction summarises older turns (persisted in the transcript);
 * pruning trims old tool results in the request only (the transcript is never rewritten).
 */
import type { ChatMessage, ToolPolicyService, ToolResultMessage } from '../../sdk/index.js';
import {
  CHARS_PER_TOKEN,
  estimateTokens,
  type CompactionSettings,
  type PruningSettings,
} from '../../sdk/agent/index.js';

export function messageChars(message: ChatMessage): number {
  if (typeof message.content === 'string') return message.content.length;
  let chars = 0;
  for (const part of message.content) {
    if (part.type === 'text') chars += part.text.length;
    else if (part.type === 'thinking') chars += part.thinking.length;
    else if (part.type === 'toolCall') chars += part.name.length + JSON.stringify(part.arguments).length;
    else if (part.type === 'image') chars += 4800; // roughly what providers charge for an image
  }
  return chars;
}

export function estimateContextTokens(
  systemPrompt: string,
  messages: readonly ChatMessage[],
  toolSchemaChars = 0,
): number {
  return estimateTokens(
    systemPrompt.length + toolSchemaChars + messages.reduce((sum, message) => sum + messageChars(message), 0),
  );
}

/** The estimate above which a memory flush and then compaction run. */
export function compactionThreshold(contextWindow: number, settings: CompactionSettings): number {
  return Math.max(1, contextWindow - settings.reserveTokensFloor - settings.memoryFlush.softThresholdTokens);
}

/**
 * Where compaction cuts: everything before the returned index is summarised. The cut lands
 * on a user message, so a tool call is never separated from its result, and the kept tail
 * holds at most `keepRecentTokens` (but always the last user turn). 0 means nothing to cut.
 */
export function compactionCut(messages: readonly ChatMessage[], keepRecentTokens: number): number {
  const userIndexes = messages.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  if (userIndexes.length < 2) return 0;
  let cut = userIndexes[userIndexes.length - 1]!;
  let kept = messages.slice(cut).reduce((sum, message) => sum + estimateTokens(messageChars(message)), 0);
  for (let i = userIndexes.length - 2; i >= 1; i--) {
    const candidate = userIndexes[i]!;
    const extra = messages
      .slice(candidate, cut)
      .reduce((sum, message) => sum + estimateTokens(messageChars(message)), 0);
    if (kept + extra > keepRecentTokens) break;
    kept += extra;
    cut = candidate;
  }
  return cut;
}

/** Plain-text rendering of turns for the summariser. */
export function renderForSummary(messages: readonly ChatMessage[]): string {
  return messages
    .map((message) => {
      if (message.role === 'user') {
        const text =
          typeof message.content === 'string'
            ? message.content
            : message.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
        return `USER: ${text}`;
      }
      if (message.role === 'assistant') {
        return message.content
          .map((part) =>
            part.type === 'text'
              ? `ASSISTANT: ${part.text}`
              : part.type === 'toolCall'
                ? `ASSISTANT called ${part.name}(${JSON.stringify(part.arguments)})`
                : '',
          )
          .filter(Boolean)
          .join('\n');
      }
      const text = message.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
      return `TOOL ${message.toolName}${message.isError ? ' (error)' : ''}: ${text.length > 2000 ? `${text.slice(0, 2000)}…` : text}`;
    })
    .join('\n\n');
}

export const SUMMARY_SYSTEM_PROMPT =
  "You compress conversations. Write a faithful summary of the conversation below for the assistant to continue from: the user's goals, decisions made, facts learned (names, paths, numbers), what was done with tools and the results, and open questions or next steps. Be specific and concise. Do not add anything that did not happen.";

export function summaryPrompt(transcript: string, previousSummary: string | undefined, instructions?: string): string {
  return [
    previousSummary ? `Earlier summary:\n${previousSummary}\n` : '',
    `Conversation to summarise:\n\n${transcript}`,
    instructions ? `\nFocus: ${instructions}` : '',
  ].join('\n');
}

// ── Pruning (cache-ttl) ────────────────────────────────────────────────────────────

function hasImage(message: ToolResultMessage): boolean {
  return message.content.some((part) => part.type === 'image');
}

/**
 * Trim old tool results in the messages sent to the model (Anthropic prompt-cache aware).
 * Only tool results older than the last `keepLastAssistants` assistant messages are
 * touched; results with images are never touched; user and assistant messages never are.
 * `policy` matches `settings.tools` (the host's "tool-policy" service).
 */
export function pruneToolResults(
  messages: readonly ChatMessage[],
  settings: PruningSettings,
  contextWindowTokens: number,
  policy: Pick<ToolPolicyService, 'layer'>,
): ChatMessage[] {
  const assistants = messages.flatMap((message, index) => (message.role === 'assistant' ? [index] : []));
  if (assistants.length < settings.keepLastAssistants) return [...messages];
  const cutoff = assistants[assistants.length - settings.keepLastAssistants]!;
  const toolAllowed = policy.layer({ allow: settings.tools?.allow, deny: settings.tools?.deny });
  const windowChars = contextWindowTokens * CHARS_PER_TOKEN;
  const out = [...messages];
  const prunable = out
    .map((message, index) => ({ message, index }))
    .filter(
      ({ message, index }) =>
        index < cutoff && message.role === 'toolResult' && !hasImage(message) && toolAllowed(message.toolName),
    ) as Array<{
    message: ToolResultMessage;
    index: number;
  }>;
  const textOf = (message: ToolResultMessage) =>
    message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  let total = out.reduce((sum, message) => sum + messageChars(message), 0);

  if (total / windowChars > settings.softTrimRatio) {
    for (const item of prunable) {
      const text = textOf(item.message);
      if (text.length <= settings.softTrim.maxChars) continue;
      const trimmed = `${text.slice(0, settings.softTrim.headChars)}\n...\n${text.slice(-settings.softTrim.tailChars)}\n[Tool result trimmed: ${text.length} characters originally]`;
      item.message = { ...item.message, content: [{ type: 'text', text: trimmed }] };
      out[item.index] = item.message;
      total -= text.length - trimmed.length;
    }
  }
  const prunableChars = prunable.reduce((sum, item) => sum + textOf(item.message).length, 0);
  if (
    settings.hardClear.enabled &&
    total / windowChars > settings.hardClearRatio &&
    prunableChars >= settings.minPrunableToolChars
  ) {
    for (const item of prunable) {
      if (total / windowChars <= settings.hardClearRatio) break;
      const before = textOf(item.message).length;
      out[item.index] = { ...item.message, content: [{ type: 'text', text: settings.hardClear.placeholder }] };
      total -= before - settings.hardClear.placeholder.length;
    }
  }
  return out;
}
