/**
 * The held-out retrieval set: 64 questions over OpenClaw's own documentation (the 1,283
 * Markdown files of the openclaw npm package that the test cache already installs), written
 * once, before any ranking change of issue 34, and never used to tune anything: the tuning
 * set is personal-corpus.ts. Keep it that way. A change that helps here and not on the
 * tuning set is a change to look at twice; a question must never be edited to make it pass.
 *
 * Each question names a fact as a user would ask for it: paraphrased (no distinctive word of
 * the answer), keyword (the identifier the page holds), typo'd (a misspelt word or two) or
 * two-part (two facts from one page). The answer is every page that states the fact: the
 * pages whose text holds `key` (whitespace collapsed, case ignored), or, where the key is
 * quoted on many pages, the page(s) in `answers`. docs_map.md, which only lists summaries,
 * never counts as an answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export type HeldOutCategory = 'paraphrase' | 'keyword' | 'typo' | 'multihop';

export interface HeldOutQuestion {
  category: HeldOutCategory;
  query: string;
  /** A phrase the answering page states (whitespace collapsed, case ignored). */
  key: string;
  /** The answering pages, when the key alone names too many. */
  answers?: string[];
}

export const HELD_OUT_DOCS: HeldOutQuestion[] = [
  {
    category: 'paraphrase',
    query: 'what does it cost each month to keep the gateway on a digitalocean droplet',
    key: '~$6/month',
  },
  {
    category: 'multihop',
    query: 'on the always-free ARM cloud option, how much RAM and how many cores do I get',
    key: 'up to 4 OCPU, 24 GB RAM',
  },
  { category: 'typo', query: 'telegram webhok default path', key: 'default `/telegram-webhook`' },
  {
    category: 'paraphrase',
    query: 'why am I not allowed to use /healthz as the route for telegram webhooks',
    key: 'reserves `/healthz`',
  },
  { category: 'typo', query: 'wher does openclaw pick up a global .env fallback file', key: 'global fallback `.env`' },
  {
    category: 'paraphrase',
    query: 'does the gateway phone home to check for new versions',
    key: 'update checks send a daily request',
  },
  {
    category: 'paraphrase',
    query: 'let the same set of trusted people message the bot on several chat apps without repeating allowlists',
    key: 'accessGroup:<name>',
    answers: ['channels/access-groups.md'],
  },
  {
    category: 'keyword',
    query: 'Feishu event transport websocket or webhook',
    key: 'WebSocket is the default event transport',
  },
  {
    category: 'paraphrase',
    query: 'can I configure several accounts for the microsoft teams channel',
    key: 'an `accounts` map is not supported',
  },
  {
    category: 'paraphrase',
    query: 'is the slack app manifest different between socket mode and request urls',
    key: 'same for Socket Mode and HTTP Request URLs',
  },
  {
    category: 'keyword',
    query: 'doctor plugin load failure ENOSPC',
    key: 'ENOSPC',
    answers: ['cli/doctor/running.md'],
  },
  {
    category: 'paraphrase',
    query: 'background process that promotes short-term memory signals into long-term memory',
    key: 'background memory consolidation',
  },
  { category: 'keyword', query: 'rotate multiple OpenAI API keys env vars', key: 'OPENAI_API_KEYS' },
  {
    category: 'paraphrase',
    query: 'if I send another message while the agent is still answering, does it get pushed into the running turn',
    key: 'the queue mode is `steer`',
  },
  {
    category: 'paraphrase',
    query: 'which timezone goes into message envelopes when I never configured one',
    key: 'userTimezone` is unset',
  },
  {
    category: 'typo',
    query: 'cloud worker profil not advertized what command do I run',
    key: 'environments.list',
    answers: ['gateway/cloud-workers/troubleshooting.md'],
  },
  {
    category: 'paraphrase',
    query: 'is it ok if my openclaw.json is a symlink to a dotfiles repo',
    key: 'symlinked `openclaw.json`',
  },
  {
    category: 'paraphrase',
    query: 'open my dev server running on the gateway machine in my own browser with hot reload',
    key: 'Portals expose a development server',
  },
  { category: 'paraphrase', query: 'are tools sandboxed out of the box', key: 'Sandboxing is off by default' },
  {
    category: 'keyword',
    query: 'SecretRef source env file exec store',
    key: 'source: "env" | "file" | "exec" | "store"',
  },
  {
    category: 'paraphrase',
    query: 'what happens with code mode if I leave its setting out of the config',
    key: 'uses the `"auto"` tier',
  },
  {
    category: 'paraphrase',
    query: 'how does the browser snapshot filter decide which lines to keep',
    key: 'whitespace-separated query tokens',
  },
  {
    category: 'typo',
    query: 'how many netwrok requests does the browser requests action return by defualt',
    key: 'most recent entries (default 50)',
  },
  { category: 'paraphrase', query: 'can the assistant sit in on a zoom call as a guest', key: 'zoom.us/j/' },
  { category: 'keyword', query: 'DeepSeek V4 Flash local Metal server', key: 'DeepSeek V4 Flash' },
  {
    category: 'paraphrase',
    query: 'stepfun: which endpoints go with a key from mainland china',
    key: 'China key with the `.com` endpoints',
  },
  { category: 'keyword', query: 'Muse Spark reasoning models', key: 'Muse Spark' },
  {
    category: 'paraphrase',
    query: 'the nervous protocol droid persona for developer mode',
    key: 'Third Protocol Observer',
  },
  { category: 'typo', query: 'minimun node version for installing openclaw', key: 'Node.js 24.16+' },
  {
    category: 'paraphrase',
    query: 'what happened to the bluebubbles integration for imessage',
    key: 'no longer ships the BlueBubbles channel',
  },
  {
    category: 'paraphrase',
    query: 'can the mailbox watcher plugin send mail or mark messages read',
    key: 'It does not send email',
  },
  { category: 'keyword', query: 'matrix com.openclaw.presentation buttons metadata', key: 'com.openclaw.presentation' },
  { category: 'paraphrase', query: 'can the bot post bar or pie charts in slack messages', key: 'data_visualization' },
  { category: 'paraphrase', query: 'how do I check that a backup archive is intact', key: 'openclaw backup verify' },
  {
    category: 'paraphrase',
    query: 'what was the built-in setup and repair agent called before it was renamed',
    key: 'formerly called Crestodian',
  },
  {
    category: 'paraphrase',
    query: 'how often is the typing indicator refreshed while a run is active',
    key: 'typingIntervalSeconds',
  },
  {
    category: 'typo',
    query: 'where is the workspace folder for a named proifle',
    key: '~/.openclaw-<profile>/workspace',
  },
  {
    category: 'paraphrase',
    query: 'run a second backup bot gateway with its own telegram token in case the main one breaks',
    key: '--profile rescue',
  },
  {
    category: 'paraphrase',
    query: 'get a stable https address for the gateway without exposing its port to the internet',
    key: 'Tailscale Serve gives your Gateway one HTTPS URL',
  },
  {
    category: 'keyword',
    query: 'android location permission Off While Using Always',
    key: 'Off / While Using / Always',
  },
  { category: 'paraphrase', query: 'what does the name openclaw stand for', key: 'CLAW + TARDIS' },
  { category: 'keyword', query: 'SenseAudio voice note transcription', key: 'SenseAudio transcribes' },
  {
    category: 'paraphrase',
    query: 'which provider plugin does batch speech transcription with voxtral',
    key: 'Voxtral',
    answers: ['providers/mistral.md', 'nodes/audio.md'],
  },
  {
    category: 'paraphrase',
    query: 'a web search provider I can host myself without an api key',
    key: 'key-free',
    answers: ['tools/searxng-search.md'],
  },
  {
    category: 'paraphrase',
    query: 'what session key does a spawned sub-agent run under',
    key: 'agent:<agentId>:subagent:<uuid>',
  },
  {
    category: 'paraphrase',
    query: 'can the model change the speaking voice inline in its reply',
    key: '[[tts:',
    answers: ['tools/tts/commands.md', 'tools/tts.md'],
  },
  {
    category: 'paraphrase',
    query: "why don't http images show up in the control ui",
    key: 'Remote HTTP images are blocked',
  },
  { category: 'keyword', query: 'gog gmail watch serve pub/sub', key: 'gog gmail watch serve' },
  {
    category: 'paraphrase',
    query: 'mac app keeps losing screen recording permission after I move or rebuild it',
    key: 'TCC associates a permission grant',
  },
  {
    category: 'typo',
    query: 'declaritive install with home-manager',
    key: 'nix-openclaw',
    answers: ['install/nix.md'],
  },
  {
    category: 'keyword',
    query: 'computer.act screen.snapshot desktop control',
    key: 'screen.snapshot',
    answers: ['nodes/computer-use.md'],
  },
  {
    category: 'paraphrase',
    query: 'is the lancedb vector memory plugin shipped with the runtime',
    key: 'not bundled into the OpenClaw runtime',
  },
  {
    category: 'paraphrase',
    query: 'get a browser notification when an exec approval is waiting for me',
    key: 'ping you when something needs your attention',
  },
  {
    category: 'paraphrase',
    query: 'tool that makes one model call and returns json checked against a schema',
    key: 'structured output, optionally validated against a JSON',
  },
  {
    category: 'paraphrase',
    query: 'give an autonomous agent program lasting authority to act without asking',
    key: 'permanent operating authority',
  },
  { category: 'paraphrase', query: 'is telegram polling or webhooks by default', key: 'Long polling is the default' },
  {
    category: 'paraphrase',
    query: 'only respond in whatsapp groups when someone mentions the bot',
    key: 'wake up only when pinged',
  },
  { category: 'keyword', query: 'device auth signedAt challenge ts', key: 'connect.params.device.signedAt' },
  {
    category: 'paraphrase',
    query: 'if docker is missing will the sandbox try podman instead',
    key: 'does not probe or fall back to Podman',
  },
  { category: 'typo', query: 'ansibel playbook to deploy on a server', key: 'openclaw-ansible' },
  {
    category: 'paraphrase',
    query: 'how are transcript entries linked together in the session store',
    key: 'tree-structured',
  },
  {
    category: 'multihop',
    query: 'which config key picks the typing mode, and when does typing start in a direct chat',
    key: 'typing starts immediately once the model loop begins',
  },
  {
    category: 'multihop',
    query: "the webhook listener host for telegram when I don't set one",
    key: '`webhookHost` (default `127.0.0.1`)',
  },
  {
    category: 'multihop',
    query: 'which tool lets the agent open a browser dev server portal and then start it in the background',
    key: 'background `exec` call',
  },
];

function markdownFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) out.push(path);
    }
  };
  walk(root);
  return out.sort();
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').toLowerCase();

/**
 * Each question with the doc-relative paths that answer it. Throws when a key is on no page:
 * a new docs release moved the fact, and the question must be rewritten rather than dropped.
 */
export function resolveHeldOutDocs(docsDir: string): Array<HeldOutQuestion & { accept: string[] }> {
  const pages = markdownFiles(docsDir).map((path) => ({
    rel: relative(docsDir, path).split(sep).join('/'),
    text: normalize(readFileSync(path, 'utf8')),
  }));
  return HELD_OUT_DOCS.map((question) => {
    const key = normalize(question.key);
    const accept =
      question.answers ??
      pages.filter((page) => page.rel !== 'docs_map.md' && page.text.includes(key)).map((p) => p.rel);
    if (accept.length === 0) throw new Error(`held-out question "${question.query}": no page states "${question.key}"`);
    return { ...question, accept };
  });
}
