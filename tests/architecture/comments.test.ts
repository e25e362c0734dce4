/**
 * No comment of the code points outside the repository (the house rules: docs/ and the code stand alone): no comment
 * line of a source in src/, native/, plugin/, bench/, tests/ or scripts/ names the folder beside the repository, a spec folder, or a
 * document that only exists outside (the product contract, the style guide, the old per-topic notes). Documents of
 * the repository are cited as docs/<NAME>.md.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's top directory (this file runs from dist/tests/architecture/). */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const SOURCE = /\.(?:ts|js|py|ya?ml)$/;
/** Folders that hold shipped text, not code (a corpus may say anything). */
const SKIP = new Set(['node_modules', 'corpora', 'corpus', '__pycache__']);

function sourcesOf(dir: string): string[] {
  const at = path.join(REPO_ROOT, dir);
  if (!fs.existsSync(at)) return [];
  const out: string[] = [];
  for (const e of fs.readdirSync(at, { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory() && !SKIP.has(e.name)) out.push(...sourcesOf(rel));
    else if (e.isFile() && SOURCE.test(e.name)) out.push(rel);
  }
  return out;
}

/** A line that is (or continues) a comment: `//`, `#`, `/*`, or a docblock's ` * `. */
const COMMENT_LINE = /^\s*(?:\/\/|#|\/\*|\*)/;
/** What a comment may not name: the folder beside the repository, a spec folder, or a document only found there. */
const OUTSIDE =
  /\.\.\/shared|shared\/spec|\bPRODUCT\.md|\bSTYLE\.md|(?<![\w/])(?:fleet|hermes|platform)\.md\b|\bseeds\//;

test('no comment line in src/, native/, plugin/, bench/, tests/, scripts/ cites a document outside the repository', (t) => {
  const files = ['src', 'native', 'plugin', 'bench', 'tests', 'scripts'].flatMap(sourcesOf);
  t.true(files.length > 100, `sources found: ${files.length}`);
  const found: string[] = [];
  for (const file of files) {
    const lines = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (COMMENT_LINE.test(line) && OUTSIDE.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  t.deepEqual(found, []);
});

test('the rule sees a citation in a comment and lets code and repository documents be', (t) => {
  const cited = (line: string) => COMMENT_LINE.test(line) && OUTSIDE.test(line);
  t.true(cited(' * the defaults of fleet.md'));
  t.true(cited('  // see ../shared/spec/PRODUCT.md'));
  t.true(cited('# STYLE.md says so'));
  t.false(cited(' * the defaults of docs/EXPORT.md §Cards'));
  t.false(cited(' * docs/HERMES.md §Install'));
  t.false(cited("export const source = path.resolve(root, '../shared/corpora/x');"));
});
