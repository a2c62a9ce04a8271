/** Start-up tracing: with CLAW_TRACE_STARTUP=1 each phase prints its time since process start to stderr. */
const enabled = process.env.CLAW_TRACE_STARTUP === '1';

export function trace(label: string): void {
  if (enabled) process.stderr.write(`[trace] ${performance.now().toFixed(1).padStart(7)} ms  ${label}\n`);
}
