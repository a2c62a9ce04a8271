/**
 * A tool call in the chat: a card that folds open (a native <details>, so Enter and Space
 * work) with the tool's name, a one-line summary of its arguments and its status, and
 * inside, the arguments in full and an excerpt of the result.
 *
 * Live calls come from the `agent` event stream (`stream: "tool"`, phase start then
 * result); past ones from chat.history, where an assistant message's toolCall parts are
 * answered by toolResult messages with the same id.
 */
import { badge, h, replace } from '../dom.js';

export type ToolStatus = 'running' | 'ok' | 'error' | 'unknown';

export interface ToolCallView {
  id: string;
  name: string;
  args?: Record<string, unknown>;
  status: ToolStatus;
  result?: string;
  durationMs?: number;
}

const SUMMARY_CHARS = 90;
const ARGS_CHARS = 2000;
const RESULT_CHARS = 800;

const STATUS: Record<ToolStatus, [label: string, tone: 'info' | 'ok' | 'bad' | 'muted']> = {
  running: ['Running…', 'info'],
  ok: ['Done', 'ok'],
  error: ['Failed', 'bad'],
  unknown: ['No result', 'muted'],
};

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** `command: ls -la, cwd: /tmp` — string values as they are, others as JSON, on one line. */
export function summarizeArgs(args: Record<string, unknown> | undefined): string {
  const text = Object.entries(args ?? {})
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ')
    .replace(/\s+/g, ' ');
  return clip(text, SUMMARY_CHARS);
}

/** A card for one call, and the way to update it when its result arrives. */
export function toolCard(call: ToolCallView): { item: HTMLElement; update(next: Partial<ToolCallView>): void } {
  const state = { ...call };
  const status = h('span', { class: 'tool-status' });
  const detail = h('div', { class: 'tool-detail' });
  const item = h(
    'li',
    { class: 'msg tool-call', 'data-tool-call-id': call.id },
    h(
      'details',
      null,
      h(
        'summary',
        null,
        h('code', { class: 'tool-name' }, call.name),
        h('span', { class: 'tool-args' }, summarizeArgs(call.args)),
        status,
      ),
      detail,
    ),
  );
  const render = () => {
    const [label, tone] = STATUS[state.status];
    item.dataset.status = state.status;
    if (state.status === 'running') item.setAttribute('aria-busy', 'true');
    else item.removeAttribute('aria-busy');
    replace(status, badge(label, tone));
    const args = JSON.stringify(state.args ?? {}, null, 2);
    replace(
      detail,
      h('p', { class: 'tool-label' }, 'Arguments'),
      h('pre', null, h('code', null, clip(args, ARGS_CHARS))),
      state.result !== undefined
        ? [
            h(
              'p',
              { class: 'tool-label' },
              state.status === 'error' ? 'Error' : 'Result',
              state.durationMs !== undefined ? h('span', { class: 'muted' }, ` · ${state.durationMs} ms`) : null,
            ),
            h('pre', { class: 'tool-result' }, h('samp', null, clip(state.result, RESULT_CHARS) || '(empty)')),
          ]
        : h(
            'p',
            { class: 'muted' },
            state.status === 'running' ? 'Waiting for the result…' : 'No result was recorded.',
          ),
    );
  };
  render();
  return {
    item,
    update(next) {
      Object.assign(state, next);
      render();
    },
  };
}
