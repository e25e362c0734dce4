/**
 * The repository's own sources as the architecture tests read them: the project's top directory, the `.ts` files
 * below a folder, and the module specifiers a source names.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's top directory (these files run from dist/tests/architecture/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Every `.ts` file below `dir` (relative to the repository, `/`-separated), sorted. */
export function sourcesOf(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourcesOf(rel));
    else if (e.isFile() && e.name.endsWith('.ts')) out.push(rel);
  }
  return out.sort();
}

/** The text of a repository file (`file` relative to the repository). */
export function sourceText(file: string): string {
  return fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
}

/**
 * The module specifiers a source names: `import … from '…'`, `export … from '…'` (each possibly over several
 * lines, up to the statement's `;`), bare `import '…'`, and `import('…')` with a literal. Lines inside comments do
 * not start with `import`/`export`, so a docblock is never read as an import.
 */
export function specifiersOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;'"]*?\sfrom\s+'([^']+)'/gm)) out.push(m[1]!);
  for (const m of text.matchAll(/^import\s+'([^']+)'/gm)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) out.push(m[1]!);
  return out;
}

/** The repository files `file` imports or re-exports from: its relative specifiers, resolved to `.ts` paths. */
export function importsOf(file: string): string[] {
  return specifiersOf(sourceText(file))
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'));
}
