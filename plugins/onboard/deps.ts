/** What the flow needs, from the kernel it runs in: the same in `claw onboard` and in the gateway. */
import { formatIssue, type ChannelLoginState, type ChannelPlugin, type PluginApi } from '../../sdk/index.js';
import type { AgentService, ModelService } from '../../sdk/agent/index.js';
import type { GatewayAuthService, GatewayDaemon } from '../../sdk/index.js';
import { requireService, useService } from '../../sdk/services.js';
import type { OnboardDeps } from './steps.js';
import type { AnyRecord } from './raw-config.js';

/** Each wait for a WhatsApp scan returns at the latest after this (a new QR, or linked). */
export const QR_WAIT_MS = 20_000;

export async function channelPlugin(api: PluginApi, id: string): Promise<ChannelPlugin | undefined> {
  return (await api.kernel.capabilities.find('channel', id).catch(() => undefined)) as ChannelPlugin | undefined;
}

export async function kernelDeps(
  api: PluginApi,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Omit<OnboardDeps, 'changeConfig' | 'whatsappLogin'>> {
  const models = await requireService<ModelService>(api.kernel, 'models', 'claw onboard');
  const agent = await useService<AgentService>(api.kernel, 'agent');
  const gatewayAuth = await useService<GatewayAuthService>(api.kernel, 'gateway-auth');
  const daemon = await useService<GatewayDaemon>(api.kernel, 'gateway-daemon');
  return {
    raw: () => api.kernel.configFile.read().raw as AnyRecord,
    env,
    defaultWorkspace: api.kernel.paths.workspaceDir,
    probe: (ref, provider, signal) => models.probe(ref, provider, signal),
    ...(agent?.seedWorkspace ? { seedWorkspace: (dir: string) => agent.seedWorkspace!(dir) } : {}),
    ...(gatewayAuth ? { generateToken: () => gatewayAuth.generateToken() } : {}),
    ...(daemon ? { daemon } : {}),
    async setupChannels() {
      const out = [];
      // Loading a channel plugin costs its registration only: the platform library loads when an account starts.
      for (const { name } of api.kernel.capabilities.list('channel')) {
        const plugin = await channelPlugin(api, name);
        if (plugin?.setup) out.push({ id: name, label: plugin.label ?? name, setup: plugin.setup });
      }
      return out;
    },
    redact: (secret) => api.kernel.redact.add(secret),
  };
}

/** WhatsApp's QR login run by the channel plugin in this process. */
export async function localWhatsappLogin(api: PluginApi): Promise<OnboardDeps['whatsappLogin']> {
  const plugin = await channelPlugin(api, 'whatsapp');
  if (!plugin?.loginStart || !plugin.loginWait) return undefined;
  return {
    start: (): Promise<ChannelLoginState> => plugin.loginStart!({}),
    wait: (currentQr) => plugin.loginWait!({ timeoutMs: QR_WAIT_MS, ...(currentQr ? { currentQr } : {}) }),
  };
}

/**
 * A config change made inside the gateway: under the config lock, refused when it would make
 * the config invalid; the gateway's watcher applies it as it applies any edit of the file.
 */
export function gatewayConfigWriter(api: PluginApi): OnboardDeps['changeConfig'] {
  const file = api.kernel.configFile;
  return (purpose, edit) =>
    file.locked(`gateway wizard: ${purpose}`, async (write) => {
      const raw = structuredClone(file.read().raw) as AnyRecord;
      edit(raw);
      const errors = (await file.check(raw)).filter((issue) => issue.level === 'error');
      if (errors.length > 0)
        throw new Error(`that change would make the config invalid: ${errors.map(formatIssue).join('; ')}`);
      write(raw);
    });
}
