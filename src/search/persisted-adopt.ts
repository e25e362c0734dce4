/**
 * A first call's index from a persisted index (docs/DESIGN.md, "The persisted index"): the entries this call's scan
 * revalidated (src/search/persisted.ts `revalidate`) become a `BuiltIndex` of exactly those notes, in this scan's
 * order, which `NoteIndex.adoptBuilt` then takes as it takes the cold thread's build; the other notes of the scan are
 * indexed from their text by the `sync` that follows. Nothing of an entry that did not revalidate survives: its
 * postings, field lengths and big term frequencies are dropped here, and the statistics are summed again over the
 * entries kept.
 *
 * What the file does not hold comes from this call's verified bytes of each kept note (the store built in memory):
 * its title, tags and where its body starts, as the steps `IndexBuilder.add` takes compute them (the title and body
 * start of `fieldTexts`, here from `titleAndBody`, and `noteTags`). So the adopted index is, term for term and list
 * for list, the one `IndexBuilder` would build from those notes, and after the `sync` it holds what a fresh `sync` of
 * the whole scan holds (note numbers aside, which no answer depends on).
 */
import { ownCopy } from '../text/own-copy.js';
import type { ScannedNote } from '../trust/types.js';
import type { BuiltIndex } from './index/built.js';
import { TF_MASK } from './index/postings.js';
import type { PersistedIndex } from './persisted.js';
import { noteTitle, titleAndBody } from './markdown.js';
import { noteTags } from './tags.js';
import { TermTable } from './terms.js';

/** Bits of a posting that hold the term frequency (TF_MASK's width). */
const TF_BITS = 32 - Math.clz32(TF_MASK);

/**
 * The `BuiltIndex` of the notes of `notes` whose entry `entryOf` names (−1: none), with those notes in scan order.
 *
 * @param notes   this call's scan; every note with an entry must carry its text (read and verified in this call)
 * @param entryOf per position of `notes`, the entry of `index` that stands for it, or −1 (`revalidate`)
 * @returns the build and the notes it describes, or null when it cannot be the one a build gives: the kept entries
 *   are not in scan order (the file's order came from another scan), a kept note has no text, or the terms do not
 *   intern to their ids
 */
export function builtFromPersisted(
  index: PersistedIndex,
  notes: readonly ScannedNote[],
  entryOf: Int32Array,
): { built: BuiltIndex; notes: ScannedNote[] } | null {
  const kept = keptNotes(index, notes, entryOf);
  if (kept === null) return null;
  const table = new TermTable();
  for (let t = 0; t < index.terms.length; t++) if (table.intern(index.terms[t]!) !== t) return null;
  const lists = keptPostings(index, kept.newDoc);
  const facts = noteFactsOf(kept.notes);
  if (facts === null) return null;
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
      ...facts,
    },
  };
}

/** The kept notes in scan order, their entries, and each entry's new note number (−1: dropped). */
function keptNotes(
  index: PersistedIndex,
  notes: readonly ScannedNote[],
  entryOf: Int32Array,
): { notes: ScannedNote[]; entries: number[]; newDoc: Int32Array } | null {
  const newDoc = new Int32Array(index.count).fill(-1);
  const kept: ScannedNote[] = [];
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
    entries.push(entry);
  }
  return { notes: kept, entries, newDoc };
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

/** Per kept note, from its verified text: its title, tags, and bytes before its body (as `IndexBuilder.add`). */
function noteFactsOf(notes: readonly ScannedNote[]): Pick<BuiltIndex, 'titles' | 'tags' | 'bodyByte'> | null {
  const titles: string[] = [];
  const tags: (readonly string[] | undefined)[] = [];
  const bodyByte = new Int32Array(notes.length);
  for (let doc = 0; doc < notes.length; doc++) {
    const note = notes[doc]!;
    const text = note.text;
    if (text === undefined) return null;
    // The title and body start `fieldTexts` gives, without the field texts only tokenizing needs.
    const { title, bodyAt } = titleAndBody(text);
    titles.push(ownCopy(noteTitle({ title }, note.id)));
    tags.push(noteTags(text));
    bodyByte[doc] = bodyAt === 0 ? 0 : Buffer.byteLength(text.slice(0, bodyAt), 'utf8');
  }
  return { titles, tags, bodyByte };
}
