/**
 * Heap snapshots for the soak: written with v8.writeHeapSnapshot and summed by constructor
 * (objects) or kind (strings, arrays, code), so two snapshots show what grew between them.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

export interface HeapSummary {
  /** "kind:name" → { count, bytes } of self sizes. */
  groups: Map<string, { count: number; bytes: number }>;
  total: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Writes a snapshot of this process's heap into `dir`, sums it and deletes the file. */
export function heapSummary(dir: string, label: string): HeapSummary {
  const file = writeHeapSnapshot(join(dir, `${label}.heapsnapshot`));
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
    const fields = data.snapshot.meta.node_fields;
    const width = fields.length;
    const typeAt = fields.indexOf('type');
    const nameAt = fields.indexOf('name');
    const sizeAt = fields.indexOf('self_size');
    const types = data.snapshot.meta.node_types[0];
    const groups = new Map<string, { count: number; bytes: number }>();
    let total = 0;
    for (let i = 0; i < data.nodes.length; i += width) {
      const type = types[data.nodes[i + typeAt]!]!;
      const size = data.nodes[i + sizeAt]!;
      total += size;
      // Objects by constructor; strings, arrays, code and the rest by kind alone.
      const key = type === 'object' || type === 'closure' ? `${type}:${data.strings[data.nodes[i + nameAt]!]}` : type;
      const group = groups.get(key) ?? { count: 0, bytes: 0 };
      group.count++;
      group.bytes += size;
      groups.set(key, group);
    }
    return { groups, total };
  } finally {
    rmSync(file, { force: true });
  }
}

/** The groups that grew most from `before` to `after`, by bytes. */
export function heapGrowth(
  before: HeapSummary,
  after: HeapSummary,
  top = 8,
): Array<{ key: string; count: number; bytes: number }> {
  const out: Array<{ key: string; count: number; bytes: number }> = [];
  for (const [key, group] of after.groups) {
    const was = before.groups.get(key) ?? { count: 0, bytes: 0 };
    out.push({ key, count: group.count - was.count, bytes: group.bytes - was.bytes });
  }
  return out.sort((a, b) => b.bytes - a.bytes).slice(0, top);
}
