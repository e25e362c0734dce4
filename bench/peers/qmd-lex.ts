/**
 * Runs tobi/qmd's BM25 search (`searchLex`) for a list of queries over one folder, for the relevance benchmark
 * (bench/relevance.ts). Runs under the Node 22 that bench/peers/setup.sh installs, never under the project's Node;
 * it loads qmd from that install folder, so qmd is never a dependency of the project.
 *
 * Input (a JSON file given as argv[2]): { peers: string, root: string, db: string, limit: number, queries: string[] }.
 * Output on stdout: JSON { results: string[][] } — per query, the root-relative paths qmd returned, best first.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Input {
  peers: string;
  root: string;
  db: string;
  limit: number;
  queries: string[];
}

interface QmdHit {
  filepath?: string;
  displayPath?: string;
  file?: string;
}

interface QmdStore {
  update(): Promise<unknown>;
  searchLex(query: string, options: { limit: number; collection?: string }): Promise<QmdHit[]>;
  close(): Promise<void>;
}

async function main(): Promise<void> {
  const input = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Input;
  const entry = path.join(input.peers, 'node_modules', '@tobilu', 'qmd', 'dist', 'index.js');
  const qmd = (await import(pathToFileURL(entry).href)) as {
    createStore(o: { dbPath: string; config: unknown }): Promise<QmdStore>;
  };
  const store = await qmd.createStore({
    dbPath: input.db,
    config: { collections: { vault: { path: input.root, pattern: '**/*.md' } } },
  });
  try {
    await store.update();
    const results: string[][] = [];
    for (const q of input.queries) {
      let hits: QmdHit[] = [];
      try {
        hits = await store.searchLex(q, { limit: input.limit });
      } catch {
        hits = [];
      }
      results.push(hits.map((h) => h.filepath ?? h.file ?? h.displayPath ?? ''));
    }
    process.stdout.write(JSON.stringify({ results }));
  } finally {
    await store.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`qmd-lex: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
