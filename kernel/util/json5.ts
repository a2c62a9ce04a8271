/**
 * JSON5 parsing with a fast path: most files are plain JSON, and JSON.parse is both
 * faster and already loaded, so the json5 module is loaded only when it is needed.
 *
 * This module is also compiled to CommonJS (for `claw --help`, see apps/cli/help.ts), so
 * it cannot use import.meta: the json5 package is resolved from this file's own location,
 * which V8's call sites give in both module systems.
 */
import { createRequire } from 'node:module';

let json5: { parse(text: string): unknown } | undefined;

function ownFile(): string {
  const original = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (_error, frames) => frames;
    const frames = new Error().stack as unknown as NodeJS.CallSite[];
    return frames[0]!.getFileName()!;
  } finally {
    Error.prepareStackTrace = original;
  }
}

export function parseJson5(text: string, file = '<input>'): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Fall through to the JSON5 parser, which also gives better positions.
  }
  json5 ??= createRequire(ownFile())('json5') as { parse(text: string): unknown };
  try {
    return json5.parse(text);
  } catch (error) {
    const err = error as { lineNumber?: number; columnNumber?: number; message?: string };
    const reason = String(err.message ?? error)
      .replace(/^JSON5: /, '')
      .replace(/ at \d+:\d+$/, '');
    const at = err.lineNumber !== undefined ? `:${err.lineNumber}:${err.columnNumber ?? 1}` : '';
    throw new SyntaxError(`${file}${at}: invalid JSON5: ${reason}`);
  }
}
