/**
 * A Responses API SSE stream → our events.
 *
 * Every event carries its own `type`. A function call is announced by
 * `response.output_item.added`, grows through `response.function_call_arguments.delta`
 * and is emitted at `response.output_item.done`, when the item is final. The stream ends
 * with `response.completed` (usage), `response.incomplete` (cut short) or
 * `response.failed` / `error`.
 */
import { ModelError, type ModelStreamEvent, type SseEvent, type StopReason, type Usage } from '../../sdk/index.js';
import { eventJson, streamFailure } from './http.js';
import { fallbackCallId, parseToolArguments } from './tool-arguments.js';

interface PendingCall {
  itemId?: string;
  outputIndex?: number;
  callId: string;
  name: string;
  args: string;
}

export async function* parseResponsesStream(
  events: AsyncIterable<SseEvent>,
  provider: string,
): AsyncGenerator<ModelStreamEvent> {
  let pending: PendingCall[] = [];
  let emittedCalls = 0;

  const find = (data: any): PendingCall | undefined =>
    pending.find(
      (call) =>
        (data.item_id !== undefined && call.itemId === data.item_id) ||
        (data.output_index !== undefined && call.outputIndex === data.output_index),
    );

  const emit = (call: PendingCall): ModelStreamEvent => {
    pending = pending.filter((other) => other !== call);
    emittedCalls++;
    return {
      type: 'tool_call',
      id: call.callId || fallbackCallId(),
      name: call.name,
      arguments: parseToolArguments(call.args, call.name, provider),
    };
  };

  for await (const event of events) {
    // OpenAI ends with response.completed alone; some compatible servers add chat's sentinel.
    if (event.data.trim() === '[DONE]') continue;
    const data = eventJson(event, provider);
    const type = data.type ?? event.event;
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof data.delta === 'string' && data.delta !== '') yield { type: 'text_delta', delta: data.delta };
        break;
      // Summaries from OpenAI's models; full reasoning text from open-weight ones (vLLM).
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof data.delta === 'string' && data.delta !== '') yield { type: 'thinking_delta', delta: data.delta };
        break;
      case 'response.reasoning_summary_part.added':
        // Summary parts are separate paragraphs; without a break they run together.
        if (typeof data.summary_index === 'number' && data.summary_index > 0)
          yield { type: 'thinking_delta', delta: '\n\n' };
        break;
      case 'response.output_item.added':
        if (data.item?.type === 'function_call') {
          pending.push({
            itemId: data.item.id,
            outputIndex: data.output_index,
            callId: data.item.call_id ?? '',
            name: data.item.name ?? '',
            args: typeof data.item.arguments === 'string' ? data.item.arguments : '',
          });
        }
        break;
      case 'response.function_call_arguments.delta': {
        const call = find(data);
        if (call && typeof data.delta === 'string') call.args += data.delta;
        break;
      }
      case 'response.function_call_arguments.done': {
        const call = find(data);
        if (call && typeof data.arguments === 'string') call.args = data.arguments;
        break;
      }
      case 'response.output_item.done':
        if (data.item?.type === 'function_call') {
          const call = find({ item_id: data.item.id, output_index: data.output_index }) ?? {
            callId: '',
            name: '',
            args: '',
          };
          if (typeof data.item.call_id === 'string') call.callId = data.item.call_id;
          if (typeof data.item.name === 'string') call.name = data.item.name;
          if (typeof data.item.arguments === 'string') call.args = data.item.arguments;
          if (!pending.includes(call)) pending.push(call);
          yield emit(call);
        }
        break;
      case 'response.completed':
      case 'response.incomplete': {
        for (const call of [...pending]) yield emit(call);
        const response = data.response ?? {};
        const usage = response.usage ? responsesUsage(response.usage) : undefined;
        const incomplete = type === 'response.incomplete' || response.status === 'incomplete';
        yield {
          type: 'done',
          stopReason: responsesStopReason(incomplete, response, emittedCalls),
          ...(usage ? { usage } : {}),
        };
        return;
      }
      case 'response.failed':
        throw streamFailure(provider, data.response?.error ?? { message: 'response failed' });
      case 'error':
        throw streamFailure(provider, data.error ?? data);
      default:
        break;
    }
  }
  // A connection cut mid-stream is a transport failure: retried like a timeout.
  throw new ModelError('timeout', `${provider} stream ended before the response completed`, { provider });
}

function responsesStopReason(incomplete: boolean, response: any, emittedCalls: number): StopReason {
  if (incomplete) return response.incomplete_details?.reason === 'max_output_tokens' ? 'length' : 'stop';
  return emittedCalls > 0 ? 'toolUse' : 'stop';
}

/** `input_tokens` includes cached tokens; `input` counts only the uncached ones. */
function responsesUsage(raw: any): Usage {
  const input = Number(raw.input_tokens) || 0;
  const cached = Number(raw.input_tokens_details?.cached_tokens) || 0;
  const usage: Usage = { input: Math.max(0, input - cached), output: Number(raw.output_tokens) || 0 };
  if (cached > 0) usage.cacheRead = cached;
  return usage;
}
