/**
 * The one tokenizer used for notes and queries alike (PRODUCT.md §6), so that a query term and a note term meet
 * in the same form.
 *
 * Rules, in order:
 * 1. Unicode NFKC, then lowercase (full-width letters, ligatures and compatibility forms fold to their plain form).
 * 2. A word is a run of letters, marks and numbers (general categories L, M, N); everything else separates words.
 *    An apostrophe (U+0027 or U+2019) between two word characters joins them and is dropped, so "don't" and
 *    "dont" are the same term.
 * 3. A word that holds characters of a script written without spaces (Han, Hiragana, Katakana, Hangul, Thai, Lao,
 *    Khmer, Myanmar) is split into words by one shared `Intl.Segmenter` (granularity "word"). The segmenter is
 *    slow, so it only ever sees such words, never whole texts.
 * 4. Terms longer than MAX_TERM_CHARS code points are cut to that length (long base64 or hash runs otherwise bloat
 *    the index and make typo matching slow).
 *
 * Deterministic: the same input gives the same terms in the same order within one Node/ICU version.
 */

/** Longest term kept, in code points. */
export const MAX_TERM_CHARS = 64;

/** A word: letters/marks/numbers, optionally joined by inner apostrophes. */
const WORD = /[\p{L}\p{M}\p{N}]+(?:['\u2019][\p{L}\p{M}\p{N}]+)*/gu;
/** Characters of scripts that do not separate words with spaces (Script_Extensions, so U+30FC "ー" counts). */
const SPACELESS = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
const APOSTROPHES = /['\u2019]/g;
/** Fast path: pure ASCII text needs neither NFKC nor the spaceless-script check. */
const NON_ASCII = /[^\u0000-\u007f]/;

let segmenter: Intl.Segmenter | undefined;

/** The shared word segmenter (created on first use; locale-independent dictionary segmentation for CJK/Thai). */
function wordSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  return segmenter;
}

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
  const normalized = NON_ASCII.test(text) ? text.normalize('NFKC').toLowerCase() : text.toLowerCase();
  const out: string[] = [];
  const spaceless = NON_ASCII.test(normalized);
  for (const m of normalized.matchAll(WORD)) {
    const word = m[0];
    if (spaceless && SPACELESS.test(word)) {
      for (const seg of wordSegmenter().segment(word)) {
        if (seg.isWordLike) pushTerm(out, seg.segment);
      }
    } else {
      pushTerm(out, word);
    }
  }
  return out;
}

/**
 * Like `tokenize`, but scans `text` as written and yields where each term sits in it (UTF-16 offsets into `text`,
 * end exclusive), lazily. Used for snippets, which must quote the original text. Each word is normalized on its
 * own, which agrees with `tokenize` except for rare compatibility characters that only become letters after NFKC
 * (those simply do not anchor a snippet).
 */
export function* scanTerms(text: string): Generator<TermSpan> {
  for (const m of text.matchAll(WORD)) {
    const word = m[0];
    const at = m.index ?? 0;
    if (!NON_ASCII.test(word)) {
      yield { term: clip(word.toLowerCase().replace(APOSTROPHES, '')), start: at, end: at + word.length };
    } else if (SPACELESS.test(word)) {
      for (const seg of wordSegmenter().segment(word)) {
        if (!seg.isWordLike) continue;
        for (const term of tokenize(seg.segment)) {
          yield { term, start: at + seg.index, end: at + seg.index + seg.segment.length };
        }
      }
    } else {
      for (const term of tokenize(word)) yield { term, start: at, end: at + word.length };
    }
  }
}

function pushTerm(out: string[], word: string): void {
  const term = clip(word.includes("'") || word.includes('\u2019') ? word.replace(APOSTROPHES, '') : word);
  if (term !== '') out.push(term);
}

/** Cut a term to MAX_TERM_CHARS code points (cheap check first: most terms are short). */
function clip(term: string): string {
  if (term.length <= MAX_TERM_CHARS) return term;
  const cps = Array.from(term);
  return cps.length <= MAX_TERM_CHARS ? term : cps.slice(0, MAX_TERM_CHARS).join('');
}
