/**
 * A Messages API SSE stream → our events.
 *
 * Content arrives as indexed blocks (start, deltas, stop). A tool_use block's input is
 * streamed as partial JSON and emitted as one `tool_call` at its block stop. A thinking
 * block's signature arrives as a `signature_delta` just before its stop and is passed on
 * whole, on an empty `thinking_delta` at that stop, so the loop can store it with the
 * thinking it signs. Redacted thinking has no readable text and is not surfaced.
 */
import { ModelError, type ModelStreamEvent, type SseEvent, type StopReason, type Usage } from '../../sdk/index.js';
import { eventJson, streamFailure } from './http.js';
import { parseToolArguments } from '../../sdk/index.js';

type OpenBlock =
  | { kind: 'tool'; id: string; name: string; json: string; initial: Record<string, unknown> }
  | { kind: 'thinking'; signature: string };

export async function* parseMessagesStream(
  events: AsyncIterable<SseEvent>,
  provider: string,
): AsyncGenerator<ModelStreamEvent> {
  const blocks = new Map<number, OpenBlock>();
  const usage: Usage = { input: 0, output: 0 };
  let stopReason: string | undefined;
  let emittedCalls = 0;

  for await (const event of events) {
    const data = eventJson(event, provider);
    switch (data.type ?? event.event) {
      case 'message_start':
        applyUsage(usage, data.message?.usage);
        break;
      case 'content_block_start': {
        const block = data.content_block ?? {};
        if (block.type === 'tool_use') {
          const initial =
            block.input && typeof block.input === 'object' && !Array.isArray(block.input) ? block.input : {};
          blocks.set(data.index, {
            kind: 'tool',
            id: String(block.id ?? ''),
            name: String(block.name ?? ''),
            json: '',
            initial,
          });
        } else if (block.type === 'thinking') {
          blocks.set(data.index, {
            kind: 'thinking',
            signature: typeof block.signature === 'string' ? block.signature : '',
          });
          if (typeof block.thinking === 'string' && block.thinking !== '')
            yield { type: 'thinking_delta', delta: block.thinking };
        } else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          yield { type: 'text_delta', delta: block.text };
        }
        break;
      }
      case 'content_block_delta': {
        const delta = data.delta ?? {};
        const open = blocks.get(data.index);
        if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '')
          yield { type: 'text_delta', delta: delta.text };
        else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking !== '')
          yield { type: 'thinking_delta', delta: delta.thinking };
        else if (delta.type === 'signature_delta' && open?.kind === 'thinking')
          open.signature += String(delta.signature ?? '');
        else if (delta.type === 'input_json_delta' && open?.kind === 'tool')
          open.json += String(delta.partial_json ?? '');
        break;
      }
      case 'content_block_stop': {
        const open = blocks.get(data.index);
        blocks.delete(data.index);
        if (open?.kind === 'tool') {
          const args = open.json.trim() === '' ? open.initial : parseToolArguments(open.json, open.name, provider);
          yield { type: 'tool_call', id: open.id, name: open.name, arguments: args };
          emittedCalls++;
        } else if (open?.kind === 'thinking' && open.signature !== '') {
          yield { type: 'thinking_delta', delta: '', signature: open.signature };
        }
        break;
      }
      case 'message_delta':
        if (typeof data.delta?.stop_reason === 'string') stopReason = data.delta.stop_reason;
        applyUsage(usage, data.usage);
        break;
      case 'message_stop':
        yield done(stopReason, emittedCalls, usage);
        return;
      case 'error':
        throw streamFailure(provider, data.error);
      default:
        break;
    }
  }
  // The final message_stop carries nothing; a stream cut just before it is still complete.
  if (stopReason !== undefined) {
    yield done(stopReason, emittedCalls, usage);
    return;
  }
  // A connection cut mid-stream is a transport failure: retried like a timeout.
  throw new ModelError('timeout', `${provider} stream ended before the message finished`, { provider });
}

function done(stopReason: string | undefined, emittedCalls: number, usage: Usage): ModelStreamEvent {
  return { type: 'done', stopReason: mapStopReason(stopReason, emittedCalls), usage };
}

function mapStopReason(reason: string | undefined, emittedCalls: number): StopReason {
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'length';
  if (reason === 'tool_use' || emittedCalls > 0) return 'toolUse';
  return 'stop';
}

/**
 * message_start reports input and cache counts; message_delta reports the cumulative
 * output (and, on newer API versions, final input and cache counts), so later values win.
 * `input_tokens` excludes cached tokens, which are reported separately.
 */
function applyUsage(usage: Usage, raw: any): void {
  if (!raw || typeof raw !== 'object') return;
  if (typeof raw.input_tokens === 'number') usage.input = raw.input_tokens;
  if (typeof raw.output_tokens === 'number') usage.output = raw.output_tokens;
  if (typeof raw.cache_read_input_tokens === 'number' && raw.cache_read_input_tokens > 0)
    usage.cacheRead = raw.cache_read_input_tokens;
  if (typeof raw.cache_creation_input_tokens === 'number' && raw.cache_creation_input_tokens > 0)
    usage.cacheWrite = raw.cache_creation_input_tokens;
}
