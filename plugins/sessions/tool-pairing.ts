/**
 * Tool-call / tool-result pairing. Providers reject a request in which an assistant's tool
 * call has no result before the next turn, or a result answers no call: one run stopped
 * between a model's tool calls and their results (an abort, /stop, a timeout, a crash)
 * would otherwise make every later request of the session fail.
 *
 * Two repairs. After a run stops, the turn appends a synthetic "aborted" result for each
 * call that never got one (`danglingToolCalls` finds them), so the transcript itself stays
 * valid. And whenever history is read for the model, `repairToolPairing` mends whatever
 * older damage remains, in memory only: each result is kept with the call it answers
 * (moved there when it landed later, as long as exactly one open call can own it), extra
 * or orphaned results are dropped, and a call still without a result gets a synthetic one.
 */
import type { AssistantMessage, ChatMessage, ToolCallPart, ToolResultMessage } from '../../sdk/index.js';

export const ABORTED_TOOL_RESULT = 'aborted: the run stopped before this tool call returned a result.';

export function abortedToolResult(call: Pick<ToolCallPart, 'id' | 'name'>, timestamp = Date.now()): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: 'text', text: ABORTED_TOOL_RESULT }],
    isError: true,
    timestamp,
  };
}

function toolCallsOf(message: AssistantMessage): ToolCallPart[] {
  return Array.isArray(message.content)
    ? message.content.filter((part): part is ToolCallPart => part.type === 'toolCall')
    : [];
}

const idOf = (id: unknown): string => (typeof id === 'string' ? id.trim() : '');

/**
 * The calls of the last assistant message that have no result yet, when nothing but tool
 * results follows it: what a stopped run leaves open at the end of a transcript.
 */
export function danglingToolCalls(messages: readonly ChatMessage[]): ToolCallPart[] {
  const answered = new Set<string>();
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'toolResult') {
      answered.add(idOf(message.toolCallId));
      continue;
    }
    if (message.role !== 'assistant') return [];
    return toolCallsOf(message).filter((call) => !answered.has(idOf(call.id)));
  }
  return [];
}

/**
 * The fast check, run on every turn's whole history: each assistant's well-formed calls
 * answered right after it, in call order, and nothing else. No allocation per message.
 */
function pairedInOrder(messages: readonly ChatMessage[]): boolean {
  const calls: ToolCallPart[] = [];
  let answered = 0;
  for (const message of messages) {
    if (message.role === 'toolResult') {
      const call = calls[answered];
      if (!call || idOf(call.id) !== idOf(message.toolCallId)) return false;
      answered++;
      continue;
    }
    if (answered < calls.length) return false;
    if (calls.length > 0) calls.length = 0;
    answered = 0;
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type !== 'toolCall') continue;
      if (!wellFormed(part)) return false;
      calls.push(part);
    }
  }
  return answered === calls.length;
}

/** A call the model can be shown: providers reject calls without an id, a name or an arguments object. */
function wellFormed(call: ToolCallPart): boolean {
  return (
    idOf(call.id) !== '' &&
    typeof call.name === 'string' &&
    call.name !== '' &&
    typeof call.arguments === 'object' &&
    call.arguments !== null &&
    !Array.isArray(call.arguments)
  );
}

/**
 * History with every tool call answered exactly once, right after its assistant message.
 * Returns the input array itself when nothing needed mending (the common case), so a
 * valid history costs one pass and keeps the prompt cache's prefix byte-identical.
 */
export function repairToolPairing(messages: readonly ChatMessage[]): ChatMessage[] {
  if (pairedInOrder(messages)) return messages as ChatMessage[];
  interface Occurrence {
    id: string;
    call: ToolCallPart;
    result?: ToolResultMessage;
  }
  // Every call occurrence, per assistant message; providers may reuse ids on later turns.
  const occurrencesAt = new Map<number, Occurrence[]>();
  const open = new Map<string, Occurrence[]>();
  let lastAssistant = -1;
  let changed = false;
  const cleaned = new Map<number, AssistantMessage | null>();

  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      const calls = toolCallsOf(message);
      const good = calls.filter(wellFormed);
      if (good.length !== calls.length) {
        changed = true;
        const content = message.content.filter((part) => part.type !== 'toolCall' || wellFormed(part));
        // A message that was nothing but broken calls goes altogether (an empty one is rejected too).
        cleaned.set(index, content.length ? { ...message, content } : null);
      }
      lastAssistant = index;
      const list = good.map((call) => ({ id: idOf(call.id), call }));
      occurrencesAt.set(index, list);
      for (const occurrence of list) open.set(occurrence.id, [...(open.get(occurrence.id) ?? []), occurrence]);
      return;
    }
    if (message.role !== 'toolResult') {
      lastAssistant = -1; // Results after this are no longer adjacent to any call.
      return;
    }
    const id = idOf(message.toolCallId);
    const candidates = (open.get(id) ?? []).filter((occurrence) => !occurrence.result);
    // The call in the assistant message it directly follows owns it; otherwise only an unambiguous one.
    const adjacent = (occurrencesAt.get(lastAssistant) ?? []).find(
      (occurrence) => occurrence.id === id && !occurrence.result,
    );
    const owner = adjacent ?? (candidates.length === 1 ? candidates[0] : undefined);
    if (owner) owner.result = message;
    else changed = true;
  });

  // Anything out of place: a result not straight after its call, or a call without one.
  if (!changed) {
    let expected: Occurrence[] = [];
    for (const [index, message] of messages.entries()) {
      if (message.role === 'toolResult') {
        const next = expected.shift();
        if (!next || next.result !== message) {
          changed = true;
          break;
        }
        continue;
      }
      if (expected.length > 0) {
        changed = true;
        break;
      }
      if (message.role === 'assistant') expected = [...(occurrencesAt.get(index) ?? [])];
    }
    if (expected.length > 0) changed = true;
  }
  if (!changed) return messages as ChatMessage[];

  const out: ChatMessage[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'toolResult') return;
    if (message.role !== 'assistant') {
      out.push(message);
      return;
    }
    const kept = cleaned.has(index) ? cleaned.get(index) : message;
    if (kept) out.push(kept);
    for (const occurrence of occurrencesAt.get(index) ?? []) {
      out.push(occurrence.result ?? abortedToolResult(occurrence.call, message.timestamp));
    }
  });
  return out;
}
