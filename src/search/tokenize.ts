/**
 * The one tokenizer used for notes and queries alike (docs/SEARCH.md "Tokens"), so that a query term and a note
 * term meet in the same form.
 *
 * Rules, in order:
 * 1. Unicode NFKC, then lowercase (full-width letters, ligatures and compatibility forms fold to their plain form,
 *    half-width katakana to full-width), after cutting any run of more than MAX_MARK_RUN combining marks to its
 *    first MAX_MARK_RUN (`fold`).
 * 2. A word is a run of letters, marks and numbers (general categories L, M, N); everything else separates words.
 * 3. A word is cut into runs where its script changes, by Script_Extensions: Han; Hiragana; Katakana; Thai, Lao,
 *    Khmer and Myanmar; and the rest (Latin, Greek, Cyrillic, Hangul, digits, …). A combining mark belongs to the
 *    character before it; a character of both kana scripts (the prolonged sound mark ー, the voiced sound marks)
 *    continues a hiragana or katakana run and otherwise counts as katakana.
 *    - Han: overlapping bigrams, one term per pair of neighbouring characters (東京都 gives 東京, 京都); a run of
 *      one character is one term. Chinese and Japanese are written without spaces and Han words are mostly two
 *      characters long, so a query word meets every note that holds it, whatever the words around it.
 *    - Hiragana, Katakana, and the rest: one term per run. An apostrophe (U+0027 or U+2019) between two characters
 *      of the rest joins them and is dropped, so "don't" and "dont" are the same term.
 *    - Thai, Lao, Khmer, Myanmar: split into words by one shared `Intl.Segmenter` (granularity "word"); only its
 *      word-like segments are kept.
 * 4. Terms longer than MAX_TERM_CHARS code points are cut to that length (long base64 or hash runs otherwise bloat
 *    the index and make typo matching slow).
 *
 * Cost: one pass over the code units with one table read each (`scanSpans`). A segmenter call over a very long
 * string is superlinear in V8/ICU (64 K characters take half a second, a megabyte minutes), so a Thai, Lao, Khmer
 * or Myanmar run longer than SEGMENT_PIECE code units is segmented piece by piece; a word cut at a piece boundary
 * splits in two, the same way in notes and queries. Han and kana never go through the segmenter: its dictionary
 * segmentation ran at about 3 MB of text per second, a tenth of the rest of indexing.
 *
 * Deterministic: the same input gives the same terms in the same order within one Node/ICU version.
 */
import {
  CLASSES,
  classAt,
  classOf,
  HAN,
  HIRA,
  hasLongMarkRun,
  KATA,
  MARK,
  MAX_MARK_RUN,
  OTHER,
  SEG,
  SEP,
} from './char-classes.js';

export { MAX_MARK_RUN, scansAsFolded } from './char-classes.js';

/** Longest term kept, in code points. */
export const MAX_TERM_CHARS = 64;

/** Longest string handed to the segmenter at once, in UTF-16 code units (about linear cost up to here). */
export const SEGMENT_PIECE = 4096;

/** The apostrophes that join words (U+0027, U+2019), all of them. */
export const APOSTROPHES = /['\u2019]/g;
/** Fast path: pure ASCII text needs neither NFKC nor the spaceless-script check. */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * A run of more than MAX_MARK_RUN code points that are combining marks or decompose (NFKD) to one first: the
 * marks (category M), U+0E33 and U+0EB3 (Thai and Lao AM) and U+FF9E, U+FF9F (half-width sound marks), found by
 * checking every code point's NFKD.
 */
// 31 = MAX_MARK_RUN + 1; the class is the one of MARK_RUN_CP in src/search/char-classes.ts.
const MARK_RUN = /[\p{M}\u0E33\u0EB3\uFF9E\uFF9F]{31,}/gu;
/**
 * Longest piece handed to `normalize` at once where the text allows it, in UTF-16 code units. A piece ends before a
 * code unit after which NFKC and lowercasing continue as at the start of a text: ASCII whitespace, digits and
 * punctuation other than the case-ignorable ' . : ^ ` (a starter that is never the second of a composition, and
 * ends the Final_Sigma context), or U+3000–U+3002 (ideographic space, comma, full stop). Runs without such a unit
 * stay whole; with mark runs bounded their cost is linear.
 */
export const NORMALIZE_PIECE = 1024;
/** A code unit a normalisation piece may start with (see NORMALIZE_PIECE). */
const PIECE_START = /[\t-\r !"#$%&()*+,\-/0-9;<=>?@[\\\]_{|}~\u3000-\u3002]/g;

/** `s` with every run of more than MAX_MARK_RUN combining marks cut to its first MAX_MARK_RUN code points. */
export function boundMarks(s: string): string {
  if (!hasLongMarkRun(s)) return s;
  MARK_RUN.lastIndex = 0;
  return s.replace(MARK_RUN, (run) => {
    // MAX_MARK_RUN code points: a mark outside the BMP takes two code units.
    let end = 0;
    for (let k = 0; k < MAX_MARK_RUN; k++) end += (run.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
    return run.slice(0, end);
  });
}

/**
 * NFKC, then lowercase: the folding of rule 1, with bounded cost (see MAX_MARK_RUN and NORMALIZE_PIECE): mark runs
 * are cut first, then the text is normalised piece by piece. Every caller (tokenizer, term table, snippet scanner)
 * folds through here, so notes and queries meet in the same form.
 */
export function fold(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  const s = boundMarks(text);
  const n = s.length;
  if (n <= NORMALIZE_PIECE) return s.normalize('NFKC').toLowerCase();
  let out = '';
  for (let start = 0; start < n; ) {
    let end = start + NORMALIZE_PIECE;
    if (end >= n) end = n;
    else {
      PIECE_START.lastIndex = end;
      end = PIECE_START.test(s) ? PIECE_START.lastIndex - 1 : n;
    }
    out += s.slice(start, end).normalize('NFKC').toLowerCase();
    start = end;
  }
  return out;
}

let segmenter: Intl.Segmenter | undefined;

/** The shared word segmenter (created on first use; dictionary segmentation for Thai, Lao, Khmer and Myanmar). */
function wordSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  return segmenter;
}

/**
 * Receives the terms of a scan as spans of the scanned text: the term is `text[start .. end)` with apostrophes
 * dropped when `joined`, cut to MAX_TERM_CHARS code points (never empty).
 */
export type SpanSink = (start: number, end: number, joined: boolean) => void;

/** Runs a word is cut into (rule 3): no run, and the run kinds. */
const NONE = 0;
const RUN_OTHER = 1;
const RUN_HAN = 2;
const RUN_HIRA = 3;
const RUN_KATA = 4;
const RUN_SEG = 5;
/**
 * Most characters of a Han run that also give the whole run as one term (besides its bigrams): a compound word
 * such as 保管庫 or 中华人民共和国, not a clause.
 */
export const HAN_WHOLE_MAX = 8;

/**
 * Shortest katakana run, in UTF-16 code units, that goes through the word segmenter; a shorter one (ファイル,
 * データ) is one term. Four characters are too few for a compound, and a segmenter call costs microseconds
 * whatever its length, so a note of many short distinct katakana runs (each between two Han characters) would
 * otherwise pay one call per three or four characters. On the Japanese known-item queries a minimum of 5 ranks
 * exactly as segmenting every run does; 6 already loses.
 */
export const KATAKANA_SEGMENT_MIN = 5;

/**
 * The terms of `text[from .. to)` by rules 2–4 (the text as given: `tokenize` folds first, snippets do not), in
 * text order, handed to `sink` as spans. One pass over code units with one class read each, plus one segmenter
 * call per SEGMENT_PIECE of a Thai, Lao, Khmer or Myanmar run: linear in the text.
 */
export function scanSpans(text: string, from: number, to: number, sink: SpanSink): void {
  let run = NONE;
  let start = 0;
  let joined = false;
  // A Han run: where its last two characters (with their marks) start; -1 before there are any.
  let prev = -1;
  let last = -1;
  let units = 0;
  let i = from;
  while (i < to) {
    // Tight loops for the commonest stretches: separators between words, the letters of a spaced-script word, the
    // characters of a Han or hiragana run. Each stops at anything else (a class not yet in the table, a surrogate, an apostrophe), which the
    // general step below handles.
    if (run === NONE) {
      while (i < to) {
        const c = text.charCodeAt(i);
        if ((CLASSES[c]! & 15) !== SEP || (c >= 0xd800 && c <= 0xdbff)) break;
        i++;
      }
      if (i >= to) break;
    } else if (run === RUN_OTHER) {
      while (i < to) {
        const k = CLASSES[text.charCodeAt(i)]! & 15;
        if (k !== OTHER && k !== MARK) break;
        i++;
      }
      if (i >= to) break;
    } else if (run === RUN_HAN || run === RUN_HIRA) {
      // The next characters of a Han or hiragana run (BMP, no mark): one bigram each.
      const same = run === RUN_HAN ? HAN : HIRA;
      while (i < to && (CLASSES[text.charCodeAt(i)]! & 15) === same) {
        units++;
        if (prev >= 0) sink(prev, i, false);
        prev = last;
        last = i;
        i++;
      }
      if (i >= to) break;
    }
    const c = text.charCodeAt(i);
    let cls: number;
    let width = 1;
    if (c < 0xd800 || c > 0xdbff) cls = CLASSES[c]! & 15 || classOf(c);
    else {
      cls = classAt(text, i, to);
      if (cls !== SEP) width = 2;
    }
    if (cls === SEP) {
      if (run !== NONE) {
        // An apostrophe between two letters of a spaced script joins them (and is dropped from the term).
        if (run === RUN_OTHER && (c === 0x27 || c === 0x2019) && i + 1 < to) {
          const next = classAt(text, i + 1, to);
          if (next === OTHER || next === MARK) {
            joined = true;
            i++;
            continue;
          }
        }
        close(text, run, start, i, joined, prev, last, units, sink);
        run = NONE;
      }
      i += width;
      continue;
    }
    if (cls === MARK) {
      // A mark stays with the character before it; at the start of a word it starts a spaced-script run.
      if (run === NONE) {
        run = RUN_OTHER;
        start = i;
        joined = false;
      }
      i += width;
      continue;
    }
    const kind =
      cls === OTHER
        ? RUN_OTHER
        : cls === HAN
          ? RUN_HAN
          : cls === HIRA
            ? RUN_HIRA
            : cls === KATA
              ? RUN_KATA
              : cls === SEG
                ? RUN_SEG
                : run === RUN_HIRA || run === RUN_KATA
                  ? run
                  : RUN_KATA;
    if (kind !== run) {
      if (run !== NONE) close(text, run, start, i, joined, prev, last, units, sink);
      run = kind;
      start = i;
      joined = false;
      prev = -1;
      last = -1;
      units = 0;
    }
    if (kind === RUN_HAN || kind === RUN_HIRA) {
      units++;
      // Overlapping bigrams: the pair of the last two characters is complete when a third one starts.
      if (prev >= 0) sink(prev, i, false);
      prev = last;
      last = i;
    }
    i += width;
  }
  if (run !== NONE) close(text, run, start, to, joined, prev, last, units, sink);
}

/** Hand the terms of the run `text[start .. end)` of kind `run` to `sink` (see `scanSpans`). */
function close(
  text: string,
  run: number,
  start: number,
  end: number,
  joined: boolean,
  prev: number,
  last: number,
  units: number,
  sink: SpanSink,
): void {
  if (run === RUN_HAN || run === RUN_HIRA) {
    // The last bigram (or the only character), then for a short Han run of three or more the whole run.
    sink(prev >= 0 ? prev : last, end, false);
    if (run === RUN_HAN && units >= 3 && units <= HAN_WHOLE_MAX) sink(start, end, false);
  } else if (run === RUN_SEG || (run === RUN_KATA && end - start >= KATAKANA_SEGMENT_MIN))
    segments(text, start, end, sink);
  else sink(start, end, joined);
}

/** Longest run, in UTF-16 code units, whose segmentation `segments` keeps for the next time it meets the run. */
const CACHED_RUN_UNITS = 64;
/** Most runs kept; the cache is emptied when full (bounded memory: about 1 MB). */
const CACHED_RUNS = 4096;
/**
 * Segmentations of short runs met before: run → the UTF-16 offsets (start, end, start, end, …) of its word-like
 * segments. Katakana words repeat: in Japanese notes a katakana run is a repeat of one met before nine times in
 * ten, so the dictionary segmenter, the costly part, mostly runs once per distinct word. The segmentation of a run
 * depends only on the run, so the cache never changes a term.
 */
const segmentCache = new Map<string, number[]>();

/** Empty the segmentation cache (measurements of a first indexing run; terms never depend on it). */
export function forgetSegmentations(): void {
  segmentCache.clear();
}

/** Word-like segments of the run `text[from .. to)` (see `segmentsOf`), from the cache for a short run. */
function segments(text: string, from: number, to: number, sink: SpanSink): void {
  if (to - from > CACHED_RUN_UNITS) {
    segmentsOf(text, from, to, sink);
    return;
  }
  const run = text.slice(from, to);
  let found = segmentCache.get(run);
  if (found === undefined) {
    const offsets: number[] = [];
    segmentsOf(run, 0, run.length, (start, end) => {
      offsets.push(start, end);
    });
    if (segmentCache.size >= CACHED_RUNS) segmentCache.clear();
    segmentCache.set(run, offsets);
    found = offsets;
  }
  for (let k = 0; k < found.length; k += 2) sink(from + found[k]!, from + found[k + 1]!, false);
}

/** Word-like segments of `text[from .. to)` by the word segmenter, piece by piece (never cutting a surrogate pair). */
function segmentsOf(text: string, from: number, to: number, sink: SpanSink): void {
  for (let start = from; start < to; ) {
    let end = Math.min(start + SEGMENT_PIECE, to);
    const last = text.charCodeAt(end - 1);
    if (end < to && last >= 0xd800 && last <= 0xdbff) end++;
    for (const seg of wordSegmenter().segment(text.slice(start, end))) {
      if (seg.isWordLike === true) sink(start + seg.index, start + seg.index + seg.segment.length, false);
    }
    start = end;
  }
}

/** The term of a span (see `SpanSink`). */
export function termOf(text: string, start: number, end: number, joined: boolean): string {
  const word = text.slice(start, end);
  return clip(joined ? word.replace(APOSTROPHES, '') : word);
}

/**
 * Longest prefix of a span `scanTerms` folds, in UTF-16 code units: room for MAX_TERM_CHARS code points of two
 * units each, and a few mark runs of MAX_MARK_RUN that folding may drop or compose.
 */
const SCAN_WORD_UNITS = 4 * MAX_TERM_CHARS + 4 * MAX_MARK_RUN;

/** A term with its UTF-16 offsets in the string that was scanned (see `scanTerms`). */
export interface TermSpan {
  term: string;
  start: number;
  end: number;
}

/**
 * Split `text` into index/query terms (rules in the module comment). Returns terms in text order, duplicates kept
 * (term frequency matters for BM25).
 */
export function tokenize(text: string): string[] {
  const ascii = !NON_ASCII.test(text);
  if (ascii) return tokenizeAscii(text.toLowerCase());
  const folded = fold(text);
  const out: string[] = [];
  scanSpans(folded, 0, folded.length, (start, end, joined) => {
    out.push(termOf(folded, start, end, joined));
  });
  return out;
}

/** ASCII word characters after lowercasing: digits and a–z (the ASCII members of categories L, M and N). */
function isAsciiWordChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
}

/**
 * `tokenize` for lowercased pure-ASCII text, by one scan over char codes (same rules: runs of a–z/0–9, an
 * apostrophe between two word characters joins them and is dropped, terms clipped to MAX_TERM_CHARS).
 */
function tokenizeAscii(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && !isAsciiWordChar(text.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    let joined = false;
    for (;;) {
      while (i < n && isAsciiWordChar(text.charCodeAt(i))) i++;
      if (i + 1 < n && text.charCodeAt(i) === 0x27 && isAsciiWordChar(text.charCodeAt(i + 1))) {
        joined = true;
        i++;
        continue;
      }
      break;
    }
    const word = text.slice(start, i);
    const term = joined ? word.replace(APOSTROPHES, '') : word;
    out.push(term.length <= MAX_TERM_CHARS ? term : term.slice(0, MAX_TERM_CHARS));
  }
  return out;
}

/**
 * End (exclusive) of the word that starts at `i` of `text`: its word characters and the apostrophes between two of
 * them. Every term's span lies within one such word (no rule of `scanSpans` joins across a separator).
 */
function wordEnd(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const cls = classAt(text, i, n);
    if (cls !== SEP) {
      i += cls !== SEP && text.charCodeAt(i) >= 0xd800 && text.charCodeAt(i) <= 0xdbff ? 2 : 1;
      continue;
    }
    const c = text.charCodeAt(i);
    if ((c === 0x27 || c === 0x2019) && i + 1 < n && classAt(text, i + 1, n) !== SEP) {
      i++;
      continue;
    }
    break;
  }
  return i;
}

/**
 * Like `tokenize`, but scans `text` as written and yields where each term sits in it (UTF-16 offsets into `text`,
 * end exclusive), lazily, word by word. Used for snippets, which must quote the original text. Terms are found in
 * the original text by the same rules and each is folded on its own (NFKC, lowercase, apostrophes dropped,
 * clipped), which agrees with `tokenize` except for rare compatibility characters that only become letters, or
 * change script, after NFKC (those simply do not anchor a snippet).
 */
export function* scanTerms(text: string): Generator<TermSpan> {
  const n = text.length;
  const spans: number[] = [];
  const sink: SpanSink = (start, end) => {
    spans.push(start, end);
  };
  for (let i = 0; i < n; ) {
    if (classAt(text, i, n) === SEP) {
      i++;
      continue;
    }
    const end = wordEnd(text, i);
    spans.length = 0;
    scanSpans(text, i, end, sink);
    // A Han run's whole-run term comes after its bigrams: put every span in the order of its start.
    const order: [number, number][] = [];
    for (let k = 0; k < spans.length; k += 2) order.push([spans[k]!, spans[k + 1]!]);
    order.sort((a, b) => a[0] - b[0]);
    for (const [from, to] of order) {
      // Only the start of a span can reach its term (at most MAX_TERM_CHARS code points after folding), so a very
      // long one (a run of marks, a hash) is folded from a bounded prefix: snippets scan terms on every search.
      const lower = fold(text.slice(from, Math.min(to, from + SCAN_WORD_UNITS)));
      const term = clip(lower.replace(APOSTROPHES, ''));
      if (term !== '') yield { term, start: from, end: to };
    }
    i = end;
  }
}

/** Cut a term to MAX_TERM_CHARS code points (cheap check first: most terms are short). */
function clip(term: string): string {
  if (term.length <= MAX_TERM_CHARS) return term;
  const cps = Array.from(term);
  return cps.length <= MAX_TERM_CHARS ? term : cps.slice(0, MAX_TERM_CHARS).join('');
}
