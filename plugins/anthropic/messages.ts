/**
 * Our conversation → a Messages API request body.
 *
 * Tool results travel as `tool_result` blocks in a user message, and Anthropic wants all
 * results of one assistant turn in the next user message, so consecutive same-role
 * messages are merged. Thinking goes back only when it carries a signature that Anthropic
 * issued (the API rejects unsigned or foreign blocks); and while a tool-use cycle is
 * still open, the API insists the assistant turn starts with its thinking, so a cycle
 * whose thinking was not kept is continued with thinking switched off.
 */
import type {
  AssistantMessage,
  ChatMessage,
  ImagePart,
  ModelRequest,
  TextPart,
  ThinkingPart,
  ToolResultMessage,
} from '../../sdk/index.js';
import { tokenPlan } from './models.js';

type CacheControl = { type: 'ephemeral' };
type TextBlock = { type: 'text'; text: string; cache_control?: CacheControl };
type ImageBlock = {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string };
  cache_control?: CacheControl;
};
type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string };
type ToolUseBlock = {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl;
};
type ToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content?: Array<TextBlock | ImageBlock>;
  is_error?: boolean;
  cache_control?: CacheControl;
};
export type ContentBlock = TextBlock | ImageBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock;

export interface WireMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

const PROVIDER = 'anthropic';

export function messagesBody(request: ModelRequest): Record<string, unknown> {
  const plan = tokenPlan(request.model, request.maxTokens, request.thinking);
  const thinking = plan.budget !== undefined && !openToolCycleWithoutThinking(request.messages);
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: plan.maxTokens,
    stream: true,
    messages: withCacheBreakpoint(wireMessages(request.messages)),
  };
  // Cache breakpoints on the system prompt (covering tools before it) and on the newest
  // message: an agent resends the same prefix every turn, and reads cost a tenth.
  if (request.systemPrompt)
    body.system = [{ type: 'text', text: request.systemPrompt, cache_control: { type: 'ephemeral' } }];
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }));
  }
  if (thinking) body.thinking = { type: 'enabled', budget_tokens: plan.budget };
  // Thinking requires the default temperature.
  else if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

export function wireMessages(messages: ChatMessage[]): WireMessage[] {
  const wire: WireMessage[] = [];
  for (const message of messages) {
    const next =
      message.role === 'user'
        ? userMessage(message.content)
        : message.role === 'assistant'
          ? assistantMessage(message)
          : toolResultMessage(message);
    if (next.content.length === 0) continue;
    const last = wire[wire.length - 1];
    if (last && last.role === next.role) last.content.push(...next.content);
    else wire.push(next);
  }
  return wire;
}

function userMessage(content: string | Array<TextPart | ImagePart>): WireMessage {
  const parts: Array<TextPart | ImagePart> = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  return { role: 'user', content: parts.flatMap(userBlock) };
}

// The API rejects empty text blocks.
function userBlock(part: TextPart | ImagePart): Array<TextBlock | ImageBlock> {
  if (part.type === 'image')
    return [{ type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } }];
  return part.text === '' ? [] : [{ type: 'text', text: part.text }];
}

function assistantMessage(message: AssistantMessage): WireMessage {
  const content: ContentBlock[] = [];
  for (const part of message.content) {
    if (part.type === 'thinking') {
      if (isReturnable(part, message))
        content.push({ type: 'thinking', thinking: part.thinking, signature: part.signature! });
    } else if (part.type === 'text') {
      if (part.text !== '') content.push({ type: 'text', text: part.text });
    } else {
      content.push({ type: 'tool_use', id: toolUseId(part.id), name: part.name, input: part.arguments ?? {} });
    }
  }
  return { role: 'assistant', content };
}

function toolResultMessage(message: ToolResultMessage): WireMessage {
  const content = message.content.flatMap(userBlock);
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: toolUseId(message.toolCallId) };
  if (content.length > 0) block.content = content;
  if (message.isError) block.is_error = true;
  return { role: 'user', content: [block] };
}

function isReturnable(part: ThinkingPart, message: AssistantMessage): boolean {
  return Boolean(part.signature) && (message.provider === undefined || message.provider === PROVIDER);
}

/**
 * Anthropic accepts tool ids matching [a-zA-Z0-9_-]{1,64}; ids from other providers may
 * not. The same mapping is applied to a call and its result, so they stay paired.
 */
export function toolUseId(id: string): string {
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return clean === '' ? 'toolu_unknown' : clean;
}

/** The conversation ends in tool results whose assistant turn kept no signed thinking. */
function openToolCycleWithoutThinking(messages: ChatMessage[]): boolean {
  if (messages[messages.length - 1]?.role !== 'toolResult') return false;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'user') return false;
    if (message.role === 'assistant')
      return !message.content.some((part) => part.type === 'thinking' && isReturnable(part, message));
  }
  return false;
}

function withCacheBreakpoint(messages: WireMessage[]): WireMessage[] {
  const last = messages[messages.length - 1];
  const block = last?.content[last.content.length - 1];
  // Thinking blocks cannot carry cache_control.
  if (block && block.type !== 'thinking') block.cache_control = { type: 'ephemeral' };
  return messages;
}
