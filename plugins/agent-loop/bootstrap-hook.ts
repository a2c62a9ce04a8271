/**
 * `agent:bootstrap`: internal hooks see the workspace files about to be injected into the
 * system prompt and may add, drop or replace them (OpenClaw's records: name, path, missing,
 * content). What they hand back is capped like any bootstrap file.
 */
import type { AgentSettings } from '../../sdk/agent/index.js';
import { loadBootstrapFiles, truncationMarker, type BootstrapFile } from './workspace.js';
import { type InternalBootstrapFile, type KernelServices, emitInternalHook } from '../../sdk/index.js';

function fromRecord(record: InternalBootstrapFile, maxChars: number): BootstrapFile {
  const content = typeof record.content === 'string' ? record.content : undefined;
  if (record.missing || content === undefined)
    return { name: record.name, path: record.path, status: 'missing', rawChars: 0, injectedChars: 0 };
  if (!content.trim())
    return { name: record.name, path: record.path, status: 'empty', rawChars: content.length, injectedChars: 0 };
  if (content.length <= maxChars)
    return {
      name: record.name,
      path: record.path,
      status: 'ok',
      rawChars: content.length,
      injectedChars: content.length,
      content,
    };
  const cut = content.slice(0, maxChars) + truncationMarker(record.name, content.length, maxChars);
  return {
    name: record.name,
    path: record.path,
    status: 'truncated',
    rawChars: content.length,
    injectedChars: cut.length,
    content: cut,
  };
}

const isRecord = (value: unknown): value is InternalBootstrapFile =>
  value !== null &&
  typeof value === 'object' &&
  typeof (value as InternalBootstrapFile).name === 'string' &&
  typeof (value as InternalBootstrapFile).path === 'string';

export async function bootstrapFiles(
  kernel: Pick<KernelServices, 'capabilities'>,
  settings: AgentSettings,
  session: { mainSession: boolean; sessionKey: string; sessionId: string },
): Promise<BootstrapFile[]> {
  const files = loadBootstrapFiles(settings.workspaceDir, {
    mainSession: session.mainSession,
    maxChars: settings.bootstrapMaxChars,
    timeZone: settings.userTimezone,
  });
  const offered = files.map((file) => ({
    name: file.name,
    path: file.path,
    missing: file.status === 'missing',
    ...(file.content !== undefined ? { content: file.content } : {}),
  }));
  const event = await emitInternalHook(kernel, 'agent', 'bootstrap', session.sessionKey, () => ({
    workspaceDir: settings.workspaceDir,
    agentId: settings.agentId,
    sessionKey: session.sessionKey,
    sessionId: session.sessionId,
    // Handlers may edit this array in place; `offered` keeps the originals to compare with.
    bootstrapFiles: [...offered],
  }));
  const returned = event?.context.bootstrapFiles;
  if (!event || !Array.isArray(returned)) return files;
  // Records handed back untouched keep their original reading (status, truncation).
  return returned.filter(isRecord).map((record) => {
    const index = offered.indexOf(record as (typeof offered)[number]);
    return index >= 0 && offered[index]!.content === record.content
      ? files[index]!
      : fromRecord(record, settings.bootstrapMaxChars);
  });
}
