/**
 * One agent turn: from a user message to a final answer through as many model calls and
 * tool calls as it takes — system prompt, model ↔ tools with streaming and steering,
 * memory flush and compaction. The loop fires no message-path hook of its own: the agent
 * plugin fires the pre-turn ones and hands their results in TurnInput, the models service
 * fires llm_input/llm_output, the kernel's tool choke point the tool hooks, and the
 * transcript before_message_write on every append; so a replacement loop keeps them all.
 */
import { hostname, platform, release } from 'node:os';
import type {
  ChatMessage,
  HookContext,
  KernelConfig,
  ModelRequest,
  ThinkingLevel,
  ToolCallPart,
  ToolDefinition,
  UserMessage,
} from '../../sdk/index.js';
import {
  isModelError,
  ModelError,
  parseModelRef,
  TOOL_POLICY_SERVICE,
  type ToolPolicyService,
} from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import {
  allowedTools,
  sessionToolRestriction,
  isCompactionSummaryMessage,
  isCompactionEntry,
  isMessageEntry,
  sessionSandbox,
  type AgentSettings,
  type ModelOutcome,
  type PromptMode,
  type PromptReport,
  type SessionService,
  type Skill,
  type TurnContext,
  type TurnInput,
  type TurnResult,
  assistantMessage,
  truncatedToolResult,
  turnSystemPrompt,
} from '../../sdk/agent/index.js';
import { bootstrapFiles } from './bootstrap-hook.js';
import {
  compactionCut,
  compactionThreshold,
  estimateContextTokens,
  pruneToolResults,
  renderForSummary,
  summaryPrompt,
  SUMMARY_SYSTEM_PROMPT,
} from './context.js';
import { buildSystemPrompt } from './prompt.js';
import { MAX_PARALLEL_TOOL_CALLS, runToolBatch } from './tool-batch.js';
import { dayStamp, isWritable, loadBootstrapFiles, type BootstrapFile } from './workspace.js';

const MAX_TRUNCATED_REPLIES = 3;
const STEERED_SKIP = 'Skipped: a new user message arrived before this tool ran; it follows below.';

export class Turn {
  private readonly hookCtx: HookContext;
  private readonly written: ChatMessage[] = [];
  private usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  private flushedThisCycle = false;
  /** A memory flush is running: its messages stay out of the transcript. */
  private flushing = false;
  private compactedOnOverflow = false;
  private lastToolError?: string;
  private pruneThisRun?: boolean;
  private cacheTouchedAt?: number;
  /** Replies in a row cut off at the token limit with tool calls; a model that keeps overrunning is stopped. */
  private truncatedReplies = 0;

  /** `sessions`: the sessions service, which keeps tool calls and their results paired in what the model sees. */
  constructor(
    private readonly deps: TurnContext,
    private readonly sessions: Pick<SessionService, 'repairToolPairing' | 'danglingToolCalls' | 'abortedToolResult'>,
  ) {
    this.hookCtx = {
      agentId: deps.settings.agentId,
      sessionKey: deps.sessionKey,
      sessionId: deps.session.sessionId,
      runId: deps.runId,
      channel: deps.channel,
      signal: deps.signal,
    };
  }

  async run(input: TurnInput): Promise<TurnResult> {
    const { kernel, settings } = this.deps;
    const chain = input.chain;
    const history = this.loadHistory();
    const current = chain[0] ? parseModelRef(chain[0]) : undefined;
    const tools = await this.availableTools(current?.provider, chain[0]);
    const bootstrap = await bootstrapFiles(kernel, settings, {
      mainSession: this.deps.mainSession,
      sessionKey: this.deps.sessionKey,
      sessionId: this.deps.session.sessionId,
    });
    const built = systemPromptFor({
      settings,
      tools,
      bootstrap,
      mainSession: this.deps.mainSession,
      skills: this.deps.skills,
      model: chain[0],
      thinking: input.thinking ?? this.deps.session.thinkingLevel ?? settings.thinkingDefault,
      extra: input.extraSystemPrompt,
      mode: input.promptMode,
      sandbox: promptSandbox(
        sessionSandbox(
          await requireService<SandboxRouter>(kernel, SANDBOX_ROUTE_SERVICE, 'the agent loop'),
          kernel.config() as KernelConfig,
          settings,
          this.deps.sessionKey,
          kernel.paths.stateDir,
        ),
      ),
    });
    const systemPrompt = turnSystemPrompt(input, built.prompt);
    const user: UserMessage = {
      role: 'user',
      content: input.images?.length ? [{ type: 'text', text: input.message }, ...input.images] : input.message,
      timestamp: Date.now(),
      ...(input.origin ? { origin: input.origin } : {}),
    };
    const messages = [...history];
    if (this.write(user)) messages.push(user);

    const thinking =
      input.thinking ?? (this.deps.session.thinkingLevel as ThinkingLevel | undefined) ?? settings.thinkingDefault;
    // A model the user chose (`--model`, `/model`) is tried even while it cools down.
    const requested = input.model ?? this.deps.session.model;
    const explicit = requested ? this.deps.models.chain(settings, requested)[0] : undefined;
    const state: LoopState = { systemPrompt, messages, tools, chain, thinking, explicit };
    try {
      const text = await this.loop(state, false);
      return this.result('ok', text, state, built.report);
    } catch (error) {
      // Calls the stopped run never answered get an "aborted" result, so the next request is valid.
      this.closeToolCalls(state.messages);
      if (this.deps.signal.aborted || (isModelError(error) && error.kind === 'aborted'))
        return this.result('aborted', '', state, built.report);
      return { ...this.result('error', '', state, built.report), error: (error as Error).message ?? String(error) };
    }
  }

  private result(status: TurnResult['status'], text: string, state: LoopState, report: PromptReport): TurnResult {
    const ref = state.usedRef ? parseModelRef(state.usedRef) : undefined;
    return {
      status,
      text,
      messages: this.written,
      usage: this.usage,
      provider: ref?.provider,
      model: ref?.model,
      promptReport: report,
      toolError: text ? undefined : this.lastToolError,
      cacheTouchedAt: this.cacheTouchedAt,
    };
  }

  private availableTools(provider: string | undefined, model: string | undefined): Promise<ToolDefinition[]> {
    return allowedTools(this.deps.kernel, this.deps.settings, provider, model, this.deps.sessionKey);
  }

  /**
   * The stored history as the model may see it. Calls a previous run left open at the end
   * (a crash, another process) are answered in the transcript first; older damage is mended
   * in memory (the sessions service's tool pairing).
   */
  private loadHistory(): ChatMessage[] {
    const stored = this.deps.transcript.messages();
    const closed = this.closeToolCalls(stored);
    return this.sessions.repairToolPairing(closed.length ? [...stored, ...closed] : stored);
  }

  /** Writes a synthetic "aborted" result for each call at the end of `messages` that has none. */
  private closeToolCalls(messages: ChatMessage[]): ChatMessage[] {
    const written: ChatMessage[] = [];
    for (const call of this.sessions.danglingToolCalls(messages)) {
      const result = this.sessions.abortedToolResult(call);
      if (this.write(result)) written.push(result);
    }
    if (written.length) this.deps.emit('lifecycle', { phase: 'tool-results-repaired', count: written.length });
    return written;
  }

  /** Append to the transcript; false when a before_message_write handler blocked it (the transcript runs the hook). */
  private write(message: ChatMessage): boolean {
    // A memory flush works on a private copy of the conversation; nothing of it is stored.
    if (this.flushing) return true;
    const entry = this.deps.transcript.appendMessage(message);
    if (entry) this.written.push(entry.message);
    return entry !== undefined;
  }

  /** Model ↔ tools until the model answers without calling tools. Returns the answer text. */
  private async loop(state: LoopState, silent: boolean): Promise<string> {
    const { settings, signal } = this.deps;
    this.deps.setStreaming(!silent);
    try {
      for (;;) {
        if (signal.aborted) throw new ModelError('aborted', 'the run was aborted');
        await this.maybeCompact(state, silent);
        const current = parseModelRef(state.chain[0] ?? '');
        const info = await this.deps.models.info(state.chain[0] ?? '', settings);
        let requestMessages = state.messages;
        if (settings.pruning.mode === 'cache-ttl' && current?.provider === 'anthropic') {
          // Only once the prompt cache has expired (no call within ttl); then for the whole
          // run, so every request of the run shares the same (pruned, cacheable) prefix.
          this.pruneThisRun ??= Date.now() - (this.deps.session.lastCacheTouchAt ?? 0) > settings.pruning.ttlMs;
          if (this.pruneThisRun) {
            const policy = await requireService<ToolPolicyService>(
              this.deps.kernel,
              TOOL_POLICY_SERVICE,
              'context pruning',
            );
            requestMessages = pruneToolResults(state.messages, settings.pruning, info.contextWindow, policy);
          }
        }
        const request: Omit<ModelRequest, 'model' | 'endpoint'> = {
          systemPrompt: state.systemPrompt,
          messages: requestMessages,
          tools: state.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            parameters: tool.parameters,
          })),
          thinking: state.thinking,
          ...(info.maxTokens ? { maxTokens: info.maxTokens } : {}),
        };
        let outcome: ModelOutcome;
        try {
          outcome = await this.deps.models.stream(settings, state.chain, request, {
            signal,
            preferProfile: this.deps.session.authProfileOverride,
            explicit: state.explicit,
            onEvent: (event) => {
              if (silent) return;
              if (event.type === 'text_delta') this.deps.emit('assistant', { delta: event.delta });
              else if (event.type === 'thinking_delta' && event.delta)
                this.deps.emit('assistant', { thinkingDelta: event.delta });
              else if (event.type === 'reset')
                this.deps.emit('assistant', {
                  reset: true,
                  reason: event.reason,
                  ...(event.retry ? { retry: event.retry } : {}),
                  ...(event.failover ? { failover: event.failover } : {}),
                });
            },
          });
        } catch (error) {
          if (isModelError(error) && error.kind === 'context_overflow' && !this.compactedOnOverflow) {
            // The provider says the context is too long: compact once and try again.
            this.compactedOnOverflow = true;
            await this.compact(state, { reason: 'overflow' });
            continue;
          }
          throw error;
        }
        state.usedRef = outcome.ref;
        if (outcome.provider === 'anthropic') this.cacheTouchedAt = Date.now();
        this.addUsage(outcome);
        const assistant = assistantMessage(outcome);
        if (this.write(assistant)) state.messages.push(assistant);
        // Block streaming sends what is buffered when a model message ends.
        if (!silent) this.deps.emit('assistant', { messageEnd: true, toolCalls: outcome.toolCalls.length });
        if (outcome.toolCalls.length === 0) return outcome.text;
        if (outcome.stopReason === 'length') {
          // Cut off at the token limit: the calls may be incomplete, so none runs; the model is told and asked again.
          if (++this.truncatedReplies > MAX_TRUNCATED_REPLIES)
            throw new Error(
              `the model's replies were cut off at the output token limit ${MAX_TRUNCATED_REPLIES + 1} times in a row`,
            );
          for (const call of outcome.toolCalls) {
            const result = truncatedToolResult(call);
            if (this.write(result)) state.messages.push(result);
          }
          continue;
        }

        this.truncatedReplies = 0;
        let steered = await this.runTools(outcome.toolCalls, state, outcome.ref, silent);
        if (signal.aborted) throw new ModelError('aborted', 'the run was aborted');
        if (steered.length === 0 && !silent) steered = this.deps.takeSteering();
        for (const text of steered) {
          const message: UserMessage = { role: 'user', content: text, timestamp: Date.now() };
          if (this.write(message)) state.messages.push(message);
          this.deps.emit('lifecycle', { phase: 'steered', chars: text.length });
        }
      }
    } finally {
      this.deps.setStreaming(false);
    }
  }

  /**
   * The tool calls of one assistant message, run together (tool-batch.ts) through the
   * kernel's tool choke point, each with its own hooks; results are written in call order.
   * A steering message stops the calls not yet started (they get a "skipped" result) and
   * is returned to go next; an abort stops them too and leaves them to the abort path.
   */
  private async runTools(
    calls: ToolCallPart[],
    state: LoopState,
    model: string | undefined,
    silent: boolean,
  ): Promise<string[]> {
    const { kernel, settings, signal } = this.deps;
    let steered: string[] = [];
    const context = {
      agentId: settings.agentId,
      sessionKey: this.deps.sessionKey,
      workspaceDir: settings.workspaceDir,
      signal,
      runId: this.deps.runId,
    };
    // A sub-agent session is narrowed by its depth; the choke point enforces it on every call.
    const allowed = await sessionToolRestriction(kernel, settings.agentId, this.deps.sessionKey);
    await runToolBatch(calls, MAX_PARALLEL_TOOL_CALLS, {
      start: () => {
        if (signal.aborted) return false;
        if (!silent && steered.length === 0) steered = this.deps.takeSteering();
        return steered.length === 0;
      },
      run: async (call) => {
        if (!silent)
          this.deps.emit('tool', { phase: 'start', toolCallId: call.id, name: call.name, args: call.arguments });
        const result = await kernel.tools.invoke({
          name: call.name,
          params: call.arguments,
          toolCallId: call.id,
          context,
          model,
          maxResultChars: settings.maxResultChars,
          ...(allowed ? { allowed } : {}),
        });
        if (!silent) {
          this.deps.emit('tool', {
            phase: 'result',
            toolCallId: call.id,
            name: call.name,
            isError: result.message.isError === true,
            durationMs: Math.round(result.durationMs),
            result: summarizeContent(result.message.content),
          });
        }
        return result.message;
      },
      settle: (call, _index, message) => {
        if (!message && steered.length === 0) return;
        // A user message arrived before this call started: it is skipped and the message goes next.
        const final: ChatMessage = message ?? {
          role: 'toolResult',
          toolCallId: call.id,
          toolName: call.name,
          content: [{ type: 'text', text: STEERED_SKIP }],
          isError: true,
          timestamp: Date.now(),
        };
        if (message?.isError)
          this.lastToolError = message.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
        if (this.write(final)) state.messages.push(final);
      },
    });
    return steered;
  }

  private addUsage(outcome: ModelOutcome): void {
    this.usage.input += outcome.usage?.input ?? 0;
    this.usage.output += outcome.usage?.output ?? 0;
    this.usage.cacheRead += outcome.usage?.cacheRead ?? 0;
    this.usage.cacheWrite += outcome.usage?.cacheWrite ?? 0;
  }

  /** Near the window: one silent memory-flush turn per compaction cycle, then compaction. */
  private async maybeCompact(state: LoopState, silent: boolean): Promise<void> {
    if (silent) return;
    const { settings } = this.deps;
    const info = await this.deps.models.info(state.chain[0] ?? '', settings);
    const schemaChars = state.tools.reduce(
      (sum, tool) => sum + JSON.stringify(tool.parameters).length + tool.description.length,
      0,
    );
    const estimate = estimateContextTokens(state.systemPrompt, state.messages, schemaChars);
    if (estimate <= compactionThreshold(info.contextWindow, settings.compaction)) return;
    const entry = await this.deps.store.get(this.deps.sessionKey);
    const cycle = entry?.compactionCount ?? 0;
    const flush = settings.compaction.memoryFlush;
    if (
      flush.enabled &&
      !this.flushedThisCycle &&
      entry?.memoryFlushCompactionCount !== cycle &&
      isWritable(settings.workspaceDir)
    ) {
      this.flushedThisCycle = true;
      await this.memoryFlush(state);
      await this.deps.store.upsert(this.deps.sessionKey, {
        memoryFlushCompactionCount: cycle,
        memoryFlushAt: Date.now(),
      });
    }
    await this.compact(state, { reason: 'threshold' });
  }

  /**
   * A silent turn of its own asking the model to write durable notes before older turns are
   * summarised. It runs on a private copy of the conversation: the user's message that
   * waits for an answer is left out (the flush prompt must not bury it), and nothing the
   * flush says is stored or reaches the main request; only what its tools did (the memory
   * files) remains. A failed flush is skipped: it is housekeeping, not the user's answer.
   */
  private async memoryFlush(state: LoopState): Promise<void> {
    this.deps.emit('compaction', { phase: 'memory-flush' });
    // The prompt names today's file literally, so the model needs no clock to find it.
    const today = dayStamp(new Date(), this.deps.settings.userTimezone);
    const text = this.deps.settings.compaction.memoryFlush.prompt.replaceAll('YYYY-MM-DD', today);
    const context = [...state.messages];
    while (
      context.length > 0 &&
      context[context.length - 1]!.role === 'user' &&
      !isCompactionSummaryMessage(context[context.length - 1]!)
    )
      context.pop();
    const flushState: LoopState = {
      ...state,
      systemPrompt: `${state.systemPrompt}\n\n${this.deps.settings.compaction.memoryFlush.systemPrompt}`,
      messages: [...context, { role: 'user', content: text, timestamp: Date.now() }],
    };
    this.flushing = true;
    try {
      await this.loop(flushState, true);
    } catch (error) {
      if (this.deps.signal.aborted || (isModelError(error) && error.kind === 'aborted')) throw error;
      this.deps.emit('compaction', { phase: 'memory-flush-failed', error: (error as Error).message ?? String(error) });
    } finally {
      this.flushing = false;
      this.deps.setStreaming(true);
    }
  }

  /** `/compact` and `sessions.compact`: summarise now, outside a model turn. */
  async compactNow(
    options: { model?: string; instructions?: string } = {},
  ): Promise<{ compacted: boolean; summary?: string; usage: TurnResult['usage'] }> {
    const chain = this.deps.models.chain(this.deps.settings, options.model ?? this.deps.session.model);
    const state: LoopState = {
      systemPrompt: '',
      messages: this.sessions.repairToolPairing(this.deps.transcript.messages()),
      tools: [],
      chain,
      thinking: 'off',
    };
    const outcome = await this.compact(state, { reason: 'manual', instructions: options.instructions });
    return { ...outcome, usage: this.usage };
  }

  /** Summarise older turns into a compaction entry; later requests see the summary plus the tail. */
  async compact(
    state: LoopState,
    options: { reason: 'threshold' | 'overflow' | 'manual'; instructions?: string },
  ): Promise<{ compacted: boolean; summary?: string }> {
    const { kernel, transcript, settings } = this.deps;
    const entries = transcript.entries();
    const lastCompaction = [...entries].reverse().find(isCompactionEntry);
    const firstKeptIndex = lastCompaction?.firstKeptEntryId
      ? entries.findIndex((entry) => entry.id === lastCompaction.firstKeptEntryId)
      : -1;
    const compactionIndex = lastCompaction ? entries.indexOf(lastCompaction) : -1;
    const live = entries.filter(
      (entry, index) => isMessageEntry(entry) && index >= (firstKeptIndex >= 0 ? firstKeptIndex : compactionIndex + 1),
    );
    const messages = live.flatMap((entry) => (isMessageEntry(entry) ? [entry.message] : []));
    const cut = compactionCut(
      messages,
      Math.min(
        settings.compaction.keepRecentTokens,
        Math.floor((await this.deps.models.info(state.chain[0] ?? '', settings)).contextWindow / 4),
      ),
    );
    if (cut === 0) return { compacted: false };
    const tokensBefore = estimateContextTokens(state.systemPrompt, state.messages);
    await kernel.hooks.ready('before_compaction');
    void kernel.hooks.runVoid(
      'before_compaction',
      { messageCount: messages.length, tokenCount: tokensBefore },
      this.hookCtx,
    );
    this.deps.emit('compaction', { phase: 'start', reason: options.reason, messages: messages.length });
    const outcome = await this.deps.models.stream(
      settings,
      state.chain,
      {
        systemPrompt: SUMMARY_SYSTEM_PROMPT,
        messages: [
          {
            role: 'user',
            content: summaryPrompt(
              renderForSummary(messages.slice(0, cut)),
              lastCompaction?.summary,
              options.instructions,
            ),
            timestamp: Date.now(),
          },
        ],
        thinking: 'off',
      },
      { signal: this.deps.signal, onEvent: () => {} },
    );
    this.addUsage(outcome);
    const summary = outcome.text.trim() || '(no summary)';
    transcript.appendCompaction({ summary, firstKeptEntryId: live[cut]?.id ?? null, tokensBefore });
    const updated = await this.deps.store.upsert(this.deps.sessionKey, (entry) => ({
      compactionCount: (entry?.compactionCount ?? 0) + 1,
    }));
    this.flushedThisCycle = false;
    state.messages = this.sessions.repairToolPairing(transcript.messages());
    this.deps.emit('compaction', {
      phase: 'end',
      reason: options.reason,
      summarized: cut,
      compactions: updated.compactionCount,
    });
    await kernel.hooks.ready('after_compaction');
    void kernel.hooks.runVoid(
      'after_compaction',
      { messageCount: state.messages.length, compactedCount: cut, summary },
      this.hookCtx,
    );
    return { compacted: true, summary };
  }
}

export interface LoopState {
  systemPrompt: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  chain: string[];
  thinking: ThinkingLevel;
  usedRef?: string;
  /** The ref the user chose for this turn, if any. */
  explicit?: string;
}

function summarizeContent(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content.slice(0, 2000);
  const text = content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

export interface PromptSources {
  settings: AgentSettings;
  tools: readonly ToolDefinition[];
  mainSession: boolean;
  skills: readonly Skill[];
  model?: string;
  thinking: string;
  extra?: string;
  mode?: PromptMode;
  /** Set when the session's tools run in a sandbox (its mode and the workspace path inside). */
  sandbox?: { mode: string; workspace: string };
  /** The bootstrap files as agent:bootstrap hooks left them; read from the workspace when absent. */
  bootstrap?: BootstrapFile[];
}

function promptSandbox(sandbox: ReturnType<typeof sessionSandbox>): PromptSources['sandbox'] {
  return sandbox.workdir ? { mode: sandbox.mode, workspace: sandbox.workdir } : undefined;
}

/** The system prompt and its size report, from the workspace, tools and skills as they are now. */
export function systemPromptFor(sources: PromptSources): { prompt: string; report: PromptReport } {
  const { settings } = sources;
  const built = buildSystemPrompt({
    mode: sources.mode ?? 'full',
    tools: sources.tools.map((tool) => ({ name: tool.name, description: tool.description })),
    workspaceDir: settings.workspaceDir,
    bootstrap:
      sources.bootstrap ??
      loadBootstrapFiles(settings.workspaceDir, {
        mainSession: sources.mainSession,
        maxChars: settings.bootstrapMaxChars,
        timeZone: settings.userTimezone,
      }),
    skills: [...sources.skills],
    userTimezone: settings.userTimezone,
    runtime: {
      agentId: settings.agentId,
      host: hostname(),
      os: `${platform()} ${release()}`,
      node: process.version,
      model: sources.model ?? 'none',
      thinking: sources.thinking,
    },
    extra: sources.extra,
    ...(sources.sandbox ? { sandbox: sources.sandbox } : {}),
  });
  built.report.tools = sources.tools.map((tool) => ({
    name: tool.name,
    schemaChars: JSON.stringify(tool.parameters ?? {}).length,
  }));
  return built;
}
