/**
 * A user's question → QMD searches, and QMD's answers → one ranking.
 *
 * QMD's keyword syntax ("lex") ANDs every term, and a CJK word is a phrase of its characters
 * (QMD indexes each CJK character as a token): a whole question ("when did I book the hotel
 * for the Lisbon offsite?", "上次和田中先生讨论了什么") almost never matches as one query.
 * So the question is cut into its content terms — words without the question's filler, and
 * each Chinese/Japanese run into overlapping character pairs, the unit QMD's phrase match
 * finds inside running text — and each term is its own lex search (QMD's BM25 over the
 * collections, top 20 documents). The lists are then combined the way BM25 itself adds up
 * a multi-term query: every document gets, per term it matched, that term's rarity (IDF,
 * from how many documents matched it) discounted by its rank in that term's list. A
 * document matching more, and rarer, terms comes first: OR semantics with BM25's weighting.
 */
import { isCjk } from '../../sdk/memory/text.js';

/** QMD returns at most this many documents per lex search and collection (store.js structuredSearch). */
export const QMD_LIST_CAP = 20;
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
  '什么 怎么 怎样 哪里 哪儿 哪个 哪些 为什 多少 时候 我们 你们 他们 她们 是不 有没 没有 一下 一个 这个 那个 可以 知道 记得 之前 以前 上次 上回 的时 是什 么时 了什 过什 吗？ 请问 告诉 提醒 还记'.split(' '),
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
export function questionTerms(question: string): string[] {
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
  // A question of nothing but filler ("what was that?"): search its words rather than nothing.
  if (terms.length === 0) {
    for (const match of question.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)) if (![...match[0]].some(isCjk)) add(match[0]);
  }
  return terms.slice(0, MAX_TERMS);
}

export interface RankedList<T> {
  /** Documents, best first, as QMD ranked them for one search. */
  hits: readonly T[];
  /** A vector search has no document frequency; it counts as much as the rarest term. */
  kind: 'term' | 'vector';
}

/** BM25's IDF for a term found in `df` of `total` documents. */
function idf(df: number, total: number): number {
  return Math.log(1 + (total - df + 0.5) / (df + 0.5));
}

/**
 * Combine per-term lists into one ranking (see the header). A list shorter than QMD's cap
 * holds every document with the term, so its length is the term's document frequency; a
 * full list only says "at least the cap", and is estimated between the cap and the corpus.
 */
export function fuseLists<T>(lists: ReadonlyArray<RankedList<T>>, totalDocs: number, keyOf: (hit: T) => string): Array<{ hit: T; score: number }> {
  const total = Math.max(totalDocs, 1);
  const weights = lists.map((list) => {
    if (list.kind === 'vector') return 0;
    const df = list.hits.length < QMD_LIST_CAP ? list.hits.length : Math.max(QMD_LIST_CAP, Math.sqrt(QMD_LIST_CAP * total));
    return idf(Math.min(df, total), total);
  });
  const strongest = Math.max(0, ...weights) || Math.log(1 + total);
  const scores = new Map<string, { hit: T; score: number; first: number }>();
  let order = 0;
  lists.forEach((list, index) => {
    const weight = list.kind === 'vector' ? strongest : weights[index]!;
    list.hits.forEach((hit, rank) => {
      const key = keyOf(hit);
      // Within one term's list, BM25 ranks by term frequency and length: a gentle discount.
      const gain = weight / (1 + rank / 10);
      const entry = scores.get(key);
      if (entry) entry.score += gain;
      else scores.set(key, { hit, score: gain, first: order++ });
    });
  });
  return [...scores.values()].sort((a, b) => b.score - a.score || a.first - b.first).map(({ hit, score }) => ({ hit, score }));
}
