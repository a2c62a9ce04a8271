/**
 * The text of `claw health` and `claw status`, for claw's gateway and for an OpenClaw
 * gateway (whose snapshots have other fields). Nothing here assumes a field is there: a
 * gateway of another make or version still gets a readable summary instead of a crash.
 */
type Loose = Record<string, any>;

function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

const isObject = (value: unknown): value is Loose =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** Healthy: claw's `status: "ok"`, or OpenClaw's `ok: true` without a degraded status. */
export function healthOk(snapshot: unknown): boolean {
  if (!isObject(snapshot)) return false;
  if (typeof snapshot.status === 'string') return snapshot.status === 'ok';
  return snapshot.ok === true;
}

export function healthLines(snapshot: unknown): string[] {
  if (!isObject(snapshot)) return ['Gateway answered health with no snapshot'];
  // claw's snapshot counts its plugins; OpenClaw's lists the loaded ones.
  const plugins =
    isObject(snapshot.plugins) && typeof snapshot.plugins.total === 'number' ? snapshot.plugins : undefined;
  if (plugins) {
    const memory = isObject(snapshot.memory) ? snapshot.memory : {};
    const failed: Loose[] = Array.isArray(plugins.failed) ? plugins.failed : [];
    return [
      `Gateway ${snapshot.status ?? (snapshot.ok ? 'ok' : 'unknown')} · up ${duration(num(snapshot.uptimeMs) ?? 0)} · claw ${snapshot.version ?? '?'}`,
      `  connections ${snapshot.connections ?? '?'} · plugins ${plugins.loaded ?? '?'} loaded, ${plugins.enabled ?? '?'} on, ${plugins.total ?? '?'} found`,
      `  memory ${Math.round((num(memory.rssBytes) ?? 0) / 1e6)} MB rss · event loop p99 ${snapshot.eventLoopDelayMs ?? '?'} ms`,
      ...failed.map((plugin) => `  failed: ${plugin.id}: ${plugin.error}`),
      ...modelLines(snapshot.model),
    ];
  }
  // OpenClaw: {ok, ts, durationMs, channels: {id: {...}}, agents: [...], sessions: {...}, ...}.
  const lines = [
    `Gateway ${snapshot.ok === true ? 'ok' : 'not ok'}${num(snapshot.durationMs) !== undefined ? ` · probe ${snapshot.durationMs} ms` : ''}`,
  ];
  const channels = isObject(snapshot.channels) ? Object.entries(snapshot.channels) : [];
  if (channels.length > 0) {
    lines.push(
      `  channels   ${channels.map(([id, state]) => `${id}${isObject(state) && typeof state.configured === 'boolean' ? (state.configured ? '' : ' (not configured)') : ''}`).join(', ')}`,
    );
  }
  const agents: Loose[] = Array.isArray(snapshot.agents) ? snapshot.agents : [];
  if (agents.length > 0)
    lines.push(
      `  agents     ${agents.map((agent) => `${agent.agentId ?? agent.id ?? '?'}${agent.isDefault ? ' (default)' : ''}`).join(', ')}`,
    );
  if (typeof snapshot.defaultAgentId === 'string' && agents.length === 0)
    lines.push(`  agent      ${snapshot.defaultAgentId} (default)`);
  if (isObject(snapshot.sessions) && num(snapshot.sessions.count) !== undefined)
    lines.push(`  sessions   ${snapshot.sessions.count}`);
  const loaded: unknown[] =
    isObject(snapshot.plugins) && Array.isArray(snapshot.plugins.loaded) ? snapshot.plugins.loaded : [];
  if (loaded.length > 0) lines.push(`  plugins    ${loaded.length} loaded`);
  if (num(snapshot.heartbeatSeconds) !== undefined)
    lines.push(`  heartbeat  every ${duration(snapshot.heartbeatSeconds * 1000)}`);
  return lines;
}

export function statusLines(result: unknown): string[] {
  if (!isObject(result)) return ['Gateway answered status with no summary'];
  if (typeof result.pid === 'number' && isObject(result.connections)) {
    const plugins = isObject(result.plugins) ? result.plugins : {};
    const failed: string[] = Array.isArray(plugins.failed) ? plugins.failed : [];
    return [
      `claw ${result.version} gateway (pid ${result.pid}, ${result.platform}, node ${result.node}), up ${duration(num(result.uptimeMs) ?? 0)}`,
      `  listening  ${result.listening?.url ?? 'no'} (bind ${result.listening?.bind ?? '-'}, auth ${result.auth?.mode ?? '-'})`,
      `  clients    ${result.connections.total} (${result.connections.operators} operators, ${result.connections.nodes} nodes)`,
      `  plugins    ${plugins.loaded} loaded, ${plugins.enabled} on, ${plugins.total} found${failed.length ? `; failed: ${failed.join(', ')}` : ''}`,
      ...(result.stateDir ? [`  state      ${result.stateDir}`] : []),
      ...modelLines(result.model),
    ];
  }
  // OpenClaw: {runtimeVersion, heartbeat: {defaultAgentId, agents}, channelSummary: [...], sessions: {...}, ...}.
  const lines = [`OpenClaw gateway${typeof result.runtimeVersion === 'string' ? ` ${result.runtimeVersion}` : ''}`];
  const heartbeat = isObject(result.heartbeat) ? result.heartbeat : undefined;
  if (typeof heartbeat?.defaultAgentId === 'string') lines.push(`  agent      ${heartbeat.defaultAgentId} (default)`);
  const summary: unknown[] = Array.isArray(result.channelSummary) ? result.channelSummary : [];
  for (const line of summary) if (typeof line === 'string') lines.push(`  channel    ${line}`);
  const sessions = isObject(result.sessions) ? result.sessions : undefined;
  if (num(sessions?.count) !== undefined) lines.push(`  sessions   ${sessions!.count}`);
  return lines;
}

/** The default agent's model readiness (`model` in claw's health and status), when reported. */
function modelLines(model: unknown): string[] {
  if (!isObject(model) || typeof model.ok !== 'boolean') return [];
  if (model.ok) return [`  model      ${model.primary ?? '?'}`];
  return [
    `  model      NONE USABLE: ${model.problem ?? 'no reason given'}`,
    ...(typeof model.fix === 'string' ? [`  fix        ${model.fix}`] : []),
  ];
}
