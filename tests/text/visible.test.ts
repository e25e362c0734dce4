import test from 'ava';
import fc from 'fast-check';
import { countCodePoints } from '../../src/search/snippet.js';
import {
  countHiddenControls,
  cutVisible,
  escapeHidden,
  escapeOf,
  hasHiddenControls,
  isHiddenControl,
  visibleLength,
} from '../../src/text/visible.js';

/** A tag-character spelling of ASCII text (renders as nothing in most fonts). */
const tags = (s: string): string => [...s].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
const ANY_HIDDEN = /[\u202A-\u202E\u2066-\u2069]|\uDB40[\uDC00-\uDC7F]/u;

test('exactly the tag block and the bidi embedding/override/isolate controls are hidden controls', (t) => {
  const hidden: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) if (isHiddenControl(cp)) hidden.push(cp);
  const expected = [
    ...[0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069],
    ...Array.from({ length: 0x80 }, (_, i) => 0xe0000 + i),
  ];
  t.deepEqual(hidden, expected);
  t.false(isHiddenControl(0x200e), 'LRM is not an embedding control');
  t.false(isHiddenControl(0x2029));
  t.false(isHiddenControl(0xe0080));
});

test('the detector and counter agree with the code point rule on every hidden control and its neighbours', (t) => {
  for (const cp of [
    0x2029, 0x202a, 0x202e, 0x202f, 0x2065, 0x2066, 0x2069, 0x206a, 0xdfff, 0xe0000, 0xe007f, 0xe0080,
  ]) {
    const s = `a${String.fromCodePoint(cp)}b`;
    t.is(hasHiddenControls(s), isHiddenControl(cp), cp.toString(16));
    t.is(countHiddenControls(s), isHiddenControl(cp) ? 1 : 0, cp.toString(16));
  }
  t.is(countHiddenControls(`x${tags('ignore all')}\u202Ey\u2066`), 12);
  t.false(hasHiddenControls('plain text, émoji 🙂, 日本語'));
});

test('the escape is <U+ upper-case hex with at least four digits >', (t) => {
  t.is(escapeOf(0x202e), '<U+202E>');
  t.is(escapeOf(0xe0041), '<U+E0041>');
  t.is(escapeHidden(`safe${tags('Hi')}\u202Etxt\u2069`), 'safe<U+E0048><U+E0069><U+202E>txt<U+2069>');
});

test('text without hidden controls is returned unchanged', (t) => {
  const s = 'a <U+202E> typed by hand stays as it is 🙂';
  t.is(escapeHidden(s), s);
  t.is(visibleLength(s), countCodePoints(s));
});

test('the escaped form never carries a hidden control and reads back to the source', (t) => {
  const unit = fc.oneof(
    fc.constantFrom('\u202A', '\u202E', '\u2066', '\u2069', '\u{E0001}', '\u{E0041}', '\u{E007F}', '🙂', 'é', ' '),
    fc.string({ maxLength: 3 }),
  );
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 40 }), (parts) => {
      const src = parts.join('');
      const out = escapeHidden(src);
      if (ANY_HIDDEN.test(out)) return false;
      if (visibleLength(src) !== countCodePoints(out)) return false;
      // Undo the escapes that stand for hidden controls: only those can appear where the source had one.
      const back = out.replace(/<U\+([0-9A-F]{4,5})>/g, (m, hex: string) => {
        const cp = Number.parseInt(hex, 16);
        return isHiddenControl(cp) ? String.fromCodePoint(cp) : m;
      });
      return back === src || src.includes('<U+');
    }),
  );
  t.pass();
});

test('a cut keeps at most limit code points of the escaped form and never splits an escape or a pair', (t) => {
  const src = `ab\u202Ecd${tags('x')}🙂e`;
  // escaped: "ab<U+202E>cd<U+E0078>🙂e" = 2 + 8 + 2 + 9 + 1 + 1 = 23 code points
  t.is(visibleLength(src), 23);
  t.deepEqual(cutVisible(src, 2), { text: 'ab', cut: true, end: 2, sourceCodePoints: 2 });
  for (let limit = 2; limit < 10; limit++) t.is(cutVisible(src, limit).text, 'ab', `limit ${limit}`);
  t.is(cutVisible(src, 10).text, 'ab<U+202E>');
  t.is(cutVisible(src, 20).text, 'ab<U+202E>cd');
  t.is(cutVisible(src, 21).text, 'ab<U+202E>cd<U+E0078>');
  t.deepEqual(cutVisible(src, 22), {
    text: 'ab<U+202E>cd<U+E0078>🙂',
    cut: true,
    end: src.length - 1,
    sourceCodePoints: 7,
  });
  t.deepEqual(cutVisible(src, 23), { text: escapeHidden(src), cut: false, end: src.length, sourceCodePoints: 8 });
  t.is(cutVisible(src, 0).text, '');
  t.deepEqual(cutVisible(src, 4, 3), { text: 'cd', cut: true, end: 5, sourceCodePoints: 2 });
});

test('every cut is a prefix of the escaped form, within the limit, ending on a source boundary', (t) => {
  const unit = fc.constantFrom('a', ' ', '\u202B', '\u2067', '\u{E0020}', '😀', 'ß', '<U+202E>');
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 30 }), fc.nat(80), (parts, limit) => {
      const src = parts.join('');
      const r = cutVisible(src, limit);
      const full = escapeHidden(src);
      if (!full.startsWith(r.text) || countCodePoints(r.text) > limit) return false;
      if (r.text !== escapeHidden(src.slice(0, r.end))) return false;
      if (r.sourceCodePoints !== countCodePoints(src.slice(0, r.end))) return false;
      return r.cut === r.end < src.length && (r.cut || visibleLength(src) <= limit);
    }),
  );
  t.pass();
});
