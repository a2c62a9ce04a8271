/**
 * node:http, taken as a CommonJS module and only when first asked for. An ES import of it
 * reads every export on Node 22 and 24, and its lazy WebSocket export then loads undici:
 * ≈ 40 ms, paid by whichever plugin imports it first. getBuiltinModule is Node ≥ 20.16.
 */
import { createRequire } from 'node:module';

let http: typeof import('node:http') | undefined;

export function nodeHttp(): typeof import('node:http') {
  return (http ??=
    process.getBuiltinModule?.('node:http') ?? (createRequire(import.meta.url)('node:http') as typeof http)!);
}
