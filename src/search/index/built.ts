/**
 * The transfer form of an index (docs/DESIGN.md, "The first search of a view"): `IndexBuilder` builds it on the cold
 * thread (src/search/cold-worker.ts) note by note, `BuiltIndex` is what a structured clone moves, and
 * `NoteIndex.adoptBuilt` (note-index.ts) turns it into the index a fresh `sync` of the same notes gives.
 */
import { termStateBuffers, type TermTableState } from '../terms.js';
import { noteTitle, titleAndBody } from '../markdown.js';
import { noteTags } from '../tags.js';
import { ownCopy } from '../../text/own-copy.js';
import { copied } from './postings.js';
import { FIELDS, fieldTexts } from './scoring.js';
import { SyncedIndex } from './synced.js';

const F = FIELDS.length;

/**
 * An index built from note texts on another thread (the cold thread, src/search/cold-worker.ts; docs/DESIGN.md
 * "The first search of a view"), in the shape a structured clone moves cheaply: typed arrays (moved by the transfer
 * list, `builtBuffers`), the term strings, titles and tags. Notes are numbered 0 .. count-1 in the order they were
 * added (the scan's order). It holds no note text, no identity key and no stat: those are the scan's, and the
 * adopting thread takes them from its own scan result (`NoteIndex.adoptBuilt`).
 */
export interface BuiltIndex {
  count: number;
  ids: string[];
  table: TermTableState;
  /** Every posting, list after list (slot order). */
  postings: Int32Array<ArrayBuffer>;
  /** Per slot (term id × FIELDS.length + field): where its list starts in `postings` and its length (0: no list). */
  listAt: Int32Array<ArrayBuffer>;
  listSize: Int32Array<ArrayBuffer>;
  /** Term frequencies of TF_MASK or more: (slot, note number, frequency) triples. */
  big: Int32Array<ArrayBuffer>;
  listCount: Int32Array<ArrayBuffer>;
  liveTerms: number;
  /** The dictionary's term ids in lexicographic order (settled: nothing recent). */
  sorted: Int32Array<ArrayBuffer>;
  /** Field lengths by note number × FIELDS.length + field, and their sums. */
  fieldLength: Int32Array<ArrayBuffer>;
  lengthSum: number[];
  titles: string[];
  tags: (readonly string[] | undefined)[];
  /** Per note: bytes of its UTF-8 text before its body (what the store's `putBytes` takes). */
  bodyByte: Int32Array<ArrayBuffer>;
}

/** The buffers of a `BuiltIndex` a transfer list moves (none of them is used by the sender afterwards). */
export function builtBuffers(built: BuiltIndex): ArrayBuffer[] {
  return [
    ...termStateBuffers(built.table),
    ...[built.postings, built.listAt, built.listSize, built.big, built.listCount, built.sorted, built.fieldLength].map(
      (a) => a.buffer as ArrayBuffer,
    ),
    built.bodyByte.buffer as ArrayBuffer,
  ];
}

/** The index `IndexBuilder` fills: a fresh `SyncedIndex` with the two steps of a build. */
class BuildingIndex extends SyncedIndex {
  /** `IndexBuilder.add`'s step: index a note's field texts under the next note number (no entry, no text kept). */
  addBuilt(id: string, texts: readonly string[]): void {
    this.addDocument(id, texts);
  }

  /** `IndexBuilder.finish`'s step: write what is staged, settle the dictionary, and hand everything over. */
  exportBuilt(
    ids: string[],
    titles: string[],
    tags: (readonly string[] | undefined)[],
    bodyByte: Int32Array<ArrayBuffer>,
  ): BuiltIndex {
    this.flush();
    this.dict.settle(() => undefined, true);
    const slots = this.lists.length;
    let total = 0;
    for (const list of this.lists) if (list !== undefined) total += list.size;
    const postings = new Int32Array(total);
    const listAt = new Int32Array(slots);
    const listSize = new Int32Array(slots);
    const big: number[] = [];
    let at = 0;
    for (let slot = 0; slot < slots; slot++) {
      const list = this.lists[slot];
      if (list === undefined) continue;
      postings.set(list.view(), at);
      listAt[slot] = at;
      listSize[slot] = list.size;
      at += list.size;
      for (const [doc, tf] of list.bigEntries()) big.push(slot, doc, tf);
    }
    const n = ids.length;
    return {
      count: n,
      ids,
      table: this.table.exportState(),
      postings,
      listAt,
      listSize,
      big: Int32Array.from(big),
      listCount: this.listCount.slice(0, this.table.size),
      liveTerms: this.liveTerms,
      sorted: this.dict.sorted,
      fieldLength: this.fieldLength.slice(0, n * F),
      lengthSum: [...this.lengthSum],
      titles,
      tags,
      bodyByte,
    };
  }
}

/**
 * Builds the index of a first call note by note as the scan accepts them, on the cold thread (src/search/cold-worker.ts):
 * the same steps `NoteIndex.sync` of a fresh index takes for each note (`fieldTexts`, term ids in order of first
 * sight, staged postings written in batches), without a text store or identity keys. `finish` hands over a
 * `BuiltIndex`, which `NoteIndex.adoptBuilt` turns into the index a fresh `sync` of the same notes gives.
 */
export class IndexBuilder {
  private readonly index = new BuildingIndex();
  /** Each note's id, title, tags and body start, collected as the facts-only builder collects them. */
  private readonly facts = new TextFactsBuilder();
  private readonly seen = new Set<string>();

  /** Notes added so far. */
  get count(): number {
    return this.facts.count;
  }

  /**
   * Index the next note (note number `count`) from its text.
   *
   * @throws Error when the id repeats (what `sync` refuses)
   */
  add(id: string, text: string): void {
    if (this.seen.has(id)) throw new Error('IndexBuilder: duplicate id');
    this.seen.add(id);
    const { texts, title, body } = fieldTexts(text, id);
    this.index.addBuilt(id, texts);
    this.facts.push(id, { title, tags: noteTags(text), bodyByte: bodyByteOf(text, text.length - body.length) });
  }

  /** The built index (the builder is not used afterwards). */
  finish(): BuiltIndex {
    const { ids, titles, tags, bodyByte } = this.facts.finish();
    return this.index.exportBuilt(ids, titles, tags, bodyByte);
  }
}

/**
 * Per note, in the order added: its id, the title a hit shows, its tags and the UTF-8 bytes before its body; what a
 * persisted index cannot hold (it keeps no note text) and `IndexBuilder.add` computes beside the postings.
 */
export interface TextFacts {
  ids: string[];
  titles: string[];
  tags: (readonly string[] | undefined)[];
  bodyByte: Int32Array<ArrayBuffer>;
}

/**
 * The facts of one note's `text` (id `id`), as `IndexBuilder.add` computes them: `fieldTexts`'s title (from
 * `titleAndBody`, without the field texts only tokenizing needs), `noteTags`, and the body's start in UTF-8 bytes.
 */
export function textFactsOf(id: string, text: string): NoteTextFacts {
  const { title, bodyAt } = titleAndBody(text);
  return {
    // Kept for the life of the view: an own copy, so the title does not keep the note's whole text alive.
    title: ownCopy(noteTitle({ title }, id)),
    tags: noteTags(text),
    bodyByte: bodyByteOf(text, bodyAt),
  };
}

/** One note's part of `TextFacts`. */
export interface NoteTextFacts {
  title: string;
  tags: readonly string[] | undefined;
  bodyByte: number;
}

/** UTF-8 bytes of `text` before UTF-16 index `bodyAt` (where its body starts; what the store's `putBytes` takes). */
function bodyByteOf(text: string, bodyAt: number): number {
  return bodyAt === 0 ? 0 : Buffer.byteLength(text.slice(0, bodyAt), 'utf8');
}

/** Collects `TextFacts` note by note (the cold thread's 'facts' mode, src/search/cold-worker.ts). */
export class TextFactsBuilder {
  private readonly ids: string[] = [];
  private readonly titles: string[] = [];
  private readonly tags: (readonly string[] | undefined)[] = [];
  private bodyByte = new Int32Array(1024);

  /** Notes added so far. */
  get count(): number {
    return this.ids.length;
  }

  /** The facts of the next note, from its text. */
  add(id: string, text: string): void {
    this.push(id, textFactsOf(id, text));
  }

  /** The next note's facts, already computed (`IndexBuilder.add` has its title and body from `fieldTexts`). */
  push(id: string, facts: NoteTextFacts): void {
    const n = this.ids.length;
    if (n >= this.bodyByte.length) this.bodyByte = copied(this.bodyByte, this.bodyByte.length * 2, n);
    this.ids.push(id);
    this.titles.push(facts.title);
    this.tags.push(facts.tags);
    this.bodyByte[n] = facts.bodyByte;
  }

  /** The facts (the builder is not used afterwards). */
  finish(): TextFacts {
    return { ids: this.ids, titles: this.titles, tags: this.tags, bodyByte: this.bodyByte.slice(0, this.ids.length) };
  }
}
