/**
 * Config writes from the agent plugin's gateway methods (agents.update, agents.delete): under
 * the config lock, against the file as it is now, refused when the edit would add a config
 * error. The gateway's config watcher then applies the new file to the running process.
 */
import { ErrorCodes, ProtocolError, type ConfigIssue, type PluginApi } from '../../sdk/index.js';

export async function editConfig<T>(
  api: PluginApi,
  purpose: string,
  edit: (raw: Record<string, unknown>) => T,
): Promise<T> {
  const file = api.kernel.configFile;
  return file.locked(purpose, async (write) => {
    const current = file.read();
    if (current.issues.some((issue) => issue.path === '<file>')) {
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `the config file cannot be parsed (${current.issues[0]!.message}); fix it before ${purpose}`,
      );
    }
    const raw = structuredClone(current.raw) as Record<string, unknown>;
    const result = edit(raw);
    const key = (issue: ConfigIssue) => `${issue.path}\u0000${issue.message}`;
    const before = new Set((await file.check(current.raw as Record<string, unknown>)).map(key));
    const added = (await file.check(raw)).filter((issue) => issue.level === 'error' && !before.has(key(issue)));
    if (added.length > 0) {
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `${purpose} would make the config invalid: ${added.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
      );
    }
    write(raw);
    return result;
  });
}
