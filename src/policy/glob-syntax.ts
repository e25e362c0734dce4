/**
 * The syntax of the policy's pattern dialect (docs/POLICY.md; the dialect itself is described in
 * src/policy/glob.ts): the limits, the reasons a pattern is refused and their wording, the parse of one pattern
 * into tokens and brace groups, the capped brace expansion, the cut into segments with `**` collapsed, and each
 * token's picomatch spelling (`picomatchGlobs`, the equivalent whole-id globs).
 */
import type picomatch from 'picomatch/posix.js';

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

/** One token of a parsed pattern: a literal code point, `*`, `?`, `/` or a class. */
export type Tok =
  | { t: 'lit'; c: string }
  | { t: 'star' }
  | { t: 'qmark' }
  | { t: 'slash' }
  | { t: 'class'; negated: boolean; ranges: ClassRange[] };
type Node = Tok | { t: 'group'; branches: Node[][] };

/** A refusal inside the parse, with its reason; `PatternSet.compile` adds the pattern's index. */
export class Invalid extends Error {
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

/** A `**` segment, and a segment: the tokens of one name, or `**`. */
export const GLOBSTAR = 'globstar' as const;
export type Segment = Tok[] | typeof GLOBSTAR;

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
export function analyse(p: unknown): Segment[][] {
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

/** A token as picomatch spells it (literals that picomatch would read as syntax escaped). */
export function tokenGlob(t: Tok): string {
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
