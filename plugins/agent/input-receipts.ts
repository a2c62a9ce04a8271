/**
 * OpenClaw's chat.history input receipts. The Control UI names the run ids of its sends
 * (each chat.send's idempotencyKey, which claw uses as the run id) and holds its next queued
 * message until the previous one shows as consumed, so a receipt must say truthfully whether
 * the message has reached the session's transcript, and which entry took it.
 */
import { isMessageEntry } from '../../sdk/agent/index.js';
import type { TranscriptEntry } from '../../sdk/sessions/index.js';
import type { RunRecord } from './runs.js';

export type InputReceipt =
  { runId: string; state: 'pending' } | { runId: string; state: 'consumed'; consumedByEventId: string };

export function inputReceipts(
  runIds: readonly string[],
  run: (runId: string) => RunRecord | undefined,
  entries: readonly TranscriptEntry[],
): { inputReceipts: InputReceipt[]; inputConsumptions: Array<{ runId: string; consumedByEventId: string }> } {
  const receipts: InputReceipt[] = [];
  const last = entries.at(-1);
  const leaf = last && 'id' in last ? last.id : undefined;
  for (const runId of new Set(runIds)) {
    const record = run(runId);
    // A run claw does not remember is left out, as OpenClaw leaves out inputs it has no record of.
    if (!record) continue;
    // A steered message is written by the turn it was steered into, under that turn's id.
    const turn = record.steeredInto ?? runId;
    const line = entries.find(
      (entry) =>
        isMessageEntry(entry) && entry.message.role === 'user' && (entry as { runId?: unknown }).runId === turn,
    );
    if (line && 'id' in line) receipts.push({ runId, state: 'consumed', consumedByEventId: line.id });
    else if (record.status === 'queued' || record.status === 'running') receipts.push({ runId, state: 'pending' });
    // Over without a line of its own (a slash command's reply, or a batch written under another
    // message's id): the transcript as it stood afterwards took it.
    else if (leaf) receipts.push({ runId, state: 'consumed', consumedByEventId: leaf });
  }
  return {
    inputReceipts: receipts,
    inputConsumptions: receipts.flatMap((receipt) =>
      receipt.state === 'consumed' ? [{ runId: receipt.runId, consumedByEventId: receipt.consumedByEventId }] : [],
    ),
  };
}
