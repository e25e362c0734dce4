import test from 'ava';
import fc from 'fast-check';
import { TextStore } from '../../src/search/store.js';

// The store keeps texts as UTF-8 bytes (UTF-16LE for a string with a lone surrogate) and decodes only a body's first
// units for a snippet; each answer must equal the same cut of the original string.
const texts = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '日', '😀', '\n', '\ud800', '\udc00'), maxLength: 80 }),
);

test('every text comes back whole, and every body cut equals the same slice of the string', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(texts, fc.nat(), fc.nat({ max: 100 })), { minLength: 1, maxLength: 30 }),
      fc.array(fc.nat(), { maxLength: 10 }),
      (items, frees) => {
        const store = new TextStore();
        const held = new Map<number, { text: string; bodyAt: number }>();
        for (const [text, at, units] of items) {
          // The body starts at a code point boundary (in a note, after a line break or at 0).
          let bodyAt = text.length === 0 ? 0 : at % (text.length + 1);
          if (bodyAt > 0 && /[\ud800-\udbff]/.test(text[bodyAt - 1]!) && /[\udc00-\udfff]/.test(text[bodyAt] ?? ''))
            bodyAt--;
          const h = store.put(text, bodyAt);
          t.false(held.has(h), 'a live handle is never handed out twice');
          held.set(h, { text, bodyAt });
          t.is(store.body(h, units), text.slice(bodyAt, bodyAt + units));
        }
        for (const f of frees) {
          const handles = [...held.keys()];
          if (handles.length === 0) break;
          const h = handles[f % handles.length]!;
          store.free(h);
          held.delete(h);
        }
        for (const [h, { text, bodyAt }] of held) {
          t.is(store.get(h), text);
          t.is(store.body(h, text.length + 5), text.slice(bodyAt));
          for (const units of [0, 1, 2, 3, 7]) t.is(store.body(h, units), text.slice(bodyAt, bodyAt + units));
        }
      },
    ),
    { numRuns: 400 },
  );
});

test('freed texts give their chunks back, and live texts survive the rewrite that drops dead bytes', (t) => {
  const store = new TextStore();
  // 3-byte characters, so each text takes 3 MB of UTF-8: chunks of their own, then rewrites as texts are freed.
  const big = (i: number): string => `${i}:${'日'.repeat(1_000_000)}`;
  const handles = Array.from({ length: 6 }, (_, i) => store.put(big(i), 2));
  const full = store.memoryBytes;
  t.true(full >= 6 * 3_000_000);
  for (const h of handles.slice(0, 4)) store.free(h);
  t.true(store.memoryBytes < full / 2, 'most of the bytes are given back');
  t.is(store.size, 2 * Buffer.byteLength(big(4)));
  t.is(store.get(handles[4]!), big(4));
  t.is(store.get(handles[5]!), big(5));
  t.is(store.body(handles[5]!, 3), '日日日');
  // A freed handle is reused for the next text.
  const again = store.put('small text', 6);
  t.true(handles.slice(0, 4).includes(again));
  t.is(store.body(again, 4), 'text');
});

test('texts in a large buffer are taken over, not copied, and read back like copied ones', (t) => {
  // A scan keeps the notes it read in large chunks (src/trust/note-text.ts); the store takes such a chunk over.
  const store = new TextStore();
  const texts = ['first text', 'zweiter Text: grün', '三つ目のテキスト', 'fourth 😀 text'];
  const chunk = Buffer.alloc(2 * 1024 * 1024);
  let at = 0;
  const handles = texts.map((text) => {
    const n = chunk.write(text, at, 'utf8');
    const h = store.putBytes(chunk.subarray(at, at + n), Buffer.byteLength(text.slice(0, 6)));
    at += n;
    return h;
  });
  t.is(store.memoryBytes - new TextStore().memoryBytes, chunk.length, 'the buffer is held once, nothing copied');
  texts.forEach((text, i) => {
    t.is(store.get(handles[i]!), text);
    t.is(store.body(handles[i]!, 5), text.slice(6, 11));
  });
  // Small buffers are copied (a buffer mostly unused is not kept whole for a few bytes).
  const small = Buffer.from('small one');
  const h = store.putBytes(small, 0);
  small.fill(0x21);
  t.is(store.get(h), 'small one');
  // Freeing every text of the taken-over buffer lets it go.
  const held = store.memoryBytes;
  for (const handle of handles) store.free(handle);
  t.is(store.memoryBytes, held - chunk.length, 'the taken-over buffer is released');
  t.is(store.get(h), 'small one');
});
