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
 * Note the version of every hit of `answer`, found in `notes` (the call's scan, which holds every hit). One pass
 * over the scan, stopped once every hit is found: about one set look-up per note.
 */
export function noteHitVersions(answer: object, hits: readonly SearchHit[], notes: readonly ScannedNote[]): void {
  if (hits.length === 0) return;
  const wanted = new Set(hits.map((h) => h.id));
  const found = new Map<string, string>();
  for (const note of notes) {
    if (!wanted.has(note.id)) continue;
    found.set(note.id, noteVersion(identityKey(note.stat)));
    if (found.size === wanted.size) break;
  }
  versions.set(answer, found);
}

/** The version noted for hit `id` of `answer`, or undefined (none was noted: the trail was off for that call). */
export function hitVersionOf(answer: object, id: string): string | undefined {
  return versions.get(answer)?.get(id);
}
