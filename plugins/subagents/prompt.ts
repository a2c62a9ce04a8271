/**
 * What a child is told about itself (added to its system prompt) and what its requester is
 * told when it ends (the announce message). Both are claw's own wording of OpenClaw's shape.
 */
import type { SubagentRunRecord } from './registry.js';

export const ANNOUNCE_SKIP = 'ANNOUNCE_SKIP';

export function subagentSystemPrompt(input: {
  requesterSessionKey: string;
  childSessionKey: string;
  task: string;
  label?: string;
  childDepth: number;
  maxSpawnDepth: number;
}): string {
  // The loop puts this under its "Subagent Context" heading (prompt mode minimal).
  const lines = [
    `You are a **subagent**: a background worker started by the session ${input.requesterSessionKey} to do one task. Your session is ${input.childSessionKey}.`,
    '',
    '### Your Role',
    `- Your task${input.label ? ` (${input.label})` : ''}: ${input.task}`,
    '- Do this task and nothing else; when it is done, you are done.',
    '',
    '### Rules',
    '1. **Stay focused** - work only on the task above.',
    '2. **Complete the task** - your final message is reported back to the requester automatically, so make it the concise result (what you found or did), not a conversation.',
    "3. **Don't initiate** - no questions to the user, no heartbeats, no side projects; nobody reads this session but the requester.",
    '4. **Be ephemeral** - this session may be removed after it reports.',
    '5. **Trust push-based completion** - results of any workers you start arrive on their own; do not poll.',
    '6. **Recover from compacted/truncated tool output** - read again in smaller pieces.',
    `7. If there is nothing worth reporting, reply exactly ${ANNOUNCE_SKIP}.`,
  ];
  if (input.childDepth < input.maxSpawnDepth) {
    lines.push(
      '',
      '### Sub-Agent Spawning',
      'You CAN spawn your own sub-agents with `sessions_spawn`; use the `subagents` tool to list, steer or kill them. Their results are announced back to you.',
    );
  } else if (input.childDepth >= 2) {
    lines.push('', '### Sub-Agent Spawning', 'You are a leaf worker and CANNOT spawn further sub-agents.');
  }
  return lines.join('\n');
}

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes}m${seconds % 60}s` : `${Math.floor(minutes / 60)}h${minutes % 60}m`;
}

const STATUS_LABEL: Record<string, string> = {
  ok: 'completed successfully',
  error: 'failed',
  timeout: 'timed out',
  aborted: 'was aborted',
  interrupted: 'was interrupted by a gateway restart before it finished',
};

/** The message the requester's session receives when a child ends. */
export function announceMessage(run: SubagentRunRecord, sessionId: string | undefined): string {
  const runtime =
    run.startedAt !== undefined && run.endedAt !== undefined ? formatDuration(run.endedAt - run.startedAt) : 'n/a';
  const usage = run.usage ?? { input: 0, output: 0 };
  const result =
    run.status === 'ok'
      ? run.result?.trim() || '(no output)'
      : run.result?.trim()
        ? run.result.trim()
        : `(${run.error ?? 'no result'})`;
  return [
    `[Subagent announce] The sub-agent "${run.label ?? run.task.slice(0, 60)}" ${STATUS_LABEL[run.status] ?? run.status}.`,
    `status: ${run.status}`,
    '',
    'Result:',
    result,
    '',
    `Stats: runtime ${runtime} • tokens ${usage.input} in / ${usage.output} out / ${usage.input + usage.output} total • sessionKey ${run.childSessionKey}${sessionId ? ` • sessionId ${sessionId}` : ''}`,
    '',
    `Tell the user what came of it in your own words (this note is internal). If nothing needs saying, reply exactly ${ANNOUNCE_SKIP}.`,
  ].join('\n');
}
