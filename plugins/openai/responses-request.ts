/**
 * Our conversation → a Responses API request body.
 *
 * Requests are stateless (`store: false`, full history every time), so items are sent
 * without server-side ids: a function_call item that named an id would have to be
 * accompanied by the reasoning item it came from, which we do not keep. Thinking parts
 * are therefore not sent back either.
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

type InputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' };

export type InputItem =
  | { type: 'message'; role: 'user'; content: string | InputContent[] }
  | { type: 'message'; role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string };

export function responsesBody(request: ModelRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    input: responsesInput(request.messages),
    stream: true,
    store: false,
  };
  if (request.systemPrompt) body.instructions = request.systemPrompt;
  if (request.tools && request.tools.length > 0) {
    // strict mode would demand schemas written for it (every property required, no extras).
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }));
  }
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined && acceptsTemperature(request.model)) body.temperature = request.temperature;
  const effort = reasoningEffort(request.model, request.thinking);
  // Without a summary the model reasons silently and there is nothing to stream as thinking.
  if (effort) body.reasoning = { effort, summary: 'auto' };
  return body;
}

export function responsesInput(messages: ChatMessage[]): InputItem[] {
  const items: InputItem[] = [];
  // As with Chat: keep a run of function outputs together, then show their images.
  let pendingImages: ImagePart[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    items.push({
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'Images returned by the tool calls above:' },
        ...pendingImages.map(inputImage),
      ],
    });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'toolResult') flushImages();
    if (message.role === 'user') items.push({ type: 'message', role: 'user', content: userContent(message.content) });
    else if (message.role === 'assistant') items.push(...assistantItems(message));
    else {
      items.push(functionOutput(message));
      pendingImages.push(...message.content.filter((part): part is ImagePart => part.type === 'image'));
    }
  }
  flushImages();
  return items;
}

function userContent(content: string | Array<TextPart | ImagePart>): string | InputContent[] {
  if (typeof content === 'string') return content;
  return content.map((part) =>
    part.type === 'text' ? { type: 'input_text' as const, text: part.text } : inputImage(part),
  );
}

function inputImage(part: ImagePart): InputContent {
  return { type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}`, detail: 'auto' };
}

/** Text and calls in their original order; consecutive text parts form one message. */
function assistantItems(message: AssistantMessage): InputItem[] {
  const items: InputItem[] = [];
  let text = '';
  const flushText = () => {
    if (text !== '') items.push({ type: 'message', role: 'assistant', content: text });
    text = '';
  };
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'toolCall') {
      flushText();
      items.push({
        type: 'function_call',
        call_id: part.id,
        name: part.name,
        arguments: JSON.stringify(part.arguments ?? {}),
      });
    }
  }
  flushText();
  return items;
}

function functionOutput(message: ToolResultMessage): InputItem {
  const text = message.content
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
  const hasImages = message.content.some((part) => part.type === 'image');
  return {
    type: 'function_call_output',
    call_id: message.toolCallId,
    output: text === '' && hasImages ? '(image attached below)' : text,
  };
}
