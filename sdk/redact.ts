/**
 * Secret-named config keys and the mask that replaces a secret, for plugins that show config
 * or environment. Masking text itself is the kernel's one redaction layer (`api.kernel.redact`,
 * built by the host: host/redact.ts).
 */
export const MASK = '***';

const SECRET_KEY =
  /(token|api[-_]?key|password|passwd|passphrase|secret|private[-_]?key|credentials?|cookie|authorization)$/i;

/** A config key whose value is a credential, wherever it appears (`botToken`, `apiKey`, …). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}
