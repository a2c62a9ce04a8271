/**
 * Tokens checked before anything is saved (`claw channels add`, onboarding): a bot token
 * (xoxb-) against `auth.test`, an app-level token (xapp-) against `apps.connections.open`
 * (the call Socket Mode makes; the URL it returns is not used). A plain fetch: Bolt is not
 * needed to ask one question.
 */
import { apiUrlFrom } from './config.js';

const CHECK_TIMEOUT_MS = 15_000;

export async function checkSlackToken(
  token: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ name: string }> {
  const trimmed = token.trim();
  const method = trimmed.startsWith('xoxb-') ? 'auth.test' : trimmed.startsWith('xapp-') ? 'apps.connections.open' : '';
  if (!method)
    throw new Error(
      'that does not look like a Slack token: a bot token starts with "xoxb-", an app-level token with "xapp-"',
    );
  const apiUrl = apiUrlFrom(env);
  let response: Response;
  try {
    response = await fetch(`${apiUrl}${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${trimmed}`, 'content-type': 'application/x-www-form-urlencoded' },
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    });
  } catch (error) {
    const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    throw new Error(`cannot reach Slack at ${apiUrl} (${reason})`);
  }
  const body = (await response.json().catch(() => undefined)) as
    { ok?: boolean; error?: string; user?: string; team?: string } | undefined;
  if (!response.ok || !body?.ok) {
    const why = body?.error ?? `HTTP ${response.status}`;
    throw new Error(
      method === 'auth.test'
        ? `Slack refused the bot token (${why}): copy the Bot User OAuth Token from OAuth & Permissions`
        : `Slack refused the app-level token (${why}): it needs the connections:write scope and Socket Mode turned on`,
    );
  }
  return {
    name:
      method === 'auth.test' ? `${body.user ?? 'the bot'}${body.team ? ` in ${body.team}` : ''}` : 'Socket Mode app',
  };
}
