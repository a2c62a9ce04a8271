/**
 * `claw browser` against a real gateway process (the built CLI): the browser lives in the
 * gateway, the CLI drives it through browser.request with OpenClaw's subcommands and flags.
 * And `claw agent --local`, whose browser lives in the CLI process: it goes when the answer is out.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, claw, startCliGateway, tempDir } from './helpers.js';
import { startTestSite, type TestSite } from './browser-pages.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';

let site: TestSite;
let fake: FakeLlm;
beforeAll(async () => {
  site = await startTestSite();
  fake = await startFakeLlm();
});
afterAll(async () => {
  await site?.close();
  await fake?.close();
});

describe('claw browser', () => {
  it('start, open, tabs, snapshot, type/click by ref, wait, screenshot, pdf, close, stop through a running gateway', async () => {
    const stateDir = tempDir('claw-browser-cli-');
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({ browser: { ssrfPolicy: { allowedHostnames: ['127.0.0.1'] }, profiles: { work: {} } } }),
    );
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const gw = await startCliGateway(env);
    const run = async (...args: string[]) => {
      const result = await claw(['browser', ...args], env);
      return { ...result, json: () => JSON.parse(result.stdout) };
    };

    expect((await run('--json', 'status')).json()).toMatchObject({
      enabled: true,
      profile: 'openclaw',
      running: false,
    });
    expect((await run('profiles')).stdout).toBe('openclaw (default)  stopped\nwork  stopped\n');
    // Human output by default, the gateway's answer with --json; progress (if any) stays on stderr.
    expect((await run('start')).stdout).toMatch(/^openclaw: running, \d+ tabs? \(headless\)\n$/);
    const opened = (await run('--json', 'open', `${site.base}/page`, '--label', 'controls')).json();
    expect(opened.tab).toMatchObject({ tabId: 't1', label: 'controls', url: `${site.base}/page` });
    expect((await run('tabs')).stdout).toContain(`* t1 (controls)  ${site.base}/page  Test page`);

    const snapshot = (await run('snapshot', '--interactive')).stdout;
    const ref = (role: string, name: string) => new RegExp(`${role} "${name}" \\[ref=e(\\d+)\\]`).exec(snapshot)![1]!;
    expect(
      snapshot
        .trim()
        .split('\n')
        .every((line) => /^- (textbox|combobox|button|link) "/.test(line)),
    ).toBe(true);
    expect((await run('type', ref('textbox', 'Email'), 'cli@example.com')).code).toBe(0);
    expect((await run('select', ref('combobox', 'Colour'), 'g')).stdout).toBe(
      `select selected g (t1  ${site.base}/page)\n`,
    );
    // A bare number is the short form of the ref e<n>, as OpenClaw's CLI prints it.
    expect((await run('click', ref('button', 'Go'))).code).toBe(0);
    expect(
      (await run('wait', '--text', 'clicked cli@example.com g', '--timeout-ms', '5000', '--json')).json(),
    ).toMatchObject({
      ok: true,
      met: ['text "clicked cli@example.com g"'],
    });
    const compact = (await run('--json', 'snapshot', '--compact', '--depth', '3', '--target-id', 'controls')).json();
    expect(compact).toMatchObject({ targetId: 't1', stats: { refs: expect.any(Number) } });

    expect((await run('navigate', `${site.base}/delayed`)).code).toBe(0);
    const combined = await run(
      'wait',
      '#main',
      '--url',
      '**/dash',
      '--load',
      'load',
      '--fn',
      'window.ready===true',
      '--timeout-ms',
      '5000',
      '--json',
    );
    expect(combined.json().met).toEqual(['url **/dash', 'load load', 'selector #main', 'fn window.ready===true']);
    const late = await run('wait', '--url', '**/never', '--timeout-ms', '100');
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/INVALID_REQUEST: wait timed out after 100 ms: url \*\*\/never did not happen/);

    const shot = (await run('screenshot', '--full-page')).stdout.trim();
    expect(shot).toMatch(/^MEDIA:.*\.png$/);
    expect(readFileSync(shot.slice('MEDIA:'.length)).subarray(1, 4).toString()).toBe('PNG');
    const pdf = (await run('pdf')).stdout.trim();
    expect(readFileSync(pdf.slice('MEDIA:'.length)).subarray(0, 5).toString()).toBe('%PDF-');

    const blocked = await run('navigate', `${site.secret}/`);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toMatch(/navigation blocked: 127\.0\.0\.2 is a loopback/);
    expect(site.secretHits).toEqual([]);

    expect((await run('--browser-profile', 'work', '--json', 'open', `${site.base}/form`)).json().tab).toMatchObject({
      tabId: 't1',
    });
    expect((await run('profiles')).stdout).toBe('openclaw (default)  running\nwork  running\n');
    expect((await run('close', 'controls')).stdout).toBe('Closed t1.\n');
    expect((await run('tabs')).stdout).toBe('no tabs\n');

    const usage = await run('click');
    expect(usage).toMatchObject({ code: 2, stderr: 'claw: missing <ref>\n' });
    expect(await run('frobnicate')).toMatchObject({
      code: 2,
      stderr: "claw: Unknown command 'browser frobnicate' (see claw browser --help)\n",
    });
    expect((await run('opn', site.base)).stderr).toBe(
      "claw: Unknown command 'browser opn'. Did you mean 'browser open'?\n",
    );
    expect((await run('snapshot', '--depth', 'x')).stderr).toMatch(/--depth must be a whole number/);

    expect((await run('stop')).stdout).toBe('Stopped the browser.\n');
    expect((await run('--json', 'status')).json()).toMatchObject({ running: false });
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  }, 90_000);
});

describe('claw agent --local with the browser', () => {
  it('exits as soon as the answer is printed, though a browser tool call left Chromium running', async () => {
    const stateDir = tempDir('claw-browser-local-');
    const idleTimeoutMs = 120_000;
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({
        agents: { defaults: { model: 'openai/gpt-4.1' } },
        models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-local' } } },
        browser: { idleTimeoutMs, ssrfPolicy: { allowedHostnames: ['127.0.0.1'] } },
      }),
    );
    fake.script(
      { toolCalls: [{ name: 'browser', arguments: { action: 'navigate', url: `${site.base}/page` } }] },
      { text: 'The page says Controls.' },
    );
    const child = spawn(process.execPath, [CLI, 'agent', '--local', '--message', 'What is on the test page?'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, OPENCLAW_STATE_DIR: stateDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let printedAt = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!printedAt && stdout.includes('The page says Controls.')) printedAt = Date.now();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Generous: a browser start on a loaded machine; the idle timeout is what it must not wait for.
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`still running after 90 s: ${stdout} ${stderr}`)), 90_000);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    }).finally(() => child.kill('SIGKILL'));
    const exitedAt = Date.now();
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('[tool] browser');
    expect(stdout).toBe('The page says Controls.\n');
    // The browser really ran: the model got the page's controls back.
    const messages = (fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(messages.find((message) => message.role === 'tool')?.content).toContain('textbox "Email"');
    expect(printedAt).toBeGreaterThan(0);
    expect(exitedAt - printedAt).toBeLessThan(15_000);
    // Closed, not orphaned: no Chromium with this profile is left behind.
    const profile = join(stateDir, 'browser');
    const left = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && cmdline(pid).includes(profile));
    expect(left).toEqual([]);
  }, 120_000);
});

function cmdline(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return ''; // gone meanwhile
  }
}
