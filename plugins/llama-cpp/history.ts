/**
 * The loop's conversation, as a chat history node-llama-cpp can render with a chat
 * wrapper. Only type imports from node-llama-cpp here: they vanish at compile time, so this
 * module costs nothing to load.
 */
import type { ChatHistoryItem } from 'node-llama-cpp';
import type { ChatMessage, ImagePart, TextPart } from '../../sdk/index.js';

/** Stands in for an image, so the model knows something was there that it cannot see. */
export const IMAGE_NOTE = '[image omitted: this local model reads text only]';

function partsToText(content: string | Array<TextPart | ImagePart>): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' ? part.text : IMAGE_NOTE))
    .filter((text) => text !== '')
    .join('\n');
}

/**
 * System prompt first, then one item per turn. Tool results become user turns and earlier
 * tool calls become a line of text: the local model is not offered tools, but a transcript
 * that came through another model (after a fallback) must still read coherently. Thinking
 * parts are dropped — another model's reasoning is not this one's to continue. Adjacent
 * turns of the same side are merged, because chat templates expect the sides to alternate.
 */
export function toChatHistory(systemPrompt: string | undefined, messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  if (systemPrompt && systemPrompt.trim() !== '') history.push({ type: 'system', text: systemPrompt });

  const addUser = (text: string): void => {
    const last = history[history.length - 1];
    if (last?.type === 'user') last.text = last.text === '' ? text : `${last.text}\n\n${text}`;
    else history.push({ type: 'user', text });
  };
  const addModel = (text: string): void => {
    const last = history[history.length - 1];
    if (last?.type === 'model') last.response.push(last.response.length > 0 ? `\n\n${text}` : text);
    else history.push({ type: 'model', response: [text] });
  };

  for (const message of messages) {
    if (message.role === 'user') {
      addUser(partsToText(message.content));
    } else if (message.role === 'toolResult') {
      const label = message.isError ? `Tool ${message.toolName} failed` : `Tool ${message.toolName} returned`;
      addUser(`${label}:\n${partsToText(message.content)}`);
    } else {
      const pieces: string[] = [];
      for (const part of message.content) {
        if (part.type === 'text') {
          if (part.text !== '') pieces.push(part.text);
        } else if (part.type === 'toolCall') {
          pieces.push(`[called tool ${part.name} with ${JSON.stringify(part.arguments)}]`);
        }
      }
      if (pieces.length > 0) addModel(pieces.join('\n'));
    }
  }
  return history;
}
