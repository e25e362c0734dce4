/**
 * Real corpora in a tool-test world: the Obsidian vault and tldr pages that ship under tests/ (tests/helpers/corpora.ts),
 * copied into a world's memory root, and the search calls the equivalence tests ask of them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { TLDR, VAULT } from '../helpers/corpora.js';
import type { World } from './world.js';

/**
 * Copies the shipped vault to `vault/` and the tldr pages of each of `languages` (e.g. `ja`, from `pages.ja`) to
 * `<language>/` of `w`'s root; returns `w`. The world's policy should allow Unicode names (`names: 'unicode'`).
 */
export function withCorpora(w: World, languages: readonly string[]): World {
  fs.cpSync(VAULT, path.join(w.root, 'vault'), { recursive: true });
  for (const lang of languages) {
    fs.cpSync(path.join(TLDR, `pages.${lang}`), path.join(w.root, lang), { recursive: true });
  }
  return w;
}

/**
 * Search calls over a world `withCorpora(…, ['ja', 'ko'])`: English, a typo, a prefix, Japanese and Korean words,
 * a `within` over two folders, `sort: 'modified'` and a small `limit`.
 */
export const REAL_CALLS: readonly Record<string, unknown>[] = Object.freeze([
  { query: 'garden watering', limit: 10 },
  { query: 'irigation', limit: 10 },
  { query: 'backu', limit: 10 },
  { query: 'ファイル 圧縮', limit: 10 },
  { query: '파일 목록', limit: 10 },
  { query: 'git', limit: 10, within: ['ja/**', 'vault/Projects/**'] },
  { query: 'file archive', limit: 10, sort: 'modified' },
  { query: 'docker container', limit: 3 },
]);
