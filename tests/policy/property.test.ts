import test from 'ava';
import fc from 'fast-check';
import picomatch from 'picomatch/posix.js';
import { BridgeError } from '../../src/errors.js';
import { PICOMATCH_OPTIONS, PatternError, PatternSet, picomatchGlobs, validatePattern } from '../../src/policy/glob.js';
import { parseStrictJson, StrictJsonError } from '../../src/policy/json.js';
import { explainPolicyError, parsePolicyBytes } from '../../src/policy/load.js';

const VALID = JSON.stringify({ version: 1, root: '/srv/memory', allow: ['projects/**'], deny: ['**/private/**'] });

/** Either a Policy, or a BridgeError('unavailable', 'policy_invalid'); anything else fails the property. */
function policyOrInvalid(bytes: Uint8Array): boolean {
  try {
    const p = parsePolicyBytes(bytes);
    return Object.isFrozen(p) && typeof p.allowsNote === 'function';
  } catch (err) {
    return err instanceof BridgeError && err.code === 'unavailable' && err.reason === 'policy_invalid';
  }
}

test('property › random bytes into parsePolicyBytes give a Policy or BridgeError, never another exception', (t) => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), policyOrInvalid), { numRuns: 3000 });
  t.pass();
});

test('property › byte-level mutations of a valid policy give a Policy or BridgeError', (t) => {
  const base = new TextEncoder().encode(VALID);
  const mutation = fc.array(
    fc.tuple(
      fc.nat({ max: base.length }),
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom('set', 'insert', 'delete'),
    ),
    {
      minLength: 1,
      maxLength: 4,
    },
  );
  fc.assert(
    fc.property(mutation, (edits) => {
      const bytes = Array.from(base);
      for (const [at, value, kind] of edits) {
        const i = Math.min(at, bytes.length);
        if (kind === 'set' && i < bytes.length) bytes[i] = value;
        else if (kind === 'insert') bytes.splice(i, 0, value);
        else bytes.splice(i, 1);
      }
      const u8 = Uint8Array.from(bytes);
      return policyOrInvalid(u8) && typeof explainPolicyError(u8) === 'string';
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('property › random policy-shaped JSON values give a Policy or BridgeError', (t) => {
  const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string(), fc.integer(), fc.constant(1));
  const doc = fc.record(
    {
      version: fc.oneof(fc.constant(1), anyValue),
      root: fc.oneof(fc.constantFrom('/srv/memory', '/', '/proc/x', 'rel', '/a/../b'), anyValue),
      allow: fc.oneof(fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 }), anyValue),
      deny: fc.oneof(fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 }), anyValue),
      names: fc.oneof(fc.constantFrom('portable', 'unicode'), anyValue),
      allow_cron: fc.oneof(fc.boolean(), anyValue),
      limits: fc.oneof(
        fc.dictionary(
          fc.constantFrom('max_results', 'default_results', 'snippet_chars', 'total_chars', 'max_depth', 'x'),
          fc.oneof(fc.integer({ min: -2, max: 5000 }), anyValue),
        ),
        anyValue,
      ),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(doc, (d) => {
      const bytes = new TextEncoder().encode(JSON.stringify(d));
      const ok = policyOrInvalid(bytes);
      // explainPolicyError says "valid" exactly when parsePolicyBytes accepts.
      let accepted = true;
      try {
        parsePolicyBytes(bytes);
      } catch {
        accepted = false;
      }
      return ok && (explainPolicyError(bytes) === 'valid') === accepted;
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('property › strict JSON accepts only what JSON.parse accepts, with the same value', (t) => {
  const jsonish = fc.oneof(
    fc.json({ maxDepth: 4 }),
    fc.string({
      unit: fc.constantFrom(
        '{',
        '}',
        '[',
        ']',
        ':',
        ',',
        '"',
        '\\',
        'u',
        '0',
        '1',
        'e',
        '-',
        '.',
        ' ',
        'a',
        't',
        'r',
        'n',
        'l',
      ),
    }),
  );
  fc.assert(
    fc.property(jsonish, (text) => {
      let ours: unknown;
      try {
        ours = parseStrictJson(new TextEncoder().encode(text));
      } catch (err) {
        return err instanceof StrictJsonError;
      }
      return JSON.stringify(ours) === JSON.stringify(JSON.parse(text));
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('property › JSON.stringify output of any JSON value without deep nesting is accepted', (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
      const text = JSON.stringify(v);
      return JSON.stringify(parseStrictJson(new TextEncoder().encode(text))) === JSON.stringify(JSON.parse(text));
    }),
    { numRuns: 1000 },
  );
  t.pass();
});

// Patterns and ids over an alphabet rich in the characters the dialect must treat literally. Each token carries
// id fragments it matches, so a generated (pattern, id) pair matches often; a mutation flag breaks some pairs.
const SPECS: Array<[string, string[]]> = [
  ['a', ['a', 'A']],
  ['b', ['b', 'B']],
  ['A', ['a']],
  ['.', ['.']],
  ['(', ['(']],
  [')', [')']],
  ['+', ['+']],
  ['@', ['@']],
  ['!', ['!']],
  ['$', ['$']],
  ['^', ['^']],
  ['|', ['|']],
  [' ', [' ']],
  ['é', ['é', 'É']],
  ['🌱', ['🌱']],
  [',', [',']],
  ['"', ['"']],
  ["'", ["'"]],
  [']', [']']],
  ['-', ['-']],
  ['*', ['', 'x', 'a(b', '🌱.']],
  ['?', ['z', 'é', '🌱', '.']],
  ['[ab]', ['b', 'A']],
  ['[!a]', ['b', '(', '🌱']],
  ['[a-c]', ['c', 'B']],
  ['[(]', ['(']],
  ['{a,b}', ['a', 'b']],
  ['{b,,c}', ['b', '', 'c']],
  ['{a/b,c}', ['a/b', 'c']],
  ['/', ['/']],
  ['**/', ['', 'q/', 'q/r/']],
  ['/**', ['/q', '/q/r', '']],
];
const PATTERN_TOKENS = SPECS.map(([frag]) => frag);

const validId = (s: string): boolean => s.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');

/** A valid pattern and an id built to match it (or, when `mutate` is set, changed at one character). */
const pair = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(...SPECS), fc.nat()), { minLength: 1, maxLength: 7 }), fc.option(fc.nat()))
  .map(([parts, mutate]) => {
    const p = parts.map(([[frag]]) => frag).join('');
    let candidate = parts.map(([[, options], n]) => options[n % options.length]!).join('');
    if (mutate !== null && candidate.length > 0) {
      const cps = Array.from(candidate);
      const at = mutate % cps.length;
      if (cps[at] !== '/') cps[at] = cps[at] === 'z' ? 'y' : 'z';
      candidate = cps.join('');
    }
    return [p, candidate] as const;
  })
  .filter(([p, candidate]) => validatePattern(p) === null && validId(candidate));

const pattern = pair.map(([p]) => p);

const segment = fc
  .array(
    fc.constantFrom(
      'a',
      'b',
      'B',
      'c',
      '.',
      '(',
      ')',
      '+',
      '@',
      '!',
      '$',
      '^',
      '|',
      ' ',
      'é',
      'É',
      '🌱',
      ',',
      '"',
      "'",
      ']',
      '-',
    ),
    {
      minLength: 1,
      maxLength: 4,
    },
  )
  .map((cs) => cs.join(''))
  .filter((s) => s !== '.' && s !== '..');
const id = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segs) => segs.join('/'));

function picomatchMatches(glob: string, candidate: string): boolean {
  return picomatch.makeRe(glob, { ...PICOMATCH_OPTIONS, noglobstar: false }).test(candidate);
}

test('property › matching agrees with picomatch on the escaped whole-id globs (except `x/**` also matching `x`)', (t) => {
  let positives = 0;
  fc.assert(
    fc.property(pair, ([p, candidate]) => {
      const ours = PatternSet.compile([p]).matches(candidate);
      if (ours) positives++;
      const globs = picomatchGlobs(p);
      const theirs = globs.some((g) => picomatchMatches(g, candidate));
      if (ours === theirs) return true;
      if (theirs) return false;
      // The documented difference: a trailing `/**` also matches zero segments here.
      return globs.some((g) => {
        let stem = g;
        while (stem.endsWith('/**')) stem = stem.slice(0, -3);
        return stem !== g && stem !== '' && stem !== '**' && picomatchMatches(stem, candidate);
      });
    }),
    { numRuns: 4000 },
  );
  // The generator builds matching pairs, so the property is exercised on matches, not only on misses.
  t.true(positives > 1000, `${positives} matching pairs`);
});

test('property › mayContainBelow is true for every ancestor directory of a matching id', (t) => {
  fc.assert(
    fc.property(pair, fc.array(pattern, { maxLength: 2 }), ([p, candidate], others) => {
      const set = PatternSet.compile([p, ...others]);
      if (!set.matches(candidate)) return true;
      const segs = candidate.split('/');
      for (let k = 0; k < segs.length; k++) {
        if (!set.mayContainBelow(segs.slice(0, k).join('/'))) return false;
      }
      return true;
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('property › coversAllBelow implies every id below the directory matches', (t) => {
  let covered = 0;
  fc.assert(
    fc.property(pair, fc.boolean(), fc.nat(), id, ([p, candidate], widen, cut, rest) => {
      // `p/**` still matches every id `p` matches (zero trailing segments), and covers more directories.
      const set = PatternSet.compile([widen ? `${p}/**` : p]);
      const segs = candidate.split('/');
      const dir = widen && cut % 2 === 0 ? candidate : segs.slice(0, cut % (segs.length + 1)).join('/');
      if (!set.coversAllBelow(dir)) return true;
      covered++;
      if (dir === '') return set.matches(rest);
      return set.matches(`${dir}/${rest}`) && set.mayContainBelow(dir);
    }),
    { numRuns: 3000 },
  );
  t.true(covered > 250, `${covered} covered directories`);
});

test('property › validatePattern never throws, and compile accepts exactly what it accepts', (t) => {
  const anyPattern = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc
      .array(fc.constantFrom(...PATTERN_TOKENS, '{', '}', '[', '\\', '\u0000', '..', '//'), { maxLength: 10 })
      .map((a) => a.join('')),
  );
  fc.assert(
    fc.property(anyPattern, (p) => {
      const reason = validatePattern(p);
      try {
        PatternSet.compile([p]);
        return reason === null;
      } catch (err) {
        return err instanceof PatternError && err.reason === reason;
      }
    }),
    { numRuns: 4000 },
  );
  t.pass();
});
