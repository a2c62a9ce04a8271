/**
 * The bot's command menu (`setMyCommands`): the agent's slash commands and user-invocable
 * skills, plus `customCommands`, shaped to what Telegram accepts — names of 1–32
 * characters from a-z, 0-9 and "_", descriptions of 1–256 characters, at most 100
 * entries. Pure: the account decides when to send it.
 */
import type { ChatCommandInfo } from '../../sdk/agent/index.js';
import type { Logger } from '../../sdk/index.js';
import type { CommandMenuSettings } from './config.js';

export const MENU_MAX_COMMANDS = 100;
const NAME_MAX = 32;
const DESCRIPTION_MAX = 256;

export interface BotCommand {
  command: string;
  description: string;
}

/** "/Foo-Bar" → "foo_bar"; undefined when nothing usable is left or it is too long. */
export function menuName(raw: string): string | undefined {
  const name = raw.trim().replace(/^\//, '').toLowerCase().replace(/-/g, '_');
  return /^[a-z0-9_]+$/.test(name) && name.length <= NAME_MAX ? name : undefined;
}

function menuDescription(text: string, name: string): string {
  const line = text.split('\n')[0]!.replace(/\s+/g, ' ').trim() || `/${name}`;
  return line.length > DESCRIPTION_MAX ? `${line.slice(0, DESCRIPTION_MAX - 1)}…` : line;
}

/**
 * The menu, custom entries first (OpenClaw keeps them when the list must be trimmed);
 * `skipped` says what was left out and why, for the log.
 */
export function buildMenu(
  commands: readonly ChatCommandInfo[],
  settings: CommandMenuSettings,
): { commands: BotCommand[]; skipped: string[] } {
  const skipped: string[] = [];
  const native: BotCommand[] = [];
  const taken = new Set<string>();
  for (const entry of commands) {
    if (entry.source === 'skill' ? !settings.nativeSkills : !settings.native) continue;
    const name = menuName(entry.name);
    if (!name) {
      skipped.push(`/${entry.name} (Telegram allows only a-z, 0-9 and _, up to 32 characters)`);
      continue;
    }
    if (taken.has(name)) continue;
    taken.add(name);
    native.push({ command: name, description: menuDescription(entry.description, name) });
  }
  const custom: BotCommand[] = [];
  for (const entry of settings.custom) {
    const name = menuName(entry.command);
    if (!name) {
      skipped.push(`custom command "${entry.command}" (use a-z, 0-9 and _, up to 32 characters)`);
      continue;
    }
    if (taken.has(name)) {
      skipped.push(`custom command /${name} (a built-in, plugin or skill command has that name)`);
      continue;
    }
    taken.add(name);
    custom.push({ command: name, description: menuDescription(entry.description, name) });
  }
  const all = [...custom, ...native];
  if (all.length > MENU_MAX_COMMANDS)
    skipped.push(
      `${all.length - MENU_MAX_COMMANDS} command(s) beyond Telegram's limit of ${MENU_MAX_COMMANDS}: ${all
        .slice(MENU_MAX_COMMANDS)
        .map((entry) => `/${entry.command}`)
        .join(', ')}`,
    );
  return { commands: all.slice(0, MENU_MAX_COMMANDS), skipped };
}

/** How often the menu is rebuilt to catch new skills and plugin commands (a call only when it changed). */
export const MENU_REFRESH_MS = 60_000;

export interface MenuDeps {
  settings: CommandMenuSettings;
  /** The agent's commands; undefined when no agent is available (nothing to list yet). */
  source(): Promise<readonly ChatCommandInfo[] | undefined>;
  apply(commands: BotCommand[]): Promise<void>;
  logger: Pick<Logger, 'info' | 'warn'>;
  where: string;
}

/** Keeps one bot's menu equal to the command set: sent at start, resent when it changes. */
export class CommandMenu {
  private applied?: string;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(private readonly deps: MenuDeps) {}

  /** Send the menu now (if it changed) and keep it current until stop(). */
  start(): void {
    void this.refresh();
    this.timer ??= setInterval(() => void this.refresh(), MENU_REFRESH_MS);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  refresh(): Promise<void> {
    this.running ??= this.sync().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sync(): Promise<void> {
    const source = await this.deps.source().catch(() => undefined);
    if (!source) return;
    const menu = buildMenu(source, this.deps.settings);
    const key = JSON.stringify(menu.commands);
    if (key === this.applied) return;
    try {
      await this.deps.apply(menu.commands);
      const first = this.applied === undefined;
      this.applied = key;
      if (menu.skipped.length > 0 && first)
        this.deps.logger.warn(`${this.deps.where}: left out of the command menu: ${menu.skipped.join('; ')}`);
      this.deps.logger.info(
        `${this.deps.where}: command menu ${menu.commands.length ? `set (${menu.commands.length} commands)` : 'cleared'}`,
      );
    } catch (error) {
      // Retried at the next refresh; commands typed by hand work regardless.
      this.deps.logger.warn(`${this.deps.where}: setMyCommands failed: ${(error as Error).message ?? String(error)}`);
    }
  }
}
