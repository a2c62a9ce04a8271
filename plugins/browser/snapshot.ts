/**
 * Snapshots with element refs (spec §17.3). Playwright's AI-mode aria snapshot gives each
 * element a ref (`e12`, `f1e3` inside frames) that the `aria-ref=` selector resolves until
 * the page navigates; this shapes it per OpenClaw's options: `interactive` (only elements
 * one can act on, flat), `compact` (unnamed structural wrappers dropped), `depth`, and
 * `labels` (a screenshot with each ref drawn on its element, plus the boxes).
 */
import type { Page } from 'playwright-core';

export interface SnapshotOptions {
  interactive?: boolean;
  compact?: boolean;
  depth?: number;
  labels?: boolean;
  selector?: string;
  maxChars?: number;
}

export interface RefInfo {
  role: string;
  name?: string;
}

export interface Annotation {
  ref: string;
  number: number;
  role: string;
  name?: string;
  box: { x: number; y: number; width: number; height: number };
}

export interface PageSnapshot {
  snapshot: string;
  refs: Record<string, RefInfo>;
  stats: { lines: number; chars: number; refs: number; interactive: number };
  truncated: boolean;
  /** With `labels`: the PNG with refs drawn on (the caller saves it) and each ref's box. */
  labeled?: { png: Buffer; annotations: Annotation[] };
}

export const INTERACTIVE_ROLES = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'checkbox',
  'radio',
  'combobox',
  'listbox',
  'option',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'switch',
  'slider',
  'spinbutton',
  'treeitem',
]);
const STRUCTURAL = new Set(['generic', 'group', 'none', 'presentation']);
const DEFAULT_MAX_CHARS = 80_000;

interface Line {
  indent: number;
  text: string;
  role: string;
  name?: string;
  ref?: string;
  box?: Annotation['box'];
}

function parseLine(raw: string): Line | undefined {
  const match = /^(\s*)- (.*)$/.exec(raw);
  if (!match) return undefined;
  const body = match[2]!;
  const head = /^([a-zA-Z/][\w/-]*)(?: "((?:[^"\\]|\\.)*)")?/.exec(body);
  const ref = /\[ref=([^\]]+)\]/.exec(body)?.[1];
  const box = /\s*\[box=(-?[\d.]+),(-?[\d.]+),(-?[\d.]+),(-?[\d.]+)\]/.exec(body);
  const text = box ? body.replace(box[0], '') : body;
  return {
    indent: match[1]!.length / 2,
    text,
    role: head?.[1] ?? '',
    ...(head?.[2] !== undefined ? { name: head[2].replace(/\\(.)/g, '$1') } : {}),
    ...(ref ? { ref } : {}),
    ...(box ? { box: { x: Number(box[1]), y: Number(box[2]), width: Number(box[3]), height: Number(box[4]) } } : {}),
  };
}

/** A structural line that says nothing itself: no name, no text after the colon. */
function isEmptyWrapper(line: Line): boolean {
  return STRUCTURAL.has(line.role) && line.name === undefined && /^[\w-]+(?: \[[^\]]*\])*:?$/.test(line.text);
}

export function shapeSnapshot(
  raw: string,
  options: SnapshotOptions,
): Omit<PageSnapshot, 'labeled'> & { lines: Line[] } {
  const parsed = raw
    .split('\n')
    .map(parseLine)
    .filter((line): line is Line => line !== undefined);
  let kept: Array<{ line: Line; indent: number }>;
  if (options.interactive) {
    // Flat: a control's children (a link's /url) are left out, so its line loses the colon.
    kept = parsed
      .filter((line) => line.ref && INTERACTIVE_ROLES.has(line.role))
      .map((line) => ({ line: { ...line, text: line.text.replace(/:$/, '') }, indent: 0 }));
  } else if (options.compact) {
    // Dropping a wrapper lifts its subtree one level, so the tree stays well formed.
    const removed: number[] = [];
    kept = [];
    for (const line of parsed) {
      while (removed.length && removed[removed.length - 1]! >= line.indent) removed.pop();
      if (isEmptyWrapper(line)) {
        removed.push(line.indent);
        continue;
      }
      kept.push({
        line: { ...line, text: line.text.replace(/ \[cursor=pointer\]/g, '') },
        indent: line.indent - removed.length,
      });
    }
  } else {
    kept = parsed.map((line) => ({ line, indent: line.indent }));
  }
  const refs: Record<string, RefInfo> = {};
  for (const { line } of kept)
    if (line.ref) refs[line.ref] = { role: line.role, ...(line.name !== undefined ? { name: line.name } : {}) };
  let snapshot = kept.map(({ line, indent }) => `${'  '.repeat(indent)}- ${line.text}`).join('\n');
  const max = options.maxChars ?? DEFAULT_MAX_CHARS;
  const truncated = snapshot.length > max;
  if (truncated)
    snapshot = `${snapshot.slice(0, max)}\n[… snapshot truncated at ${max} characters; use --interactive, --depth or --selector for less]`;
  const interactive = kept.filter(({ line }) => line.ref && INTERACTIVE_ROLES.has(line.role)).length;
  return {
    snapshot,
    refs,
    stats: { lines: kept.length, chars: snapshot.length, refs: Object.keys(refs).length, interactive },
    truncated,
    lines: kept.map(({ line }) => line),
  };
}

/**
 * Draws each ref's label on its box. Page code as text: it runs in the page, and claw's
 * build has no DOM types.
 */
const DRAW_LABELS = `(items) => {
  const layer = document.createElement('div');
  layer.id = '__claw_ref_labels';
  layer.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:2147483647';
  for (const item of items) {
    const frame = document.createElement('div');
    frame.style.cssText = 'position:fixed;outline:2px solid #ff5a36;left:' + item.box.x + 'px;top:' + item.box.y + 'px;width:' + item.box.width + 'px;height:' + item.box.height + 'px';
    const tag = document.createElement('span');
    tag.textContent = item.ref;
    tag.style.cssText = 'position:absolute;left:0;top:-14px;font:11px/13px monospace;background:#ff5a36;color:#fff;padding:0 2px';
    frame.appendChild(tag);
    layer.appendChild(frame);
  }
  document.documentElement.appendChild(layer);
}`;
const REMOVE_LABELS = `document.getElementById('__claw_ref_labels')?.remove()`;

/** Overlay the labels, capture the viewport, take the overlay away again. */
async function labeledScreenshot(page: Page, annotations: Annotation[]): Promise<Buffer> {
  await page.evaluate(`(${DRAW_LABELS})(${JSON.stringify(annotations)})`);
  try {
    return await page.screenshot({ type: 'png' });
  } finally {
    await page.evaluate(REMOVE_LABELS).catch(() => undefined);
  }
}

export async function snapshotPage(page: Page, options: SnapshotOptions): Promise<PageSnapshot> {
  const target = options.selector ? page.locator(options.selector).first() : page;
  const raw = await target.ariaSnapshot({
    mode: 'ai',
    ...(options.depth !== undefined ? { depth: options.depth } : {}),
    ...(options.labels ? { boxes: true } : {}),
    timeout: 10_000,
  });
  const { lines, ...shaped } = shapeSnapshot(raw, options);
  if (!options.labels) return shaped;
  // Frame refs' boxes are relative to their frame; only main-frame refs are drawn.
  const annotations = lines
    .filter(
      (line) =>
        line.ref &&
        line.box &&
        /^e\d+$/.test(line.ref) &&
        line.box.width > 0 &&
        (options.interactive || INTERACTIVE_ROLES.has(line.role)),
    )
    .map((line) => ({
      ref: line.ref!,
      number: Number(line.ref!.slice(1)),
      role: line.role,
      ...(line.name !== undefined ? { name: line.name } : {}),
      box: line.box!,
    }));
  return { ...shaped, labeled: { png: await labeledScreenshot(page, annotations), annotations } };
}
