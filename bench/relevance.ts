/**
 * Known-item relevance evaluation on the Obsidian help vault (English and Japanese halves), for `npm run bench`
 * (method in docs/BENCHMARKS.md, "Relevance").
 *
 * Queries: every wikilink `[[Target|display text]]` (not an embed `![[…]]`) whose Target resolves to a note of the
 * same half gives the query "display text" with the one relevant note Target; `#heading` and `^block` parts are
 * dropped from Target, a link without Target (`[[#heading|text]]`) is skipped, and each (query, target) pair counts
 * once. Target resolution follows Obsidian: a bare name is the note of that file name anywhere in the half (the
 * shortest path when several share it), a name with `/` is that path.
 *
 * Measured: memory-bridge through `createBridge` (policy read, trust walk, ranking — the same code the MCP server
 * runs) with `limit` 10 over a trusted copy of each half; tobi/qmd's BM25 (`searchLex`, limit 10) on the same
 * folder when bench/peers/setup.sh installed it (reported absent otherwise). Figures: MRR@10, recall@1, recall@5,
 * and how many queries were answered with an error.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyOwnerOnly } from '../src/cli/demo.js';
import { createBridge } from '../src/tools/bridge.js';
import type { Caller, SearchResult } from '../src/tools/types.js';
import { repoRoot, vocabularySource } from './config.js';

/** Where bench/peers/setup.sh installs the peers (the same default). */
export const PEERS_DIR = process.env.MEMORY_BRIDGE_PEERS ?? path.join(os.homedir(), '.cache', 'memory-bridge', 'peers');
const PEER_NODE = path.join(PEERS_DIR, 'node_modules', 'node', 'bin', 'node');
const QMD_ENTRY = path.join(PEERS_DIR, 'node_modules', '@tobilu', 'qmd', 'dist', 'index.js');

export interface KnownItem {
  query: string;
  /** Id of the relevant note, relative to the half's folder. */
  target: string;
}

export interface Scores {
  queries: number;
  mrr10: number;
  recall1: number;
  recall5: number;
  /** Queries whose answer was not `ok` (memory-bridge) or whose search failed (peer). */
  errors: number;
}

export interface RelevanceResult {
  lang: string;
  notes: number;
  links: number;
  unresolved: number;
  ours: Scores;
  qmd: Scores | null;
}

/** Ids (root-relative, `/`-separated) of every `.md` file below `root`, sorted. */
function noteIds(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir === '' ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...noteIds(root, rel));
    else if (e.isFile() && e.name.toLowerCase().endsWith('.md')) out.push(rel);
  }
  return out.sort();
}

const WIKILINK = /(!?)\[\[([^\]|\n]*)\|([^\]\n]+)\]\]/g;

/** The known-item cases of one half (see the module comment), in file then link order. */
export function knownItems(root: string): { cases: KnownItem[]; notes: number; links: number; unresolved: number } {
  const ids = noteIds(root);
  const byStem = new Map<string, string[]>();
  const byPath = new Map<string, string>();
  for (const id of ids) {
    const noExt = id.slice(0, -3).toLowerCase();
    byPath.set(noExt, id);
    const stem = noExt.slice(noExt.lastIndexOf('/') + 1);
    byStem.set(stem, [...(byStem.get(stem) ?? []), id]);
  }
  const resolve = (target: string): string | undefined => {
    let t = target.trim().replace(/\.md$/i, '').toLowerCase();
    if (t === '') return undefined;
    if (t.includes('/')) return byPath.get(t.replace(/^\/+/, ''));
    t = t.normalize('NFC');
    const found = byStem.get(t);
    if (found === undefined) return undefined;
    return [...found].sort((a, b) => a.length - b.length || (a < b ? -1 : 1))[0];
  };
  const seen = new Set<string>();
  const cases: KnownItem[] = [];
  let links = 0;
  let unresolved = 0;
  for (const id of ids) {
    const text = fs.readFileSync(path.join(root, id), 'utf8');
    for (const m of text.matchAll(WIKILINK)) {
      if (m[1] === '!') continue;
      const rawTarget = m[2]!.split('#')[0]!.split('^')[0]!;
      const query = m[3]!.trim();
      if (rawTarget.trim() === '' || query === '') continue;
      links++;
      const target = resolve(rawTarget);
      if (target === undefined) {
        unresolved++;
        continue;
      }
      const key = `${query}\u0000${target}`;
      if (seen.has(key)) continue;
      seen.add(key);
      cases.push({ query, target });
    }
  }
  return { cases, notes: ids.length, links, unresolved };
}

/** MRR@10, recall@1 and recall@5 of ranked id lists against the cases' targets. */
export function score(cases: readonly KnownItem[], ranked: readonly (string[] | null)[]): Scores {
  let rr = 0;
  let r1 = 0;
  let r5 = 0;
  let errors = 0;
  cases.forEach((c, i) => {
    const list = ranked[i];
    if (list === null || list === undefined) {
      errors++;
      return;
    }
    const at = list.slice(0, 10).indexOf(c.target);
    if (at < 0) return;
    rr += 1 / (at + 1);
    if (at === 0) r1++;
    if (at < 5) r5++;
  });
  const n = cases.length || 1;
  const round = (x: number): number => Math.round((x / n) * 1000) / 1000;
  return { queries: cases.length, mrr10: round(rr), recall1: round(r1), recall5: round(r5), errors };
}

/** A profile home below `parent` whose policy allows all of `root` (unicode names, 10 results, short snippets). */
function homeFor(parent: string, root: string, name: string): string {
  const home = path.join(parent, `home-${name}`);
  const dir = path.join(home, 'plugin-data', 'memory-bridge');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const d of [home, path.join(home, 'plugin-data'), dir]) fs.chmodSync(d, 0o700);
  const policy = {
    version: 1,
    root,
    allow: ['**'],
    names: 'unicode',
    limits: { max_results: 10, default_results: 5, snippet_chars: 40, total_chars: 4000 },
  };
  const file = path.join(dir, 'policy.json');
  fs.writeFileSync(file, `${JSON.stringify(policy, null, 2)}\n`, { mode: 0o600 });
  return fs.realpathSync(home);
}

/** True when bench/peers/setup.sh installed qmd and its Node. */
export function qmdInstalled(): boolean {
  return fs.existsSync(PEER_NODE) && fs.existsSync(QMD_ENTRY);
}

/** qmd's BM25 answers (root-relative ids) for `queries` over `root`, or null when the peer failed to run. */
function qmdRankings(root: string, queries: readonly string[], scratch: string): string[][] | null {
  const input = path.join(scratch, 'qmd-input.json');
  fs.writeFileSync(
    input,
    JSON.stringify({ peers: PEERS_DIR, root, db: path.join(scratch, 'qmd.sqlite'), limit: 10, queries }),
  );
  const runner = path.join(repoRoot, 'dist', 'bench', 'peers', 'qmd-lex.js');
  try {
    const out = execFileSync(PEER_NODE, [runner, input], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, XDG_CACHE_HOME: scratch, XDG_CONFIG_HOME: scratch, NODE_LLAMA_CPP_SKIP_DOWNLOAD: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const { results } = JSON.parse(out) as { results: string[][] };
    const prefix = 'qmd://vault/';
    return results.map((list) => list.map((f) => (f.startsWith(prefix) ? f.slice(prefix.length) : f)));
  } catch {
    return null;
  }
}

/**
 * Run the evaluation on both halves of the vault.
 *
 * @param log progress lines (to stderr in the bench)
 * @returns one result per half present; [] when the vault is absent
 */
export function runRelevance(log: (msg: string) => void): RelevanceResult[] {
  if (!fs.existsSync(vocabularySource)) {
    log(`relevance: ${vocabularySource} is absent, skipped`);
    return [];
  }
  const withQmd = qmdInstalled();
  if (!withQmd) log(`relevance: qmd is not installed in ${PEERS_DIR} (bash bench/peers/setup.sh): peer column absent`);
  const parent = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mb-relevance-')));
  fs.chmodSync(parent, 0o700);
  const results: RelevanceResult[] = [];
  try {
    const bridge = createBridge({ log: () => undefined });
    for (const lang of ['en', 'ja']) {
      const source = path.join(vocabularySource, lang);
      if (!fs.existsSync(source)) continue;
      const root = path.join(parent, lang);
      copyOwnerOnly(source, root);
      const { cases, notes, links, unresolved } = knownItems(root);
      const caller: Caller = { home: homeFor(parent, root, lang), cron: false, subagent: false };
      const ours = cases.map((c) => {
        const r = bridge.search({ query: c.query, limit: 10 }, caller);
        return r.ok ? (r as SearchResult).results.map((h) => h.id) : null;
      });
      let qmd: Scores | null = null;
      if (withQmd) {
        const scratch = path.join(parent, `qmd-${lang}`);
        fs.mkdirSync(scratch, { mode: 0o700 });
        const ranked = qmdRankings(
          root,
          cases.map((c) => c.query),
          scratch,
        );
        if (ranked === null) log(`relevance: qmd failed on ${lang}`);
        else qmd = score(cases, ranked);
      }
      const result: RelevanceResult = { lang, notes, links, unresolved, ours: score(cases, ours), qmd };
      log(
        `relevance ${lang}: ${cases.length} queries, ours MRR@10 ${result.ours.mrr10}` +
          (qmd === null ? '' : `, qmd ${qmd.mrr10}`),
      );
      results.push(result);
    }
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
  return results;
}

/** The relevance table (Markdown). */
export function renderRelevance(results: readonly RelevanceResult[]): string {
  if (results.length === 0) return 'Relevance: the Obsidian help vault is absent; not measured.\n';
  const f = (s: Scores | null, k: keyof Scores): string => (s === null ? 'absent' : String(s[k]));
  const rows = results.map(
    (r) =>
      `| ${r.lang} | ${r.notes} | ${r.ours.queries} | ${f(r.ours, 'mrr10')} | ${f(r.ours, 'recall1')} | ${f(r.ours, 'recall5')} | ${r.ours.errors} | ${f(r.qmd, 'mrr10')} | ${f(r.qmd, 'recall1')} | ${f(r.qmd, 'recall5')} |`,
  );
  return [
    '| vault | notes | queries | ours MRR@10 | ours R@1 | ours R@5 | ours errors | qmd BM25 MRR@10 | qmd R@1 | qmd R@5 |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** `node dist/bench/relevance.js`: the evaluation alone, table on stdout. */
if (
  process.argv[1] !== undefined &&
  path.resolve(process.argv[1]) === path.join(repoRoot, 'dist', 'bench', 'relevance.js')
) {
  const results = runRelevance((m) => process.stderr.write(`[bench] ${m}\n`));
  process.stdout.write(renderRelevance(results));
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(results)}\n`);
}
