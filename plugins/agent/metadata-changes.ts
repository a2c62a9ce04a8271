/**
 * `chat.metadata.changed`: the composer's commands, skills and models come from config and
 * the skills folders, so when either changes (config.changed, skills.changed) every client
 * hears it and re-reads chat.metadata — OpenClaw's empty-payload nudge.
 */
import type { EmittedEvent, PluginApi } from '../../sdk/index.js';

const SOURCES = new Set(['config.changed', 'skills.changed']);

export function registerMetadataChanges(api: PluginApi): void {
  const protocol = api.kernel.protocol;
  protocol.registerEvent('chat.metadata.changed', api.id, {
    scope: 'operator.read',
    description: '{} when the commands, skills or models chat.metadata answers may have changed.',
  });
  protocol.onEmit((event: EmittedEvent) => {
    if (!SOURCES.has(event.event)) return 0;
    protocol.emit('chat.metadata.changed', {}, { droppable: true });
    return 0;
  });
}
