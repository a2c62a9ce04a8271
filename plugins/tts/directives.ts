/**
 * `[[tts]]` / `[[tts:key=value …]]` directives and `[[tts:text]]…[[/tts:text]]` blocks in a
 * reply: what the user reads has them removed; the directives choose voice, model, speed
 * (and provider, when allowed) for this reply, and a text block is spoken instead of the
 * visible text.
 */
const BLOCK = /[ \t]*\[\[\s*tts:text\s*\]\]([\s\S]*?)\[\[\s*\/\s*tts:text\s*\]\][ \t]*/gi;
const MARKER = /[ \t]*\[\[\s*tts(?::([^\]]*))?\]\][ \t]*/gi;

/** What a removed directive leaves: one space between words, nothing at a line's edge. */
function gap(all: string, offset: number, whole: string): string {
  const before = whole[offset - 1];
  const after = whole[offset + all.length];
  return before && after && before !== '\n' && after !== '\n' ? ' ' : '';
}

/** Directive keys and the provider setting each one sets (OpenClaw's names and legacy aliases). */
const KEYS: Record<string, string> = {
  provider: 'provider',
  speakervoice: 'speakerVoice',
  voice: 'speakerVoice',
  voicename: 'speakerVoice',
  voice_name: 'speakerVoice',
  speakervoiceid: 'speakerVoiceId',
  voiceid: 'speakerVoiceId',
  model: 'model',
  speed: 'speed',
  seed: 'seed',
  languagecode: 'languageCode',
};

export interface Directives {
  /** The reply carried a directive or a text block (what `auto: "tagged"` waits for). */
  tagged: boolean;
  /** Visible text with every directive and text block removed. */
  visible: string;
  /** The text blocks, when there were any: spoken instead of the visible text. */
  speech?: string;
  overrides: Record<string, string | number>;
  /** Keys given that no provider understands. */
  unknown: string[];
}

export function parseDirectives(text: string): Directives {
  const blocks: string[] = [];
  const overrides: Record<string, string | number> = {};
  const unknown: string[] = [];
  let tagged = false;
  let visible = text.replace(BLOCK, (all: string, inner: string, offset: number, whole: string) => {
    tagged = true;
    blocks.push(inner.trim());
    return gap(all, offset, whole);
  });
  visible = visible.replace(MARKER, (all: string, body: string | undefined, offset: number, whole: string) => {
    tagged = true;
    for (const pair of (body ?? '').trim().split(/\s+/).filter(Boolean)) {
      const at = pair.indexOf('=');
      const key = KEYS[(at > 0 ? pair.slice(0, at) : pair).toLowerCase()];
      const value = at > 0 ? pair.slice(at + 1) : '';
      if (!key || !value) {
        unknown.push(pair);
        continue;
      }
      overrides[key] = key === 'speed' || key === 'seed' ? Number(value) : value;
      if (Number.isNaN(overrides[key])) {
        delete overrides[key];
        unknown.push(pair);
      }
    }
    return gap(all, offset, whole);
  });
  visible = visible.replace(/\n{3,}/g, '\n\n').trim();
  return { tagged, visible, ...(blocks.length ? { speech: blocks.join('\n') } : {}), overrides, unknown };
}

/** Text worth speaking: markdown marks and links reduced to their words, fenced code left out. */
export function speakable(text: string): string {
  return text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`#>]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
