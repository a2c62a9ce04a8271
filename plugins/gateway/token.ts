/**
 * A gateway started with no auth configured does not run open: it makes a strong token,
 * saves it in the config file (owner-only, written atomically) and tells the owner how to
 * use it. Every local client (the CLI, `claw dashboard`) reads it from there.
 */
import type { PluginApi } from '../../sdk/index.js';
import { generateGatewayToken } from './auth.js';

export function saveGeneratedToken(api: Pick<PluginApi, 'kernel' | 'logger'>): Promise<string> {
  return api.kernel.configFile.locked('gateway: saving a generated token', (write) => save(api, write));
}

function save(api: Pick<PluginApi, 'kernel' | 'logger'>, write: (raw: Record<string, unknown>) => void): string {
  const file = api.kernel.configFile;
  const snapshot = file.read();
  if (snapshot.issues.some((issue) => issue.path === '<file>')) {
    throw new Error(
      `cannot add a gateway token to ${snapshot.path}: ${snapshot.issues.map((issue) => issue.message).join('; ')}`,
    );
  }
  const raw = structuredClone(snapshot.raw);
  const gateway = (raw.gateway ??= {}) as Record<string, unknown>;
  const token = generateGatewayToken();
  // The kernel's redactor was built from the config before this token existed.
  api.kernel.redact.add(token);
  gateway.auth = { ...(gateway.auth as Record<string, unknown> | undefined), mode: 'token', token };
  try {
    write(raw);
  } catch (error) {
    throw new Error(`cannot save the generated gateway token to ${snapshot.path}: ${(error as Error).message}`);
  }
  api.logger.warn(
    `no gateway auth was configured, so a token was generated and saved to ${snapshot.path} (gateway.auth.token). ` +
      'The claw CLI uses it automatically; `claw dashboard` opens the web UI signed in; other clients read it from that file.',
  );
  return token;
}
