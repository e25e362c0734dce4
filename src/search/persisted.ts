/**
 * The persisted index's file format (docs/DESIGN.md, "The persisted index"): one profile view's postings, term
 * dictionary, field lengths and, per entry, its note's id and identity, with a header and a checksum. It holds no
 * note text: no title, no tags, no snippet, no body (the terms of the dictionary are what tokenizing gives, not the
 * text). Encoding and decoding only: who may write the file, where it lives and how a load is trusted is
 * src/tools/persisted-index.ts.
 *
 * Layout (little-endian):
 *
 *   bytes 0..8    magic `MBINDEX\n`
 *   bytes 8..12   format version (PERSISTED_VERSION), u32
 *   bytes 12..16  header length H, u32
 *   16..16+H      header: JSON (`PersistedHeader`), then zero padding to a multiple of 4
 *   sections      in SECTION_TABLE order, each `header.sections[name]` bytes, zero padded to a multiple of 4:
 *                 string lists are UTF-8 joined by NUL (ids and terms never hold one), number lists 32-bit
 *   last 32       SHA-256 of every byte before it
 *
 * `decodePersisted` refuses (a reason code, never an exception) a file that is short of its trailer or of what its
 * header declares (`truncated`), whose checksum, magic, header or sections do not hold together (`corrupt`), or
 * written by another version (`version`). A file that passes checks every structure the index relies on (a list
 * within the postings, note numbers ascending and below the count, term ids in range, terms distinct), so even a
 * file written by a faulty build cannot make a later ranking read outside its arrays.
 */
import { createHash } from 'node:crypto';
import { isRacyKey, type ScannedNote } from '../trust/types.js';
import { TF_MASK } from './index/postings.js';

/** The first 8 bytes of every persisted index. */
export const PERSISTED_MAGIC = Buffer.from('MBINDEX\n', 'latin1');
/** This build's format version; a file of any other version is refused (`version`) and rebuilt by the command. */
export const PERSISTED_VERSION = 1;
/** Bytes of the SHA-256 trailer. */
const CHECKSUM_BYTES = 32;
/** Fixed bytes before the header: magic, version, header length. */
const PREAMBLE_BYTES = 16;
/** Largest header accepted (the header is a few hundred bytes). */
const MAX_HEADER_BYTES = 64 * 1024;
/** Bits of a posting that hold the term frequency (TF_MASK's width; the rest is the note number). */
const TF_BITS = 32 - Math.clz32(TF_MASK);

/** Why a persisted index was not used (operator reason codes; docs/DESIGN.md "The persisted index"). */
export type PersistedFormatRefusal = 'truncated' | 'corrupt' | 'version';

/** What the header says: the view, when it was built, and the sizes of every section. */
export interface PersistedHeader {
  /** Digest of the view the file was built for (src/tools/persisted-index.ts `viewOf`). */
  view: string;
  /** When the command finished reading the notes (ms since the epoch). */
  built_at_ms: number;
  /** Indexed fields per note (FIELDS.length when written). */
  fields: number;
  count: number;
  terms: number;
  live_terms: number;
  /** Per field: the sum of its lengths over the entries. */
  length_sum: number[];
  /** Byte length of each section, by name. */
  sections: Record<string, number>;
}

/**
 * One view's index as persisted. Entry `i` is note number `i` of the postings; its identity is what this call's scan
 * must show again for the entry to stand (`revalidate`).
 */
export interface PersistedIndex {
  view: string;
  builtAtMs: number;
  fields: number;
  count: number;
  /** Per entry: its note's id (root-relative) and identity key as the scan stored it (src/trust/scan.ts `keyOf`). */
  ids: string[];
  keys: string[];
  /** Per entry: st_mode, owner, group and link count of the stat the key was taken from. */
  mode: Uint32Array;
  uid: Uint32Array;
  gid: Uint32Array;
  nlink: Uint32Array;
  /** Term strings by term id. */
  terms: string[];
  liveTerms: number;
  /** Every posting, list after list; per slot (term id × fields + field) where its list starts and its length. */
  postings: Int32Array;
  listAt: Int32Array;
  listSize: Int32Array;
  /** Term frequencies too large for a posting: (slot, note number, frequency) triples. */
  big: Int32Array;
  /** Per term id: how many lists it has. */
  listCount: Int32Array;
  /** The live term ids in lexicographic order. */
  sorted: Int32Array;
  /** Field lengths by note number × fields + field, and their sums per field. */
  fieldLength: Int32Array;
  lengthSum: number[];
}

/** How a section is stored and how many items it must hold, from the header. */
interface SectionSpec {
  name: keyof PersistedIndex & string;
  kind: 'strings' | 'u32' | 'i32';
  items: (h: PersistedHeader, slots: number) => number;
}

/**
 * Every section in file order (options as data: adding a section is one row). `slots` is terms × fields; the big
 * triples and the sorted ids are checked by their own rules.
 */
const SECTION_TABLE: readonly SectionSpec[] = Object.freeze([
  { name: 'ids', kind: 'strings', items: (h) => h.count },
  { name: 'keys', kind: 'strings', items: (h) => h.count },
  { name: 'mode', kind: 'u32', items: (h) => h.count },
  { name: 'uid', kind: 'u32', items: (h) => h.count },
  { name: 'gid', kind: 'u32', items: (h) => h.count },
  { name: 'nlink', kind: 'u32', items: (h) => h.count },
  { name: 'terms', kind: 'strings', items: (h) => h.terms },
  { name: 'postings', kind: 'i32', items: () => -1 },
  { name: 'listAt', kind: 'i32', items: (_h, slots) => slots },
  { name: 'listSize', kind: 'i32', items: (_h, slots) => slots },
  { name: 'big', kind: 'i32', items: () => -1 },
  { name: 'listCount', kind: 'i32', items: (h) => h.terms },
  { name: 'sorted', kind: 'i32', items: (h) => h.live_terms },
  { name: 'fieldLength', kind: 'i32', items: (h) => h.count * h.fields },
] satisfies SectionSpec[]);

/** Round up to a multiple of 4. */
function padded(n: number): number {
  return (n + 3) & ~3;
}

/** The bytes of one section's value. */
function sectionBytes(spec: SectionSpec, value: unknown): Buffer {
  if (spec.kind === 'strings') return Buffer.from((value as string[]).join('\0'), 'utf8');
  const arr = value as Int32Array | Uint32Array;
  return Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
}

/**
 * The file's bytes for `index` (header, sections, checksum).
 *
 * @throws Error when an id, key or term holds a NUL (never produced by the scan or the tokenizer)
 */
export function encodePersisted(index: PersistedIndex): Buffer {
  const parts = SECTION_TABLE.map((spec) => {
    if (spec.kind === 'strings' && (index[spec.name] as string[]).some((s) => s.includes('\0')))
      throw new Error(`encodePersisted: NUL in ${spec.name}`);
    return sectionBytes(spec, index[spec.name]);
  });
  const header: PersistedHeader = {
    view: index.view,
    built_at_ms: index.builtAtMs,
    fields: index.fields,
    count: index.count,
    terms: index.terms.length,
    live_terms: index.sorted.length,
    length_sum: index.lengthSum,
    sections: Object.fromEntries(SECTION_TABLE.map((spec, i) => [spec.name, parts[i]!.length])),
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const pre = Buffer.alloc(PREAMBLE_BYTES);
  PERSISTED_MAGIC.copy(pre, 0);
  pre.writeUInt32LE(PERSISTED_VERSION, 8);
  pre.writeUInt32LE(headerBytes.length, 12);
  const chunks: Buffer[] = [pre, headerBytes, Buffer.alloc(padded(headerBytes.length) - headerBytes.length)];
  for (const part of parts) chunks.push(part, Buffer.alloc(padded(part.length) - part.length));
  const body = Buffer.concat(chunks);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

/** A refusal while decoding (caught by `decodePersisted`). */
class FormatRefusal extends Error {
  constructor(readonly reason: PersistedFormatRefusal) {
    super(reason);
  }
}

function refuse(reason: PersistedFormatRefusal): never {
  throw new FormatRefusal(reason);
}

/**
 * Read a persisted index from the file's bytes.
 *
 * @returns the index, or the reason it is refused (`truncated`, `corrupt`, `version`); never throws for any bytes
 */
export function decodePersisted(bytes: Uint8Array): PersistedIndex | { refused: PersistedFormatRefusal } {
  try {
    return decodeOrThrow(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (err) {
    if (err instanceof FormatRefusal) return { refused: err.reason };
    // Anything else a malformed file could raise (a RangeError from a view, a JSON error) is corruption too.
    return { refused: 'corrupt' };
  }
}

function decodeOrThrow(buf: Buffer): PersistedIndex {
  if (buf.length < PREAMBLE_BYTES + CHECKSUM_BYTES) refuse('truncated');
  if (!buf.subarray(0, PERSISTED_MAGIC.length).equals(PERSISTED_MAGIC)) refuse('corrupt');
  if (buf.readUInt32LE(8) !== PERSISTED_VERSION) refuse('version');
  const headerLength = buf.readUInt32LE(12);
  if (headerLength > MAX_HEADER_BYTES) refuse('corrupt');
  const headerEnd = PREAMBLE_BYTES + padded(headerLength);
  if (headerEnd + CHECKSUM_BYTES > buf.length) refuse('truncated');
  const header = headerOf(buf.subarray(PREAMBLE_BYTES, PREAMBLE_BYTES + headerLength));
  let expected = headerEnd + CHECKSUM_BYTES;
  for (const spec of SECTION_TABLE) expected += padded(header.sections[spec.name]!);
  if (buf.length < expected) refuse('truncated');
  if (buf.length > expected) refuse('corrupt');
  const body = buf.subarray(0, buf.length - CHECKSUM_BYTES);
  if (
    !createHash('sha256')
      .update(body)
      .digest()
      .equals(buf.subarray(buf.length - CHECKSUM_BYTES))
  )
    refuse('corrupt');
  const values: Record<string, unknown> = {};
  const slots = header.terms * header.fields;
  let at = headerEnd;
  for (const spec of SECTION_TABLE) {
    const length = header.sections[spec.name]!;
    values[spec.name] = sectionValue(spec, buf.subarray(at, at + length), spec.items(header, slots));
    at += padded(length);
  }
  const index: PersistedIndex = {
    view: header.view,
    builtAtMs: header.built_at_ms,
    fields: header.fields,
    count: header.count,
    ids: values.ids as string[],
    keys: values.keys as string[],
    mode: values.mode as Uint32Array,
    uid: values.uid as Uint32Array,
    gid: values.gid as Uint32Array,
    nlink: values.nlink as Uint32Array,
    terms: values.terms as string[],
    liveTerms: header.live_terms,
    postings: values.postings as Int32Array,
    listAt: values.listAt as Int32Array,
    listSize: values.listSize as Int32Array,
    big: values.big as Int32Array,
    listCount: values.listCount as Int32Array,
    sorted: values.sorted as Int32Array,
    fieldLength: values.fieldLength as Int32Array,
    lengthSum: header.length_sum,
  };
  checkStructure(index);
  return index;
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** The header's JSON, with every field of the right type. */
function headerOf(bytes: Buffer): PersistedHeader {
  const h = JSON.parse(bytes.toString('utf8')) as Partial<PersistedHeader> | null;
  if (typeof h !== 'object' || h === null || typeof h.view !== 'string' || !isCount(h.built_at_ms)) refuse('corrupt');
  if (!isCount(h.fields) || h.fields < 1 || h.fields > 16 || !isCount(h.count) || !isCount(h.terms)) refuse('corrupt');
  if (!isCount(h.live_terms) || !Array.isArray(h.length_sum) || h.length_sum.length !== h.fields) refuse('corrupt');
  if (!h.length_sum.every(isCount) || typeof h.sections !== 'object' || h.sections === null) refuse('corrupt');
  for (const spec of SECTION_TABLE) if (!isCount(h.sections[spec.name])) refuse('corrupt');
  return h as PersistedHeader;
}

/** One section's value, checked to hold `items` items (-1: any number). */
function sectionValue(spec: SectionSpec, bytes: Buffer, items: number): unknown {
  if (spec.kind === 'strings') {
    const list = items === 0 && bytes.length === 0 ? [] : bytes.toString('utf8').split('\0');
    if (list.length !== items || Buffer.byteLength(list.join('\0'), 'utf8') !== bytes.length) refuse('corrupt');
    return list;
  }
  if (bytes.length % 4 !== 0 || (items >= 0 && bytes.length !== items * 4)) refuse('corrupt');
  // A copy into a buffer of its own: aligned, and not keeping the whole file alive.
  const own = new ArrayBuffer(bytes.length);
  new Uint8Array(own).set(bytes);
  return spec.kind === 'u32' ? new Uint32Array(own) : new Int32Array(own);
}

/** The structural checks of the module comment; refuses `corrupt`. */
function checkStructure(p: PersistedIndex): void {
  const slots = p.terms.length * p.fields;
  if (new Set(p.ids).size !== p.count || new Set(p.terms).size !== p.terms.length) refuse('corrupt');
  let lists = 0;
  for (let slot = 0; slot < slots; slot++) {
    const size = p.listSize[slot]!;
    if (size === 0) continue;
    lists++;
    const at = p.listAt[slot]!;
    if (size < 0 || at < 0 || at + size > p.postings.length) refuse('corrupt');
    let last = -1;
    for (let i = at; i < at + size; i++) {
      const doc = p.postings[i]! >> TF_BITS;
      if (doc <= last || doc >= p.count) refuse('corrupt');
      last = doc;
    }
  }
  let counted = 0;
  for (let t = 0; t < p.terms.length; t++) counted += p.listCount[t]!;
  if (counted !== lists) refuse('corrupt');
  for (let k = 0; k < p.big.length; k += 3) {
    const slot = p.big[k]!;
    if (p.big.length % 3 !== 0 || slot < 0 || slot >= slots || p.listSize[slot] === 0) refuse('corrupt');
    if (p.big[k + 1]! < 0 || p.big[k + 1]! >= p.count) refuse('corrupt');
  }
  for (const id of p.sorted) if (id < 0 || id >= p.terms.length || p.listCount[id] === 0) refuse('corrupt');
  for (let f = 0; f < p.fields; f++) {
    let sum = 0;
    for (let doc = 0; doc < p.count; doc++) sum += p.fieldLength[doc * p.fields + f]!;
    if (sum !== p.lengthSum[f]) refuse('corrupt');
  }
}

/** Identity fields an entry keeps besides its key, from the stat the key was taken from. */
export function entryIdentity(st: ScannedNote['stat']): { mode: number; uid: number; gid: number; nlink: number } {
  return { mode: st.mode >>> 0, uid: st.uid >>> 0, gid: st.gid >>> 0, nlink: st.nlink >>> 0 };
}

/** What `revalidate` found for one call's notes. */
export interface Revalidation {
  /** Per position in the call's notes: the persisted entry that stands for it, or -1 (rebuilt from the note). */
  entryOf: Int32Array;
  /** Notes whose entry matched their identity in this call's scan. */
  revalidated: number;
  /** Notes of this call with no entry or a stale one: built from their verified text. */
  rebuilt: number;
  /** Entries for which this call's scan returned no note (removed, refused, or outside this policy): never used. */
  unused: number;
}

/**
 * Match a persisted index's entries against this call's scan (`notes`: every note that passed this call's policy
 * and trust checks). An entry stands for a note only when the note's id is the entry's and its identity in this
 * scan is the entry's: the key (device, inode, size, mtime, ctime and the writers the note was judged under) and the
 * mode, owner, group and link count of this scan's stat. A racy key (`:racy`, a note read within the racy margin of
 * its last change, src/trust/view.ts `storedKey`) never matches: a write in the same clock tick after the build read
 * the note leaves that identity as it was, and a scan within the margin gives the same racy key again, so equal
 * racy keys prove nothing. Anything else is rebuilt from the note; an entry is never used for a note this scan did
 * not return.
 */
export function revalidate(index: PersistedIndex, notes: readonly ScannedNote[]): Revalidation {
  const byId = new Map<string, number>();
  for (let i = 0; i < index.count; i++) byId.set(index.ids[i]!, i);
  const entryOf = new Int32Array(notes.length).fill(-1);
  let revalidated = 0;
  for (let pos = 0; pos < notes.length; pos++) {
    const note = notes[pos]!;
    const entry = byId.get(note.id);
    if (entry === undefined || index.keys[entry] !== note.key || isRacyKey(note.key)) continue;
    const now = entryIdentity(note.stat);
    if (index.mode[entry] !== now.mode || index.uid[entry] !== now.uid) continue;
    if (index.gid[entry] !== now.gid || index.nlink[entry] !== now.nlink) continue;
    entryOf[pos] = entry;
    revalidated++;
  }
  return { entryOf, revalidated, rebuilt: notes.length - revalidated, unused: index.count - revalidated };
}
