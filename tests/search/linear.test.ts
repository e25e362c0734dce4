/**
 * Reading a note costs work linear in its length, whatever its lines look like (docs/DESIGN.md "Linear scanners
 * over note text"): long lines of every shape the reader looks at (tests/helpers/long-lines.ts), ended by every
 * line terminator JavaScript knows, in a note and in a fleet card rendered to a note.
 * - Counted: the scanners' ScanMeter steps stay below MAX_STEPS_PER_CODE_UNIT × (length + 1), on those lines and
 *   on random notes of the characters Markdown and front matter care about.
 * - Timed, without an absolute threshold: each case costs CPU time at n and at 8n code units in the same run and
 *   the ratio is judged (linear work gives about 8, work in the square of a line's length about 64). Before the
 *   scanners (the regular expressions of v0.2) this failed at once: 16 KiB lines cost 0.8–2.8 s per read, 40 to
 *   200 times the 2 KiB ones.
 */
import test from 'ava';
import fc from 'fast-check';
import { parseCard } from '../../src/fleet/card.js';
import { renderCard } from '../../src/fleet/render.js';
import { MAX_STEPS_PER_CODE_UNIT, parseNote } from '../../src/search/markdown.js';
import { makeSnippet } from '../../src/search/snippet.js';
import {
  LINE_PIECES,
  LINE_SHAPES,
  TERMINATOR_NAMES,
  TERMINATORS,
  type LineShape,
  type TerminatorName,
} from '../helpers/long-lines.js';
import { payload } from '../fleet/helpers.js';
import { costRatio } from '../helpers/cpu-cost.js';

/** Code units of the long part of a line at the small size; the large one is GROWTH times that. */
const SMALL = 2048;
const GROWTH = 8;
/** Largest accepted time ratio between the large and the small size: three times what linear work gives. */
const MAX_RATIO = 3 * GROWTH;

/** A card whose text is `text`, rendered to the note `export-fleet` writes. */
function cardNote(text: string): string {
  const parsed = parseCard({ id: 1, payload: payload({ text }) });
  if (!parsed.ok) throw new Error(parsed.reason);
  return renderCard(parsed.card).toString('utf8');
}

/** Everything a read and a search do with a note's text: parse it, build a snippet of its body. */
function readNote(text: string): void {
  const note = parseNote(text);
  makeSnippet(note.body, new Set(['lantern']), 300);
}

const shapeArb = fc.constantFrom(...LINE_SHAPES);
const endArb = fc.constantFrom(...TERMINATOR_NAMES);
const padArb = fc.constantFrom(' ', '\t');

/** Every shape with every terminator, once, before the random cases. */
const everyCombination: [LineShape, TerminatorName, string, boolean][] = LINE_SHAPES.flatMap((shape) =>
  TERMINATOR_NAMES.map((end): [LineShape, TerminatorName, string, boolean] => [shape, end, ' ', false]),
);

test('reading a note costs time linear in its longest line, for every line shape and terminator', (t) => {
  const worst: string[] = [];
  fc.assert(
    fc.property(shapeArb, endArb, padArb, fc.boolean(), (shape, end, pad, asCard) => {
      const build = (n: number): string => {
        const note = shape.note(n, TERMINATORS[end], pad);
        return asCard ? cardNote(note) : note;
      };
      const small = build(SMALL);
      const large = build(SMALL * GROWTH);
      const ratio = costRatio(readNote, small, large, MAX_RATIO);
      if (ratio > MAX_RATIO) worst.push(`${shape.name} / ${end} / ${asCard ? 'card' : 'note'}: ×${ratio.toFixed(1)}`);
      return ratio <= MAX_RATIO;
    }),
    { examples: everyCombination, numRuns: everyCombination.length + 16, seed: 22, endOnFailure: true },
  );
  t.deepEqual(worst, []);
});

/** Steps `parseNote` takes on `text`, checked against the bound; returns them. */
function stepsOf(t: { true(v: boolean, m?: string): void }, text: string, what: string): number {
  const meter = { steps: 0 };
  parseNote(text, meter);
  t.true(meter.steps >= text.length, `${what}: every code unit is read (${meter.steps} steps)`);
  return meter.steps;
}

test('counted steps stay linear for every line shape, terminator, padding and length', (t) => {
  let worst = 0;
  for (const shape of LINE_SHAPES) {
    for (const end of TERMINATOR_NAMES) {
      for (const pad of [' ', '\t']) {
        for (const n of [0, 1, 3, 64, 4096, 65_536]) {
          const text = shape.note(n, TERMINATORS[end], pad);
          const steps = stepsOf(t, text, `${shape.name} / ${end} / ${n}`);
          worst = Math.max(worst, steps / (text.length + 1));
        }
      }
    }
  }
  t.true(worst <= MAX_STEPS_PER_CODE_UNIT, `at most ${MAX_STEPS_PER_CODE_UNIT} steps per code unit, saw ${worst}`);
});

test('counted steps stay linear on random notes of Markdown and front matter characters', (t) => {
  const piece = fc.constantFrom(...LINE_PIECES, '\n', '\r\n', '\n---\n');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 300 }), fc.integer({ min: 1, max: 200 }), (parts, repeat) => {
      // Some notes repeat one piece into a long run, the shape backtracking patterns fear.
      const text = parts.map((p, i) => (i === 0 ? p.repeat(repeat) : p)).join('');
      const meter = { steps: 0 };
      parseNote(text, meter);
      return meter.steps <= MAX_STEPS_PER_CODE_UNIT * (text.length + 1);
    }),
    { numRuns: 3000, seed: 22 },
  );
  t.pass();
});
