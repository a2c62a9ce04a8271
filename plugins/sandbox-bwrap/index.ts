/**
 * Sandbox backend on bubblewrap: commands of sandboxed sessions run in their own namespaces
 * with a read-only system, no network and only the sandbox workspace writable. Pick it with
 * plugins.slots.sandbox = "sandbox-bwrap".
 */
import { definePlugin } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_CHECKS_SERVICE, type SandboxChecks } from '../../sdk/sandbox/index.js';
import { BwrapBackend } from './backend.js';

export default definePlugin<{ command: string }>({
  id: 'sandbox-bwrap',
  async register(api) {
    const checks = await requireService<SandboxChecks>(api.kernel, SANDBOX_CHECKS_SERVICE, 'the bubblewrap sandbox');
    const backend = new BwrapBackend({ command: api.config.command, stateDir: api.kernel.paths.stateDir, checks });
    api.registerSandbox(backend);
    api.registerService({ id: 'sandbox-bwrap', stop: () => backend.dispose() });
  },
});
