/**
 * What a system.run argv is, in OpenClaw's terms: its display text (`commandText`, argv
 * joined with quotes where needed), whether it is a shell wrapper (`sh -c '<payload>'`, whose
 * payload is what a policy must judge), the `env NAME=value …` assignments it carries, and
 * the executable it would start (resolved on PATH, symlinks followed) for pinning a plan.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'busybox']);
/** Programs that run the rest of their argv (after options and NAME=value assignments). */
const DISPATCH_WRAPPERS = new Set(['env', 'nice', 'nohup', 'timeout', 'stdbuf', 'command', 'exec']);

/** OpenClaw's formatExecCommand: an argument with whitespace or `"` is double-quoted, `"` escaped. */
export function formatCommand(argv: readonly string[]): string {
  return argv
    .map((arg) => {
      if (arg.length === 0) return '""';
      if (!/\s|"/.test(arg)) return arg;
      return `"${arg.replace(/"/g, '\\"')}"`;
    })
    .join(' ');
}

/** The argv past leading dispatch wrappers (`env A=1 nice sh -c …` → `sh -c …`). */
function unwrapDispatch(argv: readonly string[]): readonly string[] {
  let rest = argv;
  for (let guard = 0; guard < 8 && rest.length > 0; guard++) {
    const name = basename(rest[0]!);
    if (!DISPATCH_WRAPPERS.has(name)) break;
    let index = 1;
    while (index < rest.length && (rest[index]!.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[index]!)))
      index++;
    // timeout's duration is an operand.
    if (name === 'timeout' && index < rest.length) index++;
    rest = rest.slice(index);
  }
  return rest;
}

/** `sh -c '<payload>' …` (also `-lc`, `-ec`): the payload, else null. */
export function shellPayload(argv: readonly string[]): string | null {
  const inner = unwrapDispatch(argv);
  if (inner.length < 3 || !SHELLS.has(basename(inner[0]!))) return null;
  for (let index = 1; index < inner.length; index++) {
    const flag = inner[index]!;
    if (!flag.startsWith('-') || flag === '--') return null;
    if (!flag.startsWith('--') && flag.slice(1).includes('c')) return inner[index + 1] ?? null;
  }
  return null;
}

/** Is this a shell started to run something (with or without a payload claw recognised)? */
export function isShellWrapper(argv: readonly string[]): boolean {
  const inner = unwrapDispatch(argv);
  return inner.length > 0 && SHELLS.has(basename(inner[0]!));
}

/** `env A=1 B=2 cmd`: the names assigned by dispatch wrappers before the command. */
export function envAssignments(argv: readonly string[]): string[] {
  const names: string[] = [];
  let index = 0;
  while (index < argv.length && DISPATCH_WRAPPERS.has(basename(argv[index]!))) {
    index++;
    while (index < argv.length && (argv[index]!.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[index]!))) {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(argv[index]!);
      if (match) names.push(match[1]!);
      index++;
    }
  }
  return names;
}

export type CommandRequest =
  | { ok: true; argv: string[]; commandText: string; shellPayload: string | null; preview: string | null }
  | { ok: false; message: string };

/** `command` (argv) and the optional `rawCommand`, which must say the same thing. */
export function commandRequest(command: unknown, rawCommand: unknown): CommandRequest {
  const raw = typeof rawCommand === 'string' && rawCommand.trim() ? rawCommand.trim() : null;
  if (!Array.isArray(command) || command.length === 0)
    return { ok: false, message: raw ? 'rawCommand requires params.command' : 'command required' };
  const argv = command.map((part) => String(part));
  const commandText = formatCommand(argv);
  const payload = shellPayload(argv);
  const preview = payload?.trim() || null;
  // OpenClaw accepts the shell payload itself as rawCommand too (older callers sent that).
  if (raw && raw !== commandText && raw !== preview)
    return { ok: false, message: 'INVALID_REQUEST: rawCommand does not match command' };
  return { ok: true, argv, commandText, shellPayload: payload, preview };
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The real path of the program argv[0] names (a path relative to `cwd`, or a name on `path`). */
export function resolveExecutable(program: string, cwd: string, path: string | undefined): string | undefined {
  const candidates = program.includes('/')
    ? [isAbsolute(program) ? program : resolve(cwd, program)]
    : (path ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, program));
  for (const candidate of candidates) {
    if (!executable(candidate)) continue;
    try {
      return realpathSync(candidate);
    } catch {
      continue;
    }
  }
  return undefined;
}
