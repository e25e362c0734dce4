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
 *
 * This is the face of three modules: the syntax (glob-syntax.ts: limits, reasons, parse, expansion, segments), the
 * matching (glob-match.ts: pieces, segments, the trie and its NFA run), and `PatternSet` here, which compiles a
 * list into the trie and answers `matches`, `idMatcher`, `mayContainBelow` and `coversAllBelow`.
 */
import {
  compileSegment,
  endsAfter,
  nameOf,
  namesOf,
  newNode,
  reach,
  step,
  addWithClosure,
  type SegmentMatcher,
  type TrieNode,
  wellFormedId,
} from './glob-match.js';
import { analyse, GLOBSTAR, Invalid, MAX_PATTERNS, PatternError, tokenGlob } from './glob-syntax.js';

export { asciiKeyOfLiteral } from './glob-match.js';
export {
  MAX_BRACE_EXPANSION,
  MAX_PATTERN_CHARS,
  MAX_PATTERNS,
  PATTERN_REASON_TEXT,
  PatternError,
  type PatternReason,
  PICOMATCH_OPTIONS,
  picomatchGlobs,
  validatePattern,
} from './glob-syntax.js';

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
