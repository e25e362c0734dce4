/**
 * One owner of freshness (docs/DESIGN.md §Change notification): what a caller view keeps between calls lives in
 * src/trust/view.ts over src/trust/warm/, read from the sources the repository ships. No module of `src/` or
 * `native/` outside that folder imports from it except the view; the scan and the search tool import the view, not
 * its record; and no file outside the view and its folder names the record's writable fields.
 */
import test from 'ava';
import { importsOf, sourcesOf, sourceText as text } from './sources.js';

const WARM = 'src/trust/warm/';
const VIEW = 'src/trust/view.ts';

/** A write to a field of the view's record that says what may stand in for a statx (only the view writes them). */
const fields = /\.\s*(clean|vouched|wd|passed|known|snaps|reusedAt|budgetCut)\s*(=[^=]|\+\+|--)/;

const sources = [...sourcesOf('src'), ...sourcesOf('native')];

test('only the view imports from src/trust/warm/', (t) => {
  t.true(
    sources.some((f) => f.startsWith(WARM)),
    'the folder exists',
  );
  const outside: string[] = [];
  for (const file of sources) {
    if (file.startsWith(WARM) || file === VIEW) continue;
    for (const target of importsOf(file)) if (target.startsWith(WARM)) outside.push(`${file} imports ${target}`);
  }
  t.deepEqual(outside, []);
});

test('the scan and the search tool ask the view: they import it, and no writable field of its record', (t) => {
  t.true(importsOf('src/trust/scan.ts').includes(VIEW));
  t.true(importsOf('src/tools/index-cache.ts').includes(VIEW));
  t.true(importsOf('src/tools/search.ts').includes(VIEW));
  const writers: string[] = [];
  for (const file of sources) {
    if (file.startsWith(WARM) || file === VIEW) continue;
    text(file)
      .split('\n')
      .forEach((line, i) => {
        if (fields.test(line)) writers.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  t.deepEqual(writers, []);
});

test('the field rule sees a write and lets a comparison be', (t) => {
  t.true(fields.test('e.clean = 0;'));
  t.true(fields.test('memo.budgetCut = cut;'));
  t.false(fields.test('if (e.clean === epoch) return;'));
  t.false(fields.test('e.wd > 0'));
});
