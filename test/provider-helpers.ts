/** Reading a provider's event stream in tests. */
import { isModelError, type ModelError, type ModelStreamEvent } from '../sdk/index.js';

export async function collectFrom(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The ModelError a promise rejects with (anything else fails the test). */
export async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isModelError(error)) throw new Error(`expected a ModelError, got ${String(error)}`);
  return error;
}

export const joined = (events: ModelStreamEvent[], type: 'text_delta' | 'thinking_delta') =>
  events
    .filter((event): event is Extract<ModelStreamEvent, { type: typeof type }> => event.type === type)
    .map((event) => event.delta)
    .join('');
export const toolCalls = (events: ModelStreamEvent[]) =>
  events.filter((event): event is Extract<ModelStreamEvent, { type: 'tool_call' }> => event.type === 'tool_call');
export const last = (events: ModelStreamEvent[]) => events[events.length - 1];
