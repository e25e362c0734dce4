/**
 * The character classes of the tokenizer's rules 2 and 3 (src/search/tokenize.ts, docs/SEARCH.md "Tokens"): one
 * byte per code point, classified once per process by Unicode property regular expressions and then read from a
 * table (one array read per code unit), with the flags for the code points a mark run counts and the ones a scan
 * may read without folding.
 */

/**
 * Longest run of combining marks kept before normalisation: 30, the bound of UAX #15's Stream-Safe Text Format
 * (no real text has longer runs of non-starters). Canonical reordering inside NFKC sorts a run of non-starters by
 * insertion (ICU), so its cost grows with the square of the run: 60,000 + 60,000 marks in descending combining
 * class take seconds. Longer runs are cut to their first MAX_MARK_RUN code points before normalising.
 */
export const MAX_MARK_RUN = 30;
/** One code point MARK_RUN counts. */
const MARK_RUN_CP = /^[\p{M}\u0E33\u0EB3\uFF9E\uFF9F]$/u;

/*
 * Character classes (rules 2 and 3), one byte per code point, in CLASSES (0 until the code point's block of 256
 * was classified). A code point is classified once per process, by the regular expressions below; after that the
 * scan costs one array read per code unit.
 */
/** Not a word character (separator), including lone surrogates. */
export const SEP = 1;
/** A letter or number of a script written with spaces (Latin, Greek, Cyrillic, Hangul, …). */
export const OTHER = 2;
/** A combining mark of no spaceless script: it belongs to the character before it. */
export const MARK = 3;
/** Han (Script_Extensions), e.g. 漢, 々, 〇. */
export const HAN = 4;
/** Hiragana only. */
export const HIRA = 5;
/** Katakana only (halfwidth katakana too). */
export const KATA = 6;
/** Both kana scripts (ー, ｰ, the voiced sound marks): continues a kana run of either script. */
const KANA = 7;
/** Thai, Lao, Khmer or Myanmar: split by the word segmenter. */
export const SEG = 8;

/** Flag added to a class in CLASSES for the code points MARK_RUN counts (marks and the four that decompose to one). */
const MARKISH = 16;
/**
 * Flag added to a class in CLASSES for a code point that may be scanned without folding: ASCII (folding only
 * lowercases A–Z, which a scan in place must do itself); hiragana ぁ–ゖ, katakana ァ–ヺ and ー, CJK unified
 * ideographs (extension A and the main block), Hangul syllables, and the CJK brackets and marks U+3001–U+3011
 * (NFKC quick check Yes, combining class 0, never the second of a composition, their own lowercase); and a
 * separator of U+0080–U+00BF, U+2000–U+206F, U+3000–U+303F or U+FF00–U+FFEF other than U+2019 whose fold is
 * separators only, no apostrophe (full-width ：，（）, “”, …): it folds to other separators, which cut words in the
 * same places. A text of such code points (no Σ, so lowercasing needs no context) gives the same terms scanned
 * as it is, with A–Z lowercased, as its fold does.
 */
const SCAN_STABLE = 32;
/** The class byte of each code point (0: its block is not classified yet; low 4 bits the class, then the flags). */
export const CLASSES = new Uint8Array(0x110000);
const WORD_CP = /^[\p{L}\p{M}\p{N}]$/u;
const HAN_CP = /^\p{scx=Han}$/u;
const HIRA_CP = /^\p{scx=Hiragana}$/u;
const KATA_CP = /^\p{scx=Katakana}$/u;
const SEG_CP = /^[\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]$/u;
const MARK_CP = /^\p{M}$/u;

/** The class of code point `cp` by the Unicode properties (see the class constants). */
function classify(cp: number): number {
  if (cp >= 0xd800 && cp <= 0xdfff) return SEP;
  const s = String.fromCodePoint(cp);
  if (!WORD_CP.test(s)) return SEP;
  const hira = HIRA_CP.test(s);
  const kata = KATA_CP.test(s);
  if (hira || kata) return hira && kata ? KANA : hira ? HIRA : KATA;
  if (HAN_CP.test(s)) return HAN;
  if (SEG_CP.test(s)) return SEG;
  return MARK_CP.test(s) ? MARK : OTHER;
}

/** Classify the block of 256 code points holding `cp`; returns the class of `cp`. */
function fillBlock(cp: number): number {
  const base = cp & ~0xff;
  for (let k = 0; k < 256; k++) {
    const markish = MARK_RUN_CP.test(String.fromCodePoint(base + k)) && (base + k < 0xd800 || base + k > 0xdfff);
    CLASSES[base + k] = classify(base + k) | (markish ? MARKISH : 0) | (scanStable(base + k) ? SCAN_STABLE : 0);
  }
  return CLASSES[cp]! & 15;
}
fillBlock(0);

/** True for the code points SCAN_STABLE names. */
function scanStable(cp: number): boolean {
  if (cp < 0x80) return true;
  if (
    (cp >= 0x3001 && cp <= 0x3011) ||
    (cp >= 0x3041 && cp <= 0x3096) ||
    (cp >= 0x30a1 && cp <= 0x30fa) ||
    cp === 0x30fc ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xac00 && cp <= 0xd7a3)
  )
    return true;
  const block = cp <= 0xbf || (cp >= 0x2000 && cp <= 0x206f) || (cp >= 0x3000 && cp <= 0x303f);
  if (!(block || (cp >= 0xff00 && cp <= 0xffef)) || cp === 0x2019 || classify(cp) !== SEP) return false;
  const folded = String.fromCodePoint(cp).normalize('NFKC').toLowerCase();
  for (const ch of folded) {
    const c = ch.codePointAt(0)!;
    if (c === 0x27 || c === 0x2019 || classify(c) !== SEP) return false;
  }
  return true;
}

/**
 * True when `text[from .. to)` scanned as it is (A–Z lowercased) gives the terms of its fold: every code unit is
 * SCAN_STABLE (so no surrogates). One table read per code unit.
 */
export function scansAsFolded(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (CLASSES[c] === 0) fillBlock(c);
    if ((CLASSES[c]! & SCAN_STABLE) === 0) return false;
  }
  return true;
}

/** Class of code point `cp`. */
export function classOf(cp: number): number {
  const c = CLASSES[cp]!;
  return c !== 0 ? c & 15 : fillBlock(cp);
}

/**
 * True when `s` holds a run of more than MAX_MARK_RUN code points that MARK_RUN counts: one table read per code
 * unit from U+0300 on (no mark lies below), instead of a Unicode regular expression over the whole text.
 */
export function hasLongMarkRun(s: string): boolean {
  const n = s.length;
  let run = 0;
  for (let i = 0; i < n; i++) {
    let cp = s.charCodeAt(i);
    if (cp < 0x300) {
      run = 0;
      continue;
    }
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = ((cp - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
      }
    }
    if (CLASSES[cp] === 0) fillBlock(cp);
    if ((CLASSES[cp]! & MARKISH) === 0) run = 0;
    else if (++run > MAX_MARK_RUN) return true;
  }
  return false;
}

/** Class of the code point at `i` of `text` (a high surrogate followed by a low one within `to` is one code point). */
export function classAt(text: string, i: number, to: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff || i + 1 >= to) return classOf(c);
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff ? classOf(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000) : SEP;
}
