/**
 * The "CJK" section of `npm run bench`: a CJK-heavy tree built from real notes — the Korean, Chinese and Japanese
 * tldr pages (`cjkSource`, 9,255 notes) copied COPIES times under different folders — beside a
 * generated English corpus of about the same bytes, and the figures that judge them:
 * - index build speed: bytes of note text per CPU second of `NoteIndex.sync` over every note, in process (median of
 *   BUILD_REPS), CJK ÷ English ≥ 0.5, the English notes cut to the CJK notes' sizes so that a per-note cost weighs
 *   alike on both sides (the ratio against the English corpus as generated is reported beside it);
 * - through the MCP server: cold first search and warm search p50 on the CJK tree with CJK queries, and
 *   `rg -l -i -F` on the same tree and terms (same run).
 */
import fs from 'node:fs';
import path from 'node:path';
import { NoteIndex } from '../src/search/index.js';
import { forgetSegmentations } from '../src/search/tokenize.js';
import { ReadNote, TextArena } from '../src/trust/note-text.js';
import type { ScannedNote } from '../src/trust/types.js';
import { repoRoot, seedFor } from './config.js';
import { generateCorpus, type Vocabulary } from './corpus.js';
import { connect, disconnect, timeCall, timeListCommand, toolPayload, type McpSession } from './processes.js';
import { median } from './stats.js';

/** The real CJK notes. */
export const cjkSource = path.resolve(repoRoot, '../shared/corpora/tldr-cjk');
const COPIES = 3;
const BUILD_REPS = 3;
const WARM_REPS = 5;
const COLD_REPS = 3;
/** Queries in Korean, Chinese and Japanese words the pages use, and one command name. */
export const CJK_QUERIES = Object.freeze(['압축', '파일', '文件', '目录', 'ファイル', 'ディレクトリ', '사용자', 'tar']);

function mkdirOwner(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o700);
}

/** Copy every `.md` below `from` to `to` (owner-only); returns ids (relative to `root`) and bytes. */
function copyTree(from: string, to: string, root: string, out: { ids: string[]; bytes: number }): void {
  mkdirOwner(to);
  for (const ent of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, ent.name);
    const dst = path.join(to, ent.name);
    if (ent.isDirectory()) copyTree(src, dst, root, out);
    else if (ent.isFile() && ent.name.endsWith('.md')) {
      const text = fs.readFileSync(src);
      fs.writeFileSync(dst, text, { mode: 0o600 });
      fs.chmodSync(dst, 0o600);
      out.ids.push(path.relative(root, dst));
      out.bytes += text.length;
    }
  }
}

function writeHome(home: string, root: string): void {
  mkdirOwner(path.join(home, 'plugin-data', 'memory-bridge'));
  for (const d of [home, path.join(home, 'plugin-data')]) fs.chmodSync(d, 0o700);
  const policy = {
    version: 1,
    root,
    allow: ['**'],
    limits: { max_entries: 100000, max_total_bytes: 1073741824, max_depth: 16 },
  };
  const file = path.join(home, 'plugin-data', 'memory-bridge', 'policy.json');
  fs.writeFileSync(file, `${JSON.stringify(policy, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

/**
 * Notes of a tree in the form the trust scan hands them to the index: a `ReadNote` holding the file's UTF-8 bytes
 * in a `TextArena` (read here, not through the trust scan). A plain string text would make the build encode every
 * note to UTF-8 again, which the server's path never does.
 */
function notesOf(root: string, ids: readonly string[]): { notes: ScannedNote[]; bytes: number } {
  let bytes = 0;
  const arena = new TextArena();
  const notes = ids.map((id, i): ScannedNote => {
    const buf = fs.readFileSync(path.join(root, id));
    bytes += buf.length;
    const stat = {
      dev: 1n,
      ino: BigInt(i),
      mode: 0o100600,
      nlink: 1,
      uid: 0,
      gid: 0,
      size: buf.length,
      mtimeNs: 0n,
      ctimeNs: 0n,
    };
    return new ReadNote(id, `k${i}`, stat, buf, arena);
  });
  return { notes, bytes };
}

/**
 * English notes of the CJK notes' sizes: for the i-th CJK note, generated English note i (mod their count) cut at
 * its last line end within the CJK note's byte length (whole when shorter). A per-note cost weighs alike on both
 * sides, so the ratio of the two build speeds compares the scripts, not the note sizes (the tldr pages are about
 * a third of a generated note's size).
 */
function matchedNotes(
  root: string,
  ids: readonly string[],
  sizes: readonly ScannedNote[],
): { notes: ScannedNote[]; bytes: number } {
  const files = ids.map((id) => fs.readFileSync(path.join(root, id)));
  const arena = new TextArena();
  let bytes = 0;
  const notes = sizes.map((model, i): ScannedNote => {
    const file = files[i % files.length]!;
    const want = model.stat.size;
    let end = file.length;
    if (end > want) {
      end = file.lastIndexOf(0x0a, want - 1) + 1;
      if (end === 0) end = want;
    }
    const cut = file.subarray(0, end);
    bytes += cut.length;
    return new ReadNote(`matched/${i}.md`, `m${i}`, { ...model.stat, ino: BigInt(i), size: cut.length }, cut, arena);
  });
  return { notes, bytes };
}

/**
 * Median bytes per CPU second of a fresh index's `sync` over `notes`. Each build starts with an empty
 * segmentation cache, as a first indexing run does (the cache would otherwise hold every run of the last build).
 */
function buildRate(notes: readonly ScannedNote[], bytes: number): number {
  const rates: number[] = [];
  for (let i = 0; i < BUILD_REPS; i++) {
    forgetSegmentations();
    const start = process.cpuUsage();
    new NoteIndex().sync(notes);
    const used = process.cpuUsage(start);
    rates.push(bytes / ((used.user + used.system) / 1e6));
  }
  return median(rates);
}

export interface CjkSection {
  notes: number;
  bytes: number;
  englishNotes: number;
  englishBytes: number;
  /** MB (10^6 bytes) of note text per CPU second of a full index build. */
  cjkBuildMBps: number;
  /** English notes cut to the CJK notes' sizes (`matchedNotes`). */
  matchedBuildMBps: number;
  /** The generated English corpus as it is (notes about 3 × larger than the CJK ones). */
  englishBuildMBps: number;
  /** CJK ÷ English at the same note sizes: the target's ratio. */
  buildRatio: number;
  /** CJK ÷ the generated English corpus as it is (reported). */
  wholeBuildRatio: number;
  coldFirstSearchMs: number;
  warmP50Ms: number;
  rgP50Ms: number | null;
}

async function search(s: McpSession, query: string): Promise<number> {
  const { ms, result } = await timeCall(s, 'memory_bridge_search', { query });
  const p = toolPayload(result);
  if (p.ok !== true) throw new Error(`search refused: ${JSON.stringify(p)}\n${s.stderr().slice(-2000)}`);
  return ms;
}

/**
 * Build the CJK tree (COPIES copies of the tldr pages) and an English corpus of about its size under `parent`,
 * measure, and return the figures. `args(home)` starts our MCP server; `rg` says whether ripgrep is installed.
 */
export async function runCjk(
  parent: string,
  vocab: Vocabulary,
  args: (home: string) => string[],
  rg: boolean,
  log: (msg: string) => void,
): Promise<CjkSection | null> {
  if (!fs.existsSync(cjkSource)) {
    log(`cjk: ${cjkSource} not found, section skipped`);
    return null;
  }
  const root = path.join(parent, 'cjk-vault');
  const tree = { ids: [] as string[], bytes: 0 };
  for (let c = 0; c < COPIES; c++) copyTree(cjkSource, path.join(root, `copy-${c}`), root, tree);
  const canonical = fs.realpathSync(root);
  const home = path.join(parent, 'home-cjk');
  writeHome(home, canonical);
  const englishCount = Math.max(1000, Math.round(tree.bytes / 1950));
  const english = generateCorpus(parent, englishCount, vocab, seedFor(englishCount));
  log(
    `cjk: ${tree.ids.length} CJK notes (${(tree.bytes / 1e6).toFixed(1)} MB, ${COPIES} copies of the tldr pages), English corpus of ${englishCount} notes (${(english.totalBytes / 1e6).toFixed(1)} MB)`,
  );

  const cjk = notesOf(canonical, tree.ids);
  const en = notesOf(english.root, english.ids);
  const matched = matchedNotes(english.root, english.ids, cjk.notes);
  const cjkRate = buildRate(cjk.notes, cjk.bytes);
  const enRate = buildRate(en.notes, en.bytes);
  const matchedRate = buildRate(matched.notes, matched.bytes);
  log(
    `cjk: index build ${(cjkRate / 1e6).toFixed(2)} MB/s CJK, ${(matchedRate / 1e6).toFixed(2)} MB/s English at the CJK notes' sizes, ${(enRate / 1e6).toFixed(2)} MB/s English as generated (CPU)`,
  );

  // Notes changed within the racy margin (3 s) are re-read by every call: let the trees age first.
  await new Promise((resolve) => setTimeout(resolve, 3100));
  const cold: number[] = [];
  for (let i = 0; i < COLD_REPS; i++) {
    const t0 = performance.now();
    const s = await connect(process.execPath, args(fs.realpathSync(home)));
    try {
      await search(s, CJK_QUERIES[i % CJK_QUERIES.length]!);
      cold.push(performance.now() - t0);
    } finally {
      await disconnect(s);
    }
  }
  const warm: number[] = [];
  const rgSamples: number[] = [];
  const s = await connect(process.execPath, args(fs.realpathSync(home)));
  try {
    await search(s, CJK_QUERIES[0]!);
    await search(s, CJK_QUERIES[1]!);
    for (let rep = 0; rep < WARM_REPS; rep++) {
      for (const [qi, q] of CJK_QUERIES.entries()) {
        const oursFirst = (rep + qi) % 2 === 0;
        if (!oursFirst && rg) rgSamples.push(timeListCommand('rg', ['-l', '-i', '-F', q, canonical]).ms);
        warm.push(await search(s, q));
        if (oursFirst && rg) rgSamples.push(timeListCommand('rg', ['-l', '-i', '-F', q, canonical]).ms);
      }
    }
  } finally {
    await disconnect(s);
  }
  return {
    notes: tree.ids.length,
    bytes: tree.bytes,
    englishNotes: englishCount,
    englishBytes: english.totalBytes,
    cjkBuildMBps: Math.round(cjkRate / 1e4) / 100,
    matchedBuildMBps: Math.round(matchedRate / 1e4) / 100,
    englishBuildMBps: Math.round(enRate / 1e4) / 100,
    buildRatio: Math.round((cjkRate / matchedRate) * 1000) / 1000,
    wholeBuildRatio: Math.round((cjkRate / enRate) * 1000) / 1000,
    coldFirstSearchMs: Math.round(median(cold)),
    warmP50Ms: Math.round(median(warm) * 100) / 100,
    rgP50Ms: rgSamples.length > 0 ? Math.round(median(rgSamples) * 100) / 100 : null,
  };
}

/** The section's Markdown. */
export function renderCjk(c: CjkSection): string {
  return [
    `CJK tree: ${c.notes.toLocaleString('en-US')} notes, ${(c.bytes / 1e6).toFixed(1)} MB (the Korean, Chinese and Japanese tldr pages, ${COPIES} copies); English corpus ${c.englishNotes.toLocaleString('en-US')} generated notes, ${(c.englishBytes / 1e6).toFixed(1)} MB.`,
    '',
    '| figure | CJK | English | ratio | target | verdict |',
    '|---|---:|---:|---:|---|---|',
    `| index build, MB of text per CPU second, English notes cut to the CJK notes' sizes (in process, median of ${BUILD_REPS}) | ${c.cjkBuildMBps} | ${c.matchedBuildMBps} | ${c.buildRatio.toFixed(3)} | ≥ 0.5 | ${c.buildRatio >= 0.5 ? 'PASS' : 'MISS'} |`,
    `| index build, MB of text per CPU second, English notes as generated (about 3 × larger) | ${c.cjkBuildMBps} | ${c.englishBuildMBps} | ${c.wholeBuildRatio.toFixed(3)} | | |`,
    `| cold first search ms (spawn → first result, median of ${COLD_REPS}) | ${c.coldFirstSearchMs} | | | | |`,
    `| warm search p50 ms (${CJK_QUERIES.length} queries × ${WARM_REPS}) / rg -l -i -F p50 ms | ${c.warmP50Ms} / ${c.rgP50Ms ?? '—'} | | ${c.rgP50Ms === null ? '—' : (c.warmP50Ms / c.rgP50Ms).toFixed(3)} | | |`,
  ].join('\n');
}
