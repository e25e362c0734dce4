/**
 * A first call's index from a persisted index (docs/DESIGN.md, "The persisted index"): the entries this call's scan
 * revalidated (src/search/persisted.ts `revalidate`) become a `BuiltIndex` of exactly those notes, in this scan's
 * order, which `NoteIndex.adoptBuilt` then takes as it takes the cold thread's build; the other notes of the scan are
 * indexed from their text by the `sync` that follows. Nothing of an entry that did not revalidate survives: its
 * postings, field lengths and big term frequencies are dropped here, and the statistics are summed again over the
 * entries kept.
 *
 * What the file does not hold comes from this call's verified bytes of each kept note (the store built in memory):
 * its title, tags and where its body starts, as the steps `IndexBuilder.add` takes compute them (`textFactsOf`;
 * made on the cold thread beside the scan when it ran, src/search/cold-worker.ts 'facts' mode). So the adopted index
 * is, term for term and list for list, the one `IndexBuilder` would build from those notes, and after the `sync` it
 * holds what a fresh `sync` of the whole scan holds (note numbers aside, which no answer depends on).
 */
import type { ScannedNote } from '../trust/types.js';
import { type BuiltIndex, type TextFacts, textFactsOf } from './index/built.js';
import { TF_MASK } from './index/postings.js';
import type { PersistedIndex } from './persisted.js';
import { TermTable } from './terms.js';

/** Bits of a posting that hold the term frequency (TF_MASK's width). */
const TF_BITS = 32 - Math.clz32(TF_MASK);

/**
 * The `BuiltIndex` of the notes of `notes` whose entry `entryOf` names (−1: none), with those notes in scan order.
 *
 * @param notes   this call's scan; every note with an entry must carry its text (read and verified in this call)
 * @param entryOf per position of `notes`, the entry of `index` that stands for it, or −1 (`revalidate`)
 * @param facts   the cold thread's facts of `notes` (src/search/cold-worker.ts 'facts' mode), when it made them
 * @returns the build and the notes it describes, or null when it cannot be the one a build gives: the kept entries
 *   are not in scan order (the file's order came from another scan), a kept note has no text, or the terms do not
 *   intern to their ids
 */
export function builtFromPersisted(
  index: PersistedIndex,
  notes: readonly ScannedNote[],
  entryOf: Int32Array,
  facts?: TextFacts,
): { built: BuiltIndex; notes: ScannedNote[] } | null {
  const kept = keptNotes(index, notes, entryOf);
  if (kept === null) return null;
  const table = new TermTable();
  for (let t = 0; t < index.terms.length; t++) if (table.intern(index.terms[t]!) !== t) return null;
  const lists = keptPostings(index, kept.newDoc);
  const noteFacts = keptFacts(notes, kept, facts);
  if (noteFacts === null) return null;
  const F = index.fields;
  const n = kept.notes.length;
  const fieldLength = new Int32Array(n * F);
  const lengthSum = new Array<number>(F).fill(0);
  for (let doc = 0; doc < n; doc++) {
    const entry = kept.entries[doc]!;
    for (let f = 0; f < F; f++) {
      const length = index.fieldLength[entry * F + f]!;
      fieldLength[doc * F + f] = length;
      lengthSum[f]! += length;
    }
  }
  return {
    notes: kept.notes,
    built: {
      count: n,
      ids: kept.notes.map((note) => note.id),
      table: table.exportState(),
      ...lists,
      fieldLength,
      lengthSum,
      ...noteFacts,
    },
  };
}

/**
 * The kept notes in scan order, their positions in the scan, their entries, and each entry's new note number (−1:
 * dropped).
 */
function keptNotes(
  index: PersistedIndex,
  notes: readonly ScannedNote[],
  entryOf: Int32Array,
): { notes: ScannedNote[]; positions: number[]; entries: number[]; newDoc: Int32Array } | null {
  const newDoc = new Int32Array(index.count).fill(-1);
  const kept: ScannedNote[] = [];
  const positions: number[] = [];
  const entries: number[] = [];
  let last = -1;
  for (let pos = 0; pos < notes.length; pos++) {
    const entry = entryOf[pos]!;
    if (entry < 0) continue;
    // Lists keep note numbers ascending only when renumbering keeps the entries' order.
    if (entry <= last || notes[pos]!.text === undefined) return null;
    last = entry;
    newDoc[entry] = kept.length;
    kept.push(notes[pos]!);
    positions.push(pos);
    entries.push(entry);
  }
  return { notes: kept, positions, entries, newDoc };
}

/** Every list with the postings of kept entries only, renumbered; list counts, live terms and the sorted dictionary. */
function keptPostings(
  index: PersistedIndex,
  newDoc: Int32Array,
): Pick<BuiltIndex, 'postings' | 'listAt' | 'listSize' | 'big' | 'listCount' | 'liveTerms' | 'sorted'> {
  const F = index.fields;
  const slots = index.terms.length * F;
  const postings = new Int32Array(index.postings.length);
  const listAt = new Int32Array(slots);
  const listSize = new Int32Array(slots);
  const listCount = new Int32Array(index.terms.length);
  let at = 0;
  for (let slot = 0; slot < slots; slot++) {
    const from = index.listAt[slot]!;
    const to = from + index.listSize[slot]!;
    const start = at;
    for (let i = from; i < to; i++) {
      const p = index.postings[i]!;
      const doc = newDoc[p >> TF_BITS]!;
      if (doc >= 0) postings[at++] = (doc << TF_BITS) | (p & TF_MASK);
    }
    if (at === start) continue;
    listAt[slot] = start;
    listSize[slot] = at - start;
    listCount[(slot - (slot % F)) / F]!++;
  }
  const big: number[] = [];
  for (let k = 0; k < index.big.length; k += 3) {
    const doc = newDoc[index.big[k + 1]!]!;
    if (doc >= 0) big.push(index.big[k]!, doc, index.big[k + 2]!);
  }
  let liveTerms = 0;
  for (let t = 0; t < listCount.length; t++) if (listCount[t]! > 0) liveTerms++;
  return {
    postings: postings.slice(0, at),
    listAt,
    listSize,
    big: Int32Array.from(big),
    listCount,
    liveTerms,
    sorted: index.sorted.filter((t) => listCount[t]! > 0),
  };
}

/**
 * Per kept note: its title, tags and bytes before its body (as `IndexBuilder.add`), from `facts` (the cold thread's,
 * made from this scan's notes in this order: used when its ids are exactly the scan's) or else from its verified text.
 */
function keptFacts(
  notes: readonly ScannedNote[],
  kept: { notes: ScannedNote[]; positions: number[] },
  facts: TextFacts | undefined,
): Pick<BuiltIndex, 'titles' | 'tags' | 'bodyByte'> | null {
  const n = kept.notes.length;
  const titles: string[] = new Array(n);
  const tags: (readonly string[] | undefined)[] = new Array(n);
  const bodyByte = new Int32Array(n);
  const usable =
    facts !== undefined && facts.ids.length === notes.length && facts.ids.every((id, pos) => id === notes[pos]!.id);
  for (let doc = 0; doc < n; doc++) {
    const note = kept.notes[doc]!;
    if (note.text === undefined) return null;
    if (usable) {
      const pos = kept.positions[doc]!;
      titles[doc] = facts.titles[pos]!;
      tags[doc] = facts.tags[pos];
      bodyByte[doc] = facts.bodyByte[pos]!;
    } else {
      const own = textFactsOf(note.id, note.text);
      titles[doc] = own.title;
      tags[doc] = own.tags;
      bodyByte[doc] = own.bodyByte;
    }
  }
  return { titles, tags, bodyByte };
}
