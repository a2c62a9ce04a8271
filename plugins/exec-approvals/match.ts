/**
 * What an allowlist can judge about a shell command: its top-level segments (`&&`, `||`,
 * `;`, `|`), each one's argv and the executable it resolves to. Anything whose argv the
 * shell would decide at run time (substitution, expansion, globs, redirections, env
 * assignments) cannot be judged and counts as a miss, never a hit.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { AllowlistEntry } from './file.js';

export interface Segment {
  argv: string[];
  /** Absolute path the executable resolves to, when it does. */
  resolvedPath?: string;
}

/** Split into segments of argv; undefined when the shell would decide something at run time. */
export function parseCommand(command: string): string[][] | undefined {
  const segments: string[][] = [];
  let argv: string[] = [];
  let word = '';
  let inWord = false;
  const endWord = () => {
    if (inWord) argv.push(word);
    word = '';
    inWord = false;
  };
  const endSegment = () => {
    endWord();
    if (argv.length === 0) return false;
    segments.push(argv);
    argv = [];
    return true;
  };
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (ch === "'") {
      const close = command.indexOf("'", i + 1);
      if (close < 0) return undefined;
      word += command.slice(i + 1, close);
      inWord = true;
      i = close;
    } else if (ch === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        const c = command[j]!;
        if (c === '$' || c === '`') return undefined;
        if (c === '\\' && j + 1 < command.length) word += command[++j];
        else word += c;
      }
      if (j >= command.length) return undefined;
      inWord = true;
      i = j;
    } else if (ch === '\\') {
      if (i + 1 >= command.length) return undefined;
      word += command[++i];
      inWord = true;
    } else if (ch === ' ' || ch === '\t') {
      endWord();
    } else if (ch === '&' && command[i + 1] === '&') {
      if (!endSegment()) return undefined;
      i++;
    } else if (ch === '|') {
      if (!endSegment()) return undefined;
      if (command[i + 1] === '|') i++;
    } else if (ch === ';' || ch === '\n') {
      if (!endSegment()) return undefined;
    } else if ('$`<>()&*?[{}~!#'.includes(ch)) {
      return undefined;
    } else {
      word += ch;
      inWord = true;
    }
  }
  endWord();
  if (argv.length) segments.push(argv);
  if (segments.length === 0) return undefined;
  // `FOO=bar cmd` changes what cmd does; not judged.
  if (segments.some((seg) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(seg[0]!))) return undefined;
  return segments;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Where argv[0] resolves: a path relative to cwd, or the first match on PATH. */
export function resolveExecutable(name: string, cwd: string, pathEnv: string | undefined): string | undefined {
  if (name.includes('/')) {
    const file = isAbsolute(name) ? name : resolve(cwd, name);
    return executable(file) ? file : undefined;
  }
  for (const dir of (pathEnv ?? '').split(':')) {
    if (!dir || !isAbsolute(dir)) continue;
    const file = join(dir, name);
    if (executable(file)) return file;
  }
  return undefined;
}

export function analyze(command: string, cwd: string, pathEnv: string | undefined): Segment[] | undefined {
  const parsed = parseCommand(command);
  return parsed?.map((argv) => ({ argv, resolvedPath: resolveExecutable(argv[0]!, cwd, pathEnv) }));
}

function globRegex(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (ch === '*') source += '[^/]*';
    else if (ch === '?') source += '[^/]';
    else source += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** Does this allowlist entry cover the segment, run from cwd? */
export function entryMatches(entry: AllowlistEntry, segment: Segment, cwd: string, home: string | undefined): boolean {
  if (!segment.resolvedPath) return false;
  if (entry.cwd !== undefined && resolve(entry.cwd) !== resolve(cwd)) return false;
  const name = segment.argv[0]!;
  const pattern = entry.pattern.startsWith('~/') && home ? join(home, entry.pattern.slice(2)) : entry.pattern;
  const byPath = pattern.includes('/');
  // A bare name only covers commands found through PATH, never ./rg or /tmp/rg.
  if (!byPath && name.includes('/')) return false;
  if (!globRegex(pattern).test(byPath ? segment.resolvedPath : basename(segment.resolvedPath))) return false;
  if (entry.argPattern === undefined) return true;
  return new RegExp(entry.argPattern).test(segment.argv.slice(1).join(' '));
}

export const DEFAULT_SAFE_BINS = ['cut', 'uniq', 'head', 'tail', 'tr', 'wc'];
export const DEFAULT_TRUSTED_DIRS = ['/bin', '/usr/bin'];
/** Never safe: they run code or read files by design. */
const NEVER_SAFE = new Set(['awk', 'sed', 'jq', 'sh', 'bash', 'zsh', 'dash', 'python', 'python3', 'node', 'perl', 'ruby', 'php', 'lua', 'env', 'xargs', 'find']);

interface SafeBinProfile {
  /** Flags that take the next token as their value. */
  valueFlags: string[];
  deniedFlags: string[];
  maxPositional: number;
}
const PROFILES: Record<string, SafeBinProfile> = {
  head: { valueFlags: ['-n', '-c', '--lines', '--bytes'], deniedFlags: [], maxPositional: 0 },
  tail: { valueFlags: ['-n', '-c', '--lines', '--bytes'], deniedFlags: ['-f', '-F', '--follow', '--retry'], maxPositional: 0 },
  cut: { valueFlags: ['-d', '-f', '-c', '-b', '--delimiter', '--fields', '--characters', '--bytes'], deniedFlags: [], maxPositional: 0 },
  uniq: { valueFlags: ['-f', '-s', '-w'], deniedFlags: [], maxPositional: 0 },
  tr: { valueFlags: [], deniedFlags: [], maxPositional: 2 },
  wc: { valueFlags: [], deniedFlags: ['--files0-from'], maxPositional: 0 },
};
const DEFAULT_PROFILE: SafeBinProfile = { valueFlags: [], deniedFlags: [], maxPositional: 0 };

/** A stdin-only filter from a trusted directory with no file operands: runs in allowlist mode. */
export function isSafeBin(segment: Segment, safeBins: readonly string[], trustedDirs: readonly string[]): boolean {
  const name = basename(segment.argv[0]!);
  if (!segment.resolvedPath || !safeBins.includes(name) || NEVER_SAFE.has(name)) return false;
  if (!trustedDirs.some((dir) => resolve(dir) === dirname(segment.resolvedPath!))) return false;
  const profile = PROFILES[name] ?? DEFAULT_PROFILE;
  let positional = 0;
  const args = segment.argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    // Anything path-like could be a file to read.
    if (arg.includes('/') || arg.startsWith('.') || arg.startsWith('~')) return false;
    if (arg.startsWith('-') && arg !== '-') {
      const flag = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
      if (profile.deniedFlags.includes(flag) || profile.deniedFlags.some((denied) => /^-[A-Za-z]$/.test(denied) && /^-[A-Za-z]+$/.test(arg) && arg.includes(denied[1]!))) return false;
      if (profile.valueFlags.includes(arg)) i++;
      continue;
    }
    if (++positional > profile.maxPositional) return false;
  }
  return true;
}
