/**
 * What a node host keeps between runs, all under `<stateDir>/node/` (0700; files 0600, written
 * atomically): its Ed25519 device identity (`device.json`), its settings (`node.json`: node id,
 * display name, the gateway it connects to) and the device token a gateway issued it
 * (`device-auth.json`, one per gateway URL, so a token is only ever shown to the gateway that
 * issued it).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ensurePrivateDir, writeJsonAtomic } from '../../sdk/index.js';

export interface GatewayEndpoint {
  host: string;
  port: number;
  tls: boolean;
  tlsFingerprint?: string;
  contextPath?: string;
}

export interface NodeConfig {
  version: 1;
  nodeId: string;
  displayName: string;
  gateway?: GatewayEndpoint;
}

interface TokenStore {
  [url: string]: { deviceToken: string; role: string; scopes: string[] };
}

export class NodeState {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'node');
    ensurePrivateDir(this.dir);
  }

  get identityFile(): string {
    return join(this.dir, 'device.json');
  }

  private get configFile(): string {
    return join(this.dir, 'node.json');
  }

  private get tokenFile(): string {
    return join(this.dir, 'device-auth.json');
  }

  /** The saved settings, or undefined before the first run (a damaged file is an error naming it). */
  load(): NodeConfig | undefined {
    let text: string;
    try {
      text = readFileSync(this.configFile, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const parsed = JSON.parse(text) as NodeConfig;
      if (typeof parsed.nodeId !== 'string' || typeof parsed.displayName !== 'string')
        throw new Error('fields missing');
      return parsed;
    } catch (error) {
      throw new Error(`${this.configFile} is not a node config (${(error as Error).message}); remove it to start over`);
    }
  }

  /** The saved settings with this run's flags over them; saved again when anything changed. */
  configure(flags: { nodeId?: string; displayName?: string; gateway?: GatewayEndpoint }): NodeConfig {
    const saved = this.load();
    const next: NodeConfig = {
      version: 1,
      nodeId: flags.nodeId ?? saved?.nodeId ?? randomUUID(),
      displayName: flags.displayName ?? saved?.displayName ?? hostname(),
      ...((flags.gateway ?? saved?.gateway) ? { gateway: flags.gateway ?? saved?.gateway } : {}),
    };
    if (JSON.stringify(next) !== JSON.stringify(saved)) writeJsonAtomic(this.configFile, next);
    return next;
  }

  deviceToken(url: string): string | undefined {
    return this.tokens()[url]?.deviceToken;
  }

  saveDeviceToken(url: string, entry: { deviceToken: string; role: string; scopes: string[] }): void {
    const tokens = this.tokens();
    if (tokens[url]?.deviceToken === entry.deviceToken) return;
    tokens[url] = entry;
    writeJsonAtomic(this.tokenFile, tokens);
  }

  /** A refused token (revoked, mismatched) is forgotten, so the next run pairs again instead of failing the same way. */
  forgetDeviceToken(url: string): void {
    const tokens = this.tokens();
    if (!tokens[url]) return;
    delete tokens[url];
    writeJsonAtomic(this.tokenFile, tokens);
  }

  private tokens(): TokenStore {
    try {
      return JSON.parse(readFileSync(this.tokenFile, 'utf8')) as TokenStore;
    } catch {
      return {};
    }
  }
}

/** ws[s]://host:port[/contextPath] as OpenClaw's node host forms it. */
export function gatewayUrl(endpoint: GatewayEndpoint): string {
  const host = endpoint.host.includes(':') && !endpoint.host.startsWith('[') ? `[${endpoint.host}]` : endpoint.host;
  const path = endpoint.contextPath
    ? endpoint.contextPath.startsWith('/')
      ? endpoint.contextPath
      : `/${endpoint.contextPath}`
    : '';
  return `${endpoint.tls ? 'wss' : 'ws'}://${host}:${endpoint.port}${path}`;
}
