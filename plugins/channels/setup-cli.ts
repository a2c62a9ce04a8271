/**
 * `claw channels add|login|logout|remove` for every channel that declares its setup
 * (ChannelPlugin.setup): the flags are the channel's own, so nothing here names a channel.
 *
 *   claw channels add --channel <id> [--account <id>] <its flags>     checked with the platform, then saved
 *   claw channels add --channel <id> --use-env                        its variables checked; nothing secret saved
 *   claw channels login --channel <id> <its flags>                    the same as add
 *   claw channels logout --channel <id> [--account <id>]              its secrets removed
 *   claw channels remove --channel <id> [--account <id>] [--delete]   disabled, or deleted
 *
 * The change goes through a running gateway (`config.patch`: validated and applied at once),
 * else into the config file under its lock. Secrets are never printed; the gateway is reached
 * with its configured credentials (`--token` and `--password` may be the channel's).
 */
import type { ChannelPlugin, ChannelSetup, ChannelSetupField, CliContext, PluginApi } from '../../sdk/index.js';
import {
  mergedAccountConfig,
  parseSetupValue,
  setupFields,
  setupValue,
  writeSetupValue,
} from '../../sdk/channels/index.js';
import { parseFlags, UsageError } from '../../sdk/cli.js';

export const SETUP_ACTIONS = new Set(['add', 'login', 'logout', 'remove']);
export type SetupAction = 'add' | 'login' | 'logout' | 'remove';

export const SETUP_HELP = `Usage: claw channels add --channel <id> [--account <id>] [--use-env] <the channel's flags>
       claw channels login --channel <id> <the channel's flags>          the same as add (token channels)
       claw channels logout --channel <id> [--account <id>]             remove the stored secrets
       claw channels remove --channel <id> [--account <id>] [--delete]  disable (or delete) the channel or account
       claw channels add --channel <id> --help                          that channel's flags`;

type AnyRecord = Record<string, unknown>;
type FlagSpec = Record<string, { type: 'string' | 'boolean' }>;

const record = (parent: AnyRecord, key: string): AnyRecord => {
  const value = parent[key];
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as AnyRecord;
  return (parent[key] = {});
};

/** The channel id: `--channel <id>`, `--channel=<id>`, or the first word (`claw channels add slack`). */
export function channelIdOf(argv: readonly string[]): string | undefined {
  const at = argv.findIndex((word) => word === '--channel' || word.startsWith('--channel='));
  const id = at < 0 ? (argv[0]?.startsWith('-') ? undefined : argv[0]) : (argv[at]!.split('=')[1] ?? argv[at + 1]);
  return id?.trim().toLowerCase() || undefined;
}

function fieldFlags(setup: ChannelSetup | undefined): FlagSpec {
  const spec: FlagSpec = {};
  for (const field of setup?.fields ?? []) {
    spec[field.flag] = { type: field.type === 'boolean' ? 'boolean' : 'string' };
    if (field.type === 'boolean') spec[`no-${field.flag}`] = { type: 'boolean' };
  }
  return spec;
}

const flagUsage = (field: ChannelSetupField) =>
  field.type === 'boolean'
    ? `--${field.flag} | --no-${field.flag}`
    : `--${field.flag} <${field.choices?.join('|') ?? (field.type === 'list' ? 'a,b' : field.secret ? 'secret' : 'value')}>`;

/** `claw channels add --channel <id> --help`: that channel's flags. */
export function channelSetupHelp(id: string, plugin: ChannelPlugin): string {
  const fields = plugin.setup!.fields;
  const width = Math.max(...fields.map((field) => flagUsage(field).length)) + 2;
  const lines = fields.map(
    (field) =>
      `  ${flagUsage(field).padEnd(width)}${field.label}${field.required ? ' (required)' : ''}${field.env ? ` [${field.env}]` : ''}`,
  );
  const env = fields.flatMap((field) => (field.env ? [field.env] : []));
  return `Usage: claw channels add --channel ${id} [--account <id>] ${fields.some((f) => f.required) ? '<flags>' : '[flags]'}
${plugin.label ?? id}'s flags:
${lines.join('\n')}
  --use-env${' '.repeat(Math.max(2, width - 9))}${env.length > 0 ? `take what is not given from the [variables] above (default account only); nothing secret is saved` : `(${id} reads no environment variables)`}`;
}

export async function channelSetupCommand(
  action: SetupAction,
  argv: string[],
  plugin: ChannelPlugin | undefined,
  ctx: CliContext,
  api: PluginApi,
): Promise<number> {
  const id = channelIdOf(argv);
  const setup = action === 'add' || action === 'login' ? plugin?.setup : undefined;
  if (id && action !== 'remove' && !plugin)
    throw new UsageError(`no enabled plugin provides the channel "${id}" (see claw channels list)`);
  if (id && action !== 'remove' && !plugin?.setup)
    throw new UsageError(
      `${id} has no setup flags${plugin?.loginStart ? `: link it with claw channels login --channel ${id}` : ''}`,
    );
  const spec = {
    ...fieldFlags(setup),
    channel: { type: 'string' },
    account: { type: 'string' },
    help: { type: 'boolean' },
    url: { type: 'string' },
    timeout: { type: 'string' },
    ...(setup ? { 'use-env': { type: 'boolean' } } : {}),
    ...(action === 'remove' ? { delete: { type: 'boolean' } } : {}),
  } as const satisfies FlagSpec;
  let parsed;
  try {
    parsed = parseFlags(argv, spec);
  } catch (error) {
    const word = (error as UsageError).typo?.word;
    if (!word || !id) throw error;
    const own = setup ? setup.fields.map((field) => `--${field.flag}`).join(', ') : 'no setup flags';
    throw Object.assign(
      new UsageError(
        `Unknown option '${word}' for claw channels ${action} --channel ${id}: ${setup ? `${id} takes ${own}` : `it takes --account${action === 'remove' ? ' and --delete' : ''}`} (see claw channels add --channel ${id} --help)`,
      ),
      { typo: (error as UsageError).typo },
    );
  }
  const { values, positionals } = parsed;
  const flags = values as Record<string, string | boolean | undefined>;
  if (positionals.length > (values.channel === undefined ? 1 : 0))
    throw new UsageError(`claw channels ${action} takes no words after --channel (got "${positionals.join(' ')}")`);
  if (values.help) {
    ctx.stdout.write(`${id && setup && plugin ? channelSetupHelp(id, plugin) : SETUP_HELP}\n`);
    return 0;
  }
  if (!id) throw new UsageError(`give --channel: ${SETUP_HELP}`);
  const account = values.account?.trim() || 'default';
  const where = account === 'default' ? `channels.${id}` : `channels.${id}.accounts.${account}`;
  const gatewayFlags = { url: values.url, timeout: values.timeout };

  let edit: (target: AnyRecord, raw: AnyRecord) => void;
  let done: string;
  if (action === 'add' || action === 'login') {
    const plan = await planSetup(id, account, setup!, flags, api);
    edit = plan.edit;
    done = plan.done;
  } else if (action === 'logout') {
    const secrets = plugin!.setup!.fields.filter((field) => field.secret).map((field) => field.key);
    edit = (target) => secrets.forEach((key) => writeSetupValue(target, key, undefined));
    done = `Removed ${secrets.join(', ')} from ${where}.`;
  } else if (values.delete) {
    edit = (_target, raw) => {
      const section = record(record(raw, 'channels'), id);
      if (account === 'default') delete (raw.channels as AnyRecord)[id];
      else delete record(section, 'accounts')[account];
    };
    done = `Deleted ${where}.`;
  } else {
    edit = (target) => (target.enabled = false);
    done = `Disabled ${where} (enabled: false).`;
  }
  const purpose = `claw channels ${action} --channel ${id}${account === 'default' ? '' : ` --account ${account}`}`;
  const change = await ctx.gateway.changeConfig(
    purpose,
    (raw) => {
      const section = record(record(raw, 'channels'), id);
      edit(account === 'default' ? section : record(record(section, 'accounts'), account), raw);
    },
    gatewayFlags,
  );
  const live =
    change.via === 'gateway'
      ? ' The running gateway has applied it.'
      : ctx.gateway.running()
        ? ''
        : ' It takes effect when the gateway starts (claw gateway).';
  ctx.stdout.write(`${change.changed ? `${done}${live}` : `Nothing to change: ${where} already says so.`}\n`);
  return 0;
}

/**
 * add / login: the flags read by the channel's fields, what `--use-env` stands in for, the
 * required values checked, then the platform asked — all before anything is written.
 */
async function planSetup(
  id: string,
  account: string,
  setup: ChannelSetup,
  flags: Record<string, string | boolean | undefined>,
  api: PluginApi,
): Promise<{ edit: (target: AnyRecord) => void; done: string }> {
  const where = account === 'default' ? `channels.${id}` : `channels.${id}.accounts.${account}`;
  const given: AnyRecord = {};
  const givenKeys = new Set<string>();
  for (const field of setup.fields) {
    let value: unknown;
    if (field.type === 'boolean') {
      if (flags[field.flag] && flags[`no-${field.flag}`])
        throw new UsageError(`give --${field.flag} or --no-${field.flag}, not both`);
      value = flags[field.flag] ? true : flags[`no-${field.flag}`] ? false : undefined;
    } else if (typeof flags[field.flag] === 'string') {
      try {
        value = parseSetupValue(field, flags[field.flag] as string);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    }
    if (value === undefined) continue;
    writeSetupValue(given, field.key, value);
    givenKeys.add(field.key);
  }
  // The account as it would be: what is saved (the channel's keys under the account's), then the flags.
  const raw = api.kernel.configFile.read().raw as AnyRecord;
  const section = (raw.channels as AnyRecord | undefined)?.[id] as AnyRecord | undefined;
  const values = structuredClone(mergedAccountConfig(section, account));
  for (const key of givenKeys) writeSetupValue(values, key, setupValue(given, key));
  const applicable = setupFields(setup, values);
  for (const field of setup.fields)
    if (givenKeys.has(field.key) && !applicable.includes(field))
      throw new UsageError(
        `--${field.flag} does not apply to ${id} with the other settings given or saved (see claw channels add --channel ${id} --help)`,
      );

  const fromEnv: string[] = [];
  if (flags['use-env']) {
    const variables = setup.fields.flatMap((field) => (field.env ? [field.env] : []));
    if (variables.length === 0)
      throw new UsageError(`--use-env: ${id} reads no environment variables; give its flags instead`);
    if (account !== 'default')
      throw new UsageError(
        `--use-env: ${id} reads ${variables.join(', ')} for the default account only; give --account ${account} its flags instead`,
      );
    const missing: string[] = [];
    for (const field of applicable) {
      if (!field.env || givenKeys.has(field.key)) continue;
      const text = api.kernel.env[field.env]?.trim();
      if (!text) {
        if (field.required && setupValue(values, field.key) === undefined) missing.push(field.env);
        continue;
      }
      try {
        writeSetupValue(values, field.key, parseSetupValue(field, text));
      } catch (error) {
        throw new UsageError(`${field.env}: ${(error as Error).message.replace(`--${field.flag}`, 'the value')}`);
      }
      fromEnv.push(field.key);
    }
    if (missing.length > 0)
      throw new UsageError(`--use-env: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set`);
  }
  for (const field of applicable)
    if (field.required && setupValue(values, field.key) === undefined)
      throw new UsageError(
        `${id} needs --${field.flag} (${field.label})${field.env ? ` or ${field.env} with --use-env` : flags['use-env'] ? `: ${id} reads no environment variable for it` : ''}; see claw channels add --channel ${id} --help`,
      );

  const secrets = applicable
    .filter((field) => field.secret)
    .flatMap((field) => {
      const value = setupValue(values, field.key);
      return typeof value === 'string' ? [value] : [];
    });
  for (const secret of secrets) api.kernel.redact.add(secret);
  let who = '';
  if (setup.verify) {
    try {
      who = (await setup.verify(values, account)).name;
    } catch (error) {
      const message = secrets.reduce((text, secret) => text.split(secret).join('…'), (error as Error).message);
      throw new Error(`${id} was not set up, nothing is saved: ${message}`);
    }
  }
  const stale = setup.fields.filter((field) => !applicable.includes(field));
  const edit = (target: AnyRecord) => {
    for (const key of givenKeys) writeSetupValue(target, key, setupValue(given, key));
    // What the variables stand in for must not be shadowed by an older value in the file.
    for (const key of fromEnv) writeSetupValue(target, key, undefined);
    for (const field of stale) writeSetupValue(target, field.key, undefined);
    delete target.enabled;
  };
  const saved = [...givenKeys];
  const done = [
    who ? `Checked: ${who}.` : '',
    saved.length > 0 ? `Saved ${saved.join(', ')} in ${where}.` : `Set up ${where}.`,
    fromEnv.length > 0
      ? `From the environment (not saved; the gateway needs them too): ${setup.fields
          .filter((field) => fromEnv.includes(field.key))
          .map((field) => field.env)
          .join(', ')}.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { edit, done };
}
