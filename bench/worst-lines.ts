/**
 * Long lines in the "worst cases" section of `npm run bench` (docs/DESIGN.md "Linear scanners over note text"):
 * the line shapes that cost v0.2 seconds per read (long ATX headings, fence runs, front matter keys, list items and
 * titles, tests/helpers/long-lines.ts), each ended by every line terminator JavaScript knows, with lines of 16 KiB,
 * 128 KiB and 1 MiB, written as notes and as fleet cards through `memory-bridge export-fleet` (from a JSONL file:
 * the same renderer and writer as a Qdrant export).
 *
 * Two kinds of figures:
 * - reads: every long-line file is read by a warm server (median of READ_REPS) and judged against the read of an
 *   ordinary note of the same size and kind (prose lines of about 80 characters; ≤ 10 ×); the ratio to the
 *   normal corpus's read median (notes of about 2 KB) is reported beside it;
 * - searches: three corpora of about the size of the normal corpus (16 KiB lines: every shape, terminator and
 *   padding as a note and as a card; 128 KiB and 1 MiB lines: a rotation of them) join the worst-case corpora of
 *   bench/worst.ts and are judged like them (warm ≤ 10 × the normal warm median, cold ≤ 3 × the normal cold).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LINE_SHAPES, TERMINATOR_NAMES, TERMINATORS, type TerminatorName } from '../tests/helpers/long-lines.js';
import { serverMain } from './config.js';
import { mkdirOwner, writeHome, writeOwner } from './corpus.js';
import { connect, disconnect, timeCall, toolPayload, type McpSession } from './processes.js';
import { median, pushTo } from './stats.js';

/** The shapes measured: a heading, two fences, two front matter lines and a title (each v0.2's worst of its kind). */
const SHAPES = [
  'ATX heading, padded',
  'backtick fence run',
  'fence, closing run',
  'key, padded value',
  'list item, padded',
  'title, digits',
] as const;

/**
 * Line sizes in code units. The largest leaves room for a card's front matter and title within max_file_bytes at
 * its ceiling (1 MiB), so every file is read rather than skipped as too large.
 */
export const LINE_SIZES = [16 * 1024, 128 * 1024, 1024 * 1024 - 4096] as const;
/** Warm reads of every file (the median is judged). */
const READ_REPS = 5;
/** Queries of the long-line corpora: words of the notes' other lines, a prefix of the digit runs, a miss. */
const QUERIES = ['body', 'code', 'body of the note', '7777', 'lantern garden'];

/** One long-line file: which shape, terminator and size, and its id in its tree. */
export interface LineFile {
  shape: string;
  terminator: TerminatorName;
  lineUnits: number;
  kind: 'note' | 'card';
  id: string;
  bytes: number;
}

/** A corpus for bench/worst.ts's search loop: a name, its home, its size and queries. */
export interface LineCorpus {
  name: string;
  home: string;
  bytes: number;
  queries: string[];
}

function shapeOf(name: string): (typeof LINE_SHAPES)[number] {
  const s = LINE_SHAPES.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no line shape ${name}`);
  return s;
}

/** An ordinary note of about `units` code units: prose lines of about 80 characters under a heading. */
function plainNote(units: number): string {
  const line = 'The lantern garden is watered at dawn, and the notes say which beds were done. ';
  const lines = ['# An ordinary note', ''];
  for (let n = 0; n < units; n += line.length + 1) lines.push(line);
  return `${lines.join('\n')}\n`;
}

/** A live episodic card payload whose text is `text` (the keys a fleet card carries). */
function cardLine(id: number, text: string): string {
  const payload = {
    text,
    domain: 'work',
    client_id: 'bench',
    slot_name: 'episodic',
    memory_type: 'episodic',
    status: 'active',
    pinned: false,
    revision: 1,
    entities: [],
    relations: [],
    author_node: 'bench',
    author_profile: 'default',
    created_at: 1_760_000_000,
    updated_at: 1_760_000_000,
    expires_at: 0,
  };
  return JSON.stringify({ id, payload });
}

/**
 * Export `texts` as cards into `out` (an owner-only directory) with the CLI; returns the id of each text's file,
 * relative to `out`'s parent root as `<prefix>/…`, in the order of `texts`.
 */
function exportCards(out: string, scratch: string, texts: readonly string[], prefix: string): string[] {
  const jsonl = path.join(scratch, `${path.basename(out)}.jsonl`);
  writeOwner(jsonl, `${texts.map((t, i) => cardLine(i + 1, t)).join('\n')}\n`);
  const r = spawnSync(process.execPath, [serverMain, 'export-fleet', '--from-jsonl', jsonl, '--out', out, '--json'], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`export-fleet exited with ${r.status}: ${r.stderr.slice(0, 500)}`);
  fs.rmSync(jsonl);
  const dir = path.join(out, 'work', 'bench');
  const byId = new Map<number, string>();
  for (const name of fs.readdirSync(dir)) {
    const m = /^episodic--([0-9]+)\.md$/.exec(name);
    if (m !== null) byId.set(Number(m[1]), `${prefix}/work/bench/${name}`);
  }
  return texts.map((_, i) => {
    const id = byId.get(i + 1);
    if (id === undefined) throw new Error(`export-fleet wrote no file for card ${i + 1}`);
    return id;
  });
}

/** One planned long-line text. */
interface Planned {
  shape: string;
  terminator: TerminatorName;
  pad: string;
  lineUnits: number;
  text: string;
}

function plan(lineUnits: number, pads: readonly string[]): Planned[] {
  const out: Planned[] = [];
  for (const shape of SHAPES)
    for (const terminator of TERMINATOR_NAMES)
      for (const pad of pads)
        out.push({
          shape,
          terminator,
          pad,
          lineUnits,
          text: shapeOf(shape).note(lineUnits, TERMINATORS[terminator], pad),
        });
  return out;
}

/**
 * Write `planned` under `root` as notes (`notes/…`) and as cards (`cards/…`, through export-fleet); returns the
 * files and the bytes written.
 */
function writeLines(root: string, scratch: string, planned: readonly Planned[]): { files: LineFile[]; bytes: number } {
  mkdirOwner(path.join(root, 'notes'));
  mkdirOwner(path.join(root, 'cards'));
  const files: LineFile[] = [];
  let bytes = 0;
  planned.forEach((p, i) => {
    const id = `notes/l${i}-${p.lineUnits}.md`;
    writeOwner(path.join(root, id), p.text);
    const size = Buffer.byteLength(p.text);
    bytes += size;
    files.push({ shape: p.shape, terminator: p.terminator, lineUnits: p.lineUnits, kind: 'note', id, bytes: size });
  });
  const ids = exportCards(
    path.join(root, 'cards'),
    scratch,
    planned.map((p) => p.text),
    'cards',
  );
  planned.forEach((p, i) => {
    const size = fs.statSync(path.join(root, ids[i]!)).size;
    bytes += size;
    files.push({
      shape: p.shape,
      terminator: p.terminator,
      lineUnits: p.lineUnits,
      kind: 'card',
      id: ids[i]!,
      bytes: size,
    });
  });
  return { files, bytes };
}

/** The read tree: every shape × terminator × size as a note and a card, and ordinary notes and cards of each size. */
export interface ReadTree {
  home: string;
  files: LineFile[];
  /** Per size: the ordinary note's and card's ids. */
  plain: Record<number, { note: string; card: string }>;
}

/** Build the read tree and the three search corpora under `parent` (an owner-only directory). */
export function buildLineTrees(parent: string, log: (msg: string) => void): { reads: ReadTree; corpora: LineCorpus[] } {
  const scratch = path.join(parent, 'lines-scratch');
  mkdirOwner(scratch);

  const readRoot = path.join(parent, 'worst-lines-read');
  mkdirOwner(readRoot);
  const canonicalRead = fs.realpathSync(readRoot);
  const planned = LINE_SIZES.flatMap((n) => plan(n, [' ']));
  const { files, bytes } = writeLines(canonicalRead, scratch, planned);
  mkdirOwner(path.join(canonicalRead, 'plain'));
  const plainTexts = LINE_SIZES.map((n) => plainNote(n));
  for (const [i, n] of LINE_SIZES.entries())
    writeOwner(path.join(canonicalRead, 'plain', `plain-${n}.md`), plainTexts[i]!);
  mkdirOwner(path.join(canonicalRead, 'plain', 'cards'));
  const plainCards = exportCards(path.join(canonicalRead, 'plain', 'cards'), scratch, plainTexts, 'plain/cards');
  const plain: ReadTree['plain'] = {};
  LINE_SIZES.forEach((n, i) => {
    plain[n] = { note: `plain/plain-${n}.md`, card: plainCards[i]! };
  });
  const readHome = writeHome(path.join(parent, 'home-worst-lines-read'), canonicalRead, WORST_LINE_LIMITS);
  log(`worst cases: long-line read tree of ${files.length} files (${(bytes / 1e6).toFixed(1)} MB)`);

  const corpora: LineCorpus[] = [];
  const corpus = (slug: string, name: string, texts: Planned[]): void => {
    const root = path.join(parent, `worst-lines-${slug}`);
    mkdirOwner(root);
    const w = writeLines(fs.realpathSync(root), scratch, texts);
    const home = writeHome(path.join(parent, `home-worst-lines-${slug}`), fs.realpathSync(root), WORST_LINE_LIMITS);
    corpora.push({ name, home, bytes: w.bytes, queries: QUERIES });
  };
  // 16 KiB: every shape, terminator and padding, as a note and a card (144 files, about 2.4 MB).
  corpus('16k', 'long lines, 16 KiB (notes and cards)', plan(LINE_SIZES[0], [' ', '\t']));
  // 128 KiB: 10 of them (2.6 MB); 1 MiB: one (2 MB): the shapes in turn, each with the next terminator.
  const rotation = (n: number, count: number): Planned[] => {
    const all = plan(n, [' ']);
    return Array.from({ length: count }, (_, k) => all[(k * 7) % all.length]!);
  };
  corpus('128k', 'long lines, 128 KiB (notes and cards)', rotation(LINE_SIZES[1], 10));
  corpus('1m', 'long lines, 1 MiB (a note and a card)', rotation(LINE_SIZES[2], 1));
  fs.rmSync(scratch, { recursive: true });
  return { reads: { home: readHome, files, plain }, corpora };
}

/** The policy limits of the long-line homes (the read tree is larger than the other worst-case corpora). */
const WORST_LINE_LIMITS = {
  max_entries: 10000,
  max_total_bytes: 268435456,
  max_depth: 16,
  max_file_bytes: 1048576,
};

/** One read's figures. */
export interface LineRead extends LineFile {
  /** Median of READ_REPS warm reads. */
  ms: number;
  /** ÷ the median of the reads of the ordinary file of the same size and kind alternated with them (≤ 10). */
  sameSizeRatio: number;
  /** ÷ the normal corpus's read median (reported). */
  normalRatio: number;
}

export interface LineReads {
  /** Median read of the normal corpus's notes (about 2 KB each). */
  normalReadMs: number;
  /** Per size: the ordinary note's and card's read medians (over every read alternated with a long-line file). */
  plainMs: Record<number, { note: number; card: number }>;
  reads: LineRead[];
  pass: boolean;
}

/** One warm read of `id`, in ms; a refusal throws (it must never be timed as a fast answer). */
async function readOnce(s: McpSession, id: string): Promise<number> {
  const { ms, result } = await timeCall(s, 'memory_bridge_read', { id });
  const p = toolPayload(result);
  if (p.ok !== true) throw new Error(`read of ${id} refused: ${JSON.stringify(p).slice(0, 300)}`);
  return ms;
}

/**
 * Read every file of the read tree with one warm server, each time alternating with the ordinary file of its size
 * and kind (so a busy moment of the machine weighs on both sides of a ratio alike), and `normalIds` of the normal
 * corpus (home `normalHome`) with another server; judge each file's median against its ordinary file's.
 */
export async function measureLineReads(
  args: (home: string) => string[],
  tree: ReadTree,
  normalHome: string,
  normalIds: readonly string[],
): Promise<LineReads> {
  const normal = await connect(process.execPath, args(normalHome));
  let normalReadMs: number;
  try {
    await readOnce(normal, normalIds[0]!);
    const xs: number[] = [];
    for (let rep = 0; rep < READ_REPS; rep++) for (const id of normalIds) xs.push(await readOnce(normal, id));
    normalReadMs = median(xs);
  } finally {
    await disconnect(normal);
  }
  const s = await connect(process.execPath, args(tree.home));
  try {
    const baseline: Record<string, number[]> = {};
    for (const n of LINE_SIZES) for (const id of Object.values(tree.plain[n]!)) await readOnce(s, id);
    const reads: LineRead[] = [];
    for (const f of tree.files) {
      const plainId = tree.plain[f.lineUnits]![f.kind];
      const mine: number[] = [];
      const theirs: number[] = [];
      for (let rep = 0; rep < READ_REPS; rep++) {
        mine.push(await readOnce(s, f.id));
        theirs.push(await readOnce(s, plainId));
      }
      for (const ms of theirs) pushTo(baseline, plainId, ms);
      const ms = median(mine);
      reads.push({ ...f, ms, sameSizeRatio: ms / median(theirs), normalRatio: ms / normalReadMs });
    }
    const plainMs: LineReads['plainMs'] = {};
    for (const n of LINE_SIZES) {
      plainMs[n] = { note: median(baseline[tree.plain[n]!.note]!), card: median(baseline[tree.plain[n]!.card]!) };
    }
    return { normalReadMs, plainMs, reads, pass: reads.every((r) => r.sameSizeRatio <= 10) };
  } finally {
    await disconnect(s);
  }
}

const f2 = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const kib = (n: number): string => (n >= 1024 * 1000 ? '1 MiB' : `${n / 1024} KiB`);

/** The reads' Markdown table: per size and kind, the worst ratio (what is judged) and where it was, and the spread. */
export function renderLineReads(r: LineReads): string {
  const lines = [
    `Long-line reads (warm, median of ${READ_REPS}, alternated with an ordinary file of the same size and kind: prose lines of about 80 characters; the normal corpus's read median is ${f2(r.normalReadMs)} ms):`,
    '',
    '| line | kind | files | ordinary read ms | median read ms | slowest read ms | worst ÷ same size (≤ 10) | at shape / terminator | slowest ÷ normal read | verdict |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---|',
  ];
  for (const n of LINE_SIZES) {
    for (const kind of ['note', 'card'] as const) {
      const group = r.reads.filter((x) => x.lineUnits === n && x.kind === kind);
      const worst = group.reduce((a, b) => (b.sameSizeRatio > a.sameSizeRatio ? b : a));
      const slowest = group.reduce((a, b) => (b.ms > a.ms ? b : a));
      lines.push(
        `| ${kib(n)} | ${kind} | ${group.length} | ${f2(r.plainMs[n]![kind])} | ${f2(median(group.map((x) => x.ms)))} | ${f2(slowest.ms)} | ${worst.sameSizeRatio.toFixed(2)} | ${worst.shape} / ${worst.terminator} | ${slowest.normalRatio.toFixed(1)} | ${worst.sameSizeRatio <= 10 ? 'PASS' : 'MISS'} |`,
      );
    }
  }
  return lines.join('\n');
}
