/**
 * An MCP tool result as a claw tool result: text stays text, images become image parts, an
 * embedded resource shows its text (or says what it is), and structured content with no text
 * beside it becomes JSON text the model can read. `isError` is kept.
 */
import type { ToolContent, ToolResult } from '../../../sdk/index.js';

interface McpContentPart {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; blob?: string; mimeType?: string };
}

export interface McpCallResult {
  content?: McpContentPart[];
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

function part(item: McpContentPart): ToolContent {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text ?? '' };
    case 'image':
      return { type: 'image', data: item.data ?? '', mimeType: item.mimeType ?? 'image/png' };
    case 'resource': {
      const resource = item.resource ?? {};
      if (typeof resource.text === 'string') return { type: 'text', text: resource.text };
      return { type: 'text', text: `[binary resource ${resource.uri ?? ''} (${resource.mimeType ?? 'unknown type'})]` };
    }
    case 'resource_link':
      return { type: 'text', text: `[resource ${item.name ? `${item.name}: ` : ''}${item.uri ?? ''}]` };
    case 'audio':
      return { type: 'text', text: `[audio (${item.mimeType ?? 'unknown type'}) omitted]` };
    default:
      return { type: 'text', text: `[${item.type} content omitted]` };
  }
}

export function toToolResult(server: string, tool: string, result: McpCallResult): ToolResult {
  // Servers on the 2024-10-07 protocol answer with `toolResult` instead of content.
  const content: ToolContent[] = (result.content ?? []).map(part);
  if (result.content === undefined && result.toolResult !== undefined)
    content.push({ type: 'text', text: JSON.stringify(result.toolResult, null, 2) });
  if (result.structuredContent !== undefined && !content.some((item) => item.type === 'text'))
    content.push({ type: 'text', text: JSON.stringify(result.structuredContent, null, 2) });
  if (content.length === 0) content.push({ type: 'text', text: '(no content)' });
  return {
    content,
    ...(result.isError ? { isError: true } : {}),
    details: {
      server,
      tool,
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    },
  };
}
