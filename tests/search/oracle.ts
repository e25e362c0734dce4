/**
 * MiniSearch 7.2 as a test oracle for the project's own index (docs/DESIGN.md, "The search index"): the same
 * tokenizer, fields, boosts, prefix rule (every term) and typo rule (terms of 5 or more code points, distance 1), so
 * its BM25+ ranking is the reference ours is held to, within a stated tolerance:
 * - the same notes, each with the same coverage and the same matched terms;
 * - scores equal within a relative SCORE_TOLERANCE (the two sum the same contributions in different orders, and
 *   MiniSearch keeps its average field lengths as a running mean);
 * - the same order, except between notes whose scores agree within that tolerance.
 * Only for tests: MiniSearch is a devDependency and never loaded by the product.
 */
import type { ExecutionContext } from 'ava';
import MiniSearch from 'minisearch';
import { FIELD_BOOST, FIELDS, FUZZY_MIN_CHARS, fieldTexts, MAX_QUERY_TERMS } from '../../src/search/index.js';
import { tokenize } from '../../src/search/tokenize.js';
import type { RankedMatch } from '../../src/search/types.js';

/** Relative difference allowed between our score and MiniSearch's for the same note. */
export const SCORE_TOLERANCE = 1e-9;

/** A note as MiniSearch is given it: its id and one text per field of FIELDS. */
type Doc = { id: string } & Record<(typeof FIELDS)[number], string>;

export class MiniSearchOracle {
  private readonly mini = new MiniSearch<Doc>({
    fields: [...FIELDS],
    idField: 'id',
    tokenize: (text) => tokenize(text),
    processTerm: (term) => term,
    logger: () => undefined,
  });

  /** An oracle over `notes` (id and full note text, as the index is given them). */
  constructor(notes: Iterable<{ id: string; text: string }>) {
    for (const n of notes) {
      const { texts } = fieldTexts(n.text, n.id);
      const doc = { id: n.id } as Doc;
      FIELDS.forEach((f, i) => {
        doc[f] = texts[i]!;
      });
      this.mini.add(doc);
    }
  }

  /** Every match of `query`, ordered as `NoteIndex.rank` orders (coverage, score, id), uncapped. */
  rank(query: string): RankedMatch[] {
    const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0) return [];
    const results = this.mini.search(terms.join(' '), {
      tokenize: (s) => s.split(' '),
      processTerm: (t) => t,
      combineWith: 'OR',
      boost: { ...FIELD_BOOST },
      prefix: true,
      fuzzy: (term) => (Array.from(term).length >= FUZZY_MIN_CHARS ? 1 : false),
    });
    const ranked: RankedMatch[] = results.map((r) => ({
      id: String(r.id),
      coverage: r.queryTerms.length,
      score: Number(r.score.toPrecision(12)),
      terms: Object.keys(r.match).sort(),
    }));
    ranked.sort((a, b) => b.coverage - a.coverage || b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return ranked;
  }
}

/** True when `a` and `b` agree within SCORE_TOLERANCE (relative). */
export function closeScores(a: number, b: number): boolean {
  return Math.abs(a - b) <= SCORE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * Null when `ours` matches the oracle's ranking within the tolerance of this module's comment, else what differs.
 */
export function rankingDifference(ours: readonly RankedMatch[], oracle: readonly RankedMatch[]): string | null {
  if (ours.length !== oracle.length) return `${ours.length} matches, oracle ${oracle.length}`;
  const byId = new Map(oracle.map((m) => [m.id, m]));
  for (const m of ours) {
    const o = byId.get(m.id);
    if (o === undefined) return `${m.id} not in the oracle's matches`;
    if (o.coverage !== m.coverage) return `${m.id}: coverage ${m.coverage}, oracle ${o.coverage}`;
    if (!closeScores(o.score, m.score)) return `${m.id}: score ${m.score}, oracle ${o.score}`;
    if (JSON.stringify(o.terms) !== JSON.stringify(m.terms)) return `${m.id}: terms differ`;
  }
  for (let i = 0; i < ours.length; i++) {
    if (ours[i]!.id === oracle[i]!.id) continue;
    if (ours[i]!.coverage !== oracle[i]!.coverage || !closeScores(ours[i]!.score, oracle[i]!.score))
      return `rank ${i}: ${ours[i]!.id}, oracle ${oracle[i]!.id}`;
  }
  return null;
}

/** Asserts `rankingDifference` is null. */
export function sameRanking(
  t: ExecutionContext,
  ours: readonly RankedMatch[],
  oracle: readonly RankedMatch[],
  what: string,
): void {
  const diff = rankingDifference(ours, oracle);
  t.is(diff, null, what);
}
