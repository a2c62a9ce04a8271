/**
 * A question's content terms, for keyword engines that OR them: the words that name what is
 * asked about, without the words that only make it a question ("what did I … about the …?"),
 * and each Chinese/Japanese run as overlapping character pairs (minus pairs of particles and
 * question words), the unit that matches inside running CJK text. Engines get it from the
 * "memory-core" service (MemoryRanking.contentTerms): the SQLite index and the QMD backend.
 */
import { isCjk } from '../../sdk/memory/index.js';

/** Enough for any real question; bounds the work a pasted paragraph can cause. */
const MAX_TERMS = 12;

// Words that carry no topic in a question to one's own notes. Topic words ("meeting",
// "plan") stay: their low IDF already weighs them down where they are common.
const STOPWORDS = new Set(
  (
    'a an the and or but if of at by for with about against between into through during before after above below to from up down in out on off over under ' +
    'again further then once here there when where why how what which who whom whose this that these those am is are was were be been being have has had ' +
    'having do does did doing would should could can will shall may might must ought i me my myself we our ours ourselves you your yours yourself ' +
    'yourselves he him his himself she her hers herself it its itself they them their theirs themselves not no nor only own same so than too very just ' +
    'also any all both each few more most other some such s t don now ever again please tell remind recall remember know said say says did get got ' +
    'last time times anything something thing things one ones kind sort lot lots much many way ago yet still else'
  ).split(/\s+/),
);

/** Pairs that only shape a Chinese question ("what", "when", "did I", "last time"). */
const CJK_STOP_PAIRS = new Set(
  '什么 怎么 怎样 哪里 哪儿 哪个 哪些 为什 多少 时候 我们 你们 他们 她们 是不 有没 没有 一下 一个 这个 那个 可以 知道 记得 之前 以前 上次 上回 的时 是什 么时 了什 过什 吗？ 请问 告诉 提醒 还记'.split(
    ' ',
  ),
);
/** Characters that never start or end a content pair (particles, pronouns, copula). */
const CJK_FILLER = new Set([...'的了吗呢吧啊么是在我你他她它这那和与也都就还很把被给过着得地之其而及并又或']);

function cjkPairs(run: string): string[] {
  const chars = [...run];
  if (chars.length === 1) return CJK_FILLER.has(chars[0]!) ? [] : [run];
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) {
    const pair = chars[i]! + chars[i + 1]!;
    if (CJK_STOP_PAIRS.has(pair) || CJK_FILLER.has(chars[i]!) || CJK_FILLER.has(chars[i + 1]!)) continue;
    out.push(pair);
  }
  return out;
}

/**
 * The question's content terms, each one QMD lex query: latin words (identifiers such as
 * OPS-4711 and 2026.4.10 kept whole: QMD matches them as phrases), CJK character pairs.
 */
export function contentTerms(question: string): string[] {
  const terms: string[] = [];
  const seen = new Set<string>();
  const add = (term: string) => {
    if (term && !seen.has(term)) {
      seen.add(term);
      terms.push(term);
    }
  };
  for (const match of question.toLowerCase().matchAll(/[\p{L}\p{N}_]+(?:[.\-'][\p{L}\p{N}_]+)*/gu)) {
    let latin = '';
    let cjk = '';
    const flushLatin = () => {
      const word = latin.replace(/'s$/, '');
      // One letter is noise; one digit may be a day or a quantity worth keeping.
      if (word && !STOPWORDS.has(word) && (word.length > 1 || /\d/.test(word))) add(word);
      latin = '';
    };
    const flushCjk = () => {
      for (const pair of cjkPairs(cjk)) add(pair);
      cjk = '';
    };
    for (const char of match[0]) {
      if (isCjk(char)) {
        flushLatin();
        cjk += char;
      } else {
        flushCjk();
        latin += char;
      }
    }
    flushLatin();
    flushCjk();
  }
  // A question of nothing but filler ("what was that?", "什么？"): search its words rather than nothing.
  if (terms.length === 0) {
    for (const match of question.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)) {
      for (const part of match[0].split(/(\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}|\p{Script=Hangul})/u))
        if (part) add(part);
    }
  }
  return terms.slice(0, MAX_TERMS);
}
