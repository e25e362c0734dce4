/**
 * What a scan asks of a second stat thread (`StatThread`), and the shapes it hands it: the contract between the
 * caller view (src/trust/view.ts, which drives the thread for its scans) and the process's stat pool
 * (src/trust/warm/stat-pool.ts, the implementation, with the protocol and the argument that it is safe).
 */
import type { Native } from '../../../native/types.js';

/** `take`: the entry is not the worker's; the caller stats it itself. */
export const NOT_TAKEN = -1;
/** `take`: the worker's answer is in `out`. */
export const TAKEN = 0;

/**
 * The NUL-terminated names of a listing's note entries in one shared buffer, handed to the worker once. Kept by
 * the listing (src/trust/warm/listing.ts) and built on the listing's first job; `offsets[i]` is the byte offset of entry i's name,
 * -1 for entries without one.
 */
export interface NameArena {
  readonly id: number;
  readonly offsets: Int32Array;
}

/** What `publish` needs of a listing entry: its raw name and a NUL (empty when never statted by name). */
export interface NamedEntry {
  cname: Uint8Array;
  note: boolean;
}

/** What `publish` needs of a listing: its entries in scan order and the arena slot it keeps. */
export interface PoolListing<E extends NamedEntry> {
  entries: readonly E[];
  arena: NameArena | null;
}

/**
 * What a scan asks of a second stat thread (`ScanOptions.statThread`), in this order: `beginScan` (false: this scan
 * runs single-threaded) → (`publish` → `take`… → `retire`)* nested like the directory walk → `endScan`; then
 * `noteScan` after every scan given the thread, whether it took part or not. `StatPool` is the implementation;
 * tests wrap it to see which names the worker statted.
 */
export interface StatThread {
  beginScan(): boolean;
  publish<E extends NamedEntry>(fd: number, listing: PoolListing<E>, isCandidate: (e: E) => boolean): number;
  take(job: number, index: number, out: Uint32Array): typeof TAKEN | typeof NOT_TAKEN;
  retire(job: number): void;
  endScan(): void;
  noteScan(candidates: number, native: Native): void;
}
