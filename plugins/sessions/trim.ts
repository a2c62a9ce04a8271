/**
 * Truncating a transcript to its last lines (`sessions.compact {maxLines}`, OpenClaw's
 * `openclaw sessions compact --max-lines`): the cheap alternative to a summary when a
 * session is wedged or too big. The header stays the first line (readers and the next
 * append need it), followed by the newest `maxLines - 1` entries.
 *
 * The file is replaced whole (temp + rename), never rewritten in place, so a crash leaves
 * either the old transcript or the new one. The caller holds the session lock so no run
 * appends meanwhile.
 */
import { writeFileAtomic } from '../../sdk/index.js';
import { isCompactionEntry, type TranscriptEntry } from '../../sdk/sessions/index.js';
import { isSessionHeader, readTranscriptFile } from './transcript.js';

export type TrimOutcome =
  { compacted: true; kept: number } | { compacted: false; kept: number } | { compacted: false; reason: string };

export function trimTranscript(file: string, maxLines: number): TrimOutcome {
  const limit = Math.max(1, Math.floor(maxLines));
  const { entries } = readTranscriptFile(file);
  if (entries.length === 0) return { compacted: false, reason: 'no transcript' };
  if (entries.length <= limit) return { compacted: false, kept: entries.length };
  const [header, ...rest] = entries;
  if (!isSessionHeader(header!))
    return { compacted: false, reason: 'the transcript does not start with a session header' };
  const tail = limit > 1 ? rest.slice(-(limit - 1)) : [];
  const lines = [header!, ...relink(tail)].map((entry) => `${JSON.stringify(entry)}\n`);
  writeFileAtomic(file, lines.join(''));
  return { compacted: true, kept: lines.length };
}

/**
 * The kept entries no longer reach back to what was cut: the first one's parent becomes
 * null, and a compaction whose first kept entry was cut now keeps from the first entry
 * that survived (everything retained before it was inside its kept range).
 */
function relink(tail: TranscriptEntry[]): TranscriptEntry[] {
  const retained = new Set(
    tail.map((entry) => (entry as { id?: unknown }).id).filter((id): id is string => typeof id === 'string'),
  );
  const firstId = (tail[0] as { id?: string } | undefined)?.id;
  return tail.map((entry, index) => {
    let next = { ...entry } as TranscriptEntry & { parentId?: unknown };
    if (typeof next.parentId === 'string' && !retained.has(next.parentId)) next = { ...next, parentId: null };
    if (isCompactionEntry(next) && next.firstKeptEntryId && !retained.has(next.firstKeptEntryId)) {
      next = { ...next, firstKeptEntryId: index > 0 && firstId ? firstId : null };
    }
    return next;
  });
}
