/**
 * The system prompt, rebuilt for every run from fixed sections. `full` has them all;
 * `minimal` (sub-agents) keeps tooling, safety, workspace, sandbox, time, runtime and the
 * injected files; `none` is the identity line alone. The time section names only the time
 * zone, so the prompt stays byte-identical across runs and provider prompt caches hold.
 */
import type { PromptMode, PromptReport, Skill } from '../../sdk/agent/index.js';
import type { BootstrapFile } from './workspace.js';

export interface PromptInput {
  mode: PromptMode;
  tools: Array<{ name: string; description: string }>;
  workspaceDir: string;
  bootstrap: BootstrapFile[];
  skills: Skill[];
  userTimezone?: string;
  runtime: { host: string; os: string; node: string; model: string; thinking: string; agentId: string };
  sandbox?: { mode: string; workspace: string };
  /** Extra text from the caller (group chat context, sub-agent context). */
  extra?: string;
}

export const IDENTITY_LINE = 'You are a personal assistant running inside claw.';

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

let cachedTimezone: string | undefined;
/** Creating an Intl.DateTimeFormat costs ~0.2 ms; the host's zone does not change while we run. */
function hostTimezone(): string {
  cachedTimezone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return cachedTimezone;
}

function skillEntry(skill: Skill): string {
  return `  <skill>\n    <name>${escapeXml(skill.name)}</name>\n    <description>${escapeXml(skill.description)}</description>\n    <location>${escapeXml(skill.location)}</location>\n  </skill>`;
}

export function formatSkillsForPrompt(skills: readonly Skill[]): string {
  return `<available_skills>\n${skills.map(skillEntry).join('\n')}\n</available_skills>`;
}

export function buildSystemPrompt(input: PromptInput): { prompt: string; report: PromptReport } {
  const full = input.mode === 'full';
  const sections: string[] = [IDENTITY_LINE];
  const report: PromptReport = {
    mode: input.mode,
    chars: 0,
    projectContextChars: 0,
    toolListChars: 0,
    skillsChars: 0,
    skills: [],
    files: input.bootstrap.map(({ name, status, rawChars, injectedChars }) => ({
      name,
      status,
      rawChars,
      injectedChars,
    })),
  };
  if (input.mode === 'none') {
    report.chars = IDENTITY_LINE.length;
    return { prompt: IDENTITY_LINE, report };
  }

  const toolList = input.tools.length
    ? input.tools.map((tool) => `- ${tool.name}: ${tool.description.split('\n')[0]}`).join('\n')
    : '(no tools are available in this session)';
  report.toolListChars = toolList.length;
  sections.push(
    `## Tooling\nTools available to you (call them by name; their parameters are described in the tool schemas):\n${toolList}\nUse tools when they help; say plainly when one fails. Relative paths are resolved against the workspace.`,
  );
  sections.push(
    '## Safety\nAct within what the user asked. Do not try to gain access, persistence or influence beyond the task, and do not work around oversight, approvals or tool policy. Ask before destructive or irreversible actions, and before sending anything to third parties.',
  );
  if (full && input.skills.length > 0) {
    const list = formatSkillsForPrompt(input.skills);
    report.skillsChars = list.length;
    report.skills = input.skills.map((skill) => ({ name: skill.name, chars: skillEntry(skill).length }));
    sections.push(
      `## Skills\nSkills are instructions for specific jobs. When one fits the task, read its SKILL.md (with the read tool) before acting.\n${list}`,
    );
  }
  sections.push(
    `## Workspace\nYour working directory is ${input.workspaceDir}. Files there are your memory and your notes; keep them tidy.`,
  );
  if (input.sandbox) {
    sections.push(
      `## Sandbox\nCommands run in a sandbox (${input.sandbox.mode}); its workspace is ${input.sandbox.workspace}.`,
    );
  }
  const timezone = input.userTimezone ?? hostTimezone();
  sections.push(
    `## Current Date & Time\nTime zone: ${timezone}${input.userTimezone ? " (the user's)" : ' (this host)'}. For the current date or time, use a tool rather than guessing.`,
  );
  if (full) {
    sections.push(
      '## Replies\nIf nothing needs to be said (for example after a background task), answer with exactly NO_REPLY and nothing else. To reply to a specific message, start with [[reply:<message id>]]; to attach a file or image, include [[media:<url or path>]].',
    );
  }
  const injected = input.bootstrap.filter(
    (file) => file.status === 'ok' || file.status === 'truncated' || file.status === 'missing',
  );
  if (injected.length > 0) {
    const blocks = injected.map((file) =>
      file.status === 'missing'
        ? `## ${file.name}\n[MISSING] Expected at: ${file.path}`
        : `## ${file.name}\n${file.content ?? ''}`,
    );
    const context = `# Project Context\nThe following workspace files were loaded for this session:\n\n${blocks.join('\n\n')}`;
    report.projectContextChars = context.length;
    sections.push('## Workspace Files (injected)\nThe workspace bootstrap files follow under Project Context.');
    sections.push(context);
  }
  if (input.extra)
    sections.push(`## ${input.mode === 'minimal' ? 'Subagent Context' : 'Group Chat Context'}\n${input.extra}`);
  const r = input.runtime;
  sections.push(
    `## Runtime\nRuntime: agent=${r.agentId} | host=${r.host} | os=${r.os} | node=${r.node} | model=${r.model} | thinking=${r.thinking}`,
  );
  const prompt = sections.join('\n\n');
  report.chars = prompt.length;
  return { prompt, report };
}
