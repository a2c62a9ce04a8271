/** `claw config …` */
import {
  formatIssue,
  getPath,
  hasPath,
  parseJson5,
  redactConfig,
  setPath,
  unsetPath,
  type PathSegment,
} from '../../../sdk/index.js';
import type { Kernel } from '../../../kernel/index.js';
import { composeConfigSchema } from '../../../host/config-schema.js';
import { bootKernel } from '../boot.js';
import { parsePath } from '../config-path.js';
import { changeConfig, type ConfigChange } from '../config-change.js';
import { nonFiniteNumber, outOfRange } from '../config-numbers.js';
import { printHelp } from '../help.js';
import { CliError, printJson, println, usageError, type Io } from '../io.js';
import { parseFlags, unknownCommand } from '../../../sdk/cli.js';

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  const [sub, ...rest] = args;
  if (help || !sub) {
    printHelp(io, 'config');
    return sub || help ? 0 : 2;
  }
  switch (sub) {
    case 'get':
      return get(rest, io);
    case 'set':
      return set(rest, io);
    case 'unset':
      return unset(rest, io);
    case 'validate':
      return validate(rest, io);
    case 'path':
    case 'file':
      return path(rest, io);
    default:
      throw unknownCommand('config', sub, ['get', 'set', 'unset', 'validate', 'path', 'file']);
  }
}

function flags<T extends Record<string, { type: 'boolean' | 'string' }>>(args: string[], options: T) {
  return parseFlags(args, options);
}

function segmentsOf(path: string | undefined): PathSegment[] {
  if (path === undefined || path === '') throw usageError('missing config path');
  try {
    return parsePath(path);
  } catch (error) {
    throw usageError((error as Error).message);
  }
}

/** Paths a plugin's manifest marks sensitive (uiHints), on top of the secret-looking key names. */
function sensitivity(kernel: Kernel) {
  const sensitive = new Set<string>();
  for (const record of kernel.plugins.list()) {
    for (const [key, hint] of Object.entries(record.manifest?.uiHints ?? {})) {
      if (hint.sensitive) sensitive.add(`plugins\u0000entries\u0000${record.id}\u0000config\u0000${key}`);
    }
  }
  return (path: readonly PathSegment[]) => sensitive.has(path.map(String).join('\u0000'));
}

async function get(args: string[], io: Io): Promise<number> {
  const { positionals } = flags(args, {});
  if (positionals.length !== 1) throw usageError('usage: claw config get <path>');
  const segments = segmentsOf(positionals[0]);
  const kernel = await bootKernel(io, { strictConfig: false });
  const redacted = redactConfig(kernel.config.resolved, sensitivity(kernel));
  if (!hasPath(redacted, segments)) throw new CliError(`${positionals[0]} is not set (the default applies)`);
  const value = getPath(redacted, segments);
  if (io.json) printJson(io, value);
  else println(io, typeof value === 'object' && value !== null ? JSON.stringify(value, null, 2) : String(value));
  return 0;
}

/** A negative number: a value of `config set`, where parseArgs would take "-5" for an option. */
const NEGATIVE_NUMBER = /^-(?:\d|\.\d|Infinity$|NaN$)/;

/** `args` with negative numbers (before any `--`) hidden from parseArgs, and how to get them back. */
function negativesAsValues(args: string[]): { args: string[]; restore: (positional: string) => string } {
  const hidden = new Map<string, string>();
  const end = args.indexOf('--');
  const shown = args.map((arg, index) => {
    if ((end >= 0 && index > end) || !NEGATIVE_NUMBER.test(arg)) return arg;
    const stand = `\u0000${hidden.size}`;
    hidden.set(stand, arg);
    return stand;
  });
  return { args: shown, restore: (positional) => hidden.get(positional) ?? positional };
}

async function set(args: string[], io: Io): Promise<number> {
  const negatives = negativesAsValues(args);
  const parsed = flags(negatives.args, { 'strict-json': { type: 'boolean' } });
  const positionals = parsed.positionals.map(negatives.restore);
  const values = parsed.values;
  if (positionals.length !== 2) throw usageError('usage: claw config set <path> <value>');
  const [path, text] = positionals as [string, string];
  const segments = segmentsOf(path);
  let value: unknown;
  try {
    value = values['strict-json'] ? JSON.parse(text) : parseJson5(text, 'value');
  } catch (error) {
    if (values['strict-json']) throw usageError(`value is not valid JSON: ${(error as Error).message}`);
    value = text;
  }
  const notFinite = nonFiniteNumber(value, segments, text);
  if (notFinite) throw new CliError(notFinite);
  if (typeof value === 'number' || (typeof value === 'object' && value !== null)) {
    const kernel = await bootKernel(io, { strictConfig: false });
    const refused = outOfRange(value, segments, composeConfigSchema(kernel.plugins.list()));
    if (refused) throw new CliError(refused);
  }
  const change = await changeConfig(io, `claw config set ${path}`, (raw) => {
    try {
      setPath(raw, segments, value);
    } catch (error) {
      throw new CliError((error as Error).message);
    }
  });
  report(io, change, change.changed ? `Set ${path}.` : `No change: ${path} already has that value.`, { path, value });
  return 0;
}

/** One line (or JSON) about the change and, when a gateway took it, whether it is live. */
function report(io: Io, change: ConfigChange, done: string, fields: Record<string, unknown>): void {
  const reload = change.reload;
  if (io.json) {
    printJson(io, {
      ok: true,
      ...fields,
      changed: change.changed,
      via: change.via,
      ...(reload ? { reload, restartRequired: reload.restartRequired && !reload.restartScheduled } : {}),
    });
  } else println(io, reload && change.changed ? `${done} ${reload.message}` : done);
}

async function unset(args: string[], io: Io): Promise<number> {
  const { positionals } = flags(args, {});
  if (positionals.length !== 1) throw usageError('usage: claw config unset <path>');
  const segments = segmentsOf(positionals[0]);
  const change = await changeConfig(io, `claw config unset ${positionals[0]}`, (raw) => {
    if (!unsetPath(raw, segments)) throw new CliError(`${positionals[0]} is not set`);
  });
  report(io, change, `Removed ${positionals[0]}.`, { path: positionals[0] });
  return 0;
}

async function validate(args: string[], io: Io): Promise<number> {
  flags(args, {});
  const kernel = await bootKernel(io, { strictConfig: false });
  const issues = kernel.issues();
  const errors = issues.filter((issue) => issue.level === 'error');
  if (io.json) {
    printJson(io, { valid: errors.length === 0, path: kernel.config.path, exists: kernel.config.exists, issues });
    return errors.length === 0 ? 0 : 1;
  }
  for (const issue of issues) io.stderr.write(`${issue.level}: ${formatIssue(issue)}\n`);
  if (errors.length === 0) {
    println(io, `${kernel.config.path}: valid${kernel.config.exists ? '' : ' (file does not exist; defaults apply)'}`);
    return 0;
  }
  io.stderr.write(`${kernel.config.path}: ${errors.length} error${errors.length === 1 ? '' : 's'}\n`);
  return 1;
}

async function path(args: string[], io: Io): Promise<number> {
  flags(args, {});
  const { resolveConfigPath } = await import('../../../kernel/config/paths.js');
  const file = resolveConfigPath(io.env);
  if (io.json) printJson(io, { path: file });
  else println(io, file);
  return 0;
}
