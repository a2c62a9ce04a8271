/**
 * The held-out retrieval set for the personal-notes corpus: 60 questions over the memory that
 * personal-corpus.ts generates with its default options (880 daily notes plus MEMORY.md).
 * Written by a helper session that never read the ranking code (plugins/, sdk/memory/), never
 * ran the retrieval benchmark or any search, and wrote every question from the generated notes
 * alone, the way a user would ask. It is never used to tune anything: the tuning set is the
 * `queries` of personal-corpus.ts, and no question here reuses or rewords one of them. Keep it
 * that way. A change that helps here and not on the tuning set is a change to look at twice; a
 * question must never be edited to make it pass.
 *
 * Categories:
 *   paraphrase  natural question in other words than the note ("login service" for "auth gateway")
 *   keyword     short, terse search with the identifier the note holds
 *   typo        natural question with hand-made phone typos (swapped, dropped, doubled letters)
 *   multihop    needs a second fact to know which note answers (a person named only by role,
 *               "the later outage", "the thing X recommended"); the answer is the note that
 *               states the final fact, not the one that names the link
 *
 * `accept` lists every workspace-relative file that states the fact asked for (checked by grep
 * over the generated corpus, Chinese notes included), so a search returning any of them is a hit.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export type HeldOutPersonalCategory = 'paraphrase' | 'keyword' | 'typo' | 'multihop';

export interface HeldOutPersonalQuestion {
  query: string;
  category: HeldOutPersonalCategory;
  accept: string[];
}

export const HELD_OUT_PERSONAL: HeldOutPersonalQuestion[] = [
  // paraphrase
  {
    query: 'how long am I staying in Hanoi for the launch?',
    category: 'paraphrase',
    accept: ['memory/2024-08-31.md'],
  },
  {
    query: 'do I get breakfast at the hotel for the Tallinn offsite?',
    category: 'paraphrase',
    accept: ['memory/2025-11-04.md'],
  },
  {
    query: 'who did I agree to reduce our cloud costs with?',
    category: 'paraphrase',
    accept: ['memory/2025-04-23.md', 'memory/2025-05-07.md', 'memory/2025-12-20.md'],
  },
  {
    query: 'what day is the new desk being dropped off?',
    category: 'paraphrase',
    accept: ['memory/2024-10-12.md'],
  },
  {
    query: 'which incident number was it when the login service fell over?',
    category: 'paraphrase',
    accept: ['memory/2025-08-02.md'],
  },
  {
    query: 'what stopped working when the build machine ran out of disk space?',
    category: 'paraphrase',
    accept: ['memory/2024-06-18.md', 'memory/2024-11-10.md'],
  },
  {
    query: "who's in charge of the money for each quarter?",
    category: 'paraphrase',
    accept: ['MEMORY.md'],
  },
  {
    query: 'is it supposed to rain in Hanoi soon?',
    category: 'paraphrase',
    accept: ['memory/2024-01-02.md'],
  },
  {
    query: 'how soon do I need to get the scan done?',
    category: 'paraphrase',
    accept: ['memory/2024-10-29.md', 'memory/2025-05-04.md'],
  },
  {
    query: 'how often am I meant to go to physical therapy?',
    category: 'paraphrase',
    accept: ['memory/2024-04-28.md', 'memory/2024-08-10.md', 'memory/2024-10-25.md'],
  },
  {
    query: 'whose birthday did I think a nice pen would be a good present for?',
    category: 'paraphrase',
    accept: ['memory/2024-04-25.md', 'memory/2024-05-13.md'],
  },
  {
    query: "which of my logins are saved in the family's shared password app?",
    category: 'paraphrase',
    accept: ['memory/2024-05-20.md', 'memory/2024-11-19.md'],
  },
  {
    query: 'what make of coffee grinder did I end up getting?',
    category: 'paraphrase',
    accept: ['memory/2024-05-18.md'],
  },
  {
    query: 'when does the robot vacuum show up?',
    category: 'paraphrase',
    accept: ['memory/2025-08-29.md'],
  },
  {
    query: 'who did I agree to trim equipment spending with?',
    category: 'paraphrase',
    accept: ['memory/2024-03-11.md', 'memory/2024-10-27.md'],
  },
  {
    query: 'which restaurant did Priya suggest to me?',
    category: 'paraphrase',
    accept: ['memory/2025-06-23.md'],
  },
  {
    query: 'are the plane tickets for the Porto summit sorted yet?',
    category: 'paraphrase',
    accept: ['memory/2026-01-16.md'],
  },
  {
    query: 'did the schedule for the Xiamen summit get circulated?',
    category: 'paraphrase',
    accept: ['memory/2025-05-24.md'],
  },
  {
    query: "where is Dr. Castillo's practice now?",
    category: 'paraphrase',
    accept: ['memory/2024-03-12.md'],
  },
  {
    query: 'who told me I should buy a rowing machine?',
    category: 'paraphrase',
    accept: ['memory/2024-06-17.md'],
  },

  // keyword
  { query: '836 euros', category: 'keyword', accept: ['memory/2024-08-11.md', 'memory/2024-10-12.md'] },
  {
    query: 'Hotel Estrela nights',
    category: 'keyword',
    accept: ['memory/2024-08-31.md', 'memory/2024-12-24.md', 'memory/2026-04-15.md'],
  },
  { query: 'BUG-3514 ticket', category: 'keyword', accept: ['memory/2024-09-01.md'] },
  { query: 'OPS-4933 sync worker', category: 'keyword', accept: ['memory/2025-10-23.md'] },
  { query: 'SEC-3750 postmortem', category: 'keyword', accept: ['memory/2024-06-18.md'] },
  { query: 'OPS-2854 closed', category: 'keyword', accept: ['memory/2025-09-08.md'] },
  { query: 'Little Willow restaurant', category: 'keyword', accept: ['memory/2024-05-05.md'] },
  { query: 'Old Lantern', category: 'keyword', accept: ['memory/2024-10-23.md'] },
  { query: 'Hotel Corvo', category: 'keyword', accept: ['memory/2025-12-01.md'] },
  { query: 'Hotel Meridia nights', category: 'keyword', accept: ['memory/2025-01-29.md'] },
  { query: 'Zojirushi rice cooker', category: 'keyword', accept: ['memory/2025-08-24.md'] },
  {
    query: 'climbing day pass gift',
    category: 'keyword',
    accept: ['memory/2024-08-21.md', 'memory/2024-12-16.md', 'memory/2026-03-23.md'],
  },
  { query: 'renewed pension account login', category: 'keyword', accept: ['memory/2025-02-04.md'] },
  { query: 'router admin contact email', category: 'keyword', accept: ['memory/2025-05-16.md'] },
  { query: 'Casa Anchor', category: 'keyword', accept: ['memory/2024-07-02.md', 'memory/2025-02-04.md'] },

  // typo
  { query: 'did i book flihgts for the tallin offsite yet', category: 'typo', accept: ['memory/2025-08-06.md'] },
  { query: 'earliest time i can have meetngs', category: 'typo', accept: ['MEMORY.md'] },
  { query: 'whcih friend sugested the tagine place in hanoi', category: 'typo', accept: ['memory/2024-07-02.md'] },
  { query: 'who recomended an air purifer to me', category: 'typo', accept: ['memory/2024-10-13.md'] },
  { query: 'did the eletricity account login get renewd', category: 'typo', accept: ['memory/2026-03-30.md'] },
  { query: 'what quater numbers did i send tomas', category: 'typo', accept: ['memory/2025-12-18.md'] },
  {
    query: 'how much did we cut conferance travel in Q2',
    category: 'typo',
    accept: ['memory/2024-10-08.md', 'memory/2025-04-10.md', 'memory/2026-02-25.md'],
  },
  { query: 'wen did kofi get back from holliday', category: 'typo', accept: ['memory/2024-03-11.md'] },
  { query: 'has the hanoi lanch agenda been sent arround', category: 'typo', accept: ['memory/2025-08-14.md'] },
  { query: 'is breakfst included at the hangzhou hotel', category: 'typo', accept: ['memory/2024-12-24.md'] },
  { query: "which floor is dr osei's ofice on now", category: 'typo', accept: ['memory/2024-12-27.md'] },
  { query: 'when was bram out sik', category: 'typo', accept: ['memory/2026-02-01.md'] },

  // multihop
  {
    query: 'how many nights am I staying in the city where my old university classmate works?',
    category: 'multihop',
    accept: ['memory/2025-12-30.md'],
  },
  {
    query: 'which quarter is the budget cut I agreed with my college classmate for?',
    category: 'multihop',
    accept: ['memory/2025-04-23.md'],
  },
  {
    query: 'the payment webhook went down twice — what caused the later outage?',
    category: 'multihop',
    accept: ['memory/2025-12-12.md'],
  },
  {
    query: 'what was the ticket number for the more recent mobile app outage?',
    category: 'multihop',
    accept: ['memory/2024-08-18.md'],
  },
  {
    query: 'the doctor who looked at my heel — what did they say about my neck?',
    category: 'multihop',
    accept: ['memory/2024-10-25.md'],
  },
  {
    query: 'the friend who told me about the tagine spot in Hanoi — which other restaurant did they recommend?',
    category: 'multihop',
    accept: ['memory/2025-03-09.md'],
  },
  {
    query: 'how many nights in Kyoto at the same hotel I used for the Hanoi launch?',
    category: 'multihop',
    accept: ['memory/2026-04-15.md'],
  },
  {
    query: 'how much did the gadget Elif recommended end up costing me?',
    category: 'multihop',
    accept: ['memory/2024-08-11.md'],
  },
  {
    query: 'what brand did I go with for the thing Omar recommended?',
    category: 'multihop',
    accept: ['memory/2025-08-29.md'],
  },
  {
    query: 'besides the mobile app, which other service went down from a connection pool leak?',
    category: 'multihop',
    accept: ['memory/2024-11-15.md'],
  },
  {
    query: 'the billing service went down again later — what was the cause that second time?',
    category: 'multihop',
    accept: ['memory/2025-01-17.md'],
  },
  {
    query: 'what did I agree to cut with the person I sent the Q1 figures to?',
    category: 'multihop',
    accept: ['memory/2024-03-11.md'],
  },
  {
    query: 'how much was the desk Farid talked me into?',
    category: 'multihop',
    accept: ['memory/2024-10-12.md'],
  },
];

/**
 * The problems with the set against a generated workspace: an accept path that does not exist
 * (the corpus generator changed: rewrite the question, do not drop it), or a question with no
 * accepted file. Empty when the set is sound.
 */
export function checkHeldOutPersonal(workspace: string): string[] {
  const problems: string[] = [];
  for (const question of HELD_OUT_PERSONAL) {
    if (question.accept.length === 0) problems.push(`held-out question "${question.query}": no accepted file`);
    for (const path of question.accept) {
      if (!existsSync(join(workspace, path)))
        problems.push(`held-out question "${question.query}": ${path} is not in the workspace`);
    }
  }
  return problems;
}
