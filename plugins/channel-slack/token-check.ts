/**
 * Tokens checked before anything is saved (`claw channels add`, onboarding): a bot token
 * (xoxb-) against `auth.test`, an app-level token (xapp-) against `apps.connections.open`
 * (the call Socket Mode makes; the URL it returns is not used). A plain fetch: Bolt is not
 * needed to ask one question.
 */
import type { ChannelSetup, ChannelSetupValues } from '../../sdk/channels/index.js';
import { apiUrlFrom, APP_TOKEN_ENV, BOT_TOKEN_ENV, SIGNING_SECRET_ENV } from './config.js';

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

const socketMode = (values: ChannelSetupValues) => values.mode !== 'http';

/**
 * `claw channels add --channel slack` and the wizard: OpenClaw's flags and keys. Both tokens
 * are checked with Slack before anything is saved; the signing secret has no API to ask.
 */
export function slackSetup(env: Readonly<Record<string, string | undefined>>): ChannelSetup {
  return {
    hint: 'bot token + app token (Socket Mode) or signing secret (HTTP)',
    fields: [
      {
        flag: 'mode',
        key: 'mode',
        choices: ['socket', 'http'],
        label: 'How Slack reaches claw: socket (Socket Mode, no public URL) or http (Events API to the gateway)',
      },
      {
        flag: 'bot-token',
        key: 'botToken',
        label: 'Bot token (xoxb-…, from OAuth & Permissions)',
        secret: true,
        env: BOT_TOKEN_ENV,
        required: true,
      },
      {
        flag: 'app-token',
        key: 'appToken',
        label:
          'Socket Mode: the app-level token (xapp-…, with connections:write, from Basic Information → App-Level Tokens)',
        secret: true,
        env: APP_TOKEN_ENV,
        required: true,
        when: socketMode,
      },
      {
        flag: 'signing-secret',
        key: 'signingSecret',
        label: 'HTTP mode: the signing secret (Basic Information → App Credentials)',
        secret: true,
        env: SIGNING_SECRET_ENV,
        required: true,
        when: (values) => !socketMode(values),
      },
    ],
    async verify(values) {
      const check = async (flag: string, token: unknown, prefix: string) => {
        if (typeof token !== 'string' || !token.startsWith(prefix))
          throw Object.assign(new Error(`--${flag} must be a Slack token starting with "${prefix}"`), { flag });
        try {
          return await checkSlackToken(token, env);
        } catch (error) {
          throw Object.assign(error as Error, { flag });
        }
      };
      const bot = await check('bot-token', values.botToken, 'xoxb-');
      if (socketMode(values)) await check('app-token', values.appToken, 'xapp-');
      return bot;
    },
  };
}
