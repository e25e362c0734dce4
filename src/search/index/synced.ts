/**
 * The held notes of the index and `sync`, which keeps them equal to one call's notes (docs/DESIGN.md, "The search
 * index"): per note its record (`Entry`), its text outside the JavaScript heap in a `TextStore` (decoded only for the
 * notes a search returns or a sync removes), its field lengths in one Int32Array and their exact sums; removal of
 * the postings of notes gone or replaced, renumbering when removals left most note numbers unused.
 *
 * Invariant: after `sync(notes)` the index holds exactly `notes` — a removed note's postings are deleted at once —
 * so every ranking statistic (note count, document frequency, average field length) is a function of the notes this
 * caller may see in this call only, and none depends on the history of syncs. A denied or untrusted note can
 * therefore never move another note's score, snippet or the `truncated` flag.
 */
import { carriesText, textBytesOf } from '../../trust/note-text.js';
import type { IdentityKey, ScannedNote } from '../../trust/types.js';
import { TextStore } from '../store.js';
import { noteTags } from '../tags.js';
import { copied, MAX_NOTE_NUMBERS, packed, Postings, TF_MASK } from './postings.js';
import { FIELDS, fieldTexts } from './scoring.js';
import { TermLists } from './term-lists.js';

const F = FIELDS.length;

/** What the index keeps per note. */
export interface Entry {
  key: IdentityKey;
  /** Note number (its place in the per-note arrays and in postings). */
  doc: number;
  /** Title shown in hits (`noteTitle`: own title, else file name). */
  title: string;
  /** Handle of the note's text in the store (decoded for snippets and removal), with where its body starts. */
  text: number;
  /** Size of the note file in bytes when it was indexed (for the cache's byte bound). */
  bytes: number;
  /** Modification time (ms since the epoch) from the scan's statx (NoteFacts). */
  mtimeMs: number;
  /** The note's tags (`noteTags`), or undefined: none (NoteFacts). */
  tags: readonly string[] | undefined;
}

/**
 * Heap bytes per held note besides its text and postings, for `memoryBytes`: the entry object, its slot in the
 * id-keyed Map, the title string, and its places in the per-note arrays (a heap snapshot at 10,000 generated notes
 * shows about 190).
 */
const NOTE_BYTES = 200;
/** Heap bytes per interned term: its string and bytes in the TermTable (about 50 for a short term) and its slots. */
const TERM_BYTES = 80;
/** New terms per note that `sync` makes room for before indexing new notes (a guess; arrays grow past it). */
const NEW_TERMS_PER_NOTE = 8;
/**
 * Notes removed or replaced in one sync above which their postings are taken out by one pass over every list instead
 * of finding each note's lists from its text (`dropRemoved`): a note's lists include those of the vault's commonest
 * words, so the lists a few dozen notes touch are already most of the postings, and finding them costs decoding and
 * tokenizing each text again (measured at 10,000 generated notes: 25 notes by their texts 60 ms, 111 notes by one
 * pass 26 ms).
 */
const BULK_REMOVAL_NOTES = 16;

/**
 * The held notes a `NoteScope` selects, over the index's note numbers as they are between two syncs that change
 * something (`NoteIndex.subsetOf`): membership, how many, and their field length sums (FIELDS order).
 */
export interface Subset {
  member: Uint8Array;
  count: number;
  lengthSum: number[];
  /** Selected postings of the (term, field) lists rankings have reached, by slot (at most MAX_SUBSET_SLOTS). */
  selected: Map<number, number>;
}

/**
 * The held notes and the sync that keeps them (extended by `NoteIndex`, which adds the query side, and by the cold
 * thread's builder; not used on its own).
 */
export class SyncedIndex extends TermLists {
  protected readonly entries = new Map<string, Entry>();
  protected readonly store = new TextStore();
  /** By note number: the note's id (undefined once removed), and its field lengths at number × F + field. */
  protected docIds: (string | undefined)[] = [];
  protected fieldLength = new Int32Array(0);
  /** Exact integer sum of each field's length over the held notes. */
  protected readonly lengthSum = new Array<number>(F).fill(0);
  protected nextDoc = 0;
  protected generation = 0;
  protected heldBytes = 0;
  /** Heap bytes of the held notes' tag lists (`tagBytesOf`), for `memoryBytes`. */
  protected tagBytes = 0;
  /** `memoryBytes`, as of the last sync that changed something. */
  private memory = 0;
  /**
   * Removals of the current sync whose postings are still in their lists (`dropRemoved` takes them out): the
   * removed note numbers, the slots of the lists holding their postings (each once, marked in `slotMarked`), and
   * how many postings they hold.
   */
  private removedDocs: number[] = [];
  private touchedSlots: number[] = [];
  private slotMarked = new Uint8Array(0);
  private removedPostings = 0;
  /** True when `dropRemoved` passes over every list (a bulk removal) instead of the touched ones. */
  private everyList = false;
  /** Ranking scratch, indexed by note number; all zero between calls. */
  protected total = new Float64Array(0);
  protected termScore = new Float64Array(0);
  protected cover = new Uint8Array(0);
  protected termMark = new Uint8Array(0);
  /**
   * The notes of the last `sync` (and in `lastDocs` the note number each one ended up with), by position. The scan hands back the very same
   * ScannedNote object for a note it found unchanged and known, call after call and in the same order, so on the
   * warm path `sync` recognises a note by object identity at the same position instead of a Map lookup by id.
   */
  protected lastNotes: (ScannedNote | undefined)[] = [];
  /** The note number each of `lastNotes` was matched to (-1 where none is remembered). */
  protected lastDocs = new Int32Array(0);
  /** By note number: the last `sync` generation that listed the note (cheaper than a Set of ids on the warm path). */
  protected seenAt = new Int32Array(0);
  /** Narrowed selections by scope key, least recently used first; forgotten by any sync that changes a note. */
  protected subsets = new Map<string, Subset>();

  /** Number of notes held. */
  get size(): number {
    return this.entries.size;
  }

  /** Summed file size, in bytes, of the notes held. */
  get bytes(): number {
    return this.heldBytes;
  }

  /**
   * What this index holds in memory, in bytes (what the per-view cache bounds; src/tools/index-cache.ts): the text
   * store's chunks, every postings list's buffer and objects, the per-term arrays and term table, and the per-note
   * record; the last two from the sizes a heap snapshot shows (TERM_BYTES, NOTE_BYTES). Kept up to date by `sync`
   * (recounted after a sync that changed anything: O(lists)).
   */
  get memoryBytes(): number {
    let subsets = 0;
    for (const subset of this.subsets.values()) subsets += subset.member.length + subset.selected.size * 16;
    return this.memory + subsets;
  }

  /** Recount `memory` (see `memoryBytes`). */
  protected recount(): void {
    let lists = 0;
    for (const list of this.lists) if (list !== undefined) lists += list.memoryBytes;
    this.memory =
      this.store.memoryBytes +
      lists +
      this.lists.length * 4 +
      this.stamp.length * (13 + 4 * F) +
      this.table.size * TERM_BYTES +
      this.dict.sorted.length * 4 +
      (this.fieldLength.length + this.total.length * 5 + this.seenAt.length + this.lastDocs.length) * 4 +
      this.entries.size * NOTE_BYTES +
      this.tagBytes;
  }

  /**
   * KnownNotes: true when the index holds verified text for exactly this id and identity key. With the scan's hint
   * (`last`, `at`; see KnownNotes), when the last sync received `last` at position `at`, it matched it to the
   * record of note number `lastDocs[at]`, whose key then equalled `last.key` (a record's key only ever changes to a
   * string of equal value). While that number is in use the record is live and is the one held under `id` (numbers
   * are never reused before `compactDocs`, which forgets the positions), so comparing with `last.key` gives the
   * map's answer without the lookup by id or a read of the record.
   */
  has(id: string, key: IdentityKey, last?: ScannedNote, at = -1): boolean {
    if (last !== undefined && this.lastNotes[at] === last) {
      const doc = this.lastDocs[at]!;
      if (doc >= 0 && this.docIds[doc] !== undefined) return last.key === key;
    }
    const held = this.entries.get(id);
    if (held === undefined || held.key !== key) return false;
    // Keep the caller's string: the scan passes the same key object for an unchanged note on every call, so the
    // next comparison is a pointer check instead of a character compare.
    held.key = key;
    return true;
  }

  /**
   * Make the index hold exactly `notes` (the notes of this call's scan, in any order):
   * - ids not in `notes` are removed;
   * - a note with `text` is (re)indexed from that text, replacing any older version;
   * - a note without `text` must already be held under the same key (the scan only omits text when `has` said
   *   so), and is kept as it is.
   *
   * @throws Error when a note without text is not held, or an id repeats (a caller bug; the bridge then drops the
   *   whole index).
   */
  sync(notes: readonly ScannedNote[]): void {
    // Notes seen in this sync carry this generation in seenAt.
    const generation = ++this.generation;
    let marked = 0;
    let changed = false;
    const lastNotes = this.lastNotes;
    const lastDocs = this.lastDocs;
    // Only notes without text are remembered (a note read in this call comes back as a new object next time, and
    // its text must not be kept alive by the memo).
    // A sync of as many notes as the last one (the warm case) rewrites the memo in place: position i is read before
    // it is written. A sync that throws forgets the memo (it may be half rewritten).
    const inPlace = lastNotes.length === notes.length;
    const nowNotes = inPlace ? lastNotes : new Array<ScannedNote | undefined>(notes.length);
    const nowDocs = inPlace ? lastDocs : new Int32Array(notes.length).fill(-1);
    this.everyList = false;
    let withText = 0;
    let replacing = 0;
    for (let i = 0; i < notes.length; i++) {
      if (!carriesText(notes[i]!)) continue;
      withText++;
      if (this.entries.size > 0 && this.entries.has(notes[i]!.id)) replacing++;
    }
    if (withText > 0) this.fitTerms(this.table.size + withText * NEW_TERMS_PER_NOTE);
    // Many held notes replaced at once: their postings go in one pass over every list (see `dropRemoved`).
    if (replacing > BULK_REMOVAL_NOTES) this.everyList = true;
    try {
      for (let i = 0; i < notes.length; i++) {
        const note = notes[i]!;
        if (lastNotes[i] === note) {
          // The last sync got this very object here, without text (only those are remembered, and a ScannedNote is
          // never changed), and matched it to the record of note number lastDocs[i] under the same key (a record's
          // key only ever changes to a string of equal value). While that number is in use, its record is live and
          // is the one held for the id: the note is unchanged and known, without reading the note or the record.
          const doc = lastDocs[i]!;
          // (this.seenAt, not a copy: indexing a new note may grow it.)
          if (doc >= 0 && this.docIds[doc] !== undefined) {
            if (this.seenAt[doc] === generation) throw new Error('NoteIndex.sync: duplicate id');
            marked++;
            this.seenAt[doc] = generation;
            if (!inPlace) {
              nowNotes[i] = note;
              nowDocs[i] = doc;
            }
            continue;
          }
        }
        const held = this.entries.get(note.id);
        if (held !== undefined && this.seenAt[held.doc] === generation) throw new Error('NoteIndex.sync: duplicate id');
        marked++;
        // Read once: a note read in this call decodes its text from the scan's bytes on every read.
        const text = note.text;
        if (text === undefined) {
          if (held === undefined || held.key !== note.key) throw new Error('NoteIndex.sync: unknown note without text');
          this.seenAt[held.doc] = generation;
          nowNotes[i] = note;
          nowDocs[i] = held.doc;
          continue;
        }
        nowNotes[i] = undefined;
        nowDocs[i] = -1;
        if (held !== undefined) this.removeEntry(note.id, held, this.everyList);
        const { texts, title, body } = fieldTexts(text, note.id);
        const doc = this.addDocument(note.id, texts);
        const bodyAt = text.length - body.length;
        const bytes = textBytesOf(note);
        const entry: Entry = {
          key: note.key,
          doc,
          title,
          text:
            bytes === undefined
              ? this.store.put(text, bodyAt)
              : this.store.putBytes(bytes, bodyAt === 0 ? 0 : Buffer.byteLength(text.slice(0, bodyAt), 'utf8')),
          bytes: note.stat.size,
          mtimeMs: Number(note.stat.mtimeNs / 1_000_000n),
          tags: noteTags(text),
        };
        this.tagBytes += tagBytesOf(entry.tags);
        this.entries.set(note.id, entry);
        this.seenAt[doc] = generation;
        this.heldBytes += entry.bytes;
        changed = true;
      }
    } catch (err) {
      this.subsets.clear();
      this.lastNotes = [];
      this.lastDocs = new Int32Array(0);
      // The notes replaced before the failure lose their postings now (in a pass over every list when some were
      // removed without finding their lists); a sync that completes does it once, below.
      this.dropRemoved();
      throw err;
    } finally {
      this.flush();
    }
    this.lastNotes = nowNotes;
    this.lastDocs = nowDocs;
    const gone: [string, Entry][] = [];
    if (marked < this.entries.size) {
      const seenAt = this.seenAt;
      for (const [id, entry] of this.entries) if (seenAt[entry.doc] !== generation) gone.push([id, entry]);
    }
    // Many notes gone at once (a policy edit that narrows the view, a folder moved away): their postings are taken
    // out by one pass over every list, without decoding their texts to find their terms again.
    const bulk = this.everyList || gone.length + this.removedDocs.length > BULK_REMOVAL_NOTES;
    for (const [id, entry] of gone) this.removeEntry(id, entry, bulk);
    if (bulk) this.everyList = true;
    // Replaced and gone notes alike: one pass over each list they touch.
    this.dropRemoved();
    if (changed || gone.length > 0) {
      // Note numbers, field lengths or the held set moved: every narrowed selection is recounted when next asked.
      this.subsets.clear();
      this.tidy();
    }
    if (this.bulkFlushes > 1) this.repackPostings();
    this.bulkFlushes = 0;
    if (withText > 0) this.trimTerms();
    if (changed || gone.length > 0) this.recount();
  }

  /** Upkeep after a sync that changed something: settle the dictionary, compact what removals left behind. */
  private tidy(): void {
    const deadTerms = this.table.size - this.liveTerms;
    if (deadTerms > 1024 && deadTerms > this.liveTerms) this.compactTerms();
    if (this.nextDoc > 1024 && this.nextDoc > 2 * this.entries.size) this.compactDocs();
    this.dict.settle((id) => {
      this.inDict[id] = 0;
    });
  }

  /** Grow the per-note arrays to hold note number `doc`. */
  protected fitDocs(doc: number): void {
    if (this.fieldLength.length > doc * F) return;
    const cap = Math.max(64, (doc + 1) * 2);
    this.fieldLength = copied(this.fieldLength, cap * F, this.fieldLength.length);
    this.seenAt = copied(this.seenAt, cap, this.seenAt.length);
  }

  /** Index a note's field texts under a new note number; its postings are staged (written by `flush`). */
  protected addDocument(id: string, texts: readonly string[]): number {
    if (this.nextDoc >= MAX_NOTE_NUMBERS) throw new Error('NoteIndex: note numbers exhausted');
    const doc = this.nextDoc++;
    this.fitDocs(doc);
    this.docIds[doc] = id;
    for (let f = 0; f < F; f++) {
      const distinct = this.countTerms(texts[f]!);
      this.fieldLength[doc * F + f] = distinct;
      this.lengthSum[f]! += distinct;
      this.makeRoom(distinct);
      const ids = this.table.scratch;
      const { count, lists, staged, pendingSlot, pendingPosting, listCount } = this;
      let at = this.pending;
      for (let k = 0; k < distinct; k++) {
        const term = ids[k]!;
        const slot = term * F + f;
        if (lists[slot] === undefined) {
          lists[slot] = new Postings();
          if (listCount[term]!++ === 0) this.termBorn(term);
        }
        staged[slot]!++;
        const tf = count[term]!;
        if (tf >= TF_MASK) lists[slot]!.keepBig(doc, tf);
        pendingSlot[at] = slot;
        pendingPosting[at] = packed(doc, tf);
        at++;
      }
      this.pending = at;
    }
    return doc;
  }

  /**
   * Remove a held note: its record, text and statistics at once; its postings by `dropRemoved` at the end of the
   * sync, which takes every removed note's postings out of each list in one pass. (Taking each note's postings out
   * one at a time moved every later posting of each of its lists, once per note: a sync that removed or replaced
   * 10,000 of 100,000 notes did on the order of 10^10 moves, about 47 s.) Cost here: the note's text, once.
   */
  private removeEntry(id: string, entry: Entry, bulk = false): void {
    this.tagBytes -= tagBytesOf(entry.tags);
    const doc = entry.doc;
    if (!bulk) this.touchSlotsOf(id, entry);
    for (let f = 0; f < F; f++) {
      // A note's field length is its number of distinct terms in the field: its postings in that field's lists.
      const length = this.fieldLength[doc * F + f]!;
      this.removedPostings += length;
      this.lengthSum[f]! -= length;
      this.fieldLength[doc * F + f] = 0;
    }
    this.removedDocs.push(doc);
    this.docIds[doc] = undefined;
    this.store.free(entry.text);
    this.entries.delete(id);
    this.heldBytes -= entry.bytes;
  }

  /** Mark the lists holding postings of a held note (found again from its stored text) for `dropRemoved`. */
  private touchSlotsOf(id: string, entry: Entry): void {
    const { texts } = fieldTexts(this.store.get(entry.text), id);
    for (let f = 0; f < F; f++) {
      const distinct = this.countTerms(texts[f]!);
      const ids = this.table.scratch;
      if (this.slotMarked.length < this.lists.length) {
        const grown = new Uint8Array(this.lists.length * 2);
        grown.set(this.slotMarked);
        this.slotMarked = grown;
      }
      const marked = this.slotMarked;
      for (let k = 0; k < distinct; k++) {
        const slot = ids[k]! * F + f;
        if (marked[slot] === 0) {
          marked[slot] = 1;
          this.touchedSlots.push(slot);
        }
      }
    }
  }

  /**
   * Take the postings of the notes `removeEntry` removed in this sync out of their lists: one pass over each list
   * that holds any of them, or, after a bulk removal (more than BULK_REMOVAL_NOTES notes gone in one sync), over
   * every list. A list left empty goes, and a term left without lists is dead. Cost: the removed notes' distinct
   * terms (their texts decoded again) plus the length of the lists they touch, at most every posting once; after a
   * bulk removal, every posting once and no text.
   *
   * @throws Error when the lists did not hold exactly the postings the removed notes' field lengths count (an index
   *   bug)
   */
  private dropRemoved(): void {
    if (this.removedDocs.length === 0) return;
    const dead = new Uint8Array(this.nextDoc);
    for (const doc of this.removedDocs) dead[doc] = 1;
    let dropped = 0;
    for (const slot of this.touchedSlots) this.slotMarked[slot] = 0;
    const drop = (slot: number): void => {
      const list = this.lists[slot];
      if (list === undefined) return;
      dropped += list.dropDead(dead);
      if (list.size === 0) {
        this.lists[slot] = undefined;
        const term = (slot - (slot % F)) / F;
        if (--this.listCount[term]! === 0) this.liveTerms--;
      }
    };
    if (this.everyList) for (let slot = 0; slot < this.lists.length; slot++) drop(slot);
    else for (const slot of this.touchedSlots) drop(slot);
    const expected = this.removedPostings;
    this.removedDocs = [];
    this.touchedSlots = [];
    this.removedPostings = 0;
    this.everyList = false;
    if (dropped !== expected) throw new Error('NoteIndex: a held note lost a posting');
  }

  /** Number the held notes 0, 1, 2, … again (in their old order) when removals left most numbers unused. */
  private compactDocs(): void {
    const map = new Int32Array(this.nextDoc).fill(-1);
    const docIds: string[] = [];
    const lengths = new Int32Array(Math.max(64, this.entries.size * 2) * F);
    for (let doc = 0; doc < this.nextDoc; doc++) {
      const id = this.docIds[doc];
      if (id === undefined) continue;
      const to = docIds.length;
      map[doc] = to;
      docIds.push(id);
      for (let f = 0; f < F; f++) lengths[to * F + f] = this.fieldLength[doc * F + f]!;
    }
    for (const list of this.lists) list?.renumber(map);
    for (const entry of this.entries.values()) entry.doc = map[entry.doc]!;
    this.docIds = docIds;
    this.fieldLength = lengths;
    this.nextDoc = docIds.length;
    this.lastNotes = [];
    this.lastDocs = new Int32Array(0);
    this.seenAt = new Int32Array(this.fieldLength.length / F);
  }
}

/**
 * Heap bytes of one note's tag list (NoteFacts.tags) as `memoryBytes` counts them: the array and, per tag, its slot
 * and its string (a header and two bytes per UTF-16 unit). None for a note without tags.
 */
export function tagBytesOf(tags: readonly string[] | undefined): number {
  if (tags === undefined) return 0;
  let n = 32;
  for (const tag of tags) n += 8 + 24 + 2 * tag.length;
  return n;
}
