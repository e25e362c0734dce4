/**
 * Matching for the policy's pattern dialect (the why is in src/policy/glob.ts "How matching works"): a segment's
 * fixed-width pieces compiled by picomatch (or, for literals, by a folded key and a regex built directly), `*`
 * placed greedily leftmost between pieces, the trie all alternatives of a list share, and the run of an id's
 * segments through it as an NFA (`reach`, `step`, `endsAfter`) that `PatternSet` answers every predicate with.
 */
import picomatch from 'picomatch/posix.js';
import { Invalid, PICOMATCH_OPTIONS, type Tok, tokenGlob } from './glob-syntax.js';

/** A run of fixed-width tokens (each matches exactly one code point): `width` code points, `re` anchored. */
interface Piece {
  width: number;
  re: RegExp | null;
  /**
   * A piece of literal code points only (then `re` is null): its text and `asciiKeyOfLiteral` of it, which decides
   * ASCII names without a regex; the regex (`literalRegex`) is built the first time a non-ASCII name is tried.
   */
  literal?: { text: string; key: string | null; re?: RegExp };
}

/** One non-`**` segment: pieces separated by `*`. With no `*` there is exactly one piece for the whole name. */
export interface SegmentMatcher {
  pieces: Piece[];
  /**
   * For a segment of literal code points only (no `*`, `?` or class): the key an ASCII name must have to match it
   * (`asciiKeyOfLiteral`), or null when no ASCII name can match it. Undefined for every other segment.
   */
  asciiKey?: string | null;
}

/**
 * A node of the segment trie that holds every alternative of a list: "the segments on the path from the root are
 * matched". Alternatives sharing leading segments share nodes, so a long list costs per id segment roughly the
 * number of distinct next segments, not the number of alternatives.
 */
export interface TrieNode {
  /** Ordinary segments leaving this node, keyed by the segment's glob text. */
  readonly edges: Map<string, Edge>;
  /** The node after a `**` segment leaving this node, if any. */
  globstar: TrieNode | null;
  /** Entered through `**`: may consume any further segment and stay here. */
  readonly loop: boolean;
  /** Some alternative ends here. */
  terminal: boolean;
  /** Built on first use by `edgesFor` (nodes with many edges; the trie is immutable once compiled). */
  lookup?: EdgeLookup;
}

/** A trie node with no edges; `loop` for the node a `**` segment leads to. */
export function newNode(loop: boolean): TrieNode {
  return { edges: new Map(), globstar: null, loop, terminal: false };
}

/** Characters a regular expression reads as syntax (ECMAScript SyntaxCharacter, and `/`). */
const REGEX_SYNTAX = /[\^$\\.*+?()[\]{}|/]/gu;

/**
 * The regex picomatch emits for a piece of literal code points only, built directly: `^(?:…)$` with flags `iu`
 * and every syntax character escaped, which is the form picomatch gives such a piece (its escapes of `.` and the
 * ESCAPE_FOR_PICOMATCH characters are the same literal). Only non-ASCII names need it (`pieceAt`), so it is built
 * on first use: a brace-expanded list is mostly literal pieces, and a list of 8 patterns with 64 alternatives
 * each took about 50 ms to compile through picomatch's parser (about 30 µs a piece).
 */
function literalRegex(text: string): RegExp {
  return new RegExp(`^(?:${text.replace(REGEX_SYNTAX, '\\$&')})$`, PICOMATCH_OPTIONS.flags);
}

/** The text of a run of literal tokens, or null when one is not a literal. */
function literalText(toks: readonly Tok[]): string | null {
  let text = '';
  for (const t of toks) {
    if (t.t !== 'lit') return null;
    text += t.c;
  }
  return text;
}

function compilePiece(toks: readonly Tok[], cache: Map<string, RegExp>): Piece {
  if (toks.length === 0) return { width: 0, re: null };
  const text = literalText(toks);
  if (text !== null) return { width: toks.length, re: null, literal: { text, key: asciiKeyOfLiteral(text) } };
  const glob = toks.map(tokenGlob).join('');
  let re = cache.get(glob);
  if (re === undefined) {
    try {
      re = picomatch.makeRe(glob, PICOMATCH_OPTIONS);
    } catch {
      throw new Invalid('compile_failed');
    }
    cache.set(glob, re);
  }
  return { width: toks.length, re };
}

/**
 * The matcher of one non-`**` segment: its runs of fixed-width tokens between `*`s, each compiled once per list
 * (`cache`, by its picomatch glob). @throws Invalid('compile_failed') when picomatch cannot compile a piece
 */
export function compileSegment(seg: readonly Tok[], cache: Map<string, RegExp>): SegmentMatcher {
  const pieces: Piece[] = [];
  let run: Tok[] = [];
  for (const t of seg) {
    if (t.t === 'star') {
      pieces.push(compilePiece(run, cache));
      run = [];
    } else {
      run.push(t);
    }
  }
  pieces.push(compilePiece(run, cache));
  const only = pieces.length === 1 ? pieces[0]!.literal : undefined;
  return only === undefined ? { pieces } : { pieces, asciiKey: only.key };
}

/**
 * Under the regex flags `iu` (Unicode simple case folding) an ASCII character matches exactly the ASCII characters
 * equal to it ignoring ASCII case, and of the other code points only U+017F (long s, folds to `s`) and U+212A
 * (Kelvin sign, folds to `k`) match any ASCII character (tests/policy/glob.test.ts checks both over every code
 * point of the running Node). So a literal segment matches an ASCII name exactly when the name, lowercased, equals
 * this key: the literal lowercased with ſ read as `s` and K as `k`; a literal with any other non-ASCII character
 * matches no ASCII name (null).
 */
export function asciiKeyOfLiteral(literal: string): string | null {
  let key = '';
  for (const c of literal) {
    const u = c.codePointAt(0)!;
    if (u < 0x80) key += c.toLowerCase();
    else if (u === 0x17f) key += 's';
    else if (u === 0x212a) key += 'k';
    else return null;
  }
  return key;
}

/** True when every UTF-16 unit of `text` is ASCII. */
function isAsciiText(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** Edges of a node with many literal segments, found by key for an ASCII name (see `edgesFor`). */
interface EdgeLookup {
  /** Literal edges an ASCII name can match, by `asciiKey`. */
  byKey: Map<string, Edge[]>;
  /** Edges that are not literal: asked of every name. */
  others: Edge[];
}

type Edge = { seg: SegmentMatcher; to: TrieNode };

/** Nodes with more edges than this get an `EdgeLookup` (a few edges are quicker to try one by one). */
const LOOKUP_MIN_EDGES = 8;

/**
 * The edges of `node` that may match the segment `name`: all of them, except that for an ASCII name at a node with
 * many edges, a literal edge is only tried when its `asciiKey` equals the name lowercased (the others cannot match
 * it; see `asciiKeyOfLiteral`). A list of 8 patterns with 64 brace alternatives each puts 512 literal edges on one
 * node: without the lookup every directory of a tree tries all 512 regexes.
 */
function edgesFor(node: TrieNode, name: Name): Iterable<Edge> {
  if (node.edges.size <= LOOKUP_MIN_EDGES || !name.ascii) return node.edges.values();
  let lookup = node.lookup;
  if (lookup === undefined) {
    lookup = { byKey: new Map(), others: [] };
    for (const edge of node.edges.values()) {
      const key = edge.seg.asciiKey;
      if (key === undefined) lookup.others.push(edge);
      else if (key !== null) {
        const list = lookup.byKey.get(key);
        if (list === undefined) lookup.byKey.set(key, [edge]);
        else list.push(edge);
      }
    }
    node.lookup = lookup;
  }
  const keyed = lookup.byKey.get(name.text.toLowerCase());
  return keyed === undefined ? lookup.others : [...keyed, ...lookup.others];
}

/** UTF-16 offsets of the code-point boundaries of `name` (length = code points + 1). */
function codePointOffsets(name: string): number[] {
  const offs = [0];
  for (let i = 0; i < name.length; i++) {
    const u = name.charCodeAt(i);
    if (u >= 0xd800 && u <= 0xdbff && i + 1 < name.length) {
      const v = name.charCodeAt(i + 1);
      if (v >= 0xdc00 && v <= 0xdfff) i++;
    }
    offs.push(i + 1);
  }
  return offs;
}

/** An id segment prepared once per call: the text and its code-point boundaries. */
interface Name {
  text: string;
  offs: number[];
  /** Every UTF-16 unit of `text` is ASCII. */
  ascii: boolean;
}

function pieceAt(piece: Piece, name: Name, at: number): boolean {
  const literal = piece.literal;
  if (literal !== undefined) {
    const text = name.text.slice(name.offs[at], name.offs[at + piece.width]);
    // An ASCII name is decided by its key (asciiKeyOfLiteral: the same answer the regex gives).
    if (name.ascii) return literal.key !== null && text.toLowerCase() === literal.key;
    literal.re ??= literalRegex(literal.text);
    return literal.re.test(text);
  }
  if (piece.re === null) return true;
  return piece.re.test(name.text.slice(name.offs[at], name.offs[at + piece.width]));
}

/**
 * Match one segment. Without `*`: the single piece must cover the name. With `*`: the first piece is anchored at
 * the start, the last at the end, and each middle piece takes its leftmost place after the previous one — exact
 * for stars, because pieces have fixed width and a star accepts any run.
 */
function segmentMatches(seg: SegmentMatcher, name: Name): boolean {
  const n = name.offs.length - 1;
  const pieces = seg.pieces;
  const first = pieces[0]!;
  if (pieces.length === 1) return n === first.width && pieceAt(first, name, 0);
  const last = pieces[pieces.length - 1]!;
  let pos = first.width;
  const end = n - last.width;
  if (end < pos || !pieceAt(first, name, 0) || !pieceAt(last, name, end)) return false;
  for (let k = 1; k < pieces.length - 1; k++) {
    const piece = pieces[k]!;
    let found = -1;
    for (let at = pos; at + piece.width <= end; at++) {
      if (pieceAt(piece, name, at)) {
        found = at;
        break;
      }
    }
    if (found < 0) return false;
    pos = found + piece.width;
  }
  return true;
}

/** Add `node` and what it reaches without consuming a segment (through `**`, which may match zero segments). */
export function addWithClosure(states: Set<TrieNode>, node: TrieNode): void {
  let cur: TrieNode | null = node;
  while (cur !== null && !states.has(cur)) {
    states.add(cur);
    cur = cur.globstar;
  }
}

/**
 * The trie nodes reachable from `root` after consuming `names`, one segment at a time (an NFA simulation:
 * O(segments × reachable edges)). Empty when no alternative can get that far.
 */
export function reach(root: TrieNode, names: readonly Name[] | null): Set<TrieNode> {
  let cur = new Set<TrieNode>();
  if (names === null) return cur;
  addWithClosure(cur, root);
  for (const name of names) {
    if (cur.size === 0) return cur;
    cur = step(cur, name);
  }
  return cur;
}

/** The states after consuming one segment `name` from the states `cur` (one step of `reach`). */
export function step(cur: ReadonlySet<TrieNode>, name: Name): Set<TrieNode> {
  const next = new Set<TrieNode>();
  for (const state of cur) {
    if (state.loop) addWithClosure(next, state);
    for (const edge of edgesFor(state, name)) {
      if (segmentMatches(edge.seg, name)) addWithClosure(next, edge.to);
    }
  }
  return next;
}

/**
 * True when consuming the last segment `name` from the states `cur` reaches a terminal node: `step` followed by a
 * test for a terminal state, without building the next state set.
 */
export function endsAfter(cur: ReadonlySet<TrieNode>, name: Name): boolean {
  for (const state of cur) {
    if (state.loop && closureEnds(state)) return true;
    for (const edge of edgesFor(state, name)) if (segmentMatches(edge.seg, name) && closureEnds(edge.to)) return true;
  }
  return false;
}

/** True when `node` or a node after it through `**` alone is terminal (what `addWithClosure` would add). */
function closureEnds(node: TrieNode): boolean {
  for (let at: TrieNode | null = node; at !== null; at = at.globstar) if (at.terminal) return true;
  return false;
}

/** A name of one segment (no `/`) in its NFC form, or null for an empty, `.` or `..` segment (see `namesOf`). */
export function nameOf(raw: string): Name | null {
  if (raw === '' || raw === '.' || raw === '..') return null;
  const text = composed(raw);
  return { text, offs: codePointOffsets(text), ascii: isAsciiText(text) };
}

/**
 * The segments of a root-relative id, or null when the id is malformed (an empty, `.` or `..` segment, which also
 * covers a leading or trailing `/`). The trust layer never produces such ids; refusing them here keeps every
 * predicate false for them (nothing allowed, nothing entered) rather than letting `*` match an empty segment.
 */
export function namesOf(id: string): Name[] | null {
  if (id === '') return [];
  const names: Name[] = [];
  for (const raw of id.split('/')) {
    if (raw === '' || raw === '.' || raw === '..') return null;
    const text = composed(raw);
    names.push({ text, offs: codePointOffsets(text), ascii: isAsciiText(text) });
  }
  return names;
}

/**
 * The NFC form of an id segment: patterns are NFC (`rawChecks`), and a name may be stored decomposed (macOS and sync
 * tools write NFD; the unicode name rule accepts it), so every predicate compares the pattern with the composed name
 * and a note is allowed or denied the same in either form. Text with no code unit from U+0300 up is its own NFC
 * form (no composition, singleton or reordering starts below U+0300), so ASCII names skip the ICU call.
 */
function composed(text: string): string {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x300) return text.normalize('NFC');
  return text;
}

/** True when `namesOf(id)` is not null (no empty, `.` or `..` segment; '' is the root), without splitting `id`. */
export function wellFormedId(id: string): boolean {
  let start = 0;
  for (let i = 0; i <= id.length; i++) {
    if (i < id.length && id.charCodeAt(i) !== 0x2f) continue;
    const len = i - start;
    if (id.length > 0) {
      if (len === 0) return false;
      if (id.charCodeAt(start) === 0x2e && (len === 1 || (len === 2 && id.charCodeAt(start + 1) === 0x2e)))
        return false;
    }
    start = i + 1;
  }
  return true;
}
