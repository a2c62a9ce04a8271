/**
 * The tool calls of one assistant message run together, as OpenClaw runs them: at most
 * `limit` at once, started in call order, and their results handed back in call order
 * as soon as every earlier call has finished (the transcript and the next request pair
 * results with calls by position as well as by id). A `start` gate that says no (the run
 * was aborted, a steering message arrived) stops further calls from starting; those that
 * never started settle last, in order, with no result.
 */

/** How many tool calls of one message may run at the same time. */
export const MAX_PARALLEL_TOOL_CALLS = 4;

export async function runToolBatch<T, R>(
  items: readonly T[],
  limit: number,
  hooks: {
    start: (item: T, index: number) => boolean;
    run: (item: T, index: number) => Promise<R>;
    settle: (item: T, index: number, result: R | undefined) => void;
  },
): Promise<void> {
  const done: Array<{ value?: R } | undefined> = new Array(items.length);
  let next = 0;
  let settled = 0;
  let stopped = false;
  const flush = () => {
    while (settled < items.length && done[settled]) {
      hooks.settle(items[settled]!, settled, done[settled]!.value);
      settled++;
    }
  };
  const worker = async () => {
    while (!stopped && next < items.length) {
      const index = next;
      if (!hooks.start(items[index]!, index)) {
        stopped = true;
        return;
      }
      next++;
      const value = await hooks.run(items[index]!, index);
      done[index] = { value };
      flush();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  for (let index = next; index < items.length; index++) done[index] = {};
  flush();
}
