/**
 * Example tool plugin. One tool (`clock_now`) and one chat command (`/time`), both
 * reading the same clock; the default time zone comes from the plugin's config.
 */
import { definePlugin, errorResult, textResult } from '../../sdk/index.js';

interface ClockConfig {
  timezone: string;
}

/** Local time in `timeZone`, or undefined when the zone is not a valid IANA name. */
export function describeTime(
  now: Date,
  timeZone: string,
): { iso: string; local: string; timeZone: string } | undefined {
  let local: string;
  try {
    local = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      dateStyle: 'full',
      timeStyle: 'long',
    }).format(now);
  } catch {
    return undefined;
  }
  return { iso: now.toISOString(), local, timeZone };
}

export default definePlugin<ClockConfig>({
  id: 'example-clock',
  register(api) {
    const fallbackZone = api.config.timezone;

    api.registerTool({
      name: 'clock_now',
      label: 'Clock',
      description:
        'Current date and time. Pass an IANA time zone such as "Europe/Paris"; defaults to the configured zone.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: { timezone: { type: 'string', description: 'IANA time zone name' } },
      },
      execute(params: { timezone?: string }) {
        const zone = params.timezone?.trim() || fallbackZone;
        const time = describeTime(new Date(), zone);
        if (!time) return errorResult(`"${zone}" is not a known time zone`);
        return textResult(`${time.local} (${time.timeZone})`, time);
      },
    });

    api.registerCommand({
      name: 'time',
      description: 'Show the current time, optionally in a time zone: /time Asia/Tokyo',
      acceptsArgs: true,
      handler({ args }) {
        const zone = args.trim() || fallbackZone;
        const time = describeTime(new Date(), zone);
        return { text: time ? `${time.local}` : `Unknown time zone "${zone}".` };
      },
    });
  },
});
