/**
 * Issue 12's escape suite on the host: a scripted model makes every hostile call in
 * test/escape-cases.ts through a real gateway `agent` run. Under `tools.fs.workspaceOnly`
 * all of them are refused; under the default config, every case the defaults cover; with
 * both workspace settings off, every case not refused "always" gets out (so each case is a
 * real escape attempt).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { ESCAPE_CASES, guardedBy, runEscapeCases, type EscapeOutcome } from './escape-cases.js';
import { tempDir } from './helpers.js';

function summary(outcomes: EscapeOutcome[]): string {
  return outcomes
    .filter((outcome) => !outcome.refused)
    .map((outcome) => `${outcome.id}: ${outcome.why} — ${outcome.result.slice(0, 200)}`)
    .join('\n');
}

describe.each([
  {
    label: 'tools.fs.workspaceOnly: true',
    tools: { fs: { workspaceOnly: true } },
    fsWorkspaceOnly: true,
    applyPatchWorkspaceOnly: true,
  },
  { label: 'the default config', tools: undefined, fsWorkspaceOnly: true, applyPatchWorkspaceOnly: true },
  {
    label: 'both workspace settings off',
    tools: { fs: { workspaceOnly: false }, exec: { applyPatch: { workspaceOnly: false } } },
    fsWorkspaceOnly: false,
    applyPatchWorkspaceOnly: false,
  },
])('escape suite under $label', (setting) => {
  let h: AgentHarness;
  beforeAll(async () => {
    // The state dir one level down, so ../../escape.txt from the workspace stays in our temp dir.
    const stateDir = join(tempDir('claw-escape-'), 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    h = await startAgent({ stateDir, ...(setting.tools ? { config: { tools: setting.tools } } : {}) });
  });
  afterAll(() => h.stop());

  it('refuses exactly the cases its settings guard', async () => {
    const outcomes = await runEscapeCases(h, ESCAPE_CASES);
    const expected = ESCAPE_CASES.map((escapeCase) => guardedBy(escapeCase.guard, setting));
    const guarded = outcomes.filter((_, index) => expected[index]);
    const refused = guarded.filter((outcome) => outcome.refused).length;
    const table = outcomes.map(
      (outcome, index) =>
        `  ${expected[index] ? (outcome.refused ? 'refused' : 'GOT OUT') : outcome.refused ? 'refused' : 'open   '}  ${outcome.id}: ${outcome.result.split('\n')[0]!.slice(0, 140)}`,
    );
    console.log(
      `escape suite (${setting.label}): ${refused}/${guarded.length} guarded cases refused; ${ESCAPE_CASES.length} cases in all\n${table.join('\n')}`,
    );
    expect(summary(guarded), 'guarded cases that got out').toBe('');
    expect(refused).toBe(guarded.length);
    const open = outcomes.filter((_, index) => !expected[index]);
    expect(
      open.filter((outcome) => outcome.refused).map((outcome) => outcome.id),
      'unguarded cases must really escape (the case is meaningful)',
    ).toEqual([]);
    if (setting.fsWorkspaceOnly) expect(guarded.length).toBe(ESCAPE_CASES.length);
  }, 120_000);
});
