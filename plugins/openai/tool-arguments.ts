export { parseToolArguments } from '../../sdk/index.js';

/** For servers that stream a tool call without an id; the loop needs one to pair results. */
export function fallbackCallId(): string {
  return `call_${Math.random().toString(36).slice(2, 12)}`;
}
