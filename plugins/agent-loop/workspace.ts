/**
 * The workspace files a turn injects into the system prompt (bootstrap files, MEMORY.md,
 * the daily memory files), each capped with a marker.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Injected into every session, in this order. MEMORY.md is added for the main session only. */
export const BOOTSTRAP_FILES = ['AGENTS.md', 'SOUL.md', 'TOOLS.md', 'IDENTITY.md', 'USER.md', 'BOOTSTRAP.md'] as const;

export interface BootstrapFile {
  name: string;
  path: string;
  status: 'ok' | 'truncated' | 'missing' | 'empty';
  rawChars: number;
  injectedChars: number;
  /** Text as injected (truncated with a marker when needed); absent when missing or empty. */
  content?: string;
}

export function truncationMarker(name: string, rawChars: number, maxChars: number): string {
  return `\n\n[… ${name} truncated: showing ${maxChars} of ${rawChars} characters …]`;
}

/** `YYYY-MM-DD` of a date in a time zone (the host's when none is given). */
export function dayStamp(date: Date, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(date);
  const get = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** The daily memory files read at session start: yesterday's and today's. */
export function dailyMemoryNames(now: Date, timeZone?: string): string[] {
  return [dayStamp(new Date(now.getTime() - 86_400_000), timeZone), dayStamp(now, timeZone)].map(
    (day) => `memory/${day}.md`,
  );
}

function readCapped(workspaceDir: string, name: string, maxChars: number, exists: boolean): BootstrapFile {
  const path = join(workspaceDir, name);
  let raw: string;
  try {
    if (!exists) throw new Error('missing');
    raw = readFileSync(path, 'utf8');
  } catch {
    return { name, path, status: 'missing', rawChars: 0, injectedChars: 0 };
  }
  if (raw.trim() === '') return { name, path, status: 'empty', rawChars: raw.length, injectedChars: 0 };
  if (raw.length <= maxChars)
    return { name, path, status: 'ok', rawChars: raw.length, injectedChars: raw.length, content: raw };
  const content = raw.slice(0, maxChars) + truncationMarker(name, raw.length, maxChars);
  return { name, path, status: 'truncated', rawChars: raw.length, injectedChars: content.length, content };
}

/**
 * The files injected into the system prompt: the bootstrap files (a missing one gets a
 * marker), MEMORY.md in the main session only, and yesterday's and today's daily memory
 * files when they exist (in every session: they hold running context, not private notes).
 */
export function loadBootstrapFiles(
  workspaceDir: string,
  options: { mainSession: boolean; maxChars: number; now?: Date; timeZone?: string },
): BootstrapFile[] {
  const names: string[] = [...BOOTSTRAP_FILES];
  if (options.mainSession)
    names.push(
      existsSync(join(workspaceDir, 'MEMORY.md')) || !existsSync(join(workspaceDir, 'memory.md'))
        ? 'MEMORY.md'
        : 'memory.md',
    );
  // One directory listing instead of a failed open per missing file (every turn reads these).
  let present: Set<string>;
  try {
    present = new Set(readdirSync(workspaceDir));
  } catch {
    present = new Set();
  }
  const files = names.map((name) => readCapped(workspaceDir, name, options.maxChars, present.has(name)));
  if (present.has('memory')) {
    for (const name of dailyMemoryNames(options.now ?? new Date(), options.timeZone)) {
      if (existsSync(join(workspaceDir, name))) files.push(readCapped(workspaceDir, name, options.maxChars, true));
    }
  }
  return files;
}

export function isWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
