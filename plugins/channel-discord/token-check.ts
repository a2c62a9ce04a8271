/**
 * A bot token checked before anything is saved (`claw onboard`, the Control UI's "add
 * channel"): `GET /users/@me` at the REST base (DISCORD_API_URL, else discord.com). A plain
 * fetch: discord.js is not needed to ask one question.
 */
import { apiBaseFrom } from './config.js';

const CHECK_TIMEOUT_MS = 15_000;

export async function checkDiscordToken(
  token: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ name: string }> {
  const trimmed = token.trim().replace(/^Bot\s+/i, '');
  if (/\s/.test(trimmed) || trimmed.split('.').length !== 3)
    throw new Error(
      'that does not look like a Discord bot token (three dot-separated parts, from the Developer Portal → Bot → Reset Token)',
    );
  const { apiBase, apiVersion } = apiBaseFrom(env);
  const url = `${apiBase}/v${apiVersion}/users/@me`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: `Bot ${trimmed}` },
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    });
  } catch (error) {
    const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    throw new Error(`cannot reach Discord at ${apiBase} (${reason})`);
  }
  const body = (await response.json().catch(() => undefined)) as
    { username?: string; global_name?: string | null; message?: string } | undefined;
  if (!response.ok) {
    const why = body?.message ?? `HTTP ${response.status}`;
    throw new Error(
      response.status === 401
        ? `Discord refused the token (${why}): reset it on the Developer Portal's Bot page and paste the new one`
        : `Discord's /users/@me failed: ${why}`,
    );
  }
  return { name: body?.username ?? body?.global_name ?? 'the bot' };
}
