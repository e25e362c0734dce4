/**
 * The layer picture holds (docs/DESIGN.md "Layers"): the imports of every `.ts` file of `src/` and `native/`, read
 * from the sources the repository ships, are exactly the arrows the table there lists; no cycle between units; the
 * FFI (koffi) named only in `native/`; `src/errors.ts` a leaf.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, sourcesOf, specifiersOf } from './sources.js';

/** The unit a file belongs to: `native/`, `src/<folder>/`, or the file itself at the top of `src/`. */
function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'native') return 'native/';
  return parts.length === 2 ? file : `src/${parts[1]}/`;
}

interface Arrow {
  from: string;
  to: string;
  /** one file-to-file import that makes the arrow, for the failure message */
  example: string;
}

/** Every arrow between units the code has (relative imports only; packages are not units). */
function arrowsOfCode(files: string[]): Map<string, Arrow> {
  const arrows = new Map<string, Arrow>();
  for (const file of files) {
    for (const spec of specifiersOf(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts');
      const from = unitOf(file);
      const to = unitOf(target);
      if (from === to) continue;
      const key = `${from} -> ${to}`;
      if (!arrows.has(key)) arrows.set(key, { from, to, example: `${file} imports ${target}` });
    }
  }
  return arrows;
}

/** The table of docs/DESIGN.md "Layers": unit → the units it may import from ("nothing" for a leaf). */
function arrowsOfPicture(): Map<string, string[]> {
  const design = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'DESIGN.md'), 'utf8');
  const start = design.indexOf('\n## Layers');
  const end = design.indexOf('\n## ', start + 1);
  const rows = new Map<string, string[]>();
  for (const line of design.slice(start, end).split('\n')) {
    const m = /^\| `([^`]+)` \| (.+) \|$/.exec(line);
    if (m === null) continue;
    rows.set(m[1]!, m[2] === 'nothing' ? [] : [...m[2]!.matchAll(/`([^`]+)`/g)].map((u) => u[1]!));
  }
  return rows;
}

/**
 * The rows of the drawing in docs/DESIGN.md "Layers", top first: the units each line names (`src/<folder>/`,
 * `src/<file>.ts`, `native/`); a line that starts with spaces continues the row above.
 */
function rowsOfPicture(): Map<string, number> {
  const design = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'DESIGN.md'), 'utf8');
  const start = design.indexOf('```', design.indexOf('\n## Layers')) + 3;
  const drawing = design.slice(start, design.indexOf('```', start));
  const rows = new Map<string, number>();
  let row = -1;
  for (const line of drawing.split('\n')) {
    if (line.trim() === '') continue;
    if (!line.startsWith(' ')) row++;
    for (const m of line.matchAll(/(?<![\w/])(src\/[a-z-]+(?:\/|\.ts)|native\/)/g)) rows.set(m[1]!, row);
  }
  return rows;
}

/** A cycle in a directed graph as a list of units (first = last), or null; plain depth-first search. */
function cycleOf(edges: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (u: string): string[] | null => {
    if (state.get(u) === 'done') return null;
    if (state.get(u) === 'open') return [...stack.slice(stack.indexOf(u)), u];
    state.set(u, 'open');
    stack.push(u);
    for (const v of edges.get(u) ?? []) {
      const c = visit(v);
      if (c !== null) return c;
    }
    stack.pop();
    state.set(u, 'done');
    return null;
  };
  for (const u of edges.keys()) {
    const c = visit(u);
    if (c !== null) return c;
  }
  return null;
}

const FILES = [...sourcesOf('src'), ...sourcesOf('native')];
const CODE = arrowsOfCode(FILES);
const PICTURE = arrowsOfPicture();
const ROWS = rowsOfPicture();

test('the import reader finds multi-line, type-only, re-export, bare and dynamic imports, and skips comments', (t) => {
  const text = [
    "import {\n  a,\n  type B,\n} from './one.js';",
    "import type { C } from '../two.js';",
    "export { D } from './three.js';",
    "export * from './four.js';",
    "import './five.js';",
    "const m = () => import('./six.js');",
    " * import { x } from './comment.js';",
    "// export { y } from './comment2.js';",
  ].join('\n');
  t.deepEqual(specifiersOf(text).sort(), ['../two.js', './five.js', './four.js', './one.js', './six.js', './three.js']);
});

test('the picture has a row for every unit of src/ and native/, and names only units that exist', (t) => {
  const units = new Set(FILES.map(unitOf));
  t.true(units.size >= 10, `units found: ${[...units].join(', ')}`);
  for (const u of units) t.true(PICTURE.has(u), `docs/DESIGN.md "Layers" has no row for ${u}`);
  for (const [u, tos] of PICTURE) {
    t.true(units.has(u), `docs/DESIGN.md "Layers" has a row for ${u}, which holds no .ts file`);
    for (const to of tos) t.true(units.has(to), `${u}: ${to} is no unit`);
  }
});

test('every import between units is an arrow of the picture, and every arrow of the picture is used', (t) => {
  t.true(CODE.size >= 20, `arrows found: ${CODE.size}`);
  for (const { from, to, example } of CODE.values())
    t.true(PICTURE.get(from)?.includes(to) ?? false, `not in docs/DESIGN.md "Layers": ${from} -> ${to} (${example})`);
  for (const [from, tos] of PICTURE)
    for (const to of tos)
      t.true(CODE.has(`${from} -> ${to}`), `docs/DESIGN.md "Layers" claims ${from} -> ${to}, no file has it`);
});

test('the drawing places every unit on a row, and every arrow points to a lower row', (t) => {
  for (const u of PICTURE.keys()) t.true(ROWS.has(u), `the drawing of docs/DESIGN.md "Layers" does not show ${u}`);
  for (const [from, tos] of PICTURE)
    for (const to of tos)
      t.true(
        (ROWS.get(from) ?? -1) < (ROWS.get(to) ?? -1),
        `${from} (row ${ROWS.get(from)}) -> ${to} (row ${ROWS.get(to)}) does not point down the drawing`,
      );
});

test('no cycle between units, in the code or in the picture', (t) => {
  const code = new Map<string, string[]>();
  for (const { from, to } of CODE.values()) code.set(from, [...(code.get(from) ?? []), to]);
  t.is(cycleOf(code)?.join(' -> ') ?? null, null);
  t.is(cycleOf(PICTURE)?.join(' -> ') ?? null, null);
  // The reader of cycles does find one when there is one.
  t.deepEqual(
    cycleOf(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
      ]),
    ),
    ['a', 'b', 'c', 'a'],
  );
});

test('src/errors.ts is a leaf and native/ imports nothing of src/', (t) => {
  t.deepEqual(PICTURE.get('src/errors.ts'), []);
  t.deepEqual(PICTURE.get('native/'), []);
  for (const { from, to, example } of CODE.values()) {
    t.not(from, 'src/errors.ts', example);
    t.not(from, 'native/', `${to}: ${example}`);
  }
});

test('the FFI (koffi) is named only in native/', (t) => {
  const outside = FILES.filter((f) => !f.startsWith('native/')).filter((f) =>
    /['"]koffi['"]/.test(fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')),
  );
  t.deepEqual(outside, []);
  t.true(
    FILES.some((f) => f.startsWith('native/') && /from 'koffi'/.test(fs.readFileSync(path.join(REPO_ROOT, f), 'utf8'))),
  );
});
