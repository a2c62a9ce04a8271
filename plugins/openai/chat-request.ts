/**
 * Our conversation → a Chat Completions request body.
 *
 * Thinking parts are not sent back: the Chat API has no field for them, and servers that
 * stream `reasoning_content` (DeepSeek, vLLM) reject it in input. Tool-call ids pass
 * through unchanged so results stay paired with their calls.
 */
import type {
  AssistantMessage,
  ChatMessage,
  ImagePart,
  ModelRequest,
  TextPart,
  ToolResultMessage,
} from '../../sdk/index.js';
import { acceptsTemperature, reasoningEffort } from './models.js';

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export type ChatWireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatBodyOptions {
  /**
   * OpenAI itself wants `max_completion_tokens` (reasoning models refuse `max_tokens`);
   * compatible servers reliably understand only `max_tokens`.
   */
  useMaxCompletionTokens: boolean;
}

export function chatBody(request: ModelRequest, options: ChatBodyOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: chatMessages(request.systemPrompt, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (request.maxTokens !== undefined)
    body[options.useMaxCompletionTokens ? 'max_completion_tokens' : 'max_tokens'] = request.maxTokens;
  if (request.temperature !== undefined && acceptsTemperature(request.model)) body.temperature = request.temperature;
  const effort = reasoningEffort(request.model, request.thinking);
  if (effort) body.reasoning_effort = effort;
  return body;
}

export function chatMessages(systemPrompt: string | undefined, messages: ChatMessage[]): ChatWireMessage[] {
  const wire: ChatWireMessage[] = [];
  if (systemPrompt) wire.push({ role: 'system', content: systemPrompt });
  // Tool messages may carry only text, and nothing may come between an assistant's tool
  // calls and their results; so images from a run of results follow it as one user message.
  let pendingImages: ImagePart[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    wire.push({
      role: 'user',
      content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, ...pendingImages.map(imagePart)],
    });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'toolResult') flushImages();
    if (message.role === 'user') {
      wire.push({ role: 'user', content: userContent(message.content) });
    } else if (message.role === 'assistant') {
      const assistant = assistantMessage(message);
      if (assistant) wire.push(assistant);
    } else {
      wire.push(toolMessage(message));
      pendingImages.push(...message.content.filter((part): part is ImagePart => part.type === 'image'));
    }
  }
  flushImages();
  return wire;
}

function userContent(content: string | Array<TextPart | ImagePart>): string | ContentPart[] {
  if (typeof content === 'string') return content;
  // A lone text part goes as a plain string, the one shape every compatible server reads.
  if (content.length === 1 && content[0]!.type === 'text') return content[0]!.text;
  return content.map((part) => (part.type === 'text' ? { type: 'text' as const, text: part.text } : imagePart(part)));
}

function imagePart(part: ImagePart): ContentPart {
  return { type: 'image_url', image_url: { url: `data:${part.mimeType};base64,${part.data}` } };
}

/** Undefined when nothing is left to send (a turn that only thought). */
function assistantMessage(message: AssistantMessage): ChatWireMessage | undefined {
  const text = message.content
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('');
  const toolCalls: WireToolCall[] = message.content.flatMap((part) =>
    part.type === 'toolCall'
      ? [
          {
            id: part.id,
            type: 'function' as const,
            function: { name: part.name, arguments: JSON.stringify(part.arguments ?? {}) },
          },
        ]
      : [],
  );
  if (text === '' && toolCalls.length === 0) return undefined;
  return toolCalls.length > 0
    ? { role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls }
    : { role: 'assistant', content: text };
}

function toolMessage(message: ToolResultMessage): ChatWireMessage {
  const text = message.content
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
  const hasImages = message.content.some((part) => part.type === 'image');
  return {
    role: 'tool',
    tool_call_id: message.toolCallId,
    content: text === '' && hasImages ? '(image attached below)' : text,
  };
}
