/**
 * One owner of freshness (docs/DESIGN.md §Change notification): what a caller view keeps between calls lives in
 * src/trust/view.ts over src/trust/warm/, read from the sources the repository ships. No module of `src/` or
 * `native/` outside that folder imports from it except the view; the scan and the search tool import the view, not
 * its record; and no file outside the view and its folder names the record's writable fields.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's top directory (this file runs from dist/tests/architecture/). */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const WARM = 'src/trust/warm/';
const VIEW = 'src/trust/view.ts';

/** Every `.ts` file below `dir` (relative to the repository, `/`-separated). */
function sourcesOf(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourcesOf(rel));
    else if (e.isFile() && e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

const text = (file: string): string => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');

/** The files a source imports or re-exports from (relative specifiers, resolved to `.ts` paths). */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of text(file).matchAll(/^(?:import|export)\s[^;'"]*?\sfrom\s+'(\.[^']+)'/gm))
    out.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)).replace(/\.js$/, '.ts'));
  return out;
}

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
