/**
 * The index's terms in lexicographic order (docs/DESIGN.md, "The search index"): a sorted array of term ids (from the
 * `TermTable` of src/search/terms.ts) that serves prefix ranges and typo neighbourhoods, and the edit-distance test
 * both the index and the first call's ranking (src/search/cold.ts) use.
 */

/** Most terms added since the last sort of the dictionary, searched by a scan meanwhile (see `TermDictionary`). */
const RECENT_MAX = 1024;

/**
 * The terms of an index in lexicographic (UTF-16) order, for prefix ranges and typo neighbourhoods: a sorted array
 * of term ids, plus the ids added since it was last sorted (`recent`, at most RECENT_MAX before they are merged in,
 * so a sync that brings a few new terms does not sort the whole vocabulary, and a reader scans at most RECENT_MAX).
 * Terms whose last posting went away stay until the next merge, and readers skip them (`isLive`).
 */
export class TermDictionary {
  sorted = new Int32Array(0);
  recent: number[] = [];

  constructor(
    private readonly termOf: (id: number) => string,
    private readonly isLive: (id: number) => boolean,
  ) {}

  add(id: number): void {
    this.recent.push(id);
  }

  /**
   * Merge `recent` into `sorted` once it holds more than RECENT_MAX ids (or always, with `force`), dropping dead
   * terms and telling `dropped` about each.
   */
  settle(dropped: (id: number) => void, force = false): void {
    if (!force && this.recent.length <= RECENT_MAX) return;
    const termOf = this.termOf;
    const fresh: number[] = [];
    for (const id of this.recent) {
      if (this.isLive(id)) fresh.push(id);
      else dropped(id);
    }
    const keys = fresh.map(termOf);
    const order = fresh.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    const merged = new Int32Array(this.sorted.length + fresh.length);
    let n = 0;
    let j = 0;
    for (let i = 0; i < this.sorted.length; i++) {
      const id = this.sorted[i]!;
      if (!this.isLive(id)) {
        dropped(id);
        continue;
      }
      const t = termOf(id);
      while (j < order.length && keys[order[j]!]! < t) merged[n++] = fresh[order[j++]!]!;
      merged[n++] = id;
    }
    while (j < order.length) merged[n++] = fresh[order[j++]!]!;
    this.sorted = merged.slice(0, n);
    this.recent = [];
  }

  /** Index in `sorted` of the first term ≥ `key`. */
  private lowerBound(key: string): number {
    const { sorted, termOf } = this;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (termOf(sorted[mid]!) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Live terms that start with `prefix` and are longer, in lexicographic order. They are one run of `sorted`, found
   * by two binary searches; cost log n + the run's length (no string work per term), plus a scan of `recent`.
   */
  extending(prefix: string): number[] {
    const { sorted, termOf, isLive } = this;
    let lo = this.lowerBound(prefix);
    if (lo < sorted.length && termOf(sorted[lo]!).length === prefix.length && termOf(sorted[lo]!) === prefix) lo++;
    // First index past the run: terms starting with `prefix` are contiguous, so `startsWith` is monotone on it.
    let hi = sorted.length;
    let from = lo;
    while (from < hi) {
      const mid = (from + hi) >>> 1;
      if (termOf(sorted[mid]!).startsWith(prefix)) from = mid + 1;
      else hi = mid;
    }
    const out: number[] = [];
    for (let i = lo; i < hi; i++) {
      const id = sorted[i]!;
      if (isLive(id)) out.push(id);
    }
    const recent = this.recent.filter((id) => {
      const t = termOf(id);
      return t.length > prefix.length && t.startsWith(prefix) && isLive(id);
    });
    return recent.length === 0 ? out : mergeByTerm(out, recent, termOf);
  }

  /**
   * Live terms at edit distance exactly 1 from `term` (one insertion, deletion or substitution of a UTF-16 code
   * unit), in lexicographic order. Each candidate is looked up by its spelling (`find`): deletions directly; for
   * substitutions and insertions at position i, the code units that follow term[0 .. i) in the sorted terms are
   * stepped through by binary search, one step per distinct unit. Cost: O(Σ_i distinct units after term[0 .. i) ×
   * log n), bounded by the view's alphabet, plus a scan of `recent`.
   */
  oneEditFrom(term: string, find: (t: string) => number): number[] {
    const { sorted, termOf, isLive } = this;
    const found = new Set<number>();
    const take = (t: string): void => {
      const id = find(t);
      if (id >= 0 && isLive(id)) found.add(id);
    };
    const L = term.length;
    for (let i = 0; i <= L; i++) {
      const head = term.slice(0, i);
      if (i < L) take(head + term.slice(i + 1));
      let at = this.lowerBound(head);
      while (at < sorted.length) {
        const t = termOf(sorted[at]!);
        if (!t.startsWith(head)) break;
        if (t.length === i) {
          at++;
          continue;
        }
        const c = t.charCodeAt(i);
        const unit = String.fromCharCode(c);
        if (i < L && c !== term.charCodeAt(i)) take(head + unit + term.slice(i + 1));
        take(head + unit + term.slice(i));
        if (c === 0xffff) break;
        at = this.lowerBound(head + String.fromCharCode(c + 1));
      }
    }
    for (const id of this.recent) if (isLive(id) && oneEditApart(termOf(id), term)) found.add(id);
    found.delete(find(term));
    return [...found].sort((a, b) => {
      const x = termOf(a);
      const y = termOf(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }

  /** Every id the dictionary holds (sorted and recent), for renumbering. */
  remap(map: Int32Array): void {
    const kept: number[] = [];
    for (const id of this.sorted) if (map[id]! >= 0) kept.push(map[id]!);
    this.sorted = Int32Array.from(kept);
    this.recent = this.recent.filter((id) => map[id]! >= 0).map((id) => map[id]!);
  }
}

/** Merge two id lists each in lexicographic order of their terms. */
function mergeByTerm(a: number[], b: number[], termOf: (id: number) => string): number[] {
  b.sort((x, y) => (termOf(x) < termOf(y) ? -1 : termOf(x) > termOf(y) ? 1 : 0));
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(termOf(a[i]!) <= termOf(b[j]!) ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/**
 * True when `a` and `b` are at Levenshtein distance exactly 1 in UTF-16 code units (one insertion, deletion or
 * substitution).
 */
export function oneEditApart(a: string, b: string): boolean {
  const la = a.length;
  const lb = b.length;
  if (la === lb) {
    let diff = 0;
    for (let i = 0; i < la; i++) if (a.charCodeAt(i) !== b.charCodeAt(i) && ++diff > 1) return false;
    return diff === 1;
  }
  if (la - lb !== 1 && lb - la !== 1) return false;
  const [long, short] = la > lb ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && long.charCodeAt(i) === short.charCodeAt(i)) i++;
  // Everything after the one extra unit of `long` must match the rest of `short`.
  for (let j = i; j < short.length; j++) if (long.charCodeAt(j + 1) !== short.charCodeAt(j)) return false;
  return true;
}
