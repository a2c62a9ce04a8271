/**
 * The onboarding flow, transport-neutral: each section asks its steps through a Prompter
 * (the terminal, a gateway client, or the non-interactive flags) and saves only what the
 * person chose, once it is known to work. Sections can run alone (`wizard.start {section}`).
 */
import { channelsSection } from './channels-section.js';
import { daemonSection } from './daemon-section.js';
import { gatewaySection } from './gateway-section.js';
import { modelSection } from './model-section.js';
import { workspaceSection } from './workspace-section.js';
import type { OnboardDeps, OnboardSummary } from './steps.js';
import type { Prompter, WizardFlow, WizardSection } from './wizard-types.js';

export const SECTIONS: readonly WizardSection[] = ['model', 'workspace', 'gateway', 'channels', 'daemon'];

export interface OnboardOptions {
  flow?: WizardFlow;
  section?: WizardSection;
  /** The daemon step answered by flags (`--install-daemon` true, `--skip-daemon` false): not asked. */
  installDaemon?: boolean;
}

/** Run the flow to its end; the last step is a closing note. */
export async function runOnboarding(
  p: Prompter,
  deps: OnboardDeps,
  options: OnboardOptions = {},
): Promise<OnboardSummary> {
  const summary: OnboardSummary = { channels: [], lines: [] };
  let flow = options.flow;
  if (!options.section && !flow) {
    flow = (await p.ask({
      id: 'flow',
      type: 'select',
      title: 'Set up claw',
      message: 'How much do you want to set now?',
      options: [
        {
          value: 'quickstart',
          label: 'Quick start',
          hint: 'model, workspace, channels and the gateway service; gateway defaults',
        },
        { value: 'manual', label: 'Manual', hint: 'every section, gateway port, bind and auth too' },
      ],
      initialValue: 'quickstart',
    })) as WizardFlow;
  }
  const sections = options.section ? [options.section] : SECTIONS;
  for (const section of sections) {
    if (section === 'model') await modelSection(p, deps, summary);
    else if (section === 'workspace') await workspaceSection(p, deps, summary);
    else if (section === 'gateway') await gatewaySection(p, deps, summary, flow !== 'manual' && !options.section);
    else if (section === 'channels') await channelsSection(p, deps, summary);
    else await daemonSection(p, deps, summary, options.installDaemon);
  }
  await p.ask({
    id: 'done',
    type: 'note',
    title: 'Setup complete',
    message: [...summary.lines, '', 'Next: claw agent -m "hello" (or claw dashboard for the web UI)'].join('\n'),
  });
  return summary;
}
