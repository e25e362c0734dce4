import test from 'ava';
import fc from 'fast-check';
import { carriesText, ReadNote, TextArena, textBytesOf } from '../../src/trust/note-text.js';
import { decodeNoteText, noteBytesReason } from '../../src/trust/rule.js';
import { STAT } from '../search/stat.js';

/** The reference: the WHATWG decoder in fatal mode, which drops one leading signature. */
const fatal = new TextDecoder('utf-8', { fatal: true });
function reference(bytes: Uint8Array): string | 'binary' | 'invalid_utf8' {
  if (bytes.includes(0)) return 'binary';
  try {
    return fatal.decode(bytes);
  } catch {
    return 'invalid_utf8';
  }
}

/** Bytes near UTF-8: valid text with a few bytes changed, plus the edge sequences decoders disagree on. */
const bytesNearUtf8 = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  fc
    .tuple(fc.string({ unit: 'binary', maxLength: 30 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }))))
    .map(([s, edits]) => {
      const b = Buffer.from(s, 'utf8');
      for (const [at, v] of edits) if (b.length > 0) b[at % b.length] = v;
      return new Uint8Array(b);
    }),
  fc
    .array(
      fc.constantFrom(
        [0xef, 0xbb, 0xbf], // signature
        [0xc0, 0x80], // overlong NUL
        [0xe0, 0x80, 0x80], // overlong
        [0xed, 0xa0, 0x80], // encoded surrogate
        [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
        [0xf0, 0x9f, 0x98], // truncated
        [0xf0, 0x9f, 0x98, 0x80], // 😀
        [0x61],
        [0xe6, 0x97, 0xa5], // 日
      ),
      { maxLength: 6 },
    )
    .map((parts) => new Uint8Array(parts.flat())),
);

test('the validation without decoding accepts exactly the bytes the fatal decoder accepts', (t) => {
  fc.assert(
    fc.property(bytesNearUtf8, (bytes) => {
      const want = reference(bytes);
      const reason = noteBytesReason(bytes);
      t.is(reason, want === 'binary' || want === 'invalid_utf8' ? want : null);
      const decoded = decodeNoteText(bytes);
      t.deepEqual(decoded, want === 'binary' || want === 'invalid_utf8' ? { reason: want } : { text: want });
    }),
    { numRuns: 3000 },
  );
});

test('a note read in a call gives the text the fatal decoder gives, a leading signature dropped, others kept', (t) => {
  const arena = new TextArena();
  const kept: [ReadNote, string][] = [];
  fc.assert(
    fc.property(bytesNearUtf8, fc.boolean(), (body, signed) => {
      const bytes = signed ? new Uint8Array([0xef, 0xbb, 0xbf, ...body]) : body;
      if (noteBytesReason(bytes) !== null) return;
      const note = new ReadNote('a.md', 'k', STAT, bytes, arena);
      const want = reference(bytes) as string;
      t.is(note.text, want);
      t.true(carriesText(note));
      t.deepEqual(Buffer.from(textBytesOf(note)!), Buffer.from(want, 'utf8'), 'the kept bytes are the text as UTF-8');
      kept.push([note, want]);
    }),
    { numRuns: 2000 },
  );
  // The arena never overwrote an earlier note's bytes.
  for (const [note, want] of kept) t.is(note.text, want);
  const big = new Uint8Array(5 * 1024 * 1024).fill(0x61);
  t.is(new ReadNote('b.md', 'k', STAT, big, arena).text.length, big.length, 'a text larger than a chunk is whole');
  t.false(carriesText({ id: 'c.md', key: 'k', stat: STAT, text: undefined }));
  t.true(carriesText({ id: 'c.md', key: 'k', stat: STAT, text: '' }));
});
