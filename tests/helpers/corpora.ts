/**
 * The real corpora that ship with the repository (tests/corpora/README.md says what each is and its licence), so
 * tests that need real notes run on any clone. Paths resolve from the compiled file (dist/tests/helpers/) to the
 * source tree's tests/corpora/, which the unprivileged re-run of scripts/test.js copies beside its dist/ too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of tests/corpora/. */
export const CORPORA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tests', 'corpora');

/** tldr pages in Korean, Chinese (simplified and traditional) and Japanese: `pages.<lang>/common/<command>.md`. */
export const TLDR = path.join(CORPORA, 'tldr');
/** The languages under {@link TLDR}, as folder names. */
export const TLDR_LANGUAGES = ['pages.ja', 'pages.ko', 'pages.zh', 'pages.zh_TW'] as const;
/** English pages of the Node.js website (release and security posts full of version strings). */
export const NODEJS = path.join(CORPORA, 'nodejs');
/** The project's own Obsidian-style vault, English and Japanese (spaces, nested folders, NFD names, front matter). */
export const VAULT = path.join(CORPORA, 'vault');
/** The vault notes whose names are stored decomposed (NFD), as ids in their NFC form. */
export const VAULT_NFD_NOTES = [
  'Archive/Old ideas/Résumé draft.md',
  'Recipes/Café au lait.md',
  '日本語/グラフビュー.md',
  '日本語/ブックマーク.md',
] as const;

/**
 * Relative paths (`/`-separated, as stored on disk: NFD names stay NFD) of every `.md` file below `dir`, sorted by
 * code unit, optionally only the first `max` in that order per directory walk.
 *
 * @throws when `dir` does not exist (a shipped corpus is never absent: a missing one is a broken checkout)
 */
export function markdownFiles(dir: string, max = Number.POSITIVE_INFINITY): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      if (out.length >= max) return;
      const child = rel === '' ? name : `${rel}/${name}`;
      if (fs.statSync(path.join(dir, child)).isDirectory()) walk(child);
      else if (name.endsWith('.md')) out.push(child);
    }
  };
  walk('');
  return out;
}

/** `{ relative path: text }` for every `.md` file below `dir` (see {@link markdownFiles}). */
export function markdownTexts(dir: string, max?: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of markdownFiles(dir, max)) out[rel] = fs.readFileSync(path.join(dir, rel), 'utf8');
  return out;
}
