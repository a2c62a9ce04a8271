/**
 * One redaction layer for everything that leaves the process: logs, tool results,
 * transcripts, channel status, CLI errors and gateway frames all pass through a Redactor.
 * The host builds it (clawPolicy's `redactor`); plugins use the kernel's, `api.kernel.redact`.
 *
 * It masks three kinds of text:
 *   - known secrets: strings under secret-named config keys (`botToken`, `apiKey`, …), the
 *     values of secret-named environment variables, and anything registered with `add()`;
 *   - secret-shaped text: vendor token formats, bearer/authorization headers, PEM private
 *     keys, URL credentials, `token=`/`password:` assignments;
 *   - the deployment's own patterns, `logging.redactPatterns` (OpenClaw's key).
 *
 * Known secrets and the built-in shapes are one case-insensitive regex, so `text()` is a
 * single pass; each user pattern keeps its own flags and so gets a pass of its own.
 */
import { formatPath, type PathSegment, type Redactor } from '../kernel/index.js';
import { isSecretKey, MASK } from '../sdk/redact.js';

export interface RedactorOptions {
  /** The resolved config: secret-named keys anywhere in it, and `logging.redactPatterns`. */
  config: Record<string, unknown>;
  env: Record<string, string | undefined>;
  /** Patterns beyond `logging.redactPatterns` (same syntax). */
  patterns?: string[];
}

/** Shorter configured values are left alone: masking "abcd" everywhere would wreck text, and showing 4 chars is the limit anyway. */
const MIN_SECRET_LENGTH = 5;
/**
 * Env values are picked by name alone, so they need more to go on: at least 8 characters,
 * and not a plain word (`GATEWAY_AUTH_MODE=password` must not mask "password" everywhere).
 */
const MIN_ENV_SECRET_LENGTH = 8;
const SECRET_ENV_NAME = /(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;
const PLAIN_WORD = /^(?:[a-z]+|[A-Z]+)$/;

/**
 * Vendor key prefixes. The combined pattern ignores case (it must catch "Bearer",
 * "Authorization", "PASSWORD="), so a match of one of these is kept only when its prefix is
 * spelt as the vendor spells it: "SK-…" at the start of a random token is no key.
 */
const VENDOR_PATTERNS: readonly string[] = [
  String.raw`(?<![\w-])(sk-(?:ant-|proj-)?)[\w-]{20,}`,
  String.raw`(?<![\w-])(gh[opsur]_|github_pat_)\w{20,}`,
  String.raw`(?<![\w-])(xox[abprs]-)[\w-]{10,}`,
  String.raw`(?<![\w-])(AKIA)[0-9A-Z]{16}(?![\w-])`,
  String.raw`(?<![\w-])(AIza)[\w-]{35}(?![\w-])`,
];
const VENDOR_PREFIX = /^(?:sk-(?:ant-|proj-)?|gh[opsur]_|github_pat_|xox[abprs]-|AKIA|AIza)$/;

/** The names of an assignment whose value is a secret: token=…, apiKey: …, PASSWORD=…. */
const ASSIGNED_KEY = String.raw`token|api[_-]?key|secret|passw(?:or)?d`;

/**
 * Secret shapes. Each has exactly one capture group: the structural prefix that stays
 * visible (`bot123456:`, `Bearer `, `sk-ant-`), empty when nothing is kept. Prefixed tokens
 * must not follow a word character or "-", so a random base64url string (a device token)
 * that happens to contain "-sk-" or "AIza" is not taken for a key.
 */
const BUILT_IN_PATTERNS: readonly string[] = [
  ...VENDOR_PATTERNS,
  // PEM private keys: the body up to the END line (or the end of a cut-off text).
  String.raw`(-----BEGIN [A-Z ]*PRIVATE KEY-----)[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`,
  // Telegram Bot API URLs (…/bot<id>:<secret>/getMe): the bot id is public, the rest is not.
  String.raw`(\bbot\d{5,}:)[\w-]{20,}`,
  // A bare Telegram bot token.
  String.raw`(\b\d{6,}:)[\w-]{30,}`,
  // Authorization headers in any spelling (HTTP, JSON, curl -H), whatever the scheme.
  String.raw`(\bauthorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|bot)\s+)?)[^\s"'\\,;]{6,}`,
  String.raw`(\bbearer\s+)[\w.~+/=-]{16,}`,
  // Credentials in URLs: scheme://user:password@host.
  String.raw`(\b[a-z][a-z0-9+.-]*://[^\s/:@"']+:)[^\s/@"']+(?=@)`,
  // token=… / apiKey: … / PASSWORD=… in query strings, env dumps, JSON and YAML. Quotes
  // and backslashes end the value, so masking serialized JSON keeps it valid. A path segment
  // so named, then a colon, assigns nothing (/run/secret:db, "open /run/secret: permission
  // denied"): the lookbehind skips a key whose word starts right after "/". It sits after the
  // key so that it runs only where a key matched, not at every position of a long text.
  String.raw`((?:${ASSIGNED_KEY})(?<!/[\w.-]*(?:${ASSIGNED_KEY}))["']?\s*[=:]\s*["']?)[^\s"'\\&,;]{6,}`,
  // In a path `=` still assigns (https://host/hook/token=…), and a random-looking value after the
  // colon (16+ characters mixing letters and digits) is still a secret; either ends at the next "/".
  String.raw`((?:${ASSIGNED_KEY})(?<=/[\w.-]*(?:${ASSIGNED_KEY}))(?:=|:(?=[\w-]{16})(?=[\w-]*\d)(?=[\w-]*[a-z])))[^\s"'\\&,;/]{6,}`,
];

/** `/pattern/flags`, or a raw pattern (flags `gi`). Throws a SyntaxError naming the pattern. */
export function compileRedactPattern(pattern: string): RegExp {
  const literal = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  const [source, flags] = literal ? [literal[1]!, literal[2]!] : [pattern, 'gi'];
  try {
    return new RegExp(source, flags.includes('g') ? flags : `${flags}g`);
  } catch (error) {
    throw new SyntaxError(`invalid redaction pattern ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
}

/** Config problems of `logging.redactPatterns`, for the kernel's config checks. */
export function redactPatternIssues(config: Record<string, unknown>): Array<{ path: string; message: string }> {
  const patterns = (config.logging as { redactPatterns?: unknown } | undefined)?.redactPatterns;
  if (!Array.isArray(patterns)) return [];
  return patterns.flatMap((pattern, index) => {
    if (typeof pattern !== 'string') return []; // the schema reports the type
    try {
      compileRedactPattern(pattern);
      return [];
    } catch (error) {
      return [
        { path: formatPath(['logging', 'redactPatterns', index] as PathSegment[]), message: (error as Error).message },
      ];
    }
  });
}

export function createRedactor(options: RedactorOptions): Redactor {
  const secrets = new Set<string>();
  collectConfigSecrets(options.config, secrets);
  for (const [name, value] of Object.entries(options.env)) {
    if (!value || !SECRET_ENV_NAME.test(name)) continue;
    // A list of keys (OPENAI_API_KEYS="k1,k2") is also masked key by key: one shows up alone.
    for (const part of [value, ...value.split(/[\s,;]+/)]) {
      const trimmed = part.trim();
      if (trimmed.length >= MIN_ENV_SECRET_LENGTH && !PLAIN_WORD.test(trimmed)) secrets.add(trimmed);
    }
  }
  const configured = (options.config.logging as { redactPatterns?: unknown } | undefined)?.redactPatterns;
  const user = [...(Array.isArray(configured) ? configured : []), ...(options.patterns ?? [])].flatMap((pattern) => {
    if (typeof pattern !== 'string') return [];
    try {
      return [compileRedactPattern(pattern)];
    } catch {
      return []; // reported as a config issue at boot; never fatal here
    }
  });

  let combined: RegExp | undefined;
  const build = (): RegExp => {
    // Longest first, so a secret that contains another is masked whole.
    const literals = [...secrets].sort((a, b) => b.length - a.length).map(escapeRegExp);
    return new RegExp([...literals, ...BUILT_IN_PATTERNS].join('|'), 'gi');
  };
  const groups = BUILT_IN_PATTERNS.length;
  const replace = (match: string, ...args: unknown[]): string => {
    for (let index = 0; index < groups; index++) {
      const prefix = args[index];
      if (typeof prefix !== 'string') continue;
      // Not a key after all: scan the rest again, a known secret may still be inside it.
      if (index < VENDOR_PATTERNS.length && !VENDOR_PREFIX.test(prefix))
        return match[0] + match.slice(1).replace(combined!, replace);
      return `${prefix}${MASK}`;
    }
    return MASK; // a known secret: no hint
  };

  const text = (input: string): string => {
    combined ??= build();
    let out = input.replace(combined, replace);
    for (const pattern of user) out = out.replace(pattern, maskMatch);
    return out;
  };

  return {
    text,
    value: <T>(input: T): T => (typeof input === 'string' ? (text(input) as T) : (deep(input, text, new Map()) as T)),
    add(secret) {
      const trimmed = secret?.trim();
      if (!trimmed || trimmed.length < MIN_SECRET_LENGTH || secrets.has(trimmed)) return;
      secrets.add(trimmed);
      combined = undefined;
    },
  };
}

/** User-pattern matches: long ones keep a hint (first 6, last 4) as OpenClaw does. */
function maskMatch(match: string): string {
  if (match === '') return match; // a pattern that can match nothing must not insert masks
  return match.length >= 18 ? `${match.slice(0, 6)}…${match.slice(-4)}` : MASK;
}

/** Strings under secret-named keys, at any depth (incl. arrays of them). */
function collectConfigSecrets(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectConfigSecrets(item, into);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, item] of Object.entries(value)) {
    if (isSecretKey(key)) {
      for (const candidate of Array.isArray(item) ? item : [item]) {
        const trimmed = typeof candidate === 'string' ? candidate.trim() : '';
        if (trimmed.length >= MIN_SECRET_LENGTH) into.add(trimmed);
      }
    }
    // Recurse either way: a secret key may hold an object (credentials: { refreshToken }).
    if (item !== null && typeof item === 'object') collectConfigSecrets(item, into);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Copy-on-write walk; `seen` maps each visited container to its result (cycles, shared parts). */
function deep(input: unknown, text: (value: string) => string, seen: Map<object, unknown>): unknown {
  if (typeof input === 'string') return text(input);
  if (input === null || typeof input !== 'object') return input;
  if (seen.has(input)) return seen.get(input);
  seen.set(input, input);
  let out: object | undefined;
  if (Array.isArray(input)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < input.length; index++) {
      const item = deep(input[index], text, seen);
      if (item !== input[index]) (copy ??= input.slice())[index] = item;
    }
    out = copy;
  } else if (isPlainObject(input)) {
    // Media bytes stay intact: base64 can look like anything.
    const image = input.type === 'image';
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(input)) {
      if (image && key === 'data') continue;
      const item = deep(input[key], text, seen);
      if (item !== input[key]) (copy ??= { ...input })[key] = item;
    }
    out = copy;
  }
  if (out) seen.set(input, out);
  return out ?? input;
}
