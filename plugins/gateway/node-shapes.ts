/**
 * OpenClaw's shapes for a pending node pairing request and a paired node (node.pair.list,
 * node.pair.requested, node.pair.approve), built from claw's pairing records; what claw does not
 * record of a node (versions, declared commands, host stats) carries OpenClaw's empty value.
 */
import { approveScopes } from './node-policy.js';
import type { PairedDevice, PairingRequest, SurfaceRequest } from './pairing.js';

export const ms = (iso: string | undefined): number | null => (iso ? Date.parse(iso) : null);
export const sorted = (values: unknown): string[] =>
  Array.isArray(values) ? [...new Set(values.filter((v): v is string => typeof v === 'string'))].sort() : [];

/** What OpenClaw says of any node, pending or paired; claw records no versions or model. */
function nodeIdentity(
  node: Pick<PairingRequest, 'deviceId' | 'clientId' | 'displayName' | 'platform'>,
  surface: { commands: string[]; caps: string[] } = { commands: [], caps: [] },
) {
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
    caps: [...surface.caps],
    commands: [...surface.commands],
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

/** A paired node's pending command surface request, in the same shape (its own requestId). */
export function nodeSurfaceRequest(device: PairedDevice, request: SurfaceRequest) {
  return {
    requestId: request.requestId,
    ...nodeIdentity(device, request),
    requiredApproveScopes: approveScopes(request.commands),
    permissions: null,
    remoteIp: device.remoteAddress ?? null,
    silent: false,
    ts: Date.parse(request.createdAt),
  };
}

export function pairedNode(device: PairedDevice) {
  return {
    ...nodeIdentity(device, device.surface),
    permissions: null,
    remoteIp: device.remoteAddress ?? null,
    bins: [],
    createdAtMs: ms(device.approvedAt),
    approvedAtMs: ms(device.approvedAt),
    lastConnectedAtMs: ms(device.lastSeenAt),
    lastDisconnectedAtMs: null,
    lastHostStats: device.lastHostStats ?? null,
    lastSeenAtMs: ms(device.lastSeenAt),
    lastSeenReason: device.lastSeenAt ? 'connect' : null,
  };
}
