/**
 * `act` requests by snapshot ref (OpenClaw's kinds: click, type, fill, press, hover,
 * select, wait) and the combinable wait. Refs come from the last snapshot of the tab and
 * resolve through Playwright's `aria-ref=` selector; after a navigation they no longer
 * resolve and the caller must take a new snapshot.
 */
import type { Locator, Page } from 'playwright-core';

export class BrowserInputError extends Error {}

export interface WaitRequest {
  timeMs?: number;
  text?: string;
  textGone?: string;
  selector?: string;
  url?: string;
  loadState?: 'load' | 'domcontentloaded' | 'networkidle';
  fn?: string;
  timeoutMs?: number;
}

export interface ActRequest extends WaitRequest {
  kind: string;
  ref?: string;
  text?: string;
  submit?: boolean;
  slowly?: boolean;
  doubleClick?: boolean;
  button?: 'left' | 'right' | 'middle';
  modifiers?: Array<'Alt' | 'Control' | 'ControlOrMeta' | 'Meta' | 'Shift'>;
  key?: string;
  values?: string[];
  fields?: Array<{ ref: string; type?: string; value?: unknown }>;
}

export const ACT_KINDS = ['click', 'type', 'fill', 'press', 'hover', 'select', 'wait'] as const;
const DEFAULT_TIMEOUT_MS = 20_000;

/** `12` → `e12` (the CLI's short form); anything else as given. */
export function normalizeRef(ref: string | undefined, what = 'ref'): string {
  const value = ref?.trim();
  if (!value) throw new BrowserInputError(`${what} is required (a ref from the last snapshot, such as e12)`);
  if (/^\d+$/.test(value)) return `e${value}`;
  if (!/^(f\d+)?e\d+$/.test(value))
    throw new BrowserInputError(
      `${what} "${value}" is not a snapshot ref (such as e12 or f1e3); CSS selectors are not accepted for actions`,
    );
  return value;
}

function byRef(page: Page, ref: string | undefined, what = 'ref'): Locator {
  return page.locator(`aria-ref=${normalizeRef(ref, what)}`);
}

const KEY_ALIASES: Record<string, string> = {
  esc: 'Escape',
  return: 'Enter',
  del: 'Delete',
  ctrl: 'Control',
  cmd: 'Meta',
  command: 'Meta',
  option: 'Alt',
  space: ' ',
};

export function normalizeKey(key: string): string {
  return key
    .split(/\+(?!$)/)
    .map((part) => KEY_ALIASES[part.toLowerCase()] ?? part)
    .join('+');
}

function timeoutOf(request: WaitRequest): number {
  const value = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(value) || value <= 0)
    throw new BrowserInputError(`timeoutMs must be a positive number of milliseconds, got ${request.timeoutMs}`);
  return value;
}

/** Whether a request asks to wait for anything (a wait with nothing to wait for is refused). */
export function hasWaitCondition(request: WaitRequest): boolean {
  return [
    request.timeMs,
    request.text,
    request.textGone,
    request.selector,
    request.url,
    request.loadState,
    request.fn,
  ].some((value) => value !== undefined);
}

/**
 * Every given condition, one after another, within one `timeoutMs` budget: the wait ends
 * when all hold. A condition still false at the deadline fails naming it.
 */
export async function waitFor(page: Page, request: WaitRequest, evaluateEnabled: boolean): Promise<string[]> {
  if (!hasWaitCondition(request))
    throw new BrowserInputError('wait needs at least one of: timeMs, text, textGone, selector, url, loadState, fn');
  if (request.fn !== undefined && !evaluateEnabled)
    throw new BrowserInputError('wait --fn runs page JavaScript, which browser.evaluateEnabled=false turns off');
  if (request.loadState !== undefined && !['load', 'domcontentloaded', 'networkidle'].includes(request.loadState)) {
    throw new BrowserInputError(`load state must be load, domcontentloaded or networkidle, got "${request.loadState}"`);
  }
  const deadline = Date.now() + timeoutOf(request);
  const left = (): number => Math.max(1, deadline - Date.now());
  const met: string[] = [];
  const step = async (what: string, work: () => Promise<unknown>): Promise<void> => {
    try {
      await work();
      met.push(what);
    } catch (error) {
      if ((error as Error).name === 'TimeoutError')
        throw new BrowserInputError(
          `wait timed out after ${timeoutOf(request)} ms: ${what} did not happen${met.length ? ` (met: ${met.join(', ')})` : ''}`,
        );
      throw error;
    }
  };
  if (request.timeMs !== undefined)
    await step(`${request.timeMs} ms`, () => page.waitForTimeout(Math.min(request.timeMs!, left())));
  if (request.url !== undefined)
    await step(`url ${request.url}`, () => page.waitForURL(request.url!, { timeout: left() }));
  if (request.loadState !== undefined)
    await step(`load ${request.loadState}`, () => page.waitForLoadState(request.loadState, { timeout: left() }));
  if (request.selector !== undefined)
    await step(`selector ${request.selector}`, () =>
      page.locator(request.selector!).first().waitFor({ state: 'visible', timeout: left() }),
    );
  if (request.text !== undefined)
    await step(`text "${request.text}"`, () =>
      page.getByText(request.text!).first().waitFor({ state: 'visible', timeout: left() }),
    );
  if (request.textGone !== undefined)
    await step(`text "${request.textGone}" gone`, () =>
      page.getByText(request.textGone!).first().waitFor({ state: 'hidden', timeout: left() }),
    );
  if (request.fn !== undefined)
    await step(`fn ${request.fn}`, () => page.waitForFunction(request.fn!, undefined, { timeout: left() }));
  return met;
}

/** Runs one act request on `page`; returns what to report besides ok. */
export async function act(page: Page, request: ActRequest, evaluateEnabled: boolean): Promise<Record<string, unknown>> {
  const timeout = timeoutOf(request);
  switch (request.kind) {
    case 'click': {
      const target = byRef(page, request.ref);
      const options = {
        timeout,
        ...(request.button ? { button: request.button } : {}),
        ...(request.modifiers ? { modifiers: request.modifiers } : {}),
      };
      await (request.doubleClick ? target.dblclick(options) : target.click(options));
      return {};
    }
    case 'type': {
      if (typeof request.text !== 'string') throw new BrowserInputError('type needs text');
      const target = byRef(page, request.ref);
      if (request.slowly) await target.pressSequentially(request.text, { timeout, delay: 50 });
      else await target.fill(request.text, { timeout });
      if (request.submit) await target.press('Enter', { timeout });
      return {};
    }
    case 'fill': {
      if (!Array.isArray(request.fields) || request.fields.length === 0)
        throw new BrowserInputError('fill needs fields: [{ref, value}]');
      for (const [index, field] of request.fields.entries()) {
        const target = byRef(page, field.ref, `fields[${index}].ref`);
        if (field.type === 'checkbox' || field.type === 'radio')
          await target.setChecked(field.value === true || field.value === 'true', { timeout });
        else await target.fill(String(field.value ?? ''), { timeout });
      }
      return { filled: request.fields.length };
    }
    case 'press': {
      if (!request.key?.trim()) throw new BrowserInputError('press needs key (such as Enter or Control+A)');
      const key = normalizeKey(request.key);
      if (request.ref) await byRef(page, request.ref).press(key, { timeout });
      else await page.keyboard.press(key);
      return { key };
    }
    case 'hover':
      await byRef(page, request.ref).hover({ timeout });
      return {};
    case 'select': {
      if (!Array.isArray(request.values) || request.values.length === 0)
        throw new BrowserInputError('select needs values (one or more option values or labels)');
      const selected = await byRef(page, request.ref).selectOption(request.values, { timeout });
      return { selected };
    }
    case 'wait':
      return { met: await waitFor(page, request, evaluateEnabled) };
    default:
      throw new BrowserInputError(`unknown act kind "${request.kind}" (kinds: ${ACT_KINDS.join(', ')})`);
  }
}
