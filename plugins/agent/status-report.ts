/**
 * The reports `/status` and `/context` answer with: what the agent's session uses and
 * what fills its context window.
 */
import type { KernelConfig } from '../../sdk/index.js';
import { clawVersion } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import { estimateTokens, sessionSandbox, type DispatchInput, type PromptReport } from '../../sdk/agent/index.js';
import type { AgentRuntime } from './runtime.js';

/** The session a report is about. */
export interface ReportScope {
  runtime: AgentRuntime;
  input: DispatchInput;
  agentId: string;
  sessionKey: string;
}

function formatNumber(n: number): string {
  return n.toLocaleString('en-US');
}

function sizeText(chars: number): string {
  return `${formatNumber(chars)} chars (~${formatNumber(estimateTokens(chars))} tok)`;
}

function ago(ms: number): string {
  if (ms < 60_000) return `${Math.max(0, Math.round(ms / 1000))}s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)}h ago`;
  return `${Math.round(ms / 86_400_000)}d ago`;
}

/** `/status`: model, context use, session settings, queue mode and whether a run is going. */
export async function statusText(scope: ReportScope): Promise<string> {
  const { runtime, agentId, sessionKey, input } = scope;
  const settings = runtime.settings(agentId);
  const entry = await runtime.store(agentId).get(sessionKey);
  const chain = runtime.models.chain(settings, entry?.model);
  const info = chain[0] ? await runtime.models.info(chain[0], settings) : undefined;
  const queue = runtime.queueSettings(input, entry);
  const used = entry?.totalTokens ?? 0;
  const window = info?.contextWindow ?? 0;
  const lines = [
    `🦞 claw ${clawVersion()}`,
    `🤖 Model: ${chain[0] ?? 'none configured'}${chain.length > 1 ? ` (fallbacks: ${chain.slice(1).join(', ')})` : ''}`,
    `📚 Context: ${formatNumber(used)}/${formatNumber(window)} tokens${window ? ` (${Math.round((used / window) * 100)}%)` : ''} · 🧹 Compactions: ${entry?.compactionCount ?? 0}`,
    `🧵 Session: ${sessionKey}${entry ? ` · ${entry.sessionId.slice(0, 8)} · updated ${ago(runtime.now() - entry.updatedAt)}` : ' · not started'}`,
    `⚙️ Thinking: ${entry?.thinkingLevel ?? settings.thinkingDefault} · Verbose: ${entry?.verboseLevel ?? 'off'} · Reasoning: ${entry?.reasoningLevel ?? 'off'}`,
    `📥 Queue: ${queue.mode} (debounce ${queue.debounceMs}ms, cap ${queue.cap}, drop ${queue.drop})`,
    `🏃 Run: ${runtime.isActive(sessionKey) ? 'running' : 'idle'}`,
  ];
  return lines.join('\n');
}

/** `/context list | detail`: what fills the context window, from the last run's report or an estimate. */
export async function contextText(scope: ReportScope, args: string): Promise<string> {
  const { runtime, agentId, sessionKey } = scope;
  const mode = args.trim().toLowerCase() || 'list';
  if (mode !== 'list' && mode !== 'detail') return 'Usage: /context list | /context detail';
  const settings = runtime.settings(agentId);
  const entry = await runtime.store(agentId).get(sessionKey);
  let report = entry?.systemPromptReport as PromptReport | undefined;
  const label = report ? 'run' : 'estimate';
  if (!report) {
    const loop = await runtime.loop();
    if (!loop.describePrompt)
      return `🧠 The agent loop in use (plugins.slots.agentLoop) does not describe its system prompt; it is reported after the next run.`;
    report = (
      await loop.describePrompt({
        kernel: runtime.kernel,
        settings,
        mainSession: sessionKey === runtime.mainKey(agentId),
        skills:
          runtime.skills?.promptSkills({
            agentId,
            workspaceDir: settings.workspaceDir,
            sessionKey,
            sessionId: entry?.sessionId,
          }) ?? [],
        model: runtime.models.chain(settings, entry?.model)[0],
        thinking: entry?.thinkingLevel ?? settings.thinkingDefault,
      })
    ).report;
  }
  const sandbox = sessionSandbox(
    await requireService<SandboxRouter>(runtime.kernel, SANDBOX_ROUTE_SERVICE, '/context'),
    runtime.kernel.config() as KernelConfig,
    settings,
    sessionKey,
    runtime.kernel.paths.stateDir,
  );
  const tools = report.tools ?? [];
  const schemaChars = tools.reduce((sum, tool) => sum + tool.schemaChars, 0);
  const lines = [
    '🧠 Context breakdown',
    `Workspace: ${settings.workspaceDir}`,
    `Bootstrap max/file: ${formatNumber(settings.bootstrapMaxChars)} chars`,
    `Sandbox: mode=${sandbox.mode} sandboxed=${sandbox.sandboxed}${sandbox.workdir ? ` (tools run in ${sandbox.workdir})` : ''}`,
    `System prompt (${label}): ${sizeText(report.chars)} (Project Context ${sizeText(report.projectContextChars)})`,
    '',
    'Injected workspace files:',
    ...report.files.map(
      (file) =>
        `- ${file.name}: ${file.status === 'empty' ? 'OK' : file.status.toUpperCase()} | raw ${sizeText(file.rawChars)} | injected ${sizeText(file.injectedChars)}`,
    ),
    '',
    `Skills list (system prompt text): ${sizeText(report.skillsChars)} (${report.skills.length} skill${report.skills.length === 1 ? '' : 's'})`,
    `Tools: ${tools.map((tool) => tool.name).join(', ') || '(none)'}`,
    `Tool list (system prompt text): ${sizeText(report.toolListChars)}`,
    `Tool schemas (JSON): ${sizeText(schemaChars)} (counts toward context; not shown as text)`,
  ];
  if (mode === 'detail') {
    const top = <T extends { name: string }>(items: T[], size: (item: T) => number, noun: string): string[] => {
      const sorted = [...items].sort((a, b) => size(b) - size(a));
      const shown = sorted.slice(0, 10).map((item) => `- ${item.name}: ${sizeText(size(item))}`);
      if (sorted.length > 10) shown.push(`… (+${sorted.length - 10} more ${noun})`);
      return shown.length ? shown : ['(none)'];
    };
    lines.push('', 'Top skills (prompt entry size):', ...top(report.skills, (skill) => skill.chars, 'skills'));
    lines.push('', 'Top tools (schema size):', ...top(tools, (tool) => tool.schemaChars, 'tools'));
  }
  const window =
    entry?.contextTokens ||
    (await runtime.models.info(runtime.models.chain(settings, entry?.model)[0] ?? '', settings)).contextWindow;
  lines.push(
    '',
    `Session tokens (cached): ${formatNumber(entry?.totalTokens ?? 0)} total / ctx=${formatNumber(window)}`,
  );
  return lines.join('\n');
}
