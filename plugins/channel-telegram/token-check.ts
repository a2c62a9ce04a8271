/**
 * A bot token checked before anything is saved (`claw onboard`, the Control UI's "add
 * channel"): the Bot API's getMe, at the configured apiRoot. A plain fetch: grammY is not
 * needed to ask one question.
 */
import { DEFAULT_API_ROOT } from './config.js';

const CHECK_TIMEOUT_MS = 15_000;

export async function checkTelegramToken(token: string, apiRoot = DEFAULT_API_ROOT): Promise<{ name: string }> {
  const trimmed = token.trim();
  if (!/^\d+:[A-Za-z0-9_-]+$/.test(trimmed))
    throw new Error(
      'that does not look like a Telegram bot token (expected "<digits>:<secret>" as @BotFather gives it)',
    );
  const root = apiRoot.replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(`${root}/bot${trimmed}/getMe`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
  } catch (error) {
    // The URL carries the token: say where, not the URL.
    const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    throw new Error(`cannot reach the Bot API at ${root} (${reason.split(trimmed).join('…')})`);
  }
  const body = (await response.json().catch(() => undefined)) as
    { ok?: boolean; result?: { username?: string; first_name?: string }; description?: string } | undefined;
  if (!response.ok || !body?.ok) {
    const why = body?.description ?? `HTTP ${response.status}`;
    throw new Error(
      response.status === 401 || response.status === 404
        ? `Telegram refused the token (${response.status} ${why}): copy it again from @BotFather`
        : `Telegram's getMe failed: ${response.status} ${why}`,
    );
  }
  const bot = body.result ?? {};
  return { name: bot.username ? `@${bot.username}` : (bot.first_name ?? 'the bot') };
}
