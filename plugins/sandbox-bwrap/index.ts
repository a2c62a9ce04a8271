/**
 * Sandbox backend on bubblewrap: commands of sandboxed sessions run in their own namespaces
 * with a read-only system, no network and only the sandbox workspace writable. Pick it with
 * plugins.slots.sandbox = "sandbox-bwrap".
 */
import { definePlugin } from '../../sdk/index.js';
import { BwrapBackend } from './backend.js';

export default definePlugin<{ command: string }>({
  id: 'sandbox-bwrap',
  register(api) {
    const backend = new BwrapBackend({ command: api.config.command, stateDir: api.kernel.paths.stateDir });
    api.registerSandbox(backend);
    api.registerService({ id: 'sandbox-bwrap', stop: () => backend.dispose() });
  },
});
