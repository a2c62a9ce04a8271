/**
 * OpenClaw tools as claw tools. OpenClaw's runtime signature is
 * `execute(toolCallId, params, signal?, onUpdate?)`; claw's is `execute(params, ctx)`. The
 * converted tool runs through claw's one choke point like any other (policy, hooks, params
 * check, masking, size cap). Factories (`registerTool((ctx) => tool)`) are asked again for
 * each call, with the calling session's context, as OpenClaw does when it assembles tools.
 */
import type { JsonSchema, ToolContext, ToolDefinition, ToolResult } from '../../kernel/index.js';

/** An OpenClaw tool object as plugins hand it to `api.registerTool`. */
export interface OpenclawTool {
  name: string;
  label?: string;
  description?: string;
  parameters?: JsonSchema;
  execute(
    toolCallId: string,
    params: Record<string, unknown>,
    signal?: AbortSignal,
    onUpdate?: (partial: unknown) => void,
  ): unknown;
}

/** What OpenClaw passes a tool factory; the fields claw has an answer for. */
export interface OpenclawToolContext {
  config: Record<string, unknown>;
  agentId?: string;
  sessionKey?: string;
  workspaceDir?: string;
  sandboxed: boolean;
}

export type OpenclawToolFactory = (ctx: OpenclawToolContext) => OpenclawTool | OpenclawTool[] | null | undefined;

export function isOpenclawTool(value: unknown): value is OpenclawTool {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as OpenclawTool).name === 'string' &&
    typeof (value as OpenclawTool).execute === 'function'
  );
}

/** OpenClaw tools return `{ content, details }` like claw's; a bare value or string is made into one. */
export function toToolResult(value: unknown): ToolResult {
  if (value !== null && typeof value === 'object' && Array.isArray((value as ToolResult).content)) {
    const { content, details, isError } = value as ToolResult;
    return { content, ...(details !== undefined ? { details } : {}), ...(isError ? { isError: true } : {}) };
  }
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  if (value === undefined) return { content: [{ type: 'text', text: '' }] };
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], details: value };
}

function runOpenclaw(tool: OpenclawTool, params: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const onUpdate = ctx.onUpdate ? (partial: unknown) => ctx.onUpdate!(toToolResult(partial)) : undefined;
  return Promise.resolve(tool.execute(ctx.toolCallId, params, ctx.signal, onUpdate)).then(toToolResult);
}

function described(tool: OpenclawTool): Pick<ToolDefinition, 'name' | 'label' | 'description' | 'parameters'> {
  return {
    name: tool.name,
    ...(tool.label ? { label: tool.label } : {}),
    // claw requires a description: the model needs one to choose the tool.
    description: tool.description?.trim() || tool.label || tool.name,
    parameters: tool.parameters ?? { type: 'object', properties: {} },
  };
}

export function fromOpenclawTool(tool: OpenclawTool): ToolDefinition {
  return { ...described(tool), execute: (params, ctx) => runOpenclaw(tool, params, ctx) };
}

/**
 * A factory's tools. Name, description and schema come from a call with a context of no
 * session (OpenClaw's metadata is static too); each call asks the factory again with the
 * calling session, and a factory that opts out there makes the call an error result.
 */
export function fromOpenclawFactory(
  factory: OpenclawToolFactory,
  config: () => Record<string, unknown>,
): ToolDefinition[] {
  const list = (made: ReturnType<OpenclawToolFactory>) =>
    (Array.isArray(made) ? made : made ? [made] : []).filter(isOpenclawTool);
  return list(factory({ config: config(), sandboxed: false })).map((probe) => ({
    ...described(probe),
    async execute(params, ctx) {
      const context = {
        config: config(),
        agentId: ctx.agentId,
        sessionKey: ctx.sessionKey,
        workspaceDir: ctx.workspaceDir,
        sandboxed: ctx.sandbox !== undefined,
      };
      const tool = list(factory(context)).find((candidate) => candidate.name === probe.name);
      if (!tool)
        return {
          content: [{ type: 'text', text: `tool "${probe.name}" is not available in this session` }],
          isError: true,
        };
      return runOpenclaw(tool, params, ctx);
    },
  }));
}
