/**
 * A Chat Completions SSE stream → our events.
 *
 * Tool calls arrive as numbered fragments (id and name first, then argument text in
 * pieces); they are held until the choice finishes and emitted whole, in index order.
 * Usage comes in a final chunk with no choices (stream_options.include_usage).
 */
import { ModelError, type ModelStreamEvent, type SseEvent, type StopReason, type Usage } from '../../sdk/index.js';
import { eventJson, streamFailure } from './http.js';
import { fallbackCallId, parseToolArguments } from './tool-arguments.js';

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

export async function* parseChatStream(
  events: AsyncIterable<SseEvent>,
  provider: string,
): AsyncGenerator<ModelStreamEvent> {
  const calls = new Map<number, PendingCall>();
  let finishReason: string | undefined;
  let sawDone = false;
  let emittedCalls = 0;
  let usage: Usage | undefined;

  const flushCalls = function* (): Generator<ModelStreamEvent> {
    for (const key of [...calls.keys()].sort((a, b) => a - b)) {
      const call = calls.get(key)!;
      yield {
        type: 'tool_call',
        id: call.id || fallbackCallId(),
        name: call.name,
        arguments: parseToolArguments(call.args, call.name, provider),
      };
      emittedCalls++;
    }
    calls.clear();
  };

  for await (const event of events) {
    if (event.data.trim() === '[DONE]') {
      sawDone = true;
      break;
    }
    const chunk = eventJson(event, provider);
    if (chunk.error) throw streamFailure(provider, chunk.error);
    if (chunk.usage) usage = chatUsage(chunk.usage);
    const choices: any[] = Array.isArray(chunk.choices) ? chunk.choices : [];
    // We never ask for n > 1; other choices would be a server quirk.
    for (const choice of choices.filter((c) => (c?.index ?? 0) === 0)) {
      const delta = choice.delta ?? {};
      // `reasoning_content`: DeepSeek, vLLM, llama.cpp; `reasoning`: Ollama, OpenRouter.
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') yield { type: 'thinking_delta', delta: reasoning };
      if (typeof delta.content === 'string' && delta.content !== '') yield { type: 'text_delta', delta: delta.content };
      if (Array.isArray(delta.tool_calls)) for (const fragment of delta.tool_calls) addFragment(calls, fragment);
      if (choice.finish_reason) {
        finishReason = choice.finish_reason;
        yield* flushCalls();
      }
    }
  }
  if (finishReason === undefined && !sawDone) {
    // A connection cut mid-stream is a transport failure: retried like a timeout.
    throw new ModelError('timeout', `${provider} stream ended before the model finished`, { provider });
  }
  yield* flushCalls();
  yield { type: 'done', stopReason: chatStopReason(finishReason, emittedCalls), ...(usage ? { usage } : {}) };
}

function addFragment(calls: Map<number, PendingCall>, fragment: any): void {
  const key = fragmentKey(calls, fragment);
  let call = calls.get(key);
  if (!call) {
    call = { id: '', name: '', args: '' };
    calls.set(key, call);
  }
  if (typeof fragment.id === 'string' && fragment.id !== '' && call.id === '') call.id = fragment.id;
  const fn = fragment.function ?? {};
  // Some servers repeat the name on every fragment; it is never split.
  if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name;
  if (typeof fn.arguments === 'string') call.args += fn.arguments;
  else if (fn.arguments && typeof fn.arguments === 'object') call.args = JSON.stringify(fn.arguments);
}

/** Servers that omit `index` send each call whole, or continue the last one without an id. */
function fragmentKey(calls: Map<number, PendingCall>, fragment: any): number {
  if (typeof fragment.index === 'number') return fragment.index;
  const keys = [...calls.keys()];
  const last = keys.length > 0 ? Math.max(...keys) : -1;
  if (typeof fragment.id === 'string' && fragment.id !== '') {
    const existing = keys.find((key) => calls.get(key)!.id === fragment.id);
    return existing ?? last + 1;
  }
  return last >= 0 ? last : 0;
}

// Some servers (older Ollama) report "stop" after tool calls; the calls are what matter.
function chatStopReason(finishReason: string | undefined, emittedCalls: number): StopReason {
  if (finishReason === 'length') return 'length';
  if (finishReason === 'tool_calls' || finishReason === 'function_call' || emittedCalls > 0) return 'toolUse';
  return 'stop';
}

/** `prompt_tokens` includes cached tokens; `input` counts only the uncached ones. */
function chatUsage(raw: any): Usage {
  const prompt = Number(raw.prompt_tokens) || 0;
  const cached = Number(raw.prompt_tokens_details?.cached_tokens) || 0;
  const usage: Usage = { input: Math.max(0, prompt - cached), output: Number(raw.completion_tokens) || 0 };
  if (cached > 0) usage.cacheRead = cached;
  return usage;
}
