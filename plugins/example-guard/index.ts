/**
 * Example hook plugin. `before_tool_call` blocks tools named in `blockTools`;
 * `message_sending` masks every match of `maskPatterns` in outgoing text, and cancels
 * a message that would be left empty.
 */
import { definePlugin } from '../../sdk/index.js';

interface GuardConfig {
  blockTools: string[];
  maskPatterns: string[];
  mask: string;
  priority: number;
}

/** Compile patterns up front so a bad one fails registration with a clear message. */
export function compilePatterns(patterns: readonly string[]): RegExp[] {
  return patterns.map((pattern) => {
    try {
      return new RegExp(pattern, 'g');
    } catch (error) {
      throw new Error(`maskPatterns: "${pattern}" is not a valid regular expression (${(error as Error).message})`);
    }
  });
}

export function maskText(text: string, patterns: readonly RegExp[], mask: string): string {
  return patterns.reduce((current, pattern) => current.replace(pattern, mask), text);
}

export default definePlugin<GuardConfig>({
  id: 'example-guard',
  register(api) {
    const { blockTools, mask, priority } = api.config;
    const patterns = compilePatterns(api.config.maskPatterns);
    const blocked = new Set(blockTools);

    api.on(
      'before_tool_call',
      (event) => {
        if (!blocked.has(event.toolName)) return undefined;
        return { block: true, blockReason: `tool "${event.toolName}" is blocked by example-guard` };
      },
      { priority },
    );

    api.on(
      'message_sending',
      (event) => {
        if (patterns.length === 0) return undefined;
        const content = maskText(event.content, patterns, mask);
        if (content === event.content) return undefined;
        return content.trim() === '' ? { cancel: true } : { content };
      },
      { priority },
    );
  },
});
