/**
 * OpenClaw's transcripts are trees: each entry names its `parentId`, and navigating to an
 * earlier point (rewind, branch switch) appends a `{type: "leaf", targetId}` control that
 * makes `targetId` the active leaf; later entries grow from there. Only the path from the
 * root to the final active leaf is the conversation the user sees, so only that path is
 * imported: an abandoned branch must not reach claw's model context.
 */

/** Entries that move the active leaf when appended (OpenClaw's canonical entry types). */
const CANONICAL = new Set([
  'message',
  'thinking_level_change',
  'model_change',
  'compaction',
  'reset',
  'branch_summary',
  'custom',
  'custom_message',
  'label',
  'session_info',
]);

type Entry = Record<string, unknown>;

interface Node {
  entry: Entry;
  parent: string | null;
  control: boolean;
}

const idOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/**
 * The entries on the active branch, in order, each re-linked to the one before it. A
 * transcript without leaf controls is linear (every append extended the leaf) and comes
 * back unchanged.
 */
export function activeBranch(entries: Entry[]): { entries: Entry[]; dropped: number } {
  if (!entries.some((entry) => entry.type === 'leaf')) return { entries, dropped: 0 };
  const nodes = new Map<string, Node>();
  let leaf: string | null = null;
  for (const entry of entries) {
    const id = idOf(entry.id);
    if (!id) continue;
    if (entry.type === 'leaf') {
      const target = entry.targetId === null ? null : (idOf(entry.targetId) ?? null);
      nodes.set(id, { entry, parent: target, control: true });
      leaf = target;
      continue;
    }
    // An entry without parentId was appended at the leaf of its time.
    const parent = 'parentId' in entry ? (entry.parentId === null ? null : (idOf(entry.parentId) ?? null)) : leaf;
    nodes.set(id, { entry, parent, control: false });
    if (CANONICAL.has(String(entry.type)) && entry.appendMode !== 'side') leaf = id;
  }
  const path: Entry[] = [];
  const seen = new Set<string>();
  for (let id = leaf; id !== null && !seen.has(id);) {
    seen.add(id);
    const node = nodes.get(id);
    if (!node) break;
    if (!node.control) path.push(node.entry);
    id = node.parent;
  }
  path.reverse();
  let previous: string | null = null;
  const linked = path.map((entry) => {
    const relinked = { ...entry, parentId: previous };
    previous = idOf(entry.id) ?? previous;
    return relinked;
  });
  const kept = entries.filter((entry) => entry.type !== 'leaf').length;
  return { entries: linked, dropped: kept - linked.length };
}
