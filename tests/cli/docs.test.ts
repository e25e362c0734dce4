/**
 * docs/ stands alone (the house rules): every relative link of README.md and docs/*.md reaches a file of the
 * repository (and, with a `#fragment`, a heading of that file), and no page of docs/ links outside the repository.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './tree.js';
import { anchorsOf } from './markdown.js';

const pages = ['README.md', ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).map((f) => `docs/${f}`)].filter((p) =>
  p.endsWith('.md'),
);
const read = (p: string): string => fs.readFileSync(path.join(REPO_ROOT, p), 'utf8');
/** Markdown links outside code: [text](target). */
const linksOf = (text: string): string[] =>
  [...text.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);

test('docs › every relative link of README.md and docs/ reaches a file, and every #fragment a heading', (t) => {
  let checked = 0;
  for (const page of pages) {
    for (const link of linksOf(read(page))) {
      if (/^[a-z]+:/.test(link)) continue;
      const [file, fragment] = link.split('#') as [string, string | undefined];
      const target = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
      t.false(target.startsWith('..'), `${page}: ${link} leaves the repository`);
      t.true(fs.existsSync(path.join(REPO_ROOT, target)), `${page}: ${link}`);
      if (fragment !== undefined && target.endsWith('.md'))
        t.true(anchorsOf(read(target)).has(fragment), `${page}: ${link} (no such heading)`);
      checked++;
    }
  }
  t.true(checked > 40, `${checked} links checked`);
});

test('docs › no page of docs/ links or points outside the repository', (t) => {
  for (const page of pages.filter((p) => p.startsWith('docs/'))) {
    const text = read(page);
    for (const link of linksOf(text)) t.false(/^[a-z]+:/.test(link), `${page}: ${link}`);
    t.false(text.includes('../shared'), `${page} names ../shared`);
  }
});
