/**
 * The cold ranking thread (src/search/cold-thread.ts) answers exactly what `searchCold` answers in the calling
 * thread — same ids, order, titles, snippets and `truncated`, scores included through the order — on the real
 * corpora that ship in tests/corpora (the project's Obsidian-style vault EN/JA, tldr Chinese and Korean pages, Node.js
 * site pages), on a generated corpus built to stress the
 * ranking (prefix families, words one edit apart, accents, Japanese, front matter) and on CJK, typo, prefix,
 * many-term and too-broad queries. The notes are real `ReadNote`s over one shared `TextArena`, as a scan makes
 * them, and the worker is a real thread; thresholds are lowered so small trees engage it. Also: every way the
 * thread declines (environment, a note without shared bytes, too broad, a failing or stalled worker) gives
 * `undefined`, and the caller's in-thread answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { Prng } from '../../bench/prng.js';
import { searchCold } from '../../src/search/cold.js';
import { type ColdThreadOptions, coldThread } from '../../src/search/cold-thread.js';
import type { ResponseLimits } from '../../src/search/types.js';
import { ReadNote, TextArena } from '../../src/trust/note-text.js';
import { noteBytesReason } from '../../src/trust/rule.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { markdownFiles, NODEJS, TLDR, VAULT } from '../helpers/corpora.js';
import { STAT } from './stat.js';

const WIDE: ResponseLimits = { snippet_chars: 300, total_chars: 100_000 };
const TIGHT: ResponseLimits = { snippet_chars: 40, total_chars: 200 };
/** Forces the worker on from the first note (production waits for thousands). */
const FORCED: ColdThreadOptions = { startAt: 0, engageAt: 0, useEnvironment: true, failAt: -1, stallAt: -1 };

/** Notes as a scan returns them: validated bytes kept in one shared arena, in sorted walk order. */
function readTree(dir: string, max = Infinity, arena = new TextArena(true)): ReadNote[] {
  const out: ReadNote[] = [];
  for (const id of markdownFiles(dir, max)) {
    const bytes = fs.readFileSync(path.join(dir, id));
    if (noteBytesReason(bytes) !== null) continue;
    out.push(new ReadNote(id, `k:${out.length}`, STAT, bytes, arena));
  }
  return out;
}

function fromTexts(texts: Record<string, string>): ReadNote[] {
  const arena = new TextArena(true);
  return Object.entries(texts).map(([id, text], i) => new ReadNote(id, `k:${i}`, STAT, Buffer.from(text), arena));
}

/** Prefix families, words one edit apart, accents, Japanese, astral characters, front matter, empty notes. */
function generated(count: number): ReadNote[] {
  const words = [
    'river',
    'rivers',
    'riverbank',
    'rive',
    'driver',
    'rover',
    'stone',
    'stones',
    'store',
    'storm',
    'moss',
    'fern',
    'ferns',
    'café',
    'cafe',
    'naïve',
    '検索',
    '検索エンジン',
    'ノート',
    '庭の手入れ',
    '𝒳ray',
    'lantern',
    'lanterns',
    'template',
    'templates',
    'temple',
  ];
  const prng = new Prng(20261201);
  const rand = (): number => prng.next();
  const pick = (): string => words[Math.floor(rand() * words.length)]!;
  const texts: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const body = Array.from({ length: Math.floor(rand() * 60) }, pick).join(rand() < 0.3 ? '、' : ' ');
    const head = rand() < 0.5 ? `# ${pick()} ${pick()}\n\n` : '';
    const front =
      rand() < 0.3 ? `---\ntitle: ${pick()}\ntags: [${pick()}, ${pick()}]\naliases: [${pick()}]\n---\n` : '';
    texts[`d${i % 7}/n${String(i).padStart(4, '0')}.md`] = i % 97 === 0 ? '' : `${front}${head}${body}\n`;
  }
  return fromTexts(texts);
}

const MANY = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

/** The worker's answer for `notes` (fed one by one as a scan would), and how the call ended. */
function viaThread(
  notes: readonly ScannedNote[],
  query: string,
  limit: number,
  limits: ResponseLimits,
): { answer: ReturnType<typeof searchCold> | undefined; outcome: string } {
  const feed = coldThread().feed(query, limit, limits);
  if (feed === null) return { answer: undefined, outcome: 'no_feed' };
  try {
    for (const note of notes) feed.accept(note);
    return { answer: feed.answer(notes.length), outcome: coldThread().lastOutcome };
  } finally {
    feed.close();
  }
}

test.beforeEach(() => coldThread().configure(FORCED, true));
test.after.always(() => coldThread().configure({ startAt: 2_500, engageAt: 5_000, failAt: -1, stallAt: -1 }, true));

/** Every query over `notes` (the first also with tight limits): the worker's answer deep-equals searchCold's. */
function sameAnswers(
  t: import('ava').ExecutionContext,
  notes: readonly ScannedNote[],
  queries: readonly string[],
): void {
  const runs = [[queries[0]!, 3, TIGHT] as const, ...queries.map((q) => [q, 10, WIDE] as const)];
  let hits = 0;
  for (const [query, limit, limits] of runs) {
    const { answer, outcome } = viaThread(notes, query, limit, limits);
    const own = searchCold(notes, query, limit, limits);
    t.is(outcome, 'worker', query);
    t.deepEqual(answer, own, query);
    hits += own.hits.length;
  }
  t.true(hits >= queries.length, 'the queries find notes (the comparison is not between empty answers)');
}

test.serial('the worker answers exactly as searchCold on the shipped Obsidian-style vault (EN and JA)', (t) => {
  const vault = readTree(VAULT);
  t.true(vault.length > 30);
  sameAnswers(t, vault, ['garden watering', 'irigation', 'backu', MANY]);
  sameAnswers(t, vault, ['プラグイン 設定', '水やり', '京都', 'vault']);
});

test.serial('the worker answers exactly as searchCold on tldr Chinese and Korean pages and Node.js site pages', (t) => {
  // Ids repeat across the two tldr trees (same command pages): each tree is compared on its own.
  const zh = readTree(path.join(TLDR, 'pages.zh'));
  const ko = readTree(path.join(TLDR, 'pages.ko'));
  const node = readTree(NODEJS);
  t.true(zh.length > 200 && ko.length > 200 && node.length > 100);
  sameAnswers(t, zh, ['压缩 文件', '文件', '目录 列表']);
  sameAnswers(t, ko, ['파일', '디렉토리 목록', '컨테이너']);
  sameAnswers(t, node, ['security releases', 'v20', 'relase', MANY]);
});

test.serial('the worker answers exactly as searchCold on a generated corpus built to stress the ranking', (t) => {
  const notes = generated(800);
  sameAnswers(t, notes, ['river', 'riv', 'rovers', 'café', 'ノート 庭', '𝒳ray', MANY]);
});

test.serial('a query reaching too many terms answers undefined (too_broad); searchCold builds the index', (t) => {
  const texts: Record<string, string> = {};
  for (let i = 0; i < 2000; i++)
    texts[`h/${i}.md`] = Array.from({ length: 10 }, (_, j) => `a${(i * 10 + j).toString(16)}`).join(' ');
  const notes = fromTexts(texts);
  const { answer, outcome } = viaThread(notes, 'a', 10, WIDE);
  t.is(answer, undefined);
  t.is(outcome, 'too_broad');
  t.is(coldThread().status, 'on', 'too broad is not a failure');
});

test.serial('MEMORY_BRIDGE_COLD_THREAD=0 gives no feed', (t) => {
  process.env.MEMORY_BRIDGE_COLD_THREAD = '0';
  try {
    t.is(coldThread().feed('vault', 5, WIDE), null);
  } finally {
    delete process.env.MEMORY_BRIDGE_COLD_THREAD;
  }
  t.not(coldThread().feed('vault', 5, WIDE), null);
});

test.serial('a query without terms gives no feed', (t) => {
  t.is(coldThread().feed('  ,;  ', 5, WIDE), null);
});

test.serial('a failing worker answers undefined and turns the thread off for the process', (t) => {
  coldThread().configure({ failAt: 3 });
  const notes = generated(50);
  const { answer, outcome } = viaThread(notes, 'river', 5, WIDE);
  t.is(answer, undefined);
  t.is(outcome, 'failed');
  t.is(coldThread().status, 'failed');
  t.is(coldThread().feed('river', 5, WIDE), null, 'off for later calls');
});

test.serial('a worker that stops making progress is given up (undefined) and the thread turns off', (t) => {
  coldThread().configure({ stallAt: 10, stallMs: 200 });
  const { answer, outcome } = viaThread(generated(50), 'river', 5, WIDE);
  t.is(answer, undefined);
  t.is(outcome, 'failed');
  t.is(coldThread().status, 'failed');
  coldThread().configure({ stallMs: 10_000 });
});

test.serial('a note without shared bytes (not read in a shared arena) makes the feed decline', (t) => {
  const notes: ScannedNote[] = [
    ...generated(20),
    new ReadNote('plain.md', 'k', STAT, Buffer.from('river'), new TextArena(false)),
  ];
  const { answer, outcome } = viaThread(notes, 'river', 5, WIDE);
  t.is(answer, undefined);
  t.is(outcome, 'not_engaged');
  t.is(coldThread().status, 'on');
});

test.serial('below the engage threshold the worker is never started', (t) => {
  coldThread().configure({ startAt: 100, engageAt: 200 });
  const before = coldThread().started;
  const { answer, outcome } = viaThread(generated(99), 'river', 5, WIDE);
  t.is(answer, undefined);
  t.is(outcome, 'not_engaged');
  t.is(coldThread().started, before);
});
