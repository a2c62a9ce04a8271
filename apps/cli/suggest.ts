/** "Did you mean …?" for a mistyped command or flag: the closest known word by edit distance. */

/** Levenshtein distance with a swap of two neighbours counted as one edit ("pluigns" → "plugins"). */
function distance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/**
 * The choice `word` most likely meant: one it starts (a word cut short: "--al" → "--all",
 * before "--at"), else one within a third of its letters (at least one edit, at most two);
 * the first of equally close ones. Nothing when no choice is that close: a wild guess helps
 * less than the help text.
 */
export function closest(word: string, choices: readonly string[]): string | undefined {
  const bare = word.replace(/^-+/, '');
  const allowed = Math.min(2, Math.max(1, Math.floor(bare.length / 3)));
  let best: { choice: string; cost: number } | undefined;
  for (const choice of choices) {
    if (choice === word) continue;
    const cost = bare.length >= 2 && choice.replace(/^-+/, '').startsWith(bare) ? 0.5 : distance(word, choice);
    if (cost <= allowed && (!best || cost < best.cost)) best = { choice, cost };
  }
  return best?.choice;
}
