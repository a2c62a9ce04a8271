/** The `browser` config section, read into what one profile's launch needs. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expandHome } from '../../sdk/index.js';
import type { BrowserSsrfPolicy } from './policy.js';

export interface BrowserSection {
  enabled: boolean;
  evaluateEnabled: boolean;
  defaultProfile: string;
  headless: boolean;
  noSandbox: boolean;
  executablePath?: string;
  extraArgs?: string[];
  idleTimeoutMs: number;
  ssrfPolicy?: BrowserSsrfPolicy;
  profiles?: Record<string, { headless?: boolean; executablePath?: string }>;
}

export interface ProfileSettings {
  name: string;
  executablePath: string;
  headless: boolean;
  args: string[];
  userDataDir: string;
}

/** The profiles a user can pick: the configured ones and always the default. */
export function profileNames(section: BrowserSection): string[] {
  return [...new Set([section.defaultProfile, ...Object.keys(section.profiles ?? {})])];
}

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
];

/** Flags from the environment notes: no first-run, no background traffic to closed hosts, no QUIC (it would skip the proxy's TCP path). */
const BASE_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-default-browser-check',
  '--disable-features=NetworkPrediction',
  // WebRTC sends UDP (STUN, media) past the proxy, to any address a page names, 127.0.0.1 included.
  // Chromium 156 takes this switch into the webrtc.ip_handling_policy pref: no UDP that does not go
  // through the proxy (which carries none), so a page gathers no candidates. The often quoted
  // --force-webrtc-ip-handling-policy is not a switch of this Chromium: with it the UDP still went out.
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** Flags that would route requests around claw's SSRF proxy: refused in browser.extraArgs. */
const BYPASS_FLAGS =
  /^--(proxy-server|proxy-pac-url|proxy-bypass-list|no-proxy-server|host-resolver-rules|(force-)?webrtc-ip-handling-policy)\b/;

export function profileSettings(section: BrowserSection, name: string, stateDir: string): ProfileSettings {
  if (!profileNames(section).includes(name))
    throw new Error(`unknown browser profile "${name}" (profiles: ${profileNames(section).join(', ')})`);
  const own = section.profiles?.[name] ?? {};
  const configured = own.executablePath ?? section.executablePath;
  const executablePath = configured ? expandHome(configured) : CANDIDATES.find((path) => existsSync(path));
  if (!executablePath)
    throw new Error(`no Chromium found (looked for ${CANDIDATES.join(', ')}); set browser.executablePath`);
  const proxyFlag = (section.extraArgs ?? []).find((arg) => BYPASS_FLAGS.test(arg));
  if (proxyFlag)
    throw new Error(
      `browser.extraArgs may not contain ${proxyFlag.split('=')[0]}: every browser request goes through claw's SSRF proxy`,
    );
  // Chromium's own sandbox cannot start as root; as anyone else it stays on unless asked.
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const args = [...BASE_ARGS, ...(root || section.noSandbox ? ['--no-sandbox'] : []), ...(section.extraArgs ?? [])];
  return {
    name,
    executablePath,
    headless: own.headless ?? section.headless,
    args,
    userDataDir: join(stateDir, 'browser', name, 'user-data'),
  };
}
