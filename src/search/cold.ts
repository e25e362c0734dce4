/**
 * The first search of a view, answered straight from the texts its scan just read and verified, without building
 * the view's index first (docs/DESIGN.md, "The first search of a view"). The caller builds the index after the
 * answer is sent (see src/tools/search.ts).
 *
 * Contract: for notes that all carry text, `rankCold(notes, q, max)` equals `NoteIndex.rank(q, max)` and
 * `searchCold(notes, q, limit, limits)` equals `NoteIndex.search(q, limit, limits)` of a fresh index after
 * `sync(notes)` — same ids, coverage, scores to the bit, matched terms, titles, snippets and `truncated`. The
 * ranking rules are those documented in src/search/index/scoring.ts; this module reproduces them from:
 * - field texts from `fieldTexts` (own title, '' when there is none; body; front matter tags and aliases
 *   joined by '\n'; the file name without `.md`; section headings one per line);
 * - field length = distinct terms in the field; average field length = exact integer sum / note count;
 * - BM25+ per (term, field), document frequency = notes holding the term in that field (`bm25`);
 * - the index's visiting order, which fixes the floating-point summation order per note: per query term the exact
 *   term, then prefix expansions, then typo expansions, each in lexicographic order and capped as the index caps
 *   them, each in field order title, body, meta.
 *
 * Cost: one pass over every field's terms that counts distinct terms per field and keeps term frequencies only
 * for the terms that can match the query (exact, prefix or one edit away), instead of postings for every term.
 */
import { carriesText } from '../trust/note-text.js';
import type { ScannedNote } from '../trust/types.js';
import { NoteIndex } from './index/note-index.js';
import {
  bm25Of,
  inverseDocumentFrequency,
  FIELD_BOOST,
  FIELDS,
  fieldTexts,
  keepMostInOrder,
  MAX_QUERY_TERMS,
  prefixCap,
} from './index/scoring.js';
import { oneEditApart } from './index/term-dictionary.js';
import {
  bestMatches,
  boundedHits,
  FUZZY_MIN_CHARS,
  matchedTerms,
  ScoreSheet,
  scoreQuery,
  TYPO_MAX_TERMS,
  type TermSource,
} from './select.js';
import { countCodePoints } from './snippet.js';
import { TermTable } from './terms.js';
import { tokenize } from './tokenize.js';
import type { RankedMatch, ResponseLimits, SearchHit } from './types.js';

/** Postings of one term in one field: note positions (scan order, ascending) and their term frequencies. */
interface FieldPostings {
  docs: number[];
  tfs: number[];
}

/** A corpus term that can match a query term, with its postings per field (FIELDS order). */
interface Candidate {
  term: string;
  /** Term id (order of first sight). */
  id: number;
  fields: FieldPostings[];
}

/** What one pass over the notes leaves for ranking. */
export interface Corpus {
  /** Number of notes. */
  count: number;
  /** Distinct terms of note `n` in field `f` at `n * FIELDS.length + f`. */
  fieldLength: Uint32Array;
  /** Average field length per field (exact integer sum / count). */
  avgFieldLength: number[];
  /** Every distinct term, ids in order of first sight (note by note, field by field, first occurrence). */
  table: TermTable;
  /** Candidate of each term id; undefined for terms no query term can reach. */
  candidates: (Candidate | undefined)[];
  /** The candidates in term id order. */
  list: Candidate[];
  /** Title shown for each note (`noteTitle`). */
  titles: string[];
  /**
   * Where the body (the text after any front matter) of each note starts, in UTF-16 code units: snippets decode the
   * hits' texts again instead of keeping every body (the whole vault) as strings through the call.
   */
  bodyAt: Int32Array;
  /** Note ids, by note number. */
  ids: string[];
}

/**
 * Most corpus terms a query may reach (equal, prefix expansion of a query term, one edit away) for the ranking straight from
 * texts. A query that reaches more (a short query term over a vault of hashes and numbers) is answered from a built
 * index instead: the candidates' postings would cost more than the index itself, and the cap keeps that work
 * bounded.
 */
export const COLD_MAX_CANDIDATES = 16_384;

/** Thrown inside `readCorpus` (`CorpusReader.add`) when a query reaches more than COLD_MAX_CANDIDATES terms. */
export class TooBroad extends Error {}

/** The query as `NoteIndex.rank` reads it: distinct terms in order, at most MAX_QUERY_TERMS. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
}

/**
 * One pass over `notes`: parse, tokenize each field, count field lengths, and keep postings of the terms that
 * `terms` can reach (starting with a query term, or one edit from a query term of at least
 * FUZZY_MIN_CHARS code points).
 *
 * @throws Error when a note has no text or an id repeats (what `NoteIndex.sync` of a fresh index refuses)
 */
function readCorpus(notes: readonly ScannedNote[], terms: readonly string[]): Corpus {
  const reader = new CorpusReader(terms);
  for (const note of notes) {
    // Read once: a note read in this call decodes its text from the scan's bytes on every read.
    const text = note.text;
    if (text === undefined) throw new Error('searchCold: a note without text');
    reader.add(note.id, text);
  }
  return reader.finish();
}

/**
 * The per-note step of `readCorpus`, one note at a time in scan order, so the same pass runs in this thread or,
 * fed as the scan accepts notes, in the cold-ranking thread (src/search/cold-thread.ts). The query terms are known
 * before the first note.
 */
export class CorpusReader {
  private readonly reaches: (term: string) => boolean;
  private fieldLength = new Uint32Array(1024 * FIELDS.length);
  private readonly sums = new Array<number>(FIELDS.length).fill(0);
  private readonly table = new TermTable();
  private readonly counter = new Counter();
  private readonly titles: string[] = [];
  private bodyAt = new Int32Array(1024);
  private readonly ids: string[] = [];
  private readonly seenIds = new Set<string>();

  /** @param terms the query's terms (`queryTerms`) */
  constructor(terms: readonly string[]) {
    this.reaches = reachOf(terms);
  }

  /** Notes added so far. */
  get count(): number {
    return this.ids.length;
  }

  /**
   * Adds the next note (note number `count`) with its text.
   *
   * @throws Error when the id repeats; TooBroad when the query now reaches more than COLD_MAX_CANDIDATES terms
   */
  add(id: string, text: string): void {
    if (this.seenIds.has(id)) throw new Error('searchCold: duplicate id');
    this.seenIds.add(id);
    const n = this.ids.length;
    const fieldCount = FIELDS.length;
    if ((n + 1) * fieldCount > this.fieldLength.length) {
      const grown = new Uint32Array(this.fieldLength.length * 2);
      grown.set(this.fieldLength);
      this.fieldLength = grown;
      const body = new Int32Array(this.bodyAt.length * 2);
      body.set(this.bodyAt);
      this.bodyAt = body;
    }
    this.ids.push(id);
    const fields = fieldTexts(text, id);
    this.titles.push(fields.title);
    this.bodyAt[n] = text.length - fields.body.length;
    const { table, counter, fieldLength, sums } = this;
    for (let f = 0; f < fieldCount; f++) {
      const length = table.ids(fields.texts[f]!);
      if (table.size > counter.known) counter.learn(table, this.reaches);
      const distinct = counter.count(table.scratch, length, f, n);
      fieldLength[n * fieldCount + f] = distinct;
      sums[f]! += distinct;
    }
  }

  /** What the pass leaves for ranking (the reader is not used afterwards). */
  finish(): Corpus {
    const count = this.ids.length;
    return {
      count,
      fieldLength: this.fieldLength,
      avgFieldLength: this.sums.map((s) => (count === 0 ? 0 : s / count)),
      table: this.table,
      candidates: this.counter.candidates,
      list: this.counter.list,
      titles: this.titles,
      bodyAt: this.bodyAt,
      ids: this.ids,
    };
  }
}

/**
 * The test of which corpus terms a query can reach: starting with a query term (the term itself or one of its prefix
 * expansions), or one edit from a query term of at least FUZZY_MIN_CHARS code points.
 */
function reachOf(terms: readonly string[]): (term: string) => boolean {
  const fuzzy = terms.filter((t) => countCodePoints(t) >= FUZZY_MIN_CHARS);
  return (t) => {
    for (let i = 0; i < terms.length; i++) if (t.startsWith(terms[i]!)) return true;
    for (let i = 0; i < fuzzy.length; i++) if (oneEditApart(t, fuzzy[i]!)) return true;
    return false;
  };
}

/**
 * Field lengths and candidate postings, counted from term ids. One Int32Array entry per term id says both whether
 * the term was seen in the current field pass and whether it is a candidate: a plain term holds the last pass
 * that saw it (≥ 0), a candidate the negated pass (initially NEVER), so the common case — a term no query term
 * reaches — costs one load and one compare. Kept small (the per-token loop is `count` alone) so V8 optimizes it
 * early.
 */
class Counter {
  /** Candidate of each term id (undefined for terms no query term reaches); `known` ids are classified. */
  readonly candidates: (Candidate | undefined)[] = [];
  /** The candidates, in term id order. */
  readonly list: Candidate[] = [];
  /** Per term id: the last field pass that saw it, negated for candidates (see the class comment). */
  private marks = new Int32Array(1024);
  private pass = 0;

  get known(): number {
    return this.candidates.length;
  }

  /** Classify the ids the table handed out since the last call (ids come in order of first sight). */
  learn(table: TermTable, reaches: (term: string) => boolean): void {
    const size = table.size;
    if (size > this.marks.length) {
      const marks = new Int32Array(Math.max(size, this.marks.length * 2));
      marks.set(this.marks);
      this.marks = marks;
    }
    for (let id = this.candidates.length; id < size; id++) {
      const term = table.term(id)!;
      if (reaches(term)) {
        if (this.list.length >= COLD_MAX_CANDIDATES) throw new TooBroad();
        const c: Candidate = { term, id, fields: FIELDS.map(() => ({ docs: [], tfs: [] })) };
        this.list.push(c);
        this.candidates.push(c);
        this.marks[id] = NEVER;
      } else {
        this.candidates.push(undefined);
      }
    }
  }

  /**
   * Count one field of note `n`: `ids[0 .. length)` are its terms' ids in text order. Returns the number of
   * distinct terms and records a posting (with its term frequency) for each candidate among them.
   */
  count(ids: Int32Array, length: number, field: number, n: number): number {
    const marks = this.marks;
    const pass = ++this.pass;
    let distinct = 0;
    for (let i = 0; i < length; i++) {
      const id = ids[i]!;
      const mark = marks[id]!;
      if (mark === pass) continue;
      if (mark >= 0) {
        marks[id] = pass;
        distinct++;
      } else if (mark !== -pass) {
        marks[id] = -pass;
        distinct++;
        this.post(id, field, n);
      } else {
        this.again(id, field);
      }
    }
    return distinct;
  }

  /** First occurrence of candidate term `id` in this field of note `n`. */
  private post(id: number, field: number, n: number): void {
    const p = this.candidates[id]!.fields[field]!;
    p.docs.push(n);
    p.tfs.push(1);
  }

  /** A further occurrence of candidate term `id` in the field being counted. */
  private again(id: number, field: number): void {
    const tfs = this.candidates[id]!.fields[field]!.tfs;
    tfs[tfs.length - 1]!++;
  }
}

/** The mark of a candidate never seen in a field pass yet (passes start at 1, so no -pass equals it). */
const NEVER = -0x7fffffff;

/** True when `docs` (ascending) holds `doc`. */
function holds(docs: readonly number[], doc: number): boolean {
  let lo = 0;
  let hi = docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = docs[mid]!;
    if (at === doc) return true;
    if (at < doc) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Postings of a candidate summed over fields (what bounds a short query term's expansions). */
function postingCount(c: Candidate): number {
  let n = 0;
  for (const p of c.fields) n += p.docs.length;
  return n;
}

/** `list` sorted by term (UTF-16 order). */
function byTerm(list: Candidate[]): Candidate[] {
  return list.sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
}

/** The `cap` candidates of `sorted` (in term order) with the most postings, ties by term, as the index keeps them. */
function keepMost(sorted: Candidate[], cap: number): Candidate[] {
  return keepMostInOrder(
    sorted.map((_, i) => i),
    cap,
    (i) => postingCount(sorted[i]!),
  ).map((i) => sorted[i]!);
}

/** Prefix expansions of a query term (longer terms starting with it), in term order, capped like the index's. */
function prefixExpansions(corpus: Corpus, term: string): Candidate[] {
  const all = byTerm(corpus.list.filter((c) => c.term.length > term.length && c.term.startsWith(term)));
  return keepMost(all, prefixCap(term));
}

/** Typo expansions of `term` (edit distance exactly 1 in UTF-16 code units), in term order, capped like the index's. */
function fuzzyExpansions(corpus: Corpus, term: string): Candidate[] {
  return keepMost(byTerm(corpus.list.filter((c) => oneEditApart(c.term, term))), TYPO_MAX_TERMS);
}

/** Ranking of `terms` over a read corpus (the body of `rankCold`; see there). */
function rankCorpus(corpus: Corpus, terms: readonly string[], max: number): ColdMatch[] {
  const size = corpus.count;
  const sheet = new ScoreSheet(
    new Float64Array(size),
    new Float64Array(size),
    new Uint8Array(size),
    new Uint8Array(size),
  );
  const derived: Candidate[] = [];
  const boosts = FIELDS.map((f) => FIELD_BOOST[f]);
  const { fieldLength, avgFieldLength } = corpus;
  const fieldCount = FIELDS.length;
  const source: TermSource<Candidate> = {
    exact: (term) => {
      const id = corpus.table.find(term);
      return id < 0 ? undefined : corpus.candidates[id];
    },
    prefixes: (term) => prefixExpansions(corpus, term).map((c) => [c.term, c] as const),
    typos: (term) => fuzzyExpansions(corpus, term).map((c) => [c.term, c, 1] as const),
    score: (c, weight, into) => {
      for (let f = 0; f < fieldCount; f++) {
        const { docs, tfs } = c.fields[f]!;
        const matching = docs.length;
        if (matching === 0) continue;
        const avg = avgFieldLength[f]!;
        const scale = weight * boosts[f]!;
        const idf = inverseDocumentFrequency(matching, size);
        for (let i = 0; i < matching; i++) {
          const docId = docs[i]!;
          into.add(docId, scale * bm25Of(idf, tfs[i]!, fieldLength[docId * fieldCount + f]!, avg));
        }
      }
    },
  };
  scoreQuery(terms, source, sheet, (_t, c) => derived.push(c));
  // Best `max` by (coverage desc, rounded score desc, id asc), selected by the same code as NoteIndex.rank.
  const best = bestMatches(sheet.touched, max, sheet.cover, sheet.total, (docId) => corpus.ids[docId]!);
  return best.map((s) => ({
    doc: s.docId,
    match: {
      id: s.id,
      coverage: s.coverage,
      score: s.score,
      terms: matchedTerms(
        derived.map((c) => [c.term, c] as const),
        (c) => c.fields.some((p) => holds(p.docs, s.docId)),
      ),
    },
  }));
}

/** A ranked match and the position of its note in the scan. */
interface ColdMatch {
  doc: number;
  match: RankedMatch;
}

/**
 * The best `max` matches of `query` over `notes` (all matches when `max` is omitted), exactly as
 * `NoteIndex.rank(query, max)` after a fresh index's `sync(notes)` returns them (ranking rules in index/scoring.ts).
 *
 * @param notes this call's scanned notes, every one with text, in scan order
 * @throws Error when a note has no text or an id repeats
 */
export function rankCold(notes: readonly ScannedNote[], query: string, max = Infinity): RankedMatch[] {
  const ranked = coldRanking(notes, query, max);
  if (ranked !== undefined) return ranked.matches.map((m) => m.match);
  const index = new NoteIndex();
  index.sync(notes);
  return index.rank(query, max);
}

/** The ranking straight from texts, or undefined when the query reaches too many terms (COLD_MAX_CANDIDATES). */
function coldRanking(
  notes: readonly ScannedNote[],
  query: string,
  max: number,
): { matches: ColdMatch[]; corpus: Corpus | undefined } | undefined {
  const terms = queryTerms(query);
  if (terms.length === 0 || notes.length === 0 || max <= 0) {
    checkNotes(notes);
    return { matches: [], corpus: undefined };
  }
  let corpus: Corpus;
  try {
    corpus = readCorpus(notes, terms);
  } catch (err) {
    if (err instanceof TooBroad) return undefined;
    throw err;
  }
  return { matches: rankCorpus(corpus, terms, max), corpus };
}

/** The checks `NoteIndex.sync` of a fresh index makes (every note with text, no repeated id). */
function checkNotes(notes: readonly ScannedNote[]): void {
  const ids = new Set<string>();
  for (const note of notes) {
    if (!carriesText(note)) throw new Error('searchCold: a note without text');
    if (ids.has(note.id)) throw new Error('searchCold: duplicate id');
    ids.add(note.id);
  }
}

/**
 * Search `notes` and apply the response limits of docs/TOOLS.md, exactly as `NoteIndex.search(query, limit,
 * limits)` after a fresh index's `sync(notes)` does: at most `limit` hits (`truncated` when more matched); the sum
 * over hits of code points of id + title + snippet stays ≤ `limits.total_chars` (the first hit that would exceed it
 * ends the list and sets `truncated`); snippets of at most `limits.snippet_chars` code points; every hit with its
 * title (`noteTitle`).
 *
 * When the query reaches more than COLD_MAX_CANDIDATES terms, the notes are synced into `index` (which must be
 * empty) and the answer comes from it: the index is then built (`index.size > 0`), and left empty otherwise.
 *
 * @param notes this call's scanned notes, every one with text, in scan order
 * @param index the view's empty index, used only for a query that reaches too many terms
 * @throws Error when a note has no text or an id repeats
 */
export function searchCold(
  notes: readonly ScannedNote[],
  query: string,
  limit: number,
  limits: ResponseLimits,
  index: NoteIndex = new NoteIndex(),
): { hits: SearchHit[]; truncated: boolean } {
  const ranked = coldRanking(notes, query, limit + 1);
  if (ranked === undefined) {
    index.sync(notes);
    return index.search(query, limit, limits);
  }
  const { matches, corpus } = ranked;
  if (corpus === undefined) return { hits: [], truncated: false };
  return boundCorpusHits(corpus, matches, limit, limits, (doc) => notes[doc]!.text!);
}

/**
 * The answer of `searchCold` once the pass over every note is done (`CorpusReader.finish`): rank the best
 * `limit + 1` and apply the response limits with the same code as NoteIndex.search. `textOf(doc)` is the full text
 * of note number `doc`, decoded again for the hits only.
 *
 * @throws Error from the ranking's own checks only (none for a well-formed corpus)
 */
export function searchCorpus(
  corpus: Corpus,
  terms: readonly string[],
  limit: number,
  limits: ResponseLimits,
  textOf: (doc: number) => string,
): { hits: SearchHit[]; truncated: boolean } {
  return boundCorpusHits(corpus, rankCorpus(corpus, terms, limit + 1), limit, limits, textOf);
}

/** `boundedHits` of ranked matches over a corpus (the end of `searchCold` and `searchCorpus`). */
function boundCorpusHits(
  corpus: Corpus,
  matches: ColdMatch[],
  limit: number,
  limits: ResponseLimits,
  textOf: (doc: number) => string,
): { hits: SearchHit[]; truncated: boolean } {
  // The same response limits as NoteIndex.search, by the same code.
  const list = matches.map(({ doc, match }) => ({ ...match, doc }));
  return boundedHits(list, limit, limits, ({ doc }) => ({
    title: corpus.titles[doc],
    body: textOf(doc).slice(corpus.bodyAt[doc]!),
  }));
}
