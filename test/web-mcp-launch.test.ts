/**
 * The MCP page's own launch lines (apps/web/src/views/mcp-launch.ts), used when the mcp
 * plugin's status is not there to give its masked one: no credential in an argument or a URL
 * survives, and everything else reads as written.
 */
import { describe, expect, it } from 'vitest';
import { launchOf, safeArgs, safeUrl, transportOf } from '../apps/web/src/views/mcp-launch.js';

describe('MCP page launch lines', () => {
  it('masks credential-looking arguments, separate or joined by =', () => {
    expect(
      safeArgs(['-y', 'server', '--api-key', 'k-123', '--token=t-456', '-password', 'p-789', '--port', '8080']),
    ).toEqual(['-y', 'server', '--api-key', '***', '--token=***', '-password', '***', '--port', '8080']);
    // config.get's marker for a secret-named value reads as the mask.
    expect(safeArgs(['__REDACTED__'])).toEqual(['***']);
  });

  it('drops user info and masks secret query values of a URL, in arguments too', () => {
    expect(safeUrl('https://user:pw@mcp.example.com/mcp?api_key=abc&team=docs')).toBe(
      'https://***@mcp.example.com/mcp?api_key=***&team=docs',
    );
    expect(safeArgs(['--endpoint', 'https://u:p@host.example/x'])).toEqual([
      '--endpoint',
      'https://***@host.example/x',
    ]);
    expect(safeUrl('not a url //user:pw@host')).toBe('not a url //***@host');
  });

  it('names the transport as OpenClaw does and builds the launch line', () => {
    expect(transportOf({ url: 'https://h.example/sse' })).toBe('sse');
    expect(transportOf({ url: 'https://h.example/mcp', type: 'http' })).toBe('streamable-http');
    expect(transportOf({ command: 'npx' })).toBe('stdio');
    expect(launchOf({ url: 'https://a:b@h.example/mcp', transport: 'streamable-http' })).toBe(
      'streamable-http https://***@h.example/mcp',
    );
    expect(launchOf({ command: 'npx', args: ['-y', 'pkg', '--secret', 's'] })).toBe('npx -y pkg --secret ***');
  });
});
