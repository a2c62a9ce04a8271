/**
 * Issue 12's escape suite (test/escape-cases.ts) with every session in the bubblewrap
 * sandbox: the model's hostile calls go through a real gateway `agent` run, and each must be
 * refused — by the file tools' sandbox confinement or the exec env guard — or, for commands,
 * run inside bwrap where the host's files are not there to read.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { REPO, tempDir } from './helpers.js';
import { ESCAPE_CASES, runEscapeCases } from './escape-cases.js';

describe('issue 12 escape suite (test/escape-cases.ts) under the bubblewrap backend', () => {
  let suite: AgentHarness;

  beforeAll(async () => {
    // The state dir one level down, so ../../escape.txt from the workspace stays in our temp dir.
    const state = join(tempDir('claw-bwrap-escape-'), 'state');
    mkdirSync(state, { mode: 0o700 });
    suite = await startAgent({
      stateDir: state,
      plugins: [join(REPO, 'plugins', 'sandbox-bwrap')],
      config: {
        plugins: { slots: { sandbox: 'sandbox-bwrap' } },
        agents: { defaults: { sandbox: { mode: 'all', scope: 'agent', workspaceAccess: 'rw' } } },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await suite?.stop();
  });

  it('refuses every case (100 %)', async () => {
    const outcomes = await runEscapeCases(
      suite,
      ESCAPE_CASES,
      suite.workspace,
      /refused|outside the sandbox workspace/i,
    );
    const refused = outcomes.filter((outcome) => outcome.refused).length;
    console.log(`escape suite under sandbox-bwrap: ${refused}/${ESCAPE_CASES.length} refused`);
    expect(
      outcomes
        .filter((outcome) => !outcome.refused)
        .map((outcome) => `${outcome.id}: ${outcome.why} — ${outcome.result.slice(0, 160)}`),
    ).toEqual([]);
    expect(refused).toBe(ESCAPE_CASES.length);
    // The runs really went through the bwrap backend: it recorded the agent's sandbox.
    expect(readFileSync(join(suite.gw.stateDir, 'sandbox', 'bwrap.json'), 'utf8')).toContain('agent:main');
  }, 120_000);
});
