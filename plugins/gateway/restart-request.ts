/**
 * OpenClaw's gateway.restart.request: restart the running gateway in place, the path
 * config.apply and hybrid reloads take (drain agent turns, stop the kernel, start it again
 * with the same port). A gateway started without that path (embedded in a test or another
 * program) cannot restart itself and says so.
 */
import { ErrorCodes, ProtocolError, type PluginApi } from '../../sdk/index.js';
import type { GatewayRuntime } from './runtime.js';

const MAX_REASON = 200;

export function registerRestartRequest(api: PluginApi, runtime: GatewayRuntime): void {
  // The restart re-registers this plugin, so the flag lives exactly as long as the restart is pending.
  let pending = false;
  api.registerGatewayMethod('gateway.restart.request', {
    params: { type: 'object' },
    scope: 'operator.admin',
    description:
      'Restart the gateway in place after its running agent turns finish: {ok, status: "scheduled" | "coalesced", preflight, restart}.',
    handler: (params: { reason?: unknown; target?: unknown }) => {
      if (params.target !== undefined) {
        // OpenClaw targets one of several gateways by lock owner; claw runs one gateway per state dir.
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'invalid targeted gateway restart');
      }
      const reason =
        typeof params.reason === 'string' && params.reason.trim()
          ? params.reason.trim().slice(0, MAX_REASON)
          : 'gateway.restart.request';
      if (!runtime.requestRestart) {
        throw new ProtocolError(
          ErrorCodes.UNAVAILABLE,
          'this gateway cannot restart itself (it was not started by `claw gateway`); restart the process that runs it',
        );
      }
      const wasPending = pending;
      if (!runtime.requestRestart(reason, 0))
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, 'the gateway could not schedule a restart');
      pending = true;
      return {
        ok: true,
        status: wasPending ? 'coalesced' : 'scheduled',
        // claw waits for running agent turns itself while restarting, so nothing here defers the request.
        preflight: {
          safe: true,
          counts: {
            queueSize: 0,
            pendingReplies: 0,
            embeddedRuns: 0,
            cronRuns: 0,
            backgroundExecSessions: 0,
            rootRequests: 0,
            activeTasks: 0,
            totalActive: 0,
          },
          blockers: [],
          summary: 'claw finishes running agent turns before it restarts',
        },
        restart: {
          ok: true,
          pid: process.pid,
          // No signal: claw restarts its kernel inside the same process.
          signal: null,
          reason,
          mode: 'in-process',
          cooldownMsApplied: 0,
          delayMs: 0,
          coalesced: wasPending,
          emitHooksQueued: false,
        },
      };
    },
  });
}
