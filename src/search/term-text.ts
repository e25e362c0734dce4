/**
 * A term's code units where they lie (src/search/terms.ts reads terms in place, building a string only for a new
 * one): the ASCII word-character table of `tokenize`'s rules, the running hash and its final mix (the same value
 * for a span scanned in place and for the whole term string), the comparison of a span with a stored term, and the
 * fresh string of a new term.
 */

/**
 * For a byte: its lowercase form when it is a word character of `tokenize`'s ASCII rules (0–9, A–Z,
 * a–z), else 0 (256 entries, so any byte indexes it).
 */
export const WORD_LOWER = new Uint8Array(256);
for (let c = 0x30; c <= 0x39; c++) WORD_LOWER[c] = c;
for (let c = 0x61; c <= 0x7a; c++) WORD_LOWER[c] = c;
for (let c = 0x41; c <= 0x5a; c++) WORD_LOWER[c] = c + 0x20;

/** ASCII whitespace (tab, line feed, vertical tab, form feed, carriage return, space). */
export function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/**
 * Running hash of a term: h = h × 31 + code unit (mod 2^32) from this seed. Only a multiply-add, because the
 * ASCII scan runs it for every byte, also before V8 has optimized the scan, and there a `Math.imul` call costs
 * several times more than arithmetic; `finish` then mixes the bits.
 */
export const HASH_SEED = 0x2f9be6cc;

/**
 * Final mixing of a running hash (the first half of murmur3's fmix32), so that the low bits, which pick the slot,
 * depend on every code unit. `TermTable.idsOfBytes` (src/search/terms.ts) repeats these three steps inline.
 */
export function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

/** Hash of a whole term string (the same value the ASCII scan computes for the same code units). */
export function hashOf(term: string): number {
  let h = HASH_SEED;
  for (let k = 0; k < term.length; k++) h = (h * 31 + term.charCodeAt(k)) | 0;
  return finish(h);
}

/**
 * True when the stored ASCII term at `pool[at ..]` (its length already known equal) is the code units of
 * `text[start .. stop)`, apostrophes skipped when `joined`, A–Z lowercased.
 */
export function samePool(
  pool: Uint8Array,
  at: number,
  text: string,
  start: number,
  stop: number,
  joined: boolean,
): boolean {
  let k = at;
  for (let i = start; i < stop; i++) {
    let c = text.charCodeAt(i);
    if (joined && (c === 0x27 || c === 0x2019)) continue;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (pool[k++] !== c) return false;
  }
  return true;
}

/** `samePool` for a term with a non-ASCII code unit, stored at `wide[at ..]`. */
export function sameWide(
  wide: Uint16Array,
  at: number,
  text: string,
  start: number,
  stop: number,
  joined: boolean,
): boolean {
  let k = at;
  for (let i = start; i < stop; i++) {
    let c = text.charCodeAt(i);
    if (joined && (c === 0x27 || c === 0x2019)) continue;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (wide[k++] !== c) return false;
  }
  return true;
}

/**
 * The term of `text[start .. stop)`: apostrophes dropped when `joined`, A–Z lowercased, as a fresh string (never
 * a slice, which would keep the note text alive).
 */
export function termString(text: string, start: number, stop: number, joined: boolean): string {
  const codes: number[] = [];
  for (let i = start; i < stop; i++) {
    const c = text.charCodeAt(i);
    if (joined && (c === 0x27 || c === 0x2019)) continue;
    codes.push(c >= 0x41 && c <= 0x5a ? c + 0x20 : c);
  }
  return String.fromCharCode(...codes);
}
