/**
 * The policy's pattern dialect (docs/POLICY.md): validation, brace expansion with a hard cap, matching of whole
 * root-relative ids, and the two directory predicates behind `mayEnter`.
 *
 * Dialect
 * - `*`  any run of characters (possibly empty) inside one segment; never crosses `/`.
 * - `?`  exactly one character (one Unicode code point) inside a segment.
 * - `**` only as a whole segment: zero or more whole segments. So `**\/x.md` matches `x.md`, `a/**\/b` matches
 *        `a/b`, and `a/**` matches every id below `a` (and the id `a` itself, which is never a note: notes end in
 *        `.md`). `**` inside a segment (`a**b`, `***`) is invalid rather than silently meaning `*`.
 * - `[abc]`, `[a-z]`, `[!abc]`  one character in / not in the class. A class is never empty, never contains `/`
 *        or `[`, and a range runs upwards. `^` inside a class is an ordinary member.
 * - `{a,b}`  alternatives, nestable, each group with at least one comma; at most 64 alternatives after expansion.
 * - Every other character is literal: `(`, `)`, `|`, `+`, `@`, `!`, `$`, `^`, `,`, `"`, `'`, spaces, letters.
 * - Matching is case-insensitive (Unicode simple case folding) over the NFC form of the whole id (a name stored
 *   decomposed matches as its composed spelling); dot-names match like any name.
 * - A pattern without wildcards matches exactly one id.
 * Invalid: empty, over 256 characters, a backslash, a control character, a leading `/` or `!`, extglob openers
 * (`@(`, `!(`, `+(`, `*(`, `?(`), a `.` or `..` segment, an empty segment, malformed classes or braces, text not
 * in Unicode NFC form (ids are compared in NFC, so a decomposed pattern could never match what it names).
 *
 * How matching works, and why
 * picomatch compiles the character-level pieces of each segment (`?`, classes, and literals beside them) with the
 * one frozen option set `PICOMATCH_OPTIONS` (a piece of literals only decides ASCII names by a folded key and gets
 * the same regex built directly for the others, `pieceAt`); the structure around them — `*` inside a segment and
 * `**` across segments — is composed here. A regex with several `*` per segment backtracks polynomially
 * (measured: four stars against a 255-character name take seconds in V8), so stars are matched by the greedy leftmost placement of fixed-width
 * pieces (exact for glob stars, O(name length × pattern width)). All alternatives of a list share one trie of
 * segments, and an id is run through it as an NFA, one segment at a time; the same run answers `matches`,
 * `mayContainBelow` and `coversAllBelow`, so the three agree by construction. `picomatchGlobs` gives the
 * equivalent whole-id picomatch globs; the tests check that picomatch itself agrees with this matcher.
 */
import picomatch from 'picomatch/posix.js';

/** Longest pattern, in Unicode code points (docs/POLICY.md). */
export const MAX_PATTERN_CHARS = 256;
/** Most patterns in one list (`allow` or `deny`) (docs/POLICY.md). */
export const MAX_PATTERNS = 256;
/** Most alternatives one pattern may expand to through `{…}` (docs/POLICY.md). */
export const MAX_BRACE_EXPANSION = 64;

/**
 * The one picomatch option set used to compile every piece. Pieces never contain `*`, `{`, `(` or `|` (they are
 * escaped or handled here), so most options only pin picomatch down against surprises:
 * - `flags: 'iu'` case-insensitive and code-point based (`?` is one code point); overrides `nocase`.
 * - `dot`, `nonegate`, `noextglob`, `nobrace`, `noglobstar`: no picomatch-level meaning for `.`, `!`, `@(`, `{`, `**`.
 * - `posix: false` so `[:` is not a POSIX class; `literalBrackets: false` so `[ab]` is only a class (by default
 *   picomatch also accepts the literal text "[ab]").
 * - `fastpaths: false` one parse path; `debug: true` so a regex that fails to compile throws instead of
 *   silently becoming a never-matching regex.
 */
export const PICOMATCH_OPTIONS = Object.freeze({
  flags: 'iu',
  nocase: true,
  dot: true,
  nonegate: true,
  noextglob: true,
  nobrace: true,
  noglobstar: true,
  posix: false,
  literalBrackets: false,
  strictBrackets: true,
  strictSlashes: true,
  keepQuotes: false,
  unescape: false,
  regex: false,
  bash: false,
  basename: false,
  contains: false,
  windows: false,
  fastpaths: false,
  debug: true,
  maxLength: 4096,
} satisfies picomatch.PicomatchOptions);

/** Why a pattern or a pattern list is invalid. Short and stable; never contains the pattern. */
export type PatternReason =
  | 'not_string'
  | 'empty'
  | 'too_long'
  | 'backslash'
  | 'control_char'
  | 'lone_surrogate'
  | 'not_nfc'
  | 'absolute'
  | 'leading_bang'
  | 'extglob'
  | 'dot_segment'
  | 'empty_segment'
  | 'globstar_in_segment'
  | 'unclosed_class'
  | 'empty_class'
  | 'bad_class_char'
  | 'bad_range'
  | 'unbalanced_brace'
  | 'brace_without_alternatives'
  | 'too_many_expansions'
  | 'too_many_patterns'
  | 'compile_failed';

/** Operator-facing wording of each reason (doctor, schema messages); never shown to the model. */
export const PATTERN_REASON_TEXT: Readonly<Record<PatternReason, string>> = Object.freeze({
  not_string: 'a pattern must be a string',
  empty: 'a pattern (or one of its brace alternatives) is empty',
  too_long: `a pattern is longer than ${MAX_PATTERN_CHARS} characters`,
  backslash: 'a pattern contains a backslash',
  control_char: 'a pattern contains a control character',
  lone_surrogate: 'a pattern contains an unpaired surrogate',
  not_nfc:
    'a pattern is not in Unicode NFC form (names are matched as NFC; retype it, e.g. from a decomposed macOS name)',
  absolute: 'a pattern starts with "/" (patterns are relative to the root)',
  leading_bang: 'a pattern starts with "!" (use deny for exclusions)',
  extglob: 'a pattern contains an extglob opener such as "@(", "!(", "+(", "*(" or "?("',
  dot_segment: 'a pattern contains a "." or ".." segment',
  empty_segment: 'a pattern contains an empty segment ("//" or a trailing "/")',
  globstar_in_segment: '"**" must be a whole segment ("a/**/b", not "a**b")',
  unclosed_class: 'a "[" class is not closed',
  empty_class: 'a "[…]" class is empty',
  bad_class_char: 'a "[…]" class contains "/" or "["',
  bad_range: 'a "[x-y]" range runs downwards',
  unbalanced_brace: 'braces "{…}" are not balanced',
  brace_without_alternatives: 'a "{…}" group has no comma',
  too_many_expansions: `braces expand to more than ${MAX_BRACE_EXPANSION} alternatives`,
  too_many_patterns: `more than ${MAX_PATTERNS} patterns in one list`,
  compile_failed: 'a pattern could not be compiled',
});

/** A refusal from `PatternSet.compile`: `index` is the offending pattern's position in the list (-1: the list). */
export class PatternError extends Error {
  override readonly name = 'PatternError';
  constructor(
    readonly reason: PatternReason,
    readonly index: number,
  ) {
    super(`pattern ${index}: ${reason}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing: pattern text → token tree (braces as groups) → expanded alternatives → segments.

interface ClassRange {
  lo: string;
  hi: string;
}
type Tok =
  | { t: 'lit'; c: string }
  | { t: 'star' }
  | { t: 'qmark' }
  | { t: 'slash' }
  | { t: 'class'; negated: boolean; ranges: ClassRange[] };
type Node = Tok | { t: 'group'; branches: Node[][] };

class Invalid extends Error {
  constructor(readonly reason: PatternReason) {
    super(reason);
  }
}

function isControl(u: number): boolean {
  return u < 0x20 || (u >= 0x7f && u <= 0x9f);
}

/** Checks on the raw text that need no parse. Returns the code points. */
function rawChecks(p: unknown): string[] {
  if (typeof p !== 'string') throw new Invalid('not_string');
  if (p.length === 0) throw new Invalid('empty');
  // Code units bound code points from above by 2×; reject huge inputs before splitting them.
  if (p.length > 2 * MAX_PATTERN_CHARS) throw new Invalid('too_long');
  for (let i = 0; i < p.length; i++) {
    const u = p.charCodeAt(i);
    if (u === 0x5c) throw new Invalid('backslash');
    if (isControl(u)) throw new Invalid('control_char');
    if (u >= 0xd800 && u <= 0xdbff) {
      const v = p.charCodeAt(i + 1);
      if (!(v >= 0xdc00 && v <= 0xdfff)) throw new Invalid('lone_surrogate');
      i++;
    } else if (u >= 0xdc00 && u <= 0xdfff) {
      throw new Invalid('lone_surrogate');
    }
  }
  const cps = Array.from(p);
  if (cps.length > MAX_PATTERN_CHARS) throw new Invalid('too_long');
  // Ids are compared in their NFC form (`composed`), so a decomposed pattern could never match the name it was
  // written for: a deny typed in NFD would silently deny nothing. Refuse it rather than guess.
  if (p.normalize('NFC') !== p) throw new Invalid('not_nfc');
  if (p.startsWith('/')) throw new Invalid('absolute');
  if (p.startsWith('!')) throw new Invalid('leading_bang');
  if (/[@!+*?]\(/.test(p)) throw new Invalid('extglob');
  return cps;
}

class TreeParser {
  private i = 0;
  constructor(private readonly cps: readonly string[]) {}

  parse(): Node[] {
    const seq = this.seq(false);
    // seq(false) only returns at the end of input; a stray '}' or ',' is handled inside.
    return seq;
  }

  private seq(inGroup: boolean): Node[] {
    const out: Node[] = [];
    const cps = this.cps;
    while (this.i < cps.length) {
      const c = cps[this.i]!;
      if (c === '{') {
        out.push(this.group());
      } else if (c === '}') {
        if (!inGroup) throw new Invalid('unbalanced_brace');
        return out;
      } else if (c === ',' && inGroup) {
        return out;
      } else if (c === '[') {
        out.push(this.cls());
      } else {
        this.i++;
        if (c === '*') out.push({ t: 'star' });
        else if (c === '?') out.push({ t: 'qmark' });
        else if (c === '/') out.push({ t: 'slash' });
        else out.push({ t: 'lit', c });
      }
    }
    if (inGroup) throw new Invalid('unbalanced_brace');
    return out;
  }

  private group(): Node {
    this.i++; // '{'
    const branches: Node[][] = [];
    for (;;) {
      branches.push(this.seq(true));
      const c = this.cps[this.i];
      this.i++;
      if (c === '}') break;
      // seq(true) returns only at ',' or '}' (or throws at the end)
    }
    if (branches.length < 2) throw new Invalid('brace_without_alternatives');
    return { t: 'group', branches };
  }

  private cls(): Tok {
    const cps = this.cps;
    let j = this.i + 1;
    let negated = false;
    if (cps[j] === '!') {
      negated = true;
      j++;
    }
    const ranges: ClassRange[] = [];
    for (;;) {
      const c = cps[j];
      if (c === undefined) throw new Invalid('unclosed_class');
      if (c === ']') break;
      if (c === '/' || c === '[') throw new Invalid('bad_class_char');
      const hi = cps[j + 2];
      if (cps[j + 1] === '-' && hi !== undefined && hi !== ']') {
        if (hi === '/' || hi === '[') throw new Invalid('bad_class_char');
        if (c.codePointAt(0)! > hi.codePointAt(0)!) throw new Invalid('bad_range');
        ranges.push({ lo: c, hi });
        j += 3;
      } else {
        ranges.push({ lo: c, hi: c });
        j++;
      }
    }
    if (ranges.length === 0) throw new Invalid('empty_class');
    this.i = j + 1;
    return { t: 'class', negated, ranges };
  }
}

/** Number of alternatives `seq` expands to, saturating at `MAX_BRACE_EXPANSION + 1`. Linear in the tree size. */
function countSeq(seq: readonly Node[]): number {
  const cap = MAX_BRACE_EXPANSION + 1;
  let n = 1;
  for (const node of seq) {
    if (node.t !== 'group') continue;
    let sum = 0;
    for (const b of node.branches) {
      sum += countSeq(b);
      if (sum >= cap) return cap;
    }
    n *= sum;
    if (n >= cap) return cap;
  }
  return n;
}

/** Expand a tree already counted at ≤ MAX_BRACE_EXPANSION; every intermediate list is no longer than the result. */
function expandSeq(seq: readonly Node[]): Tok[][] {
  let acc: Tok[][] = [[]];
  for (const node of seq) {
    if (node.t !== 'group') {
      for (const a of acc) a.push(node);
      continue;
    }
    const options = node.branches.flatMap((b) => expandSeq(b));
    const next: Tok[][] = [];
    for (const a of acc) for (const o of options) next.push([...a, ...o]);
    acc = next;
  }
  return acc;
}

const GLOBSTAR = 'globstar' as const;
type Segment = Tok[] | typeof GLOBSTAR;

/**
 * Braces can assemble a decomposed sequence the raw-text check could not see (`{e,a}\u0301`): every run of
 * literals inside one expanded segment must be NFC too.
 */
function requireNfcLiterals(seg: readonly Tok[]): void {
  let run = '';
  for (let k = 0; k <= seg.length; k++) {
    const t = seg[k];
    if (t !== undefined && t.t === 'lit') {
      run += t.c;
      continue;
    }
    if (run !== '' && run.normalize('NFC') !== run) throw new Invalid('not_nfc');
    run = '';
  }
}

/** Validate one expanded alternative and cut it into segments (consecutive `**` collapsed into one). */
function segmentsOf(alt: readonly Tok[]): Segment[] {
  if (alt.length === 0) throw new Invalid('empty');
  const first = alt[0]!;
  if (first.t === 'slash') throw new Invalid('absolute');
  if (first.t === 'lit' && first.c === '!') throw new Invalid('leading_bang');
  const out: Segment[] = [];
  let cur: Tok[] = [];
  const close = (): void => {
    if (cur.length === 0) throw new Invalid('empty_segment');
    requireNfcLiterals(cur);
    if (cur.every((t) => t.t === 'lit' && t.c === '.') && cur.length <= 2) throw new Invalid('dot_segment');
    if (cur.length === 2 && cur[0]!.t === 'star' && cur[1]!.t === 'star') {
      if (out[out.length - 1] !== GLOBSTAR) out.push(GLOBSTAR);
    } else {
      for (let k = 0; k < cur.length; k++) {
        const t = cur[k]!;
        const next = cur[k + 1];
        if (t.t === 'star' && next?.t === 'star') throw new Invalid('globstar_in_segment');
        // Braces can assemble an extglob opener that the raw-text check could not see.
        const opener =
          t.t === 'star' || t.t === 'qmark' || (t.t === 'lit' && (t.c === '@' || t.c === '!' || t.c === '+'));
        if (opener && next?.t === 'lit' && next.c === '(') throw new Invalid('extglob');
      }
      out.push(cur);
    }
    cur = [];
  };
  for (const t of alt) {
    if (t.t === 'slash') close();
    else cur.push(t);
  }
  close();
  return out;
}

/** Parse, count and expand one pattern; the returned alternatives are validated segment lists. */
function analyse(p: unknown): Segment[][] {
  const cps = rawChecks(p);
  const tree = new TreeParser(cps).parse();
  if (countSeq(tree) > MAX_BRACE_EXPANSION) throw new Invalid('too_many_expansions');
  return expandSeq(tree).map(segmentsOf);
}

/**
 * Check one pattern against the dialect (docs/POLICY.md §Patterns). Cost: linear in the pattern length plus at
 * most 64 expansions of at most 256 characters each.
 *
 * @returns null when valid, else a short reason code (`PatternReason`); never echoes the pattern
 */
export function validatePattern(p: string): PatternReason | null {
  try {
    analyse(p);
    return null;
  } catch (e) {
    if (e instanceof Invalid) return e.reason;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Compilation: segments → fixed-width pieces compiled by picomatch → matchers.

/** Literals that picomatch (or the regex it emits) would read as syntax; escaped so they stay literal. */
const ESCAPE_FOR_PICOMATCH = new Set(['(', ')', '|', '+', '$', '^', '{', '}', ']', '[', '*', '?']);

function literalGlob(c: string): string {
  // picomatch toggles quoted-literal mode on '"' (and drops it); a one-member class is literal and valid with 'u'.
  if (c === '"') return '["]';
  return ESCAPE_FOR_PICOMATCH.has(c) ? `\\${c}` : c;
}

function classMember(c: string): string {
  return c === '^' || c === '-' || c === ']' || c === '\\' ? `\\${c}` : c;
}

function tokenGlob(t: Tok): string {
  switch (t.t) {
    case 'lit':
      return literalGlob(t.c);
    case 'qmark':
      return '?';
    case 'class': {
      const body = t.ranges.map((r) =>
        r.lo === r.hi ? classMember(r.lo) : `${classMember(r.lo)}-${classMember(r.hi)}`,
      );
      return `[${t.negated ? '^' : ''}${body.join('')}]`;
    }
    default:
      throw new Error('tokenGlob: not a fixed-width token');
  }
}

/**
 * The brace alternatives of a valid pattern as whole-id picomatch globs (literals escaped, `**` kept), for
 * status/doctor output and for tests that compare this module with picomatch's own whole-pattern matcher.
 * @throws PatternError(reason, 0) when the pattern is invalid
 */
export function picomatchGlobs(p: string): string[] {
  let alts: Segment[][];
  try {
    alts = analyse(p);
  } catch (e) {
    if (e instanceof Invalid) throw new PatternError(e.reason, 0);
    throw e;
  }
  return alts.map((segs) =>
    segs.map((s) => (s === GLOBSTAR ? '**' : s.map((t) => (t.t === 'star' ? '*' : tokenGlob(t))).join(''))).join('/'),
  );
}

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
interface SegmentMatcher {
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
interface TrieNode {
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

function newNode(loop: boolean): TrieNode {
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

function compileSegment(seg: readonly Tok[], cache: Map<string, RegExp>): SegmentMatcher {
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
function addWithClosure(states: Set<TrieNode>, node: TrieNode): void {
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
function reach(root: TrieNode, names: readonly Name[] | null): Set<TrieNode> {
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
function step(cur: ReadonlySet<TrieNode>, name: Name): Set<TrieNode> {
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
function endsAfter(cur: ReadonlySet<TrieNode>, name: Name): boolean {
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
function nameOf(raw: string): Name | null {
  if (raw === '' || raw === '.' || raw === '..') return null;
  const text = composed(raw);
  return { text, offs: codePointOffsets(text), ascii: isAsciiText(text) };
}

/**
 * The segments of a root-relative id, or null when the id is malformed (an empty, `.` or `..` segment, which also
 * covers a leading or trailing `/`). The trust layer never produces such ids; refusing them here keeps every
 * predicate false for them (nothing allowed, nothing entered) rather than letting `*` match an empty segment.
 */
function namesOf(id: string): Name[] | null {
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
function wellFormedId(id: string): boolean {
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

/**
 * A compiled, validated pattern list (`allow` or `deny`). Immutable.
 * Ids and directory ids are root-relative POSIX paths without a leading `/`; the root directory itself is ''.
 * A malformed id (empty, `.` or `..` segment) matches nothing and is below nothing.
 */
export class PatternSet {
  /**
   * 'all' when a lone `**` alternative makes every well-formed id match and every directory be covered (the trie's
   * root leads through `**` to a terminal node); 'none' when the list is empty (the root has no way out and is not
   * terminal); else 'some'. The first two answer every predicate without splitting the id, with the same results
   * as the trie run.
   */
  private readonly shape: 'all' | 'none' | 'some';

  private constructor(
    private readonly root: TrieNode,
    /** The patterns as given, for status output. */
    readonly patterns: readonly string[],
  ) {
    if (root.globstar?.terminal === true) this.shape = 'all';
    else if (root.edges.size === 0 && root.globstar === null && !root.terminal) this.shape = 'none';
    else this.shape = 'some';
    Object.freeze(this);
  }

  /**
   * Validate and compile a list.
   * @throws PatternError('too_many_patterns', -1) for more than 256 entries (checked before any pattern is read),
   *         PatternError(reason, index) for the first invalid pattern
   */
  static compile(list: readonly string[]): PatternSet {
    if (list.length > MAX_PATTERNS) throw new PatternError('too_many_patterns', -1);
    const pieces = new Map<string, RegExp>();
    const segments = new Map<string, SegmentMatcher>();
    const root = newNode(false);
    list.forEach((p, index) => {
      try {
        for (const segs of analyse(p)) {
          let node = root;
          for (const seg of segs) {
            if (seg === GLOBSTAR) {
              node.globstar ??= newNode(true);
              node = node.globstar;
              continue;
            }
            const key = seg.map((t) => (t.t === 'star' ? '*' : tokenGlob(t))).join('');
            let edge = node.edges.get(key);
            if (edge === undefined) {
              let matcher = segments.get(key);
              if (matcher === undefined) {
                matcher = compileSegment(seg, pieces);
                segments.set(key, matcher);
              }
              edge = { seg: matcher, to: newNode(false) };
              node.edges.set(key, edge);
            }
            node = edge.to;
          }
          node.terminal = true;
        }
      } catch (e) {
        if (e instanceof Invalid) throw new PatternError(e.reason, index);
        throw e;
      }
    });
    return new PatternSet(root, Object.freeze([...list]));
  }

  /** True when some pattern matches the whole id `id` (case-insensitively). */
  matches(id: string): boolean {
    if (this.shape !== 'some') return this.shape === 'all' && wellFormedId(id);
    for (const state of reach(this.root, namesOf(id))) if (state.terminal) return true;
    return false;
  }

  /**
   * A predicate equal to `matches`, for many ids of one tree in one pass: the states the trie reaches after each
   * directory are kept (by directory id, computed from the parent directory's states and one more segment), so each
   * distinct directory is matched once, not once per id below it, and an id costs one step for its last segment.
   * `reach` is a left fold over the segments, so the answer is exactly the one `matches` gives. Memory: one state
   * set per distinct directory asked, for as long as the predicate is held.
   */
  idMatcher(): (id: string) => boolean {
    if (this.shape !== 'some') return (id) => this.matches(id);
    const dirs = new Map<string, Set<TrieNode>>();
    const root = new Set<TrieNode>();
    addWithClosure(root, this.root);
    dirs.set('', root);
    const statesOf = (dirId: string): Set<TrieNode> => {
      let states = dirs.get(dirId);
      if (states !== undefined) return states;
      const slash = dirId.lastIndexOf('/');
      const parent = statesOf(slash < 0 ? '' : dirId.slice(0, slash));
      const name = nameOf(dirId.slice(slash + 1));
      states = name === null || parent.size === 0 ? new Set() : step(parent, name);
      dirs.set(dirId, states);
      return states;
    };
    return (id) => {
      const slash = id.lastIndexOf('/');
      const states = statesOf(slash < 0 ? '' : id.slice(0, slash));
      if (states.size === 0) return false;
      const name = nameOf(id.slice(slash + 1));
      return name !== null && endsAfter(states, name);
    };
  }

  /**
   * Sound over-approximation of "some id strictly below the directory `dirId` could match": false only when no
   * pattern can match any id that extends `dirId` by one or more segments.
   */
  mayContainBelow(dirId: string): boolean {
    if (this.shape !== 'some') return this.shape === 'all' && wellFormedId(dirId);
    for (const state of reach(this.root, namesOf(dirId))) if (state.loop || state.edges.size > 0) return true;
    return false;
  }

  /**
   * Sound under-approximation of "every id strictly below `dirId` matches": true only when some pattern, having
   * matched `dirId`'s segments, has nothing left but `**` (e.g. `Q/**` with Q matching dirId, or `**` alone).
   */
  coversAllBelow(dirId: string): boolean {
    if (this.shape !== 'some') return this.shape === 'all' && wellFormedId(dirId);
    for (const state of reach(this.root, namesOf(dirId))) if (state.loop && state.terminal) return true;
    return false;
  }
}
