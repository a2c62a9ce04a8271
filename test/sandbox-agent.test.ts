import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentHarness, runAgent } from './agent-helpers.js';
import { REPO } from './helpers.js';

let h: AgentHarness;

beforeAll(async () => {
  h = await startAgent({
    plugins: [join(REPO, 'plugins', 'sandbox-bwrap')],
    config: {
      plugins: { slots: { sandbox: 'sandbox-bwrap' } },
      agents: { defaults: { sandbox: { mode: 'non-main' } } },
    },
  });
});
afterAll(() => h?.stop());

function toolOutput(request: any): string {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  return String(messages.filter((message) => message.role === 'tool').at(-1)?.content ?? '');
}

describe('an agent run in a non-main session (mode "non-main")', () => {
  it('runs the model’s exec inside the sandbox and tells the model so in the system prompt; the main session stays on the host', async () => {
    for (const [sessionKey, sandboxed] of [
      ['agent:main:telegram:group:7', true],
      ['agent:main:main', false],
    ] as const) {
      h.fake.reset();
      h.fake.script(
        { toolCalls: [{ id: 'call_1', name: 'exec', arguments: { command: 'hostname; pwd' } }] },
        { text: 'done' },
      );
      const { final } = await runAgent(h.client, { message: 'where am I?', sessionKey });
      expect(final).toMatchObject({ status: 'ok' });
      const [first, second] = h.fake.requests.filter((request) => request.path.endsWith('/chat/completions'));
      const system = String((first!.body as any).messages[0].content);
      if (sandboxed) {
        expect(system).toContain('## Sandbox\nCommands run in a sandbox (non-main); its workspace is /workspace.');
        expect(toolOutput(second)).toBe('claw-sandbox\n/workspace\n');
      } else {
        expect(system).not.toContain('## Sandbox');
        expect(toolOutput(second)).not.toContain('claw-sandbox');
      }
    }
  });
});
