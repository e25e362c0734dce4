import test from 'ava';
import fc from 'fast-check';
import { LineSplitter, type LineEvent } from '../../src/text/lines.js';

const MiB = 1024 * 1024;

function feed(splitter: LineSplitter, stream: Buffer, piece: number): LineEvent[] {
  const events: LineEvent[] = [];
  for (let i = 0; i < stream.length; i += piece) events.push(...splitter.push(stream.subarray(i, i + piece)));
  return [...events, ...splitter.end()];
}

test('an 8 MiB line in 64 KiB pieces is joined once: bytes copied stay linear in the line', (t) => {
  const line = Buffer.alloc(8 * MiB, 0x61);
  const splitter = new LineSplitter(16 * MiB, 1024);
  const events = feed(splitter, Buffer.concat([line, Buffer.from('\n')]), 65536);
  t.is(events.length, 1);
  t.is(events[0]!.kind, 'line');
  t.true((events[0] as { bytes: Buffer }).bytes.equals(line));
  // A buffer joined again on every chunk would copy about 128 × 4 MiB = 512 MiB here.
  t.true(splitter.bytesCopied <= 8 * MiB, `${splitter.bytesCopied}`);
});

test('an oversized line is dropped as it arrives, keeping only its two ends', (t) => {
  const body = Buffer.alloc(8 * MiB, 0x62);
  body.write('HEAD', 0);
  body.write('TAIL', body.length - 4);
  const splitter = new LineSplitter(MiB, 16);
  const events = feed(splitter, Buffer.concat([body, Buffer.from('\r\nnext\n')]), 65536);
  t.is(events.length, 2);
  const over = events[0] as { kind: string; prefix: Buffer; suffix: Buffer };
  t.is(over.kind, 'oversized');
  t.is(over.prefix.toString(), `HEAD${'b'.repeat(12)}`);
  t.is(over.suffix.toString(), `${'b'.repeat(12)}TAIL`);
  t.deepEqual(events[1], { kind: 'line', bytes: Buffer.from('next') });
  t.true(splitter.bytesCopied <= 200 * 1024, `${splitter.bytesCopied}`);
});

test('lines, ends and oversize verdicts do not depend on how the stream is chunked', (t) => {
  const line = fc.oneof(fc.string({ maxLength: 40 }), fc.constant('x'.repeat(70)));
  fc.assert(
    fc.property(fc.array(line, { maxLength: 12 }), fc.integer({ min: 1, max: 50 }), (lines, piece) => {
      const text = lines.map((l) => l.replace(/\n/g, ' ')).join('\n');
      const stream = Buffer.from(text);
      const whole = feed(new LineSplitter(64, 8), stream, stream.length + 1);
      const chunked = feed(new LineSplitter(64, 8), stream, piece);
      const shape = (events: LineEvent[]) =>
        events.map((e) =>
          e.kind === 'line'
            ? `L${e.bytes.toString('hex')}`
            : `O${e.prefix.toString('hex')}:${e.suffix.toString('hex')}`,
        );
      return JSON.stringify(shape(whole)) === JSON.stringify(shape(chunked));
    }),
    { numRuns: 300, seed: 11 },
  );
  t.pass();
});
