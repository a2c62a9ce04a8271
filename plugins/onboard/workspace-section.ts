/** The workspace: where the agent's files live, seeded with the templates `claw setup` uses. */
import { resolve } from 'node:path';
import { expandHome } from '../../sdk/index.js';
import { askText, type OnboardDeps, type OnboardSummary } from './steps.js';
import { ensureRecord, getRecord, getString } from './raw-config.js';
import type { Prompter } from './wizard-types.js';

export async function workspaceSection(p: Prompter, deps: OnboardDeps, summary: OnboardSummary): Promise<void> {
  const configured = getString(getRecord(deps.raw(), 'agents', 'defaults'), 'workspace');
  const answer = await askText(
    p,
    {
      id: 'workspace.path',
      type: 'text',
      title: 'Workspace',
      message: "Folder for the agent's files (AGENTS.md, SOUL.md, memory, …)",
      initialValue: configured ?? deps.defaultWorkspace,
    },
    (value) => (value ? undefined : 'give a folder'),
  );
  const dir = resolve(expandHome(answer));
  if (!configured || resolve(expandHome(configured)) !== dir)
    await deps.changeConfig('claw onboard: workspace', (next) => {
      ensureRecord(next, 'agents', 'defaults').workspace = dir;
    });
  summary.workspace = dir;
  const seeded = deps.seedWorkspace?.(dir);
  const created = seeded?.created.length ? ` (created ${seeded.created.join(', ')})` : '';
  summary.lines.push(`Workspace: ${dir}${created}`);
}
