/**
 * Whether HEARTBEAT.md holds anything to act on. What a reply means (HEARTBEAT_OK) is the
 * SDK's, sdk/agent/heartbeat-reply.ts, which chat.history shares to hide acknowledgments.
 */
export { judgeReply, type ReplyVerdict } from '../../sdk/agent/index.js';

/**
 * HEARTBEAT.md with nothing to act on: only blank lines, headings, HTML comments, code fence
 * markers and empty list or checklist items.
 */
export function effectivelyEmpty(markdown: string): boolean {
  const withoutComments = markdown.replace(/<!--[\s\S]*?-->/g, '');
  return withoutComments.split('\n').every((raw) => {
    const line = raw.trim();
    return (
      line === '' ||
      /^#{1,6}(\s|$)/.test(line) ||
      /^(```|~~~)/.test(line) ||
      /^([-*+]|\d+[.)])(\s+\[[ xX]?\])?\s*$/.test(line)
    );
  });
}
