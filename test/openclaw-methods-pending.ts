/**
 * Methods and events OpenClaw’s clients use (test/fixtures/openclaw-client-methods.json) that
 * claw’s gateway does not answer yet. Issue 31 wants this list empty: every entry is a method
 * still to implement with OpenClaw’s name, params and full response shape (an empty
 * "not available" shape for features claw lacks). The test fails when an entry becomes served, so
 * the list only shrinks. Grouped by namespace, one line each.
 */
export const PENDING_METHODS: ReadonlySet<string> = new Set([]);

/** Events OpenClaw’s clients listen for that claw’s gateway never sends yet. */
export const PENDING_EVENTS: ReadonlySet<string> = new Set([
  'device.pair.setup.deliveryUncertain',
  'gateway.suspension',
  'node.invoke.input',
  'node.runnerInventory.changed',
  'plugin.approval.requested',
  'plugins.controlUi.changed',
  'plugins.install.progress',
  'portal.changed',
  'question.requested',
  'question.resolved',
  'session.observer',
  'session.suggestion',
  'session.typing',
  'talk.event',
  'talk.voice.change',
  'task',
  'task.suggestion',
  'terminal.data',
  'terminal.exit',
  'update.available',
  'update.run.changed',
  'users.prefs.changed',
]);
