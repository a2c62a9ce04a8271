/** At gateway start: each agent workspace's non-empty BOOT.md, run once through the agent. */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface StartupEvent {
  type: string;
  action: string;
  context: {
    agents?: Array<{ agentId: string; workspaceDir: string }>;
    deps?: {
      runAgent?: (input: {
        agentId: string;
        sessionKey: string;
        message: string;
      }) => Promise<{ status: string; error?: string }>;
      log?: (level: 'info' | 'warn', message: string) => void;
    };
  };
}

export function bootPrompt(content: string): string {
  return [
    'The gateway just started. Carry out the startup checklist from BOOT.md below.',
    'Your final reply is not delivered anywhere: to tell someone something, use the message tool with an explicit channel and target.',
    '',
    content.trim(),
  ].join('\n');
}

export default async function bootMd(event: StartupEvent): Promise<void> {
  if (event.type !== 'gateway' || event.action !== 'startup') return;
  const runAgent = event.context.deps?.runAgent;
  const log = event.context.deps?.log ?? (() => undefined);
  if (!runAgent) return;
  const seen = new Set<string>();
  for (const { agentId, workspaceDir } of event.context.agents ?? []) {
    if (seen.has(workspaceDir)) continue;
    seen.add(workspaceDir);
    let content: string;
    try {
      content = readFileSync(join(workspaceDir, 'BOOT.md'), 'utf8');
    } catch {
      continue;
    }
    if (!content.trim()) continue;
    try {
      const result = await runAgent({
        agentId,
        sessionKey: `agent:${agentId}:boot:${randomUUID()}`,
        message: bootPrompt(content),
      });
      log(
        result.status === 'ok' ? 'info' : 'warn',
        `boot-md: BOOT.md of agent ${agentId} ran (${result.status}${result.error ? `: ${result.error}` : ''})`,
      );
    } catch (error) {
      log('warn', `boot-md: BOOT.md of agent ${agentId} failed: ${(error as Error).message}`);
    }
  }
}
