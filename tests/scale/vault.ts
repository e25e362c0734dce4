/**
 * The generated vault of the scale tests: 100,000 trusted notes in a folder tree like a real vault's (25 areas, 250
 * topics, 2,000 folders, notes at every level), owner-only, 60–200 bytes each, and where root can, on a tmpfs of its
 * own (`mountTree`), where 100,000 files are made and removed in seconds.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { makeWorld, type World } from '../tools/world.js';

export const NOTES = 100_000;
const AREAS = 25;
const TOPICS = 10;
const FOLDERS = 8;
/** Notes directly in each area, each topic and each folder: 25 × (40 + 10 × (20 + 8 × 47)) = 100,000. */
const IN_AREA = 40;
const IN_TOPIC = 20;
const IN_FOLDER = 47;

/** Words of the generated notes (no note but the four below holds "lantern" or "harbour"). */
const SYLLABLES = ['ka', 'ro', 'mi', 'ten', 'sa', 'vel', 'do', 'quin', 'bar', 'lo', 'ne', 'fis', 'tu', 'gor'];

function wordAt(n: number): string {
  const a = SYLLABLES[n % SYLLABLES.length]!;
  const b = SYLLABLES[Math.floor(n / SYLLABLES.length) % SYLLABLES.length]!;
  const c = SYLLABLES[Math.floor(n / 196) % SYLLABLES.length]!;
  return `${a}${b}${c}`;
}

/** Note ids of the tree in creation order: area notes, then per topic its notes, then its folders' notes. */
export function treeIds(): string[] {
  const ids: string[] = [];
  const note = (dir: string, i: number): string => `${dir}/${wordAt(ids.length * 7 + 3)}-${i}.md`;
  for (let a = 0; a < AREAS; a++) {
    const area = `area-${wordAt(a * 31 + 5)}-${a}`;
    for (let i = 0; i < IN_AREA; i++) ids.push(note(area, i));
    for (let t = 0; t < TOPICS; t++) {
      const topic = `${area}/topic-${wordAt(t * 13 + a)}-${t}`;
      for (let i = 0; i < IN_TOPIC; i++) ids.push(note(topic, i));
      for (let f = 0; f < FOLDERS; f++) {
        const folder = `${topic}/${wordAt(f * 17 + t * 3 + a)}-${f}`;
        for (let i = 0; i < IN_FOLDER; i++) ids.push(note(folder, i));
      }
    }
  }
  return ids;
}

/** Owner-only directories and notes of 60–200 bytes; `special` ids get the text given instead. */
export function buildTree(root: string, ids: readonly string[], special: ReadonlyMap<string, string>): void {
  const made = new Set<string>();
  for (let n = 0; n < ids.length; n++) {
    const id = ids[n]!;
    const dir = path.dirname(id);
    if (!made.has(dir)) {
      fs.mkdirSync(path.join(root, dir), { recursive: true, mode: 0o700 });
      made.add(dir);
    }
    let text = special.get(id);
    if (text === undefined) {
      const words: string[] = [];
      for (let k = 0; k < 8 + (n % 20); k++) words.push(wordAt(n * 11 + k * 5));
      text = `# ${wordAt(n)} ${wordAt(n + 1)}\n\n${words.join(' ')}.\n`;
    }
    fs.writeFileSync(path.join(root, id), text, { mode: 0o600 });
  }
  // mkdir and open apply the umask: make sure of the modes the trust rule requires.
  for (const dir of made) {
    let d = dir;
    while (d !== '.') {
      fs.chmodSync(path.join(root, d), 0o700);
      d = path.dirname(d);
    }
  }
}

/**
 * As root, mount a tmpfs of its own on `dir` (owned by root, 0700, with POSIX ACLs); else, or when the mount fails,
 * nothing. Returns whether it mounted (then `unmountTree` after use).
 */
export function mountTree(dir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'mode=0700,size=1g,nr_inodes=300k', 'tmpfs', dir]);
    return true;
  } catch {
    return false;
  }
}

/** Undo `mountTree`. */
export function unmountTree(dir: string): void {
  execFileSync('umount', [dir]);
}

/**
 * What a scale test starts from: the bindings and a world allowing every note, its memory root a tmpfs where root
 * can mount one (`mountTree`; said in the log when it cannot). Undefined, with the test passed, without bindings.
 */
export function scaleWorld(t: ExecutionContext): { native: Native; w: World; mounted: boolean } | undefined {
  const native = getNative();
  if (native === null) {
    t.pass('no native bindings on this platform');
    return undefined;
  }
  const w = makeWorld({ allow: ['**'] }, 'home');
  const mounted = mountTree(w.root);
  if (process.getuid?.() === 0 && !mounted)
    t.log('no tmpfs could be mounted: the tree is built on the temporary directory’s filesystem');
  return { native, w, mounted };
}

/** A lap timer: each call gives the seconds since the previous one (or since it was made), e.g. "3.6 s". */
export function stopwatch(): () => string {
  let at = performance.now();
  return () => {
    const now = performance.now();
    const s = ((now - at) / 1000).toFixed(1);
    at = now;
    return `${s} s`;
  };
}
