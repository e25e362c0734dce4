/**
 * The one tokenizer used for notes and queries alike (docs/SEARCH.md), so that a query term and a note term meet
 * in the same form.
 *
 * Rules, in order:
 * 1. Unicode NFKC, then lowercase (full-width letters, ligatures and compatibility forms fold to their plain form),
 *    after cutting any run of more than MAX_MARK_RUN combining marks to its first MAX_MARK_RUN (`fold`).
 * 2. A word is a run of letters, marks and numbers (general categories L, M, N); everything else separates words.
 *    An apostrophe (U+0027 or U+2019) between two word characters joins them and is dropped, so "don't" and
 *    "dont" are the same term.
 * 3. A word that holds characters of a script written without spaces (Han, Hiragana, Katakana, Hangul, Thai, Lao,
 *    Khmer, Myanmar) is split into words by one shared `Intl.Segmenter` (granularity "word"); only its word-like
 *    segments are kept.
 * 4. Terms longer than MAX_TERM_CHARS code points are cut to that length (long base64 or hash runs otherwise bloat
 *    the index and make typo matching slow).
 *
 * Cost: one segmenter call over a very long string is superlinear in V8/ICU (64 K characters take half a second,
 * a megabyte minutes), so a spaceless word longer than SEGMENT_PIECE code units is segmented piece by piece. Real
 * text is broken by punctuation long before that; a word cut at a piece boundary splits in two, the same way in
 * notes and queries.
 *
 * Deterministic: the same input gives the same terms in the same order within one Node/ICU version.
 */

/** Longest term kept, in code points. */
export const MAX_TERM_CHARS = 64;

/** Longest string handed to the segmenter at once, in UTF-16 code units (about linear cost up to here). */
export const SEGMENT_PIECE = 4096;

/** A word: letters/marks/numbers, optionally joined by inner apostrophes (global: callers reset `lastIndex`). */
export const WORD = /[\p{L}\p{M}\p{N}]+(?:['\u2019][\p{L}\p{M}\p{N}]+)*/gu;
/** Characters of scripts that do not separate words with spaces (Script_Extensions, so U+30FC "ー" counts). */
export const SPACELESS =
  /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
/**
 * A word of Hangul, ASCII letters and digits and apostrophes only. The segmenter never splits one (Korean has no
 * dictionary segmentation: Hangul is ALetter in UAX #29, which joins with letters, digits and inner apostrophes),
 * so such a word skips it: one segmenter call per Korean word made Korean notes index four times slower than
 * English ones. tests/search/tokenize.test.ts checks the shortcut against the segmenter on real Korean notes.
 */
const HANGUL_WORD = /^[\uAC00-\uD7A3]+$/;

/** True when `word` (folded) must go through the word segmenter (rule 3), false when it is one term as it is. */
export function needsSegmenter(word: string): boolean {
  return SPACELESS.test(word) && !HANGUL_WORD.test(word);
}

/** The apostrophes that join words (U+0027, U+2019), all of them. */
export const APOSTROPHES = /['\u2019]/g;
/** Fast path: pure ASCII text needs neither NFKC nor the spaceless-script check. */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Longest run of combining marks kept before normalisation: 30, the bound of UAX #15's Stream-Safe Text Format
 * (no real text has longer runs of non-starters). Canonical reordering inside NFKC sorts a run of non-starters by
 * insertion (ICU), so its cost grows with the square of the run: 60,000 + 60,000 marks in descending combining
 * class take seconds. Longer runs are cut to their first MAX_MARK_RUN code points before normalising.
 */
export const MAX_MARK_RUN = 30;
/**
 * A run of more than MAX_MARK_RUN code points that are combining marks or decompose (NFKD) to one first: the
 * marks (category M), U+0E33 and U+0EB3 (Thai and Lao AM) and U+FF9E, U+FF9F (half-width sound marks), found by
 * checking every code point's NFKD.
 */
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
  MARK_RUN.lastIndex = 0;
  if (!MARK_RUN.test(s)) return s;
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

/** The shared word segmenter (created on first use; locale-independent dictionary segmentation for CJK/Thai). */
function wordSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  return segmenter;
}

/** A word (or word segment) of a text and its UTF-16 offset in that text. */
type Span = [word: string, at: number];

/**
 * The words of `text` in text order (rules 2 and 3), each with its offset in `text`. Spaceless words come back as
 * their word-like segments.
 */
function* wordSpans(text: string): Generator<Span> {
  const spaceless = NON_ASCII.test(text);
  for (const m of text.matchAll(WORD)) {
    if (spaceless && SPACELESS.test(m[0]) && !HANGUL_WORD.test(m[0].toLowerCase())) yield* segments(m[0], m.index);
    else yield [m[0], m.index];
  }
}

/** Word-like segments of one spaceless word found at `at`, piece by piece (never cutting a surrogate pair). */
function* segments(word: string, at: number): Generator<Span> {
  for (let start = 0; start < word.length; ) {
    let end = Math.min(start + SEGMENT_PIECE, word.length);
    const last = word.charCodeAt(end - 1);
    if (end < word.length && last >= 0xd800 && last <= 0xdbff) end++;
    const piece = start === 0 && end === word.length ? word : word.slice(start, end);
    for (const seg of wordSegmenter().segment(piece)) {
      if (seg.isWordLike) yield [seg.segment, at + start + seg.index];
    }
    start = end;
  }
}

/**
 * Longest prefix of a word `scanTerms` folds, in UTF-16 code units: room for MAX_TERM_CHARS code points of two
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
  return tokenizeMixed(fold(text));
}

/** One letter, mark or number at `lastIndex` (sticky, so it tests exactly one code point there). */
const WORD_CHAR_AT = /[\p{L}\p{M}\p{N}]/uy;

/**
 * Width in UTF-16 code units of the word character (category L, M or N) at `i` of `text`, or 0 when the code
 * point there is not one. ASCII is classified by char code; anything else by WORD_CHAR_AT.
 */
function wordCharWidth(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0x80) return isAsciiWordChar(c) || (c >= 0x41 && c <= 0x5a) ? 1 : 0;
  WORD_CHAR_AT.lastIndex = i;
  return WORD_CHAR_AT.test(text) ? WORD_CHAR_AT.lastIndex - i : 0;
}

/**
 * `tokenize` for NFKC-normalized, lowercased text: the matches of WORD, found by one scan over char codes that
 * asks a regular expression only about non-ASCII characters (most notes are mostly ASCII, and a global Unicode
 * regular expression over the whole text cost about twice as much). Words holding non-ASCII characters of a
 * spaceless script are segmented (rule 3); every word then goes through `push`.
 */
function tokenizeMixed(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && wordCharWidth(text, i) === 0) i++;
    if (i >= n) break;
    const start = i;
    let nonAscii = false;
    for (;;) {
      while (i < n) {
        const w = wordCharWidth(text, i);
        if (w === 0) break;
        if (w > 1 || text.charCodeAt(i) >= 0x80) nonAscii = true;
        i += w;
      }
      const c = text.charCodeAt(i);
      if (i + 1 < n && (c === 0x27 || c === 0x2019) && wordCharWidth(text, i + 1) > 0) {
        if (c === 0x2019) nonAscii = true;
        i++;
        continue;
      }
      break;
    }
    const word = text.slice(start, i);
    if (nonAscii && needsSegmenter(word)) {
      for (const [seg] of segments(word, start)) push(out, seg);
    } else {
      push(out, word);
    }
  }
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

/** Add one word as a term (apostrophes dropped, clipped), unless nothing is left. */
function push(out: string[], word: string): void {
  const term = clip(word.includes("'") || word.includes('\u2019') ? word.replace(APOSTROPHES, '') : word);
  if (term !== '') out.push(term);
}

/**
 * Like `tokenize`, but scans `text` as written and yields where each term sits in it (UTF-16 offsets into `text`,
 * end exclusive), lazily. Used for snippets, which must quote the original text. Words are found and segmented
 * in the original text and each is normalized on its own (NFKC, lowercase, apostrophes dropped, clipped), which
 * agrees with `tokenize` except for rare compatibility characters that only become letters after NFKC (those
 * simply do not anchor a snippet).
 */
export function* scanTerms(text: string): Generator<TermSpan> {
  for (const [word, at] of wordSpans(text)) {
    // Only the start of a word can reach its term (at most MAX_TERM_CHARS code points after folding), so a very long
    // word (a run of marks, a hash) is folded from a bounded prefix: snippets scan words on every search.
    const lower = fold(word.length > SCAN_WORD_UNITS ? word.slice(0, SCAN_WORD_UNITS) : word);
    const term = clip(lower.replace(APOSTROPHES, ''));
    if (term !== '') yield { term, start: at, end: at + word.length };
  }
}

/** Cut a term to MAX_TERM_CHARS code points (cheap check first: most terms are short). */
function clip(term: string): string {
  if (term.length <= MAX_TERM_CHARS) return term;
  const cps = Array.from(term);
  return cps.length <= MAX_TERM_CHARS ? term : cps.slice(0, MAX_TERM_CHARS).join('');
}
