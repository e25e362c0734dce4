/**
 * The in-memory search index of one caller view (docs/DESIGN.md, "The search index"): BM25+ over the notes that
 * passed this call's policy and trust checks, and nothing else (the held notes and `sync`: synced.ts; the rules of
 * the ranking: scoring.ts). This module is the query side: `rank`, `search`, `recent` (a filter-only search), the
 * narrowed selections of a `within` scope, and `adoptBuilt`, which takes the index the cold thread built (built.ts).
 */
import { textBytesOf } from '../../trust/note-text.js';
import type { KnownNotes, ScannedNote } from '../../trust/types.js';
import { TermTable } from '../terms.js';
import {
  bestMatches,
  boundedHits,
  matchedTerms,
  ScoreSheet,
  scoreQuery,
  TYPO_MAX_TERMS,
  type Scored,
  type TermSource,
} from '../select.js';
import { MAX_ANCHOR_SCAN } from '../snippet.js';
import { tokenize } from '../tokenize.js';
import type { IndexStats, NoteScope, RankedMatch, RankWork, ResponseLimits, SearchHit } from '../types.js';
import type { BuiltIndex } from './built.js';
import { Postings } from './postings.js';
import {
  bm25Of,
  FIELD_BOOSTS,
  FIELDS,
  inverseDocumentFrequency,
  keepMostInOrder,
  MAX_QUERY_TERMS,
  prefixCap,
} from './scoring.js';
import { type Entry, type Subset, SyncedIndex, tagBytesOf } from './synced.js';

const F = FIELDS.length;

/** Most narrowed selections (`NoteIndex.subsetOf`) kept between syncs that change nothing. */
const MAX_SUBSETS = 4;

/** Most list counts a selection keeps (then it starts over; 16 bytes or so each). */
const MAX_SUBSET_SLOTS = 1 << 16;

/**
 * The search index of one caller view: `sync` (synced.ts) makes it hold exactly one call's notes, `rank` and
 * `search` answer a query over them, `recent` a search without one. Answers are functions of the held notes only.
 */
export class NoteIndex extends SyncedIndex implements KnownNotes {
  private work: RankWork = { lists: 0, postings: 0, checks: 0 };

  /**
   * Become the index a fresh `sync(notes)` gives, from `built` (made from exactly these notes' texts, in this order,
   * by `IndexBuilder` on the cold thread): the same note numbers, term ids, postings, field lengths, titles and tags;
   * keys, sizes and times from `notes` (this call's scan); texts stored from the notes' verified bytes. Afterwards
   * the index is in every respect one that synced `notes`: later syncs, searches and removals run as usual.
   *
   * @returns false, leaving the index unchanged, when it is not a fresh index or `built` does not describe `notes`
   *   (count or ids differ, a note carries no kept bytes): the caller then builds in its own thread
   */
  adoptBuilt(notes: readonly ScannedNote[], built: BuiltIndex): boolean {
    if (this.nextDoc !== 0 || this.entries.size !== 0) return false;
    const n = notes.length;
    if (built.count !== n || built.ids.length !== n || built.listAt.length !== built.listSize.length) return false;
    for (let i = 0; i < n; i++) if (built.ids[i] !== notes[i]!.id || textBytesOf(notes[i]!) === undefined) return false;
    const generation = ++this.generation;
    this.table = TermTable.fromState(built.table);
    const slots = built.listAt.length;
    const lists: (Postings | undefined)[] = new Array(slots);
    for (let slot = 0; slot < slots; slot++) {
      const size = built.listSize[slot]!;
      if (size === 0) continue;
      const list = new Postings();
      const at = built.listAt[slot]!;
      list.adopt(built.postings.subarray(at, at + size), size);
      lists[slot] = list;
    }
    for (let k = 0; k < built.big.length; k += 3) lists[built.big[k]!]!.keepBig(built.big[k + 1]!, built.big[k + 2]!);
    this.lists = lists;
    this.stamp = new Int32Array(0);
    this.count = new Int32Array(0);
    this.listCount = new Int32Array(0);
    this.staged = new Int32Array(0);
    this.inDict = new Uint8Array(0);
    this.fitTerms();
    this.listCount.set(built.listCount);
    this.liveTerms = built.liveTerms;
    this.dict = this.newDictionary();
    this.dict.sorted = built.sorted;
    for (const id of built.sorted) this.inDict[id] = 1;
    this.fitDocs(Math.max(0, n - 1));
    this.fieldLength.set(built.fieldLength);
    for (let f = 0; f < F; f++) this.lengthSum[f] = built.lengthSum[f]!;
    this.nextDoc = n;
    for (let doc = 0; doc < n; doc++) {
      const note = notes[doc]!;
      this.docIds[doc] = note.id;
      const tags = built.tags[doc];
      const entry: Entry = {
        key: note.key,
        doc,
        title: built.titles[doc]!,
        text: this.store.putBytes(textBytesOf(note)!, built.bodyByte[doc]!),
        bytes: note.stat.size,
        mtimeMs: Number(note.stat.mtimeNs / 1_000_000n),
        tags,
      };
      this.tagBytes += tagBytesOf(tags);
      this.heldBytes += entry.bytes;
      this.entries.set(note.id, entry);
      this.seenAt[doc] = generation;
    }
    this.lastNotes = [];
    this.lastDocs = new Int32Array(0);
    this.subsets.clear();
    this.recount();
    return true;
  }

  /**
   * The best `max` matches of `query`, best first (order and scores in the module comment of scoring.ts; all
   * matches when `max` is omitted). An empty query after tokenizing matches nothing.
   *
   * Bounded expansions (deterministic, so that no corpus can make one query cost more than a bounded multiple of a
   * plain term's postings; docs/DESIGN.md, "Bounded query cost"): each query term uses at most
   * PREFIX_SHORT_MAX_TERMS prefix expansions when shorter than PREFIX_FULL_CHARS code points, else at most
   * PREFIX_MAX_TERMS; each term at most TYPO_MAX_TERMS typo expansions; in each case those with the most postings
   * (summed over fields; ties by term in ascending UTF-16 order), kept in lexicographic order. The exact term always
   * counts. A match records at most HIT_MAX_TERMS matched terms (the first in scoring order). Scores accumulate in
   * typed arrays indexed by note number; only the best `max` become objects.
   *
   * With `scope` (memory_bridge_search `within`), only the held notes it selects are ranked, and every statistic —
   * note count, average field lengths, each list's document frequency, which terms exist for the exact match,
   * prefix and typo expansions and their caps — is counted over those notes alone: the answer is the one an index
   * holding exactly the selected notes gives (docs/DESIGN.md "Narrowing a search"). Extra cost: the selection,
   * once per scope until a sync changes a note (`subsetOf`), and one pass over each list the query reaches to count
   * its selected postings, kept with the selection (so at most every posting once per selection and sync).
   *
   * With `byModified` (memory_bridge_search `sort: "modified"`), the same matches are chosen by modification time
   * instead, newest first, ties by id (`newestOf`).
   */
  rank(query: string, max = Infinity, scope?: NoteScope, byModified = false): RankedMatch[] {
    const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0 || this.entries.size === 0 || max <= 0) return [];
    const subset = scope === undefined ? undefined : this.subsetOf(scope);
    if (subset !== undefined && subset.count === 0) return [];
    const size = this.nextDoc;
    if (this.total.length < size) {
      const cap = Math.max(size, this.total.length * 2, 64);
      this.total = new Float64Array(cap);
      this.termScore = new Float64Array(cap);
      this.cover = new Uint8Array(cap);
      this.termMark = new Uint8Array(cap);
    }
    const sheet = new ScoreSheet(this.total, this.termScore, this.cover, this.termMark);
    const work: RankWork = { lists: 0, postings: 0, checks: 0 };
    this.work = work;
    /** Every term scored, with its id (for the chosen matches' matched terms). */
    const derived: [string, number][] = [];
    const { table, lists, fieldLength, dict } = this;
    const count = subset?.count ?? this.entries.size;
    const avg = (subset?.lengthSum ?? this.lengthSum).map((s) => s / count);
    const member = subset?.member;
    // Postings of one (term, field) list among the ranked notes (every list's own size without a scope), counted
    // once per selection until a sync changes a note.
    const sizeOf = (slot: number): number => {
      const list = lists[slot];
      if (list === undefined) return 0;
      if (subset === undefined) return list.size;
      let n = subset.selected.get(slot);
      if (n === undefined) {
        n = 0;
        for (let i = 0; i < list.size; i++) n += subset.member[list.docAt(i)]!;
        if (subset.selected.size >= MAX_SUBSET_SLOTS) subset.selected.clear();
        subset.selected.set(slot, n);
      }
      return n;
    };
    const postingsOf = (id: number): number => {
      let n = 0;
      for (let f = 0; f < F; f++) n += sizeOf(id * F + f);
      return n;
    };
    // Under a scope, expansions are those of the whole view: one with no selected posting scores nothing and
    // matches no hit, and keepMostInOrder keeps it only when fewer than the cap have selected postings, so the
    // expansions that count are exactly those an index of the selected notes alone would choose.
    const named = (ids: number[]): [string, number][] => ids.map((id) => [table.term(id), id]);
    const source: TermSource<number> = {
      exact: (term) => {
        const id = table.find(term);
        if (id < 0 || this.listCount[id]! === 0) return undefined;
        return member === undefined || postingsOf(id) > 0 ? id : undefined;
      },
      prefixes: (term) => named(keepMostInOrder(dict.extending(term), prefixCap(term), postingsOf)),
      typos: (term) =>
        keepMostInOrder(
          dict.oneEditFrom(term, (t) => table.find(t)),
          TYPO_MAX_TERMS,
          postingsOf,
        ).map((id) => [table.term(id), id, 1] as const),
      score: (id, weight, into) => {
        for (let f = 0; f < F; f++) {
          const slot = id * F + f;
          const list = lists[slot];
          if (list === undefined) continue;
          const matching = sizeOf(slot);
          if (matching === 0) continue;
          const scale = weight * FIELD_BOOSTS[f]!;
          const fieldAvg = avg[f]!;
          const idf = inverseDocumentFrequency(matching, count);
          const n = list.size;
          work.lists++;
          work.postings += n;
          for (let i = 0; i < n; i++) {
            const doc = list.docAt(i);
            if (member !== undefined && member[doc] === 0) continue;
            into.add(doc, scale * bm25Of(idf, list.tfAt(i), fieldLength[doc * F + f]!, fieldAvg));
          }
        }
      },
    };
    try {
      scoreQuery(terms, source, sheet, (t, id) => derived.push([t, id]));
      const docIds = this.docIds;
      const best = byModified
        ? this.newestOf(sheet.touched, max)
        : bestMatches(sheet.touched, max, this.cover, this.total, (doc) => docIds[doc]!);
      return best.map((s) => ({
        id: s.id,
        coverage: s.coverage,
        score: s.score,
        terms: matchedTerms(derived, (id) => {
          work.checks++;
          for (let f = 0; f < F; f++) if (lists[id * F + f]?.has(s.docId) === true) return true;
          return false;
        }),
      }));
    } finally {
      sheet.clear();
    }
  }

  /**
   * Work of the last `rank` (for tests that bound it): postings lists scored, postings visited, and matched-term
   * checks made for the chosen matches' terms.
   */
  get lastWork(): Readonly<RankWork> {
    return this.work;
  }

  /**
   * Search and apply the response limits (docs/DESIGN.md; select.ts `boundedHits`): at most `limit` hits,
   * `truncated` when more notes matched or `total_chars` ended the list; snippets of at most `snippet_chars` code
   * points from the matches' bodies (decoded from the store for these notes only). Hits carry `title` only when the
   * note has a heading.
   */
  search(
    query: string,
    limit: number,
    limits: ResponseLimits,
    scope?: NoteScope,
    sort: 'relevance' | 'modified' = 'relevance',
  ): { hits: SearchHit[]; truncated: boolean } {
    // A snippet reads no more of a body than this (snippet.ts), so only that much is decoded.
    const read = MAX_ANCHOR_SCAN + 4 * limits.snippet_chars;
    const ranked = this.rank(query, limit + 1, scope, sort === 'modified');
    return boundedHits(ranked, limit, limits, (match) => {
      const entry = this.entries.get(match.id)!;
      return { title: entry.title, body: this.store.body(entry.text, read) };
    });
  }

  /**
   * A filter-only search (memory_bridge_search without `query`; docs/TOOLS.md §Filters): the held notes `scope`
   * selects (all of them without one), newest first by modification time, ties by id in ascending UTF-16 order, under
   * the same response limits as `search`; each snippet is the start of the note's body. Cost: one pass over the
   * selection keeping the best `limit + 1` (at most 11), then the snippets of the hits.
   */
  recent(limit: number, limits: ResponseLimits, scope?: NoteScope): { hits: SearchHit[]; truncated: boolean } {
    const subset = scope === undefined ? undefined : this.subsetOf(scope);
    const picked: { id: string; mtimeMs: number; terms: string[] }[] = [];
    const max = limit + 1;
    for (const [id, entry] of this.entries) {
      if (subset !== undefined && subset.member[entry.doc] === 0) continue;
      const item = { id, mtimeMs: entry.mtimeMs, terms: [] as string[] };
      if (picked.length === max && !newer(item, picked[max - 1]!)) continue;
      let i = picked.length;
      while (i > 0 && newer(item, picked[i - 1]!)) i--;
      picked.splice(i, 0, item);
      if (picked.length > max) picked.pop();
    }
    const read = MAX_ANCHOR_SCAN + 4 * limits.snippet_chars;
    return boundedHits(picked, limit, limits, (match) => {
      const entry = this.entries.get(match.id)!;
      return { title: entry.title, body: this.store.body(entry.text, read) };
    });
  }

  /**
   * The `max` newest of the matched notes `touched` (modification time, ties by id), for `sort: "modified"`, with
   * their coverage and score as `bestMatches` gives them. One pass keeping at most `max` (≤ 11 from `search`).
   */
  private newestOf(touched: readonly number[], max: number): Scored[] {
    const best: (Scored & { mtimeMs: number })[] = [];
    for (const docId of touched) {
      const id = this.docIds[docId]!;
      const item = { docId, id, mtimeMs: this.entries.get(id)!.mtimeMs, coverage: 0, score: 0 };
      if (best.length >= max && !newer(item, best[best.length - 1]!)) continue;
      let i = best.length;
      while (i > 0 && newer(item, best[i - 1]!)) i--;
      best.splice(i, 0, item);
      if (best.length > max) best.pop();
    }
    for (const b of best) {
      b.coverage = this.cover[b.docId]!;
      b.score = Number((this.total[b.docId]! * b.coverage).toPrecision(12));
    }
    return best;
  }

  /**
   * The held notes `scope` selects (see `rank`): asked of every held note once, then kept under `scope.key` until a
   * sync changes a note (at most MAX_SUBSETS selections, least recently used dropped first). Cost: one `matcher()`
   * pass over the held ids and their field lengths.
   */
  private subsetOf(scope: NoteScope): Subset {
    let subset = this.subsets.get(scope.key);
    if (subset !== undefined) {
      this.subsets.delete(scope.key);
      this.subsets.set(scope.key, subset);
      return subset;
    }
    const matches = scope.matcher();
    const member = new Uint8Array(this.nextDoc);
    const lengthSum = new Array<number>(F).fill(0);
    let count = 0;
    for (const [id, entry] of this.entries) {
      if (!matches(id, entry)) continue;
      const doc = entry.doc;
      member[doc] = 1;
      count++;
      for (let f = 0; f < F; f++) lengthSum[f]! += this.fieldLength[doc * F + f]!;
    }
    subset = { member, count, lengthSum, selected: new Map() };
    this.subsets.set(scope.key, subset);
    if (this.subsets.size > MAX_SUBSETS) this.subsets.delete(this.subsets.keys().next().value!);
    return subset;
  }

  /** Current ranking statistics. */
  stats(): IndexStats {
    const count = this.entries.size;
    return {
      documentCount: count,
      averageFieldLength: this.lengthSum.map((s) => (count === 0 ? 0 : s / count)),
      termCount: this.liveTerms,
    };
  }
}

/** True when `a` comes before `b` newest first: a later modification time, or the same and a smaller id. */
function newer(a: { id: string; mtimeMs: number }, b: { id: string; mtimeMs: number }): boolean {
  return a.mtimeMs > b.mtimeMs || (a.mtimeMs === b.mtimeMs && a.id < b.id);
}
