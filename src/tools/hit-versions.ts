/**
 * The `version` of each note a search released, for the audit record only (docs/AUDIT.md §Records): the same
 * opaque value a read of that note would answer now (`noteVersion` of the identity of the stat the scan verified;
 * not the scan's own key, which may carry a racy or writers tag). Search
 * answers do not carry it (docs/TOOLS.md §Results); the search step notes it here beside its answer, and the audit
 * step takes it from here. A weak map: an answer that was never recorded leaves nothing behind.
 */
import { identityKey } from '../trust/rule.js';
import type { ScannedNote } from '../trust/types.js';
import type { SearchHit } from '../search/types.js';
import { noteVersion } from './read.js';

const versions = new WeakMap<object, ReadonlyMap<string, string>>();

/**
 * The scan's order on ids: depth first, each directory's entries in ascending order of their names
 * (docs/TRUST.md §Scan), so segment by segment, a segment that is a prefix of the other's coming first. For
 * names of ASCII and of the Basic Multilingual Plane below U+E000 this is the byte order the scan lists in;
 * `findNote` falls back to a pass over the scan where it is not.
 */
function scanCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) {
    const x = a.charCodeAt(k);
    const y = b.charCodeAt(k);
    if (x === y) continue;
    if (x === 0x2f) return -1;
    if (y === 0x2f) return 1;
    return x - y;
  }
  return a.length - b.length;
}

/** The scanned note `id`: a binary search in scan order, else (a name outside that order) one pass. */
function findNote(notes: readonly ScannedNote[], id: string): ScannedNote | undefined {
  let lo = 0;
  let hi = notes.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = scanCompare(notes[mid]!.id, id);
    if (c === 0) return notes[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return notes.find((n) => n.id === id);
}

/**
 * Note the version of every hit of `answer`, found in `notes` (the call's scan, which holds every hit): about
 * log2(notes) id compares per hit.
 */
export function noteHitVersions(answer: object, hits: readonly SearchHit[], notes: readonly ScannedNote[]): void {
  if (hits.length === 0) return;
  const found = new Map<string, string>();
  for (const hit of hits) {
    const note = findNote(notes, hit.id);
    if (note !== undefined) found.set(hit.id, noteVersion(identityKey(note.stat)));
  }
  versions.set(answer, found);
}

/** The version noted for hit `id` of `answer`, or undefined (none was noted: the trail was off for that call). */
export function hitVersionOf(answer: object, id: string): string | undefined {
  return versions.get(answer)?.get(id);
}
