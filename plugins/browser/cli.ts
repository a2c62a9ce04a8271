/**
 * `claw browser`: OpenClaw's browser CLI over the running gateway's `browser.request`. The
 * browser lives in the gateway process, so every subcommand needs a running gateway.
 * Options before the subcommand belong to `browser` itself (--browser-profile, --json and
 * the gateway's --url/--token/--timeout); after it, `wait --url` is the URL glob.
 */
import { randomUUID } from 'node:crypto';
import type { CliContext } from '../../sdk/index.js';
import { parseFlags, unknownCommand, UsageError, type GatewayFlags } from '../../sdk/cli.js';
import type { BrowserRequest } from './routes.js';

export const BROWSER_HELP = `Usage: claw browser [--browser-profile <name>] [--json] <command> [options]
  status | start | stop | profiles           the profile's browser (start launches it; it also starts on first use)
  tabs                                       open tabs: tabId, label, url, title
  open <url> [--label <name>]                new tab
  focus <tab> | close [<tab>]                by tabId or label (close: the active tab by default)
  navigate <url>                             in the active tab (or --target-id)
  snapshot [--interactive] [--compact] [--depth <n>] [--labels] [--selector <css>] [--max-chars <n>]
  click <ref> [--double]                     refs come from the last snapshot (e12, or just 12)
  type <ref> <text> [--submit] [--slowly]
  fill --fields '[{"ref":"e3","value":"Ada"}]'
  press <key> [--ref <ref>]                  Enter, Escape, Control+A…
  hover <ref> | select <ref> <value>...
  wait [<selector>] [--url <glob>] [--load load|domcontentloaded|networkidle] [--fn <js>] [--text <t>]
       [--text-gone <t>] [--time <ms>] [--timeout-ms <ms>]    all given conditions must hold
  screenshot [--full-page | --ref <ref> | --element <css>] [--type png|jpeg]
  pdf
Every command: --target-id <tab>. Gateway: --url <ws-url>, --token <token>, --timeout <ms> (before the command).`;

const BROWSER_COMMANDS = [
  'status',
  'start',
  'stop',
  'profiles',
  'tabs',
  'open',
  'focus',
  'close',
  'navigate',
  'snapshot',
  'click',
  'type',
  'fill',
  'press',
  'hover',
  'select',
  'wait',
  'screenshot',
  'pdf',
];

const PARENT = {
  help: { type: 'boolean' },
  json: { type: 'boolean' },
  'browser-profile': { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  timeout: { type: 'string' },
} as const;

const CHILD = {
  json: { type: 'boolean' },
  'browser-profile': { type: 'string' },
  'target-id': { type: 'string' },
  label: { type: 'string' },
  interactive: { type: 'boolean' },
  compact: { type: 'boolean' },
  depth: { type: 'string' },
  labels: { type: 'boolean' },
  selector: { type: 'string' },
  'max-chars': { type: 'string' },
  double: { type: 'boolean' },
  submit: { type: 'boolean' },
  slowly: { type: 'boolean' },
  fields: { type: 'string' },
  ref: { type: 'string' },
  url: { type: 'string' },
  load: { type: 'string' },
  fn: { type: 'string' },
  text: { type: 'string' },
  'text-gone': { type: 'string' },
  time: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'full-page': { type: 'boolean' },
  element: { type: 'string' },
  type: { type: 'string' },
  token: { type: 'string' },
  timeout: { type: 'string' },
} as const;

/** Where the subcommand starts: the first word that is not a parent option or its value. */
function splitAtCommand(argv: string[]): [string[], string[]] {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (!arg.startsWith('-')) return [argv.slice(0, index), argv.slice(index)];
    const name = arg.replace(/^--?/, '').split('=')[0]!;
    if ((PARENT as Record<string, { type: string }>)[name]?.type === 'string' && !arg.includes('=')) index++;
  }
  return [argv, []];
}

function count(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new UsageError(`${flag} must be a whole number, got "${value}"`);
  return number;
}

type Child = ReturnType<typeof parseFlags<typeof CHILD>>['values'];

function need(args: string[], index: number, what: string): string {
  const value = args[index];
  if (value === undefined) throw new UsageError(`missing ${what}`);
  return value;
}

function toRequest(command: string, args: string[], flags: Child): BrowserRequest {
  const targetId = flags['target-id'];
  const base = targetId ? { targetId } : {};
  const act = (body: Record<string, unknown>): BrowserRequest => ({
    method: 'POST',
    path: '/act',
    body: { ...base, ...body },
  });
  switch (command) {
    case 'status':
      return { method: 'GET', path: '/' };
    case 'start':
    case 'stop':
      return { method: 'POST', path: `/${command}` };
    case 'profiles':
      return { method: 'GET', path: '/profiles' };
    case 'tabs':
      return { method: 'GET', path: '/tabs' };
    case 'open':
      return {
        method: 'POST',
        path: '/tabs/open',
        body: { url: need(args, 0, '<url>'), ...(flags.label ? { label: flags.label } : {}) },
      };
    case 'focus':
      return { method: 'POST', path: '/tabs/focus', body: { targetId: need(args, 0, '<tab>') } };
    case 'close': {
      const tab = args[0] ?? targetId;
      return tab ? { method: 'DELETE', path: `/tabs/${encodeURIComponent(tab)}` } : { method: 'DELETE', path: '/tabs' };
    }
    case 'navigate':
      return { method: 'POST', path: '/navigate', body: { ...base, url: need(args, 0, '<url>') } };
    case 'snapshot':
      return {
        method: 'GET',
        path: '/snapshot',
        query: {
          ...base,
          ...(flags.interactive ? { interactive: true } : {}),
          ...(flags.compact ? { compact: true } : {}),
          ...(flags.labels ? { labels: true } : {}),
          ...(flags.depth !== undefined ? { depth: count(flags.depth, '--depth') } : {}),
          ...(flags.selector ? { selector: flags.selector } : {}),
          ...(flags['max-chars'] !== undefined ? { maxChars: count(flags['max-chars'], '--max-chars') } : {}),
        },
      };
    case 'click':
      return act({ kind: 'click', ref: need(args, 0, '<ref>'), ...(flags.double ? { doubleClick: true } : {}) });
    case 'type':
      return act({
        kind: 'type',
        ref: need(args, 0, '<ref>'),
        text: need(args, 1, '<text>'),
        ...(flags.submit ? { submit: true } : {}),
        ...(flags.slowly ? { slowly: true } : {}),
      });
    case 'fill': {
      if (!flags.fields) throw new UsageError('fill needs --fields \'[{"ref":"e3","value":"Ada"}]\'');
      let fields: unknown;
      try {
        fields = JSON.parse(flags.fields);
      } catch (error) {
        throw new UsageError(`--fields is not JSON: ${(error as Error).message}`);
      }
      return act({ kind: 'fill', fields });
    }
    case 'press':
      return act({ kind: 'press', key: need(args, 0, '<key>'), ...(flags.ref ? { ref: flags.ref } : {}) });
    case 'hover':
      return act({ kind: 'hover', ref: need(args, 0, '<ref>') });
    case 'select':
      if (args.length < 2) throw new UsageError('select needs <ref> <value>...');
      return act({ kind: 'select', ref: args[0], values: args.slice(1) });
    case 'wait':
      return act({
        kind: 'wait',
        ...(args[0] !== undefined ? { selector: args[0] } : {}),
        ...(flags.url !== undefined ? { url: flags.url } : {}),
        ...(flags.load !== undefined ? { loadState: flags.load } : {}),
        ...(flags.fn !== undefined ? { fn: flags.fn } : {}),
        ...(flags.text !== undefined ? { text: flags.text } : {}),
        ...(flags['text-gone'] !== undefined ? { textGone: flags['text-gone'] } : {}),
        ...(flags.time !== undefined ? { timeMs: count(flags.time, '--time') } : {}),
        ...(flags['timeout-ms'] !== undefined ? { timeoutMs: count(flags['timeout-ms'], '--timeout-ms') } : {}),
      });
    case 'screenshot':
      return {
        method: 'POST',
        path: '/screenshot',
        body: {
          ...base,
          ...(flags['full-page'] ? { fullPage: true } : {}),
          ...(flags.ref ? { ref: flags.ref } : {}),
          ...(flags.element ? { element: flags.element } : {}),
          ...(flags.type ? { type: flags.type } : {}),
        },
      };
    case 'pdf':
      return { method: 'POST', path: '/pdf', body: base };
  }
  throw unknownCommand('browser', command, BROWSER_COMMANDS);
}

const tabLine = (tab: Record<string, any>) =>
  `${tab.tabId}${tab.label ? ` (${tab.label})` : ''}  ${tab.url}  ${tab.title ?? ''}`.trimEnd();

function statusLine(status: Record<string, any>): string {
  if (status.enabled === false) return 'The browser is off (browser.enabled is false).';
  const state = status.running ? `running, ${status.tabs} tab${status.tabs === 1 ? '' : 's'}` : 'stopped';
  const blocked = status.blocked?.length
    ? `; ${status.blocked.length} request(s) blocked recently by the SSRF policy`
    : '';
  return `${status.profile}: ${state}${status.headless ? ' (headless)' : ''}${blocked}`;
}

/** What an action did beyond "done": the fields filled, the key pressed, the options chosen, the conditions met. */
function actLine(result: Record<string, any>): string {
  const detail =
    result.filled !== undefined
      ? `${result.filled} field${result.filled === 1 ? '' : 's'} filled`
      : result.key
        ? `pressed ${result.key}`
        : result.selected
          ? `selected ${result.selected.join(', ')}`
          : result.met
            ? `met: ${result.met.join(', ')}`
            : 'done';
  return `${result.kind} ${detail} (${result.targetId}  ${result.url})`;
}

function print(command: string, result: Record<string, any>, ctx: CliContext): void {
  const out = (line: string) => ctx.stdout.write(`${line}\n`);
  if (command === 'navigate') {
    out(`${result.targetId}  ${result.url}  ${result.title}`);
    out(String(result.snapshot));
  } else if (command === 'snapshot') {
    out(String(result.snapshot));
    if (result.labels) out(`MEDIA:${result.labels.path}`);
  } else if (command === 'screenshot' || command === 'pdf') out(`MEDIA:${result.path}`);
  else if (command === 'tabs') {
    if (!result.tabs.length) out('no tabs');
    for (const tab of result.tabs) out(`${tab.active ? '*' : ' '} ${tabLine(tab)}`);
  } else if (command === 'profiles') {
    for (const profile of result.profiles)
      out(`${profile.name}${profile.default ? ' (default)' : ''}  ${profile.running ? 'running' : 'stopped'}`);
  } else if (command === 'status' || command === 'start') out(statusLine(result));
  else if (command === 'stop') out(result.stopped ? 'Stopped the browser.' : 'The browser was not running.');
  else if (command === 'open' || command === 'focus')
    out(`${command === 'open' ? 'Opened' : 'Focused'} ${tabLine(result.tab)}`);
  else if (command === 'close') out(result.closed ? `Closed ${result.closed}.` : 'No tab to close.');
  else out(actLine(result));
}

export async function browserCommand(argv: string[], ctx: CliContext): Promise<number> {
  const [parentArgs, rest] = splitAtCommand(argv);
  const parent = parseFlags(parentArgs, PARENT).values;
  const [command, ...childArgs] = rest;
  if (!command) throw new UsageError('a browser command is required (see claw browser --help)');
  const parsed = parseFlags(childArgs, CHILD);
  const flags = parsed.values;
  // After the command, --url is wait's glob; anywhere else it is still the gateway's (OpenClaw allows trailing placement).
  const gateway: GatewayFlags = {
    url: parent.url ?? (command === 'wait' ? undefined : flags.url),
    token: parent.token ?? flags.token,
    timeout: parent.timeout ?? flags.timeout,
  };
  if (command !== 'wait' && flags.url !== undefined && parent.url !== undefined)
    throw new UsageError('--url given twice');
  const request = toRequest(command, parsed.positionals, flags);
  const profile = flags['browser-profile'] ?? parent['browser-profile'];
  if (profile) request.query = { ...request.query, profile };
  // As OpenClaw's CLI: the request may take its own timeout (a long wait) plus 10 s for the transport.
  const waitMs = typeof request.body?.timeoutMs === 'number' ? request.body.timeoutMs : 0;
  const timeoutMs = Math.max(gateway.timeout === undefined ? 30_000 : Number(gateway.timeout), waitMs) + 10_000;
  // The first use starts Chromium (and may install playwright-core first): seconds of silence otherwise.
  const result = await ctx.progress(`Waiting for the browser (${command})`, () =>
    ctx.gateway.connect(gateway, (client) =>
      client.request<Record<string, unknown>>(
        'browser.request',
        { ...request, idempotencyKey: randomUUID() },
        { timeoutMs },
      ),
    ),
  );
  if (parent.json || flags.json) ctx.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else print(command, result, ctx);
  return 0;
}
