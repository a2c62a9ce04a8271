/**
 * OpenClaw's shapes for a pending node pairing request and a paired node (node.pair.list,
 * node.pair.requested, node.pair.approve), built from claw's pairing records; what claw does not
 * record of a node (versions, declared commands, host stats) carries OpenClaw's empty value.
 */
import type { PairedDevice, PairingRequest } from './pairing.js';

export const ms = (iso: string | undefined): number | null => (iso ? Date.parse(iso) : null);
export const sorted = (values: unknown): string[] =>
  Array.isArray(values) ? [...new Set(values.filter((v): v is string => typeof v === 'string'))].sort() : [];

/** What OpenClaw says of any node, pending or paired; claw records no versions, model or declared commands at pairing. */
function nodeIdentity(node: Pick<PairingRequest, 'deviceId' | 'clientId' | 'displayName' | 'platform'>) {
  return {
    nodeId: node.deviceId,
    clientId: node.clientId ?? null,
    clientMode: null,
    displayName: node.displayName ?? null,
    platform: node.platform ?? null,
    version: null,
    coreVersion: null,
    uiVersion: null,
    deviceFamily: null,
    modelIdentifier: null,
    caps: [],
    commands: [],
  };
}

/** A pending node pairing request in OpenClaw's shape (node.pair.list, node.pair.requested). */
export function nodePairRequest(request: PairingRequest) {
  return {
    requestId: request.requestId,
    ...nodeIdentity(request),
    // As OpenClaw: a node declaring no commands needs only the pairing scope to approve.
    requiredApproveScopes: ['operator.pairing'],
    permissions: null,
    remoteIp: request.remoteAddress ?? null,
    silent: false,
    ts: Date.parse(request.createdAt),
  };
}

export function pairedNode(device: PairedDevice) {
  return {
    ...nodeIdentity(device),
    permissions: null,
    remoteIp: device.remoteAddress ?? null,
    bins: [],
    createdAtMs: ms(device.approvedAt),
    approvedAtMs: ms(device.approvedAt),
    lastConnectedAtMs: ms(device.lastSeenAt),
    lastDisconnectedAtMs: null,
    lastHostStats: null,
    lastSeenAtMs: ms(device.lastSeenAt),
    lastSeenReason: device.lastSeenAt ? 'connect' : null,
  };
}
