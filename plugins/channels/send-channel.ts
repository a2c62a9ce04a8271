/**
 * `claw message send` and the `send` method name a channel the user typed. The outbound
 * path treats any other name as an internal surface (the CLI, the gateway) that needs no
 * transport, so a typo there would "succeed"; here it is an error naming the channels.
 */
import type { KernelServices } from '../../sdk/index.js';

/** Why `channel` cannot be sent to, or undefined when it is a channel (or a configured one). */
export async function unknownChannelProblem(
  kernel: Pick<KernelServices, 'channels' | 'config'>,
  channel: string,
): Promise<string | undefined> {
  const ids = ((await kernel.channels.status()) as Array<{ id: string }>).map((info) => info.id);
  if (ids.includes(channel)) return undefined;
  // Configured but its plugin is off: the outbound path says exactly that.
  const configured = (kernel.config().channels as Record<string, unknown> | undefined)?.[channel];
  if (configured !== undefined) return undefined;
  return ids.length > 0
    ? `unknown channel "${channel}": the channels are ${ids.join(', ')} (see claw channels list)`
    : `unknown channel "${channel}": no channel plugin is enabled`;
}
