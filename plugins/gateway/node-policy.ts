/**
 * Which commands the gateway lets anyone send a node (OpenClaw's node command policy). One
 * function decides, for node.invoke and the "nodes" service alike:
 *
 *   effective = declared ∩ approved surface ∩ ceiling − gateway.nodes.commands.deny
 *   ceiling   = the platform's defaults ∪ desktop host commands in the approved surface
 *               ∪ gateway.nodes.commands.allow
 *
 * Dangerous (privacy-heavy) commands reach the ceiling only through commands.allow; deny wins
 * over everything. Tables follow OpenClaw 2026.9's (nodes/command-policy.md).
 */

const CAMERA = ['camera.list'];
const LOCATION = ['location.get'];
const DEVICE = ['device.info', 'device.status'];
const PERSONAL = ['contacts.search', 'calendar.events', 'reminders.list', 'photos.latest'];
const MOTION = ['motion.activity', 'motion.pedometer'];
const NOTIFY = 'system.notify';
const SCREEN = ['screen.snapshot', 'desktop.stream'];
const COMPUTER = ['computer.act'];

/** Commands a desktop node host serves; allowed only once an operator approved them in its surface. */
export const DESKTOP_HOST_COMMANDS: ReadonlySet<string> = new Set([
  'system.run.prepare',
  'system.run',
  'system.which',
  'system.execApprovals.get',
  'system.execApprovals.set',
  'fs.listDir',
  'terminal.upload',
  'browser.proxy',
  'browser.proxy.upload.v1',
  'mcp.tools.call.v1',
  'agent.cli.claude.run.v1',
  'dir.list',
  'file.stat',
  'file.fetch',
  'file.write',
  ...SCREEN,
]);

/** Privacy-heavy commands: only through gateway.nodes.commands.allow. */
export const DANGEROUS_NODE_COMMANDS: ReadonlySet<string> = new Set([
  'camera.snap',
  'camera.clip',
  'camera.ptz.control',
  'screen.record',
  'contacts.add',
  'calendar.add',
  'reminders.add',
  'health.summary',
  'sms.send',
  'sms.search',
]);

const PLATFORM_DEFAULTS: Record<string, readonly string[]> = {
  ios: [...CAMERA, ...LOCATION, ...DEVICE, ...PERSONAL, ...MOTION, NOTIFY],
  watchos: [...DEVICE, NOTIFY],
  android: [
    ...CAMERA,
    ...LOCATION,
    'notifications.list',
    'notifications.actions',
    NOTIFY,
    ...DEVICE,
    'device.permissions',
    'device.health',
    'device.apps',
    ...PERSONAL,
    'callLog.search',
    ...MOTION,
    'mobile.ui.observe',
    'mobile.ui.act',
  ],
  macos: [
    ...CAMERA,
    'camera.ptz.status',
    ...LOCATION,
    ...DEVICE,
    'device.apps',
    ...PERSONAL,
    ...MOTION,
    NOTIFY,
    ...COMPUTER,
  ],
  linux: [NOTIFY, ...COMPUTER],
  windows: [...CAMERA, ...LOCATION, ...DEVICE, NOTIFY, ...COMPUTER],
  // claw's web UI tab registering as a canvas node.
  web: ['canvas.present', 'canvas.hide', 'canvas.navigate', 'canvas.eval', 'canvas.snapshot'],
  // Conservative for anything else: nothing of system.*, no desktop host commands.
  unknown: [...CAMERA, ...LOCATION, NOTIFY],
};

const DESKTOP_PLATFORMS = new Set(['macos', 'linux', 'windows']);

/** OpenClaw's platform ids from what clients send (node's process.platform, app labels like "macOS 15.2"). */
export function platformId(platform: string | null | undefined): string {
  const raw = (platform ?? '').trim().toLowerCase();
  if (raw === 'darwin' || raw === 'macos' || /^macos \d/.test(raw)) return 'macos';
  if (raw === 'linux') return 'linux';
  if (raw === 'win32' || raw === 'windows') return 'windows';
  if (raw === 'ios' || raw === 'ipados' || /^(ios|ipados) \d/.test(raw)) return 'ios';
  if (raw === 'watchos' || /^watchos \d/.test(raw)) return 'watchos';
  if (raw === 'android' || /^android \d/.test(raw)) return 'android';
  if (raw === 'web') return 'web';
  return 'unknown';
}

export interface NodeCommandConfig {
  allow: string[];
  deny: string[];
}

/** gateway.nodes.commands from the running config (read per decision, so edits apply at once). */
export function nodeCommandConfig(config: Readonly<Record<string, unknown>>): NodeCommandConfig {
  const gateway = (config.gateway ?? {}) as { nodes?: { commands?: { allow?: unknown; deny?: unknown } } };
  const list = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').map((v) => v.trim()) : [];
  return { allow: list(gateway.nodes?.commands?.allow), deny: list(gateway.nodes?.commands?.deny) };
}

/** What the policy needs to know of a node. */
export interface PolicyNode {
  nodeId: string;
  platform: string | null;
  declared: readonly string[];
  /** The operator-approved surface; undefined when none was ever approved. */
  approved: readonly string[] | undefined;
}

export type Refusal = { gate: 'declared' | 'surface' | 'deny' | 'dangerous' | 'platform'; message: string };

/** The commands the gateway's policy ceiling admits for this node (before declared and approved). */
function ceiling(node: PolicyNode, config: NodeCommandConfig): Set<string> {
  const id = platformId(node.platform);
  const allowed = new Set(PLATFORM_DEFAULTS[id] ?? PLATFORM_DEFAULTS.unknown);
  if (DESKTOP_PLATFORMS.has(id))
    for (const command of node.approved ?? []) if (DESKTOP_HOST_COMMANDS.has(command)) allowed.add(command);
  for (const command of DANGEROUS_NODE_COMMANDS) allowed.delete(command);
  for (const command of config.allow) if (command) allowed.add(command);
  return allowed;
}

/** Why a command may not be sent to this node, or undefined when it may. */
export function refuseCommand(node: PolicyNode, command: string, config: NodeCommandConfig): Refusal | undefined {
  const who = `node "${node.nodeId}"`;
  if (config.deny.includes(command))
    return { gate: 'deny', message: `"${command}" is blocked by gateway.nodes.commands.deny (${who})` };
  if (!node.declared.includes(command))
    return {
      gate: 'declared',
      message: `${who} (platform ${node.platform ?? 'unknown'}) did not declare "${command}"`,
    };
  if (!node.approved?.includes(command))
    return {
      gate: 'surface',
      message: `"${command}" is not in the approved command surface of ${who}: approve its pending request (claw nodes pending, then claw nodes approve <requestId>)`,
    };
  if (ceiling(node, config).has(command)) return undefined;
  if (DANGEROUS_NODE_COMMANDS.has(command))
    return {
      gate: 'dangerous',
      message: `"${command}" on ${who} needs an explicit opt-in in gateway.nodes.commands.allow`,
    };
  return {
    gate: 'platform',
    message: `"${command}" is not allowed for platform "${platformId(node.platform)}" of ${who} (add it to gateway.nodes.commands.allow to allow it)`,
  };
}

/** Every command that may be sent to this node now. */
export function effectiveCommands(node: PolicyNode, config: NodeCommandConfig): string[] {
  return node.declared.filter((command) => !refuseCommand(node, command, config)).sort();
}

const ADMIN_APPROVAL_COMMANDS = new Set([
  'system.run',
  'system.run.prepare',
  'system.which',
  'system.execApprovals.get',
  'system.execApprovals.set',
  'browser.proxy',
  'browser.proxy.upload.v1',
  'fs.listDir',
  'terminal.upload',
]);

/** The operator scopes approving a surface needs (OpenClaw's rule: more power, more scope). */
export function approveScopes(commands: readonly string[]): string[] {
  if (commands.some((command) => ADMIN_APPROVAL_COMMANDS.has(command))) return ['operator.pairing', 'operator.admin'];
  if (commands.length > 0) return ['operator.pairing', 'operator.write'];
  return ['operator.pairing'];
}

/** Commands operators may invoke directly only with operator.admin (OpenClaw's list). */
export const ADMIN_INVOKE_COMMANDS: ReadonlySet<string> = new Set([
  'browser.proxy',
  'browser.proxy.upload.v1',
  'fs.listDir',
  'terminal.upload',
]);
