/**
 * The API keys a provider finds in the environment, by OpenClaw's conventions (<ID> is the
 * provider id in capitals, anything but letters and digits as "_": `OPENAI`, `MY_PROXY`):
 *
 *  1. `OPENCLAW_LIVE_<ID>_KEY` pins one key: while it is set, no other key of that provider
 *     is used — not the environment's others, not config's, not auth-profiles.json's.
 *  2. `<ID>_API_KEYS`: several keys, separated by commas, semicolons or white space.
 *  3. `<ID>_API_KEY`, then any other variable the provider plugin names (`OPENROUTER_API_KEY`).
 *  4. `<ID>_API_KEY_<suffix>`: each, in the order of their names.
 *
 * A key found twice counts once. Keys are told apart by the variable they came from
 * (`OPENAI_API_KEYS[2]`), never by any part of their value, so a profile id is safe to print.
 */

export interface EnvKey {
  /** Where it came from: the variable's name, with the position for a list (`OPENAI_API_KEYS[2]`). */
  source: string;
  key: string;
}

export interface EnvKeys {
  keys: EnvKey[];
  /** `OPENCLAW_LIVE_<ID>_KEY` is set: its key is the only one to use. */
  pinned: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/** `openai` → `OPENAI`, `my-proxy` → `MY_PROXY`. */
export function envPrefix(provider: string): string {
  return provider.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

/** The variable to suggest when a provider has no key (`OPENAI_API_KEY`), or the plugin's own too. */
export function envKeyHint(provider: string, declared: readonly string[] = []): string {
  return [...new Set([`${envPrefix(provider)}_API_KEY`, ...declared])].join(' or ');
}

export function envApiKeys(provider: string, declared: readonly string[], env: Env): EnvKeys {
  const prefix = envPrefix(provider);
  const pin = `OPENCLAW_LIVE_${prefix}_KEY`;
  const pinned = env[pin]?.trim();
  if (pinned) return { keys: [{ source: pin, key: pinned }], pinned: true };

  const found: EnvKey[] = [];
  const add = (source: string, value: string | undefined): void => {
    const key = value?.trim();
    if (key && !found.some((entry) => entry.key === key)) found.push({ source, key });
  };
  const list = `${prefix}_API_KEYS`;
  (env[list] ?? '')
    .split(/[\s,;]+/)
    .filter(Boolean)
    .forEach((key, index) => add(`${list}[${index + 1}]`, key));
  for (const name of new Set([`${prefix}_API_KEY`, ...declared])) add(name, env[name]);
  const suffixed = `${prefix}_API_KEY_`;
  for (const name of Object.keys(env)
    .filter((name) => name.startsWith(suffixed) && name.length > suffixed.length)
    .sort())
    add(name, env[name]);
  return { keys: found, pinned: false };
}
