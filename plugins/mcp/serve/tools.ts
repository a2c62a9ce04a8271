/**
 * The bridge's MCP tools, with OpenClaw's names, argument names and result shapes: a text
 * summary for clients that show text, and `structuredContent` for those that read JSON.
 * Arguments are checked here against the same JSON Schemas the client is shown, so a bad
 * call is an error result naming the argument, never a half-done action.
 */
import { LIMITS, type ChannelBridge } from './bridge.js';

type Json = Record<string, unknown>;

interface Property {
  type: 'string' | 'integer' | 'boolean';
  description?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  enum?: string[];
}

export interface ToolResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Json;
  isError?: boolean;
  [extra: string]: unknown;
}

interface BridgeTool {
  name: string;
  description: string;
  properties: Record<string, Property>;
  required?: string[];
  run(args: Json, signal: AbortSignal): Promise<ToolResult>;
}

const sessionKey: Property = { type: 'string', minLength: 1, description: "The conversation's session key." };

function counted(label: string, count: number, payload?: Json): ToolResult {
  const text = payload ? `${label}: ${count}\n\n${JSON.stringify(payload, null, 2)}` : `${label}: ${count}`;
  return { content: [{ type: 'text', text }] };
}

function failure(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

export function bridgeTools(bridge: ChannelBridge): BridgeTool[] {
  return [
    {
      name: 'conversations_list',
      description: 'List channel conversations: gateway sessions with a stored reply route.',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: LIMITS.conversations },
        search: { type: 'string' },
        channel: { type: 'string' },
        includeDerivedTitles: { type: 'boolean' },
        includeLastMessage: { type: 'boolean' },
      },
      run: async (args) => {
        const conversations = await bridge.listConversations(args);
        return {
          ...counted('conversations', conversations.length, { conversations }),
          structuredContent: { conversations },
        };
      },
    },
    {
      name: 'conversation_get',
      description: 'Get one conversation by session key.',
      properties: { session_key: sessionKey },
      required: ['session_key'],
      run: async (args) => {
        const conversation = await bridge.getConversation(args.session_key as string);
        if (!conversation) return failure(`conversation not found: ${String(args.session_key)}`);
        return {
          content: [{ type: 'text', text: `conversation ${conversation.sessionKey}` }],
          structuredContent: { conversation },
        };
      },
    },
    {
      name: 'messages_read',
      description: 'Read the recent messages of one conversation (default 20).',
      properties: { session_key: sessionKey, limit: { type: 'integer', minimum: 1, maximum: LIMITS.messages } },
      required: ['session_key'],
      run: async (args) => {
        const messages = await bridge.readMessages(args.session_key as string, (args.limit as number) ?? 20);
        return { ...counted('messages', messages.length, { messages }), structuredContent: { messages } };
      },
    },
    {
      name: 'attachments_fetch',
      description:
        'List the non-text content blocks of one message (message_id as messages_read shows it in __openclaw).',
      properties: {
        session_key: sessionKey,
        message_id: { type: 'string', minLength: 1 },
        limit: { type: 'integer', minimum: 1, maximum: LIMITS.messages },
      },
      required: ['session_key', 'message_id'],
      run: async (args) => {
        const message = await bridge.readMessage(
          args.session_key as string,
          args.message_id as string,
          (args.limit as number) ?? 100,
        );
        if (!message) return failure(`message not found: ${String(args.message_id)}`);
        const attachments = bridge.attachments(message);
        return { ...counted('attachments', attachments.length), structuredContent: { attachments, message } };
      },
    },
    {
      name: 'events_poll',
      description: 'Read queued live events after a cursor, without consuming them.',
      properties: {
        after_cursor: { type: 'integer', minimum: 0 },
        session_key: { type: 'string' },
        limit: { type: 'integer', minimum: 1, maximum: LIMITS.events },
      },
      run: async (args) => {
        const { events, nextCursor, gap } = bridge.poll(
          { afterCursor: (args.after_cursor as number) ?? 0, sessionKey: optionalText(args.session_key) },
          (args.limit as number) ?? 20,
        );
        return {
          ...counted('events', events.length),
          structuredContent: { events, next_cursor: nextCursor, ...(gap ? { gap } : {}) },
        };
      },
    },
    {
      name: 'events_wait',
      description: 'Wait for the next queued live event after a cursor (default 30 s, at most 300 s).',
      properties: {
        after_cursor: { type: 'integer', minimum: 0 },
        session_key: { type: 'string' },
        timeout_ms: { type: 'integer', minimum: 1, maximum: LIMITS.waitMs },
      },
      run: async (args, signal) => {
        const { event, gap } = await bridge.wait(
          { afterCursor: (args.after_cursor as number) ?? 0, sessionKey: optionalText(args.session_key) },
          (args.timeout_ms as number) ?? 30_000,
          signal,
        );
        const text = event
          ? `event ${event.cursor}`
          : gap
            ? `event gap before ${gap.oldest_available_cursor}`
            : 'timeout';
        return { content: [{ type: 'text', text }], structuredContent: { event, ...(gap ? { gap } : {}) } };
      },
    },
    {
      name: 'messages_send',
      description: "Send text back through the conversation's stored route (channel, recipient, account, thread).",
      properties: { session_key: sessionKey, text: { type: 'string', minLength: 1 } },
      required: ['session_key', 'text'],
      run: async (args) => {
        const result = await bridge.sendMessage(args.session_key as string, args.text as string);
        return { content: [{ type: 'text', text: 'sent' }], structuredContent: { result } };
      },
    },
    {
      name: 'permissions_list_open',
      description: 'List the exec or plugin approval requests seen since the bridge connected that are still open.',
      properties: {},
      run: async () => {
        const approvals = bridge.listApprovals();
        return { ...counted('approvals', approvals.length), structuredContent: { approvals } };
      },
    },
    {
      name: 'permissions_respond',
      description: 'Allow or deny one pending exec or plugin approval request.',
      properties: {
        kind: { type: 'string', enum: ['exec', 'plugin'] },
        id: { type: 'string', minLength: 1 },
        decision: { type: 'string', enum: ['allow-once', 'allow-always', 'deny'] },
      },
      required: ['kind', 'id', 'decision'],
      run: async (args) => {
        const result = await bridge.respondToApproval(
          args.kind as 'exec' | 'plugin',
          args.id as string,
          args.decision as string,
        );
        return { content: [{ type: 'text', text: 'approval resolved' }], structuredContent: { result } };
      },
    },
  ];
}

/** The tools as tools/list shows them. */
export function toolListing(tools: BridgeTool[]) {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: {
      type: 'object' as const,
      properties: tool.properties,
      ...(tool.required ? { required: tool.required } : {}),
      additionalProperties: false,
    },
  }));
}

/** What is wrong with `args` for `tool`, or undefined when nothing is. */
export function argumentProblem(tool: BridgeTool, args: Json): string | undefined {
  for (const name of tool.required ?? []) if (args[name] === undefined) return `${name} is required`;
  for (const [name, value] of Object.entries(args)) {
    const property = tool.properties[name];
    if (!property) return `unknown argument ${name}`;
    if (value === undefined) continue;
    if (property.type === 'boolean' && typeof value !== 'boolean') return `${name} must be true or false`;
    if (property.type === 'integer') {
      if (typeof value !== 'number' || !Number.isInteger(value)) return `${name} must be an integer`;
      if (property.minimum !== undefined && value < property.minimum) return `${name} must be ≥ ${property.minimum}`;
      if (property.maximum !== undefined && value > property.maximum) return `${name} must be ≤ ${property.maximum}`;
    }
    if (property.type === 'string') {
      if (typeof value !== 'string') return `${name} must be a string`;
      if (property.minLength !== undefined && value.length < property.minLength) return `${name} must not be empty`;
      if (property.enum && !property.enum.includes(value)) return `${name} must be one of ${property.enum.join(', ')}`;
    }
  }
  return undefined;
}
