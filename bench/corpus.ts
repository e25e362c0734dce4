/**
 * Benchmark corpora: owner-only trees of generated Markdown notes whose words are drawn, by their real frequency,
 * from the Obsidian help vault (`vocabularySource` in bench/config.ts, English and Japanese), plus a profile home whose
 * policy allows the whole tree at the hard ceilings of docs/POLICY.md.
 *
 * Layout of one corpus under the benchmark's temporary root (every directory 0700, every file 0600):
 *   <root>/vault-<N>/<folder…>/<note>.md     N notes, folders nested so note ids have 1–4 segments
 *   <root>/home-<N>/plugin-data/memory-bridge/policy.json
 */
import fs from 'node:fs';
import path from 'node:path';
import { Prng } from './prng.js';

/** Words with their counts, ready for frequency-weighted sampling. */
export interface Vocabulary {
  /** English words in descending count order (surface form as written in the source). */
  words: string[];
  /** Cumulative counts aligned with `words` (for binary-search sampling). */
  cumulative: number[];
  /** Japanese word segments (Intl.Segmenter word-like), with repeats by frequency. */
  japanese: string[];
  /** Lowercase ASCII words of 3–12 letters, usable in portable names. */
  nameWords: string[];
  /** Notes read from the source corpus. */
  sourceNotes: number;
}

/** Every `.md` file below `dir`, sorted, as absolute paths. */
function listMarkdown(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const ent of fs.readdirSync(d, { withFileTypes: true }).sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const full = path.join(d, ent.name);
      if (ent.isDirectory()) walk(full);
      else if (ent.isFile() && ent.name.endsWith('.md')) out.push(full);
    }
  };
  walk(dir);
  return out;
}

/**
 * Build the vocabulary from the Obsidian help corpus at `source` (the directory holding `en/` and `ja/`).
 * English words: runs of letters (with inner apostrophes or hyphens) outside URLs and code fences.
 * Japanese words: word-like segments of `Intl.Segmenter('ja')` that contain a kana or CJK character.
 * Throws when the corpus is missing: the benchmark must use real vocabulary, never a stand-in.
 */
export function loadVocabulary(source: string): Vocabulary {
  const en = path.join(source, 'en');
  const ja = path.join(source, 'ja');
  if (!fs.existsSync(en)) throw new Error(`vocabulary corpus not found at ${source}`);
  const counts = new Map<string, number>();
  const strip = (text: string): string =>
    text
      .replace(/```[\s\S]*?```/g, ' ')
      .replace(/https?:\/\/\S+/g, ' ')
      .replace(/!?\[\[[^\]]*\]\]/g, (m) => m.replace(/[[\]!|#]/g, ' '));
  const enFiles = listMarkdown(en);
  for (const file of enFiles) {
    const text = strip(fs.readFileSync(file, 'utf8'));
    for (const m of text.matchAll(/[A-Za-z](?:[A-Za-z'-]*[A-Za-z])?/g)) {
      const w = m[0];
      if (w.length > 24) continue;
      counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  const words = [...counts.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
  const cumulative: number[] = [];
  let sum = 0;
  for (const [, c] of words) {
    sum += c;
    cumulative.push(sum);
  }
  const nameSet = new Set<string>();
  for (const [w] of words) if (/^[a-z]{3,12}$/.test(w)) nameSet.add(w);

  const japanese: string[] = [];
  const jaFiles = fs.existsSync(ja) ? listMarkdown(ja) : [];
  const seg = new Intl.Segmenter('ja', { granularity: 'word' });
  for (const file of jaFiles) {
    for (const s of seg.segment(strip(fs.readFileSync(file, 'utf8')))) {
      if (s.isWordLike && /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(s.segment)) {
        japanese.push(s.segment);
      }
    }
  }
  return {
    words: words.map(([w]) => w),
    cumulative,
    japanese,
    nameWords: [...nameSet].sort(),
    sourceNotes: enFiles.length + jaFiles.length,
  };
}

/** One English word, drawn by its frequency in the source corpus. */
function drawWord(v: Vocabulary, rng: Prng): string {
  const total = v.cumulative[v.cumulative.length - 1] ?? 0;
  const x = rng.next() * total;
  let lo = 0;
  let hi = v.cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((v.cumulative[mid] ?? 0) > x) hi = mid;
    else lo = mid + 1;
  }
  return v.words[lo] ?? 'note';
}

function sentence(v: Vocabulary, rng: Prng, min: number, max: number): string {
  const n = rng.int(min, max);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(drawWord(v, rng));
  const s = parts.join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function japaneseSentence(v: Vocabulary, rng: Prng): string {
  if (v.japanese.length === 0) return '';
  const n = rng.int(8, 24);
  let s = '';
  for (let i = 0; i < n; i++) s += rng.pick(v.japanese);
  return `${s}。`;
}

/**
 * Target size of one note in bytes: 85% log-uniform in 0.3–3 KB, 15% uniform in 3–8 KB (the tail).
 */
function noteSize(rng: Prng): number {
  if (rng.chance(0.85)) return Math.round(300 * 10 ** rng.next());
  return rng.int(3000, 8192);
}

/** Markdown text of about `target` bytes: optional front matter, a title, headings, paragraphs, lists, links. */
function noteText(v: Vocabulary, rng: Prng, title: string, target: number, linkTargets: readonly string[]): string {
  const lines: string[] = [];
  if (rng.chance(0.4)) {
    const tags = [drawWord(v, rng), drawWord(v, rng)].map((t) => t.toLowerCase());
    lines.push('---', `title: ${title}`, `tags: [${tags.join(', ')}]`);
    if (rng.chance(0.3)) lines.push(`aliases: [${sentence(v, rng, 1, 3)}]`);
    lines.push(`created: 2026-0${rng.int(1, 9)}-1${rng.int(0, 9)}`, '---', '');
  }
  lines.push(`# ${title}`, '');
  const withJapanese = rng.chance(0.05);
  let text = `${lines.join('\n')}\n`;
  while (Buffer.byteLength(text) < target) {
    const r = rng.next();
    let block: string;
    if (r < 0.12) block = `## ${sentence(v, rng, 2, 5)}`;
    else if (r < 0.27) {
      const items: string[] = [];
      for (let i = rng.int(2, 5); i > 0; i--) items.push(`- ${sentence(v, rng, 3, 9)}`);
      block = items.join('\n');
    } else if (r < 0.33 && linkTargets.length > 0) {
      block = `See [[${rng.pick(linkTargets)}]] and ${sentence(v, rng, 3, 8).toLowerCase()}.`;
    } else if (withJapanese && r < 0.45) {
      block = japaneseSentence(v, rng) + japaneseSentence(v, rng);
    } else {
      const ss: string[] = [];
      for (let i = rng.int(2, 5); i > 0; i--) ss.push(`${sentence(v, rng, 6, 18)}.`);
      block = ss.join(' ');
    }
    text += `${block}\n\n`;
  }
  // The tail stops at 8 KiB: cut an overshooting last block at a space.
  const cap = 8192;
  if (Buffer.byteLength(text) > cap) {
    const bytes = Buffer.from(text)
      .subarray(0, cap)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    const cut = bytes.lastIndexOf(' ');
    text = `${cut > 0 ? bytes.slice(0, cut) : bytes}\n`;
  }
  return text;
}

/** What `generateCorpus` made. */
export interface Corpus {
  notes: number;
  /** Canonical vault root (the policy's `root`). */
  root: string;
  /** Profile home holding the policy. */
  home: string;
  /** Root-relative ids of every note, in creation order. */
  ids: string[];
  folders: number;
  /** Deepest id, in segments. */
  maxDepth: number;
  totalBytes: number;
}

/** Create `dir` owner-only (0700, whatever the umask). */
export function mkdirOwner(dir: string): void {
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o700);
}

/** Write `file` owner-only (0600, whatever the umask). */
export function writeOwner(file: string, text: string): void {
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

/**
 * Create the profile home `home` (owner-only) whose policy allows `**` below `root` with `limits`; returns the
 * home's canonical path.
 */
export function writeHome(home: string, root: string, limits: Record<string, number>): string {
  mkdirOwner(home);
  mkdirOwner(path.join(home, 'plugin-data'));
  mkdirOwner(path.join(home, 'plugin-data', 'memory-bridge'));
  const policy = { version: 1, root, allow: ['**'], limits };
  writeOwner(path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'), `${JSON.stringify(policy, null, 2)}\n`);
  return fs.realpathSync(home);
}

/**
 * Generate `count` notes under `<parent>/vault-<count>` with the seeded generator, and a home whose policy allows
 * `**` with max_entries max(10000, count), max_total_bytes 1 GiB and max_depth 16.
 * Folders hold 20–50 notes each and nest up to three levels, so ids have 1 to 4 segments; a few notes sit in the
 * root. Names are portable (`[a-z0-9-]` plus `.md`). `parent` must be an existing owner-only directory.
 */
export function generateCorpus(parent: string, count: number, v: Vocabulary, seed: number): Corpus {
  const rng = new Prng(seed);
  const root = path.join(parent, `vault-${count}`);
  mkdirOwner(root);
  const canonicalRoot = fs.realpathSync(root);

  // Plan folders: each new folder hangs below the root or below an existing folder of depth < 3.
  const folders: { rel: string; depth: number; names: Set<string> }[] = [];
  const rootFolder = { rel: '', depth: 0, names: new Set<string>() };
  const plan: { folder: typeof rootFolder; n: number }[] = [{ folder: rootFolder, n: Math.min(count, rng.int(5, 12)) }];
  let planned = plan[0]!.n;
  while (planned < count) {
    const candidates = [rootFolder, ...folders.filter((f) => f.depth < 3)];
    const parentFolder = rng.chance(0.25) ? rootFolder : rng.pick(candidates);
    let name = `${rng.pick(v.nameWords)}`;
    if (rng.chance(0.4)) name += `-${rng.pick(v.nameWords)}`;
    while (parentFolder.names.has(name)) name += `-${rng.int(2, 99)}`;
    parentFolder.names.add(name);
    const folder = {
      rel: parentFolder.rel === '' ? name : `${parentFolder.rel}/${name}`,
      depth: parentFolder.depth + 1,
      names: new Set<string>(),
    };
    folders.push(folder);
    mkdirOwner(path.join(canonicalRoot, folder.rel));
    const n = Math.min(count - planned, rng.int(20, 50));
    plan.push({ folder, n });
    planned += n;
  }

  const ids: string[] = [];
  const titles: string[] = [];
  let totalBytes = 0;
  let maxDepth = 0;
  for (const { folder, n } of plan) {
    for (let i = 0; i < n; i++) {
      const words: string[] = [];
      for (let k = rng.int(2, 4); k > 0; k--) words.push(rng.pick(v.nameWords));
      let base = words.join('-');
      while (folder.names.has(`${base}.md`)) base += `-${rng.int(2, 999)}`;
      folder.names.add(`${base}.md`);
      const title = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
      const id = folder.rel === '' ? `${base}.md` : `${folder.rel}/${base}.md`;
      const text = noteText(v, rng, title, noteSize(rng), titles.slice(-40));
      writeOwner(path.join(canonicalRoot, id), text);
      ids.push(id);
      titles.push(title);
      totalBytes += Buffer.byteLength(text);
      maxDepth = Math.max(maxDepth, id.split('/').length);
    }
  }

  const home = writeHome(path.join(parent, `home-${count}`), canonicalRoot, {
    max_entries: Math.max(10000, count),
    max_total_bytes: 1073741824,
    max_depth: 16,
  });
  return {
    notes: count,
    root: canonicalRoot,
    home,
    ids,
    folders: folders.length,
    maxDepth,
    totalBytes,
  };
}

/**
 * The corpus of `count` notes under `parent` left by an earlier run (its description is `corpus-<count>.json` beside
 * it), or a freshly generated one (`generateCorpus`) whose description is then written there for the next run.
 * A generation that did not finish left no description and is redone.
 */
export function reusedCorpus(parent: string, count: number, v: Vocabulary, seed: number): Corpus {
  const file = path.join(parent, `corpus-${count}.json`);
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as Corpus;
  for (const dir of [`vault-${count}`, `home-${count}`])
    fs.rmSync(path.join(parent, dir), { recursive: true, force: true });
  const c = generateCorpus(parent, count, v, seed);
  fs.writeFileSync(file, JSON.stringify(c), { mode: 0o600 });
  return c;
}
