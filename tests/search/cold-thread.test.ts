/**
 * The cold thread (src/search/cold-thread.ts) builds the index a fresh `sync` of the same notes gives: adopted
 * (`NoteIndex.adoptBuilt`), it answers exactly what the synced index and `searchCold` answer — same ids, order,
 * titles, snippets and `truncated`, scores included through the order — and has the same statistics, on the real
 * corpora that ship in tests/corpora (the project's Obsidian-style vault EN/JA, tldr Chinese and Korean pages,
 * Node.js site pages), on a generated corpus built to stress the ranking (prefix families, words one edit apart,
 * accents, Japanese, front matter) and on CJK, typo, prefix, many-term and very broad queries; and it keeps
 * answering as the synced index after the same later syncs (notes changed, added, removed). The notes are real
 * `ReadNote`s over one shared `TextArena`, as a scan makes them, and the worker is a real thread; thresholds are
 * lowered so small trees engage it. Also: every way the thread declines (environment, a note without shared bytes,
 * a failing or stalled worker) gives `undefined`, and the caller's in-thread build.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { Prng } from '../../bench/prng.js';
import { searchCold } from '../../src/search/cold.js';
import { type ColdThreadOptions, coldThread } from '../../src/search/cold-thread.js';
import { type BuiltIndex, NoteIndex, type TextFacts } from '../../src/search/index.js';
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

/** The index the worker builds for `notes` (fed one by one as a scan would), and how the call ended. */
function viaThread(notes: readonly ScannedNote[]): { built: BuiltIndex | undefined; outcome: string } {
  const feed = coldThread().feed();
  if (feed === null) return { built: undefined, outcome: 'no_feed' };
  try {
    for (const note of notes) feed.accept(note);
    return { built: feed.built(notes.length), outcome: coldThread().lastOutcome };
  } finally {
    feed.close();
  }
}

/** A fresh index that adopted the worker's build of `notes`. */
function adopted(t: import('ava').ExecutionContext, notes: readonly ScannedNote[]): NoteIndex {
  const { built, outcome } = viaThread(notes);
  t.is(outcome, 'worker');
  const index = new NoteIndex();
  t.true(index.adoptBuilt(notes, built!));
  return index;
}

function synced(notes: readonly ScannedNote[]): NoteIndex {
  const index = new NoteIndex();
  index.sync(notes);
  return index;
}

test.beforeEach(() => coldThread().configure(FORCED, true));

test.serial("facts mode: each note's title, tags and body start are the ones the whole build makes", (t) => {
  for (const notes of [readTree(VAULT), readTree(path.join(TLDR, 'pages.ko')), readTree(NODEJS), generated(600)]) {
    const { built } = viaThread(notes);
    const feed = coldThread().feed('facts')!;
    let facts: TextFacts | undefined;
    try {
      for (const note of notes) feed.accept(note);
      t.false(feed.besideScan(), 'a facts worker asks the scan for nothing extra');
      facts = feed.facts(notes.length);
    } finally {
      feed.close();
    }
    t.is(coldThread().lastMode, 'facts');
    t.truthy(built);
    t.deepEqual(facts!.ids, built!.ids);
    t.deepEqual(facts!.titles, built!.titles);
    t.deepEqual(facts!.tags, built!.tags);
    t.deepEqual([...facts!.bodyByte], [...built!.bodyByte]);
  }
});
test.after.always(() => coldThread().configure({ startAt: 2_500, engageAt: 5_000, failAt: -1, stallAt: -1 }, true));

/**
 * Every query over `notes` (the first also with tight limits): the adopted index answers as the synced one and as
 * searchCold, and holds the same statistics.
 */
function sameAnswers(
  t: import('ava').ExecutionContext,
  notes: readonly ScannedNote[],
  queries: readonly string[],
): void {
  const mine = adopted(t, notes);
  const own = synced(notes);
  t.deepEqual(mine.stats(), own.stats());
  t.is(mine.size, own.size);
  const runs = [[queries[0]!, 3, TIGHT] as const, ...queries.map((q) => [q, 10, WIDE] as const)];
  let hits = 0;
  for (const [query, limit, limits] of runs) {
    const answer = mine.search(query, limit, limits);
    t.deepEqual(answer, own.search(query, limit, limits), query);
    t.deepEqual(answer, searchCold(notes, query, limit, limits), query);
    t.deepEqual(mine.rank(query), own.rank(query), query);
    hits += answer.hits.length;
  }
  t.deepEqual(mine.recent(10, WIDE), own.recent(10, WIDE));
  t.true(hits >= queries.length, 'the queries find notes (the comparison is not between empty answers)');
}

test.serial(
  'the adopted build answers exactly as a synced index on the shipped Obsidian-style vault (EN and JA)',
  (t) => {
    const vault = readTree(VAULT);
    t.true(vault.length > 30);
    sameAnswers(t, vault, ['garden watering', 'irigation', 'backu', MANY]);
    sameAnswers(t, vault, ['プラグイン 設定', '水やり', '京都', 'vault']);
  },
);

test.serial(
  'the adopted build answers exactly as a synced index on tldr Chinese and Korean pages and Node.js site pages',
  (t) => {
    // Ids repeat across the two tldr trees (same command pages): each tree is compared on its own.
    const zh = readTree(path.join(TLDR, 'pages.zh'));
    const ko = readTree(path.join(TLDR, 'pages.ko'));
    const node = readTree(NODEJS);
    t.true(zh.length > 200 && ko.length > 200 && node.length > 100);
    sameAnswers(t, zh, ['压缩 文件', '文件', '目录 列表']);
    sameAnswers(t, ko, ['파일', '디렉토리 목록', '컨테이너']);
    sameAnswers(t, node, ['security releases', 'v20', 'relase', MANY]);
  },
);

test.serial(
  'the adopted build answers exactly as a synced index on a generated corpus built to stress the ranking',
  (t) => {
    const notes = generated(800);
    sameAnswers(t, notes, ['river', 'riv', 'rovers', 'café', 'ノート 庭', '𝒳ray', MANY]);
  },
);

test.serial('a query reaching very many terms: the adopted build answers as the synced index', (t) => {
  const texts: Record<string, string> = {};
  for (let i = 0; i < 2000; i++)
    texts[`h/${i}.md`] = Array.from({ length: 10 }, (_, j) => `a${(i * 10 + j).toString(16)}`).join(' ');
  const notes = fromTexts(texts);
  const mine = adopted(t, notes);
  const own = synced(notes);
  for (const q of ['a', 'a1', 'a1f']) t.deepEqual(mine.search(q, 10, WIDE), own.search(q, 10, WIDE), q);
});

test.serial(
  'after the same later syncs (changed, added, removed notes) the adopted index answers as the synced one',
  (t) => {
    const notes = generated(300);
    const mine = adopted(t, notes);
    const own = synced(notes);
    const arena = new TextArena(true);
    const next: ScannedNote[] = [];
    for (const [i, note] of notes.entries()) {
      if (i % 10 === 3) continue; // removed
      if (i % 10 === 5)
        next.push(new ReadNote(note.id, `k2:${i}`, STAT, Buffer.from(`# stones ${i}\nriver moss`), arena));
      else next.push({ id: note.id, key: note.key, stat: note.stat, text: undefined });
    }
    next.push(new ReadNote('new/added.md', 'k:new', STAT, Buffer.from('lanterns by the riverbank'), arena));
    mine.sync(next);
    own.sync(next);
    t.deepEqual(mine.stats(), own.stats());
    for (const q of ['river', 'stones', 'lantern', 'café', 'ノート'])
      t.deepEqual(mine.search(q, 10, WIDE), own.search(q, 10, WIDE), q);
  },
);

test.serial('MEMORY_BRIDGE_COLD_THREAD=0 gives no feed', (t) => {
  process.env.MEMORY_BRIDGE_COLD_THREAD = '0';
  try {
    t.is(coldThread().feed(), null);
  } finally {
    delete process.env.MEMORY_BRIDGE_COLD_THREAD;
  }
  t.not(coldThread().feed(), null);
});

test.serial('a build that does not describe the notes is not adopted (the index stays empty)', (t) => {
  const notes = generated(40);
  const { built } = viaThread(notes);
  const index = new NoteIndex();
  t.false(index.adoptBuilt(notes.slice(1), built!));
  t.is(index.size, 0);
  const swapped = [notes[1]!, notes[0]!, ...notes.slice(2)];
  t.false(index.adoptBuilt(swapped, built!));
  t.is(index.size, 0);
});

test.serial('a failing worker answers undefined and turns the thread off for the process', (t) => {
  coldThread().configure({ failAt: 3 });
  const notes = generated(50);
  const { built, outcome } = viaThread(notes);
  t.is(built, undefined);
  t.is(outcome, 'failed');
  t.is(coldThread().status, 'failed');
  t.is(coldThread().feed(), null, 'off for later calls');
});

test.serial('a worker that stops making progress is given up (undefined) and the thread turns off', (t) => {
  coldThread().configure({ stallAt: 10, stallMs: 200 });
  const { built, outcome } = viaThread(generated(50));
  t.is(built, undefined);
  t.is(outcome, 'failed');
  t.is(coldThread().status, 'failed');
  coldThread().configure({ stallMs: 10_000 });
});

test.serial('a note without shared bytes (not read in a shared arena) makes the feed decline', (t) => {
  const notes: ScannedNote[] = [
    ...generated(20),
    new ReadNote('plain.md', 'k', STAT, Buffer.from('river'), new TextArena(false)),
  ];
  const { built, outcome } = viaThread(notes);
  t.is(built, undefined);
  t.is(outcome, 'not_engaged');
  t.is(coldThread().status, 'on');
});

test.serial('below the engage threshold the worker is never started', (t) => {
  coldThread().configure({ startAt: 100, engageAt: 200 });
  const before = coldThread().started;
  const { built, outcome } = viaThread(generated(99));
  t.is(built, undefined);
  t.is(outcome, 'not_engaged');
  t.is(coldThread().started, before);
});
