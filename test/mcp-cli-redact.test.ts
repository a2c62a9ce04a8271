/** What `claw mcp` masks in launch lines and saved definitions (plugins/mcp/redact.ts), in process. */
import { describe, expect, it } from 'vitest';
import { redactArgs, redactServer, redactUrl } from '../plugins/mcp/redact.js';

describe('MCP definition masking', () => {
  it('masks the values of secret flags, sensitive NAME=value args and URL credentials, keeping the length', () => {
    const args = [
      '-y',
      '@scope/server',
      '--api-key',
      'sk-live-1',
      '--auth-token=abc',
      '--client-secret',
      '-starts-with-dash',
      'GITHUB_TOKEN=ghp_x',
      'MODE=fast',
      'API_KEY=${MY_KEY}',
      'https://bob:pw@db.example.test/x?apikey=k1&page=2',
      '--verbose',
    ];
    expect(redactArgs(args)).toEqual([
      '-y',
      '@scope/server',
      '--api-key',
      '***',
      '--auth-token=***',
      '--client-secret',
      '***',
      'GITHUB_TOKEN=***',
      'MODE=fast',
      'API_KEY=${MY_KEY}',
      'https://***:***@db.example.test/x?apikey=***&page=2',
      '--verbose',
    ]);
  });

  it('leaves a URL without credentials as written and masks userinfo in one it cannot parse', () => {
    expect(redactUrl('https://mcp.example.test/mcp?page=2')).toBe('https://mcp.example.test/mcp?page=2');
    expect(redactUrl('not a url //user:pw@host')).toBe('not a url //***@host');
  });

  it('masks every literal header value and sensitive env values; ${VAR} references stay readable', () => {
    expect(
      redactServer({
        command: 'srv',
        env: { DEBUG: '1', SERVICE_PASSWORD: 'hunter2', GH_TOKEN: '${GH_TOKEN}' },
        headers: { 'X-Team': 'core', Authorization: 'Bearer ${DOCS_TOKEN}' },
        enabled: false,
      }),
    ).toEqual({
      command: 'srv',
      env: { DEBUG: '1', SERVICE_PASSWORD: '***', GH_TOKEN: '${GH_TOKEN}' },
      headers: { 'X-Team': '***', Authorization: 'Bearer ${DOCS_TOKEN}' },
      enabled: false,
    });
  });
});
