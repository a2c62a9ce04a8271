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
  /** Why no allowlist entry may cover this segment (git in a repository whose config runs code, …). */
  problem?: string;
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
  if (!segment.resolvedPath || segment.problem) return false;
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
/** Never safe besides launchers (they run code by design): sed and jq read files or run commands too. */
const NEVER_SAFE = ['jq', 'sed'];

/** How an option uses the word after it: not at all, always (`-n 5`), or only as `--opt=value`. */
type OptionKind = 'flag' | 'value' | 'optional';

/**
 * The options a safe bin has (GNU coreutils 9), so every argument is judged as the program
 * will read it: a unique prefix of a long option is that option (getopt_long), `--opt=value`
 * carries its value, and short options may be bundled (`-cn5`). An option not listed here,
 * or an ambiguous prefix, is not judged: the segment is not a safe bin.
 */
interface SafeBinProfile {
  short: Record<string, OptionKind>;
  long: Record<string, OptionKind>;
  /** Refused options, by canonical name (`-f`, `--follow`). */
  denied: string[];
  maxPositional: number;
  /** `head -5`, `tail -20`: the obsolete count form. */
  numericShort?: boolean;
}
const F = 'flag' as const;
const V = 'value' as const;
const O = 'optional' as const;
const COMMON_LONG = { help: F, version: F };
const PROFILES: Record<string, SafeBinProfile> = {
  head: {
    short: { n: V, c: V, q: F, v: F, z: F },
    long: { ...COMMON_LONG, lines: V, bytes: V, quiet: F, silent: F, verbose: F, 'zero-terminated': F },
    denied: [],
    maxPositional: 0,
    numericShort: true,
  },
  tail: {
    short: { n: V, c: V, q: F, v: F, z: F, s: V, f: F, F: F },
    long: {
      ...COMMON_LONG,
      lines: V,
      bytes: V,
      quiet: F,
      silent: F,
      verbose: F,
      'zero-terminated': F,
      'sleep-interval': V,
      follow: O,
      retry: F,
      pid: V,
      'max-unchanged-stats': V,
    },
    // Following a file never ends and reads files named later; --pid only matters with it.
    denied: ['-f', '-F', '--follow', '--retry', '--pid', '--max-unchanged-stats'],
    maxPositional: 0,
    numericShort: true,
  },
  cut: {
    short: { b: V, c: V, d: V, f: V, n: F, s: F, z: F },
    long: {
      ...COMMON_LONG,
      bytes: V,
      characters: V,
      delimiter: V,
      fields: V,
      complement: F,
      'only-delimited': F,
      'output-delimiter': V,
      'zero-terminated': F,
    },
    denied: [],
    maxPositional: 0,
  },
  uniq: {
    short: { c: F, d: F, D: F, f: V, i: F, s: V, u: F, w: V, z: F },
    long: {
      ...COMMON_LONG,
      count: F,
      repeated: F,
      'all-repeated': O,
      'skip-fields': V,
      group: O,
      'ignore-case': F,
      'skip-chars': V,
      unique: F,
      'zero-terminated': F,
      'check-chars': V,
    },
    denied: [],
    maxPositional: 0,
  },
  tr: {
    short: { c: F, C: F, d: F, s: F, t: F },
    long: { ...COMMON_LONG, complement: F, delete: F, 'squeeze-repeats': F, 'truncate-set1': F },
    denied: [],
    maxPositional: 2,
  },
  wc: {
    short: { c: F, m: F, l: F, L: F, w: F },
    long: { ...COMMON_LONG, bytes: F, chars: F, lines: F, 'files0-from': V, 'max-line-length': F, words: F, total: V },
    // Reads the files named in another file.
    denied: ['--files0-from'],
    maxPositional: 0,
  },
};
/** A safe bin without a profile: no options at all, since none can be judged. */
const DEFAULT_PROFILE: SafeBinProfile = { short: {}, long: {}, denied: [], maxPositional: 0 };

/**
 * The long option `--name` stands for, as getopt_long reads it: an exact name, else the one
 * option it is a prefix of. Undefined when unknown or ambiguous.
 */
export function resolveLongOption(name: string, known: readonly string[]): string | undefined {
  if (known.includes(name)) return name;
  const candidates = known.filter((option) => option.startsWith(name));
  return name.length > 0 && candidates.length === 1 ? candidates[0] : undefined;
}

/** Anything path-like could be a file to read. */
const pathLike = (word: string) => word.includes('/') || word.startsWith('.') || word.startsWith('~');

/** Do these arguments, read as the program reads them, only filter stdin? */
export function safeBinArgs(args: readonly string[], profile: SafeBinProfile): boolean {
  let positional = 0;
  let optionsEnded = false;
  let i = 0;
  // The value of an option that takes the next word: judged like any word, and used up.
  const nextValue = () => {
    const value = args[++i];
    return value !== undefined && !pathLike(value);
  };
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (pathLike(arg)) return false;
    if (optionsEnded || arg === '-' || !arg.startsWith('-')) {
      if (++positional > profile.maxPositional) return false;
    } else if (arg === '--') {
      optionsEnded = true;
    } else if (arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      const name = resolveLongOption(equals < 0 ? arg.slice(2) : arg.slice(2, equals), Object.keys(profile.long));
      if (!name || profile.denied.includes(`--${name}`)) return false;
      const kind = profile.long[name]!;
      // getopt refuses a value given to a flag; we refuse to guess what happens then.
      if (kind === 'flag' && equals >= 0) return false;
      if (kind === 'value' && equals < 0 && !nextValue()) return false;
    } else if (!(profile.numericShort && /^-\d+$/.test(arg))) {
      // Bundled short options: each letter is an option until one takes a value (the rest, or the next word).
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j]!;
        const kind = profile.short[letter];
        if (!kind || profile.denied.includes(`-${letter}`)) return false;
        if (kind === 'value') {
          if (j === arg.length - 1 && !nextValue()) return false;
          break;
        }
      }
    }
  }
  return true;
}

/** A stdin-only filter from a trusted directory with no file operands: runs in allowlist mode. */
export function isSafeBin(
  segment: Segment,
  safeBins: readonly string[],
  trustedDirs: readonly string[],
  isLauncher: (name: string) => boolean,
): boolean {
  const name = basename(segment.argv[0]!);
  if (segment.problem || !segment.resolvedPath || !safeBins.includes(name)) return false;
  if (isLauncher(name) || NEVER_SAFE.includes(name)) return false;
  if (!trustedDirs.some((dir) => resolve(dir) === dirname(segment.resolvedPath!))) return false;
  return safeBinArgs(segment.argv.slice(1), PROFILES[name] ?? DEFAULT_PROFILE);
}
