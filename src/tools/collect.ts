/**
 * Giving memory back after a view's first-call build (docs/DESIGN.md, "Memory"), asked for by the index cache right
 * after that build. The build drops, at once, everything the first call held for it: the scan's chunks of note texts
 * the index did not take over, the staging of every posting (8 bytes each, up to 32 MiB), and list buffers of
 * earlier batches. V8 would return that at its next major collection, which a process answering a search now and
 * then may not reach for a long time; and what it frees goes back to the C allocator, which keeps freed pages in
 * its heap. So the process would sit near its peak. `releaseMemory` runs one full collection that also compacts
 * the old generation (V8's `--compact-on-every-full-gc`, set for that collection only: the records that stay are
 * spread over pages the build's garbage filled, and a normal collection moves only the emptiest pages) and one of
 * the young generation (which waits for the freeing of dead array buffers), then asks glibc to return its free
 * pages (`malloc_trim(0)`). Measured cost: docs/DESIGN.md "Memory".
 *
 * The collector is V8's own `gc`, reached the way `--expose-gc` exposes it: the flag is set at run time (before the
 * first use only) and the function taken from a fresh context. `malloc_trim` comes from `native/` (`loadMallocTrim`,
 * the FFI stays there), on Linux with glibc only; elsewhere that step is skipped.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { loadMallocTrim } from '../../native/index.js';

/** V8's gc: no argument for a full collection, `{type: 'minor'}` for the young generation only. */
type Collector = (options?: { type: 'minor' | 'major' }) => void;

let collector: Collector | null | undefined;
let trim: ((pad: number) => number) | null | undefined;

function collectorOf(): Collector | null {
  try {
    const exposed = (globalThis as { gc?: unknown }).gc;
    if (typeof exposed === 'function') return exposed as Collector;
    v8.setFlagsFromString('--expose-gc');
    const fn = vm.runInNewContext('gc') as unknown;
    return typeof fn === 'function' ? (fn as Collector) : null;
  } catch {
    return null;
  }
}

/**
 * One full, synchronous garbage collection, then `malloc_trim(0)` where glibc offers it. Each step is skipped when
 * the runtime does not offer it; nothing else about the process changes.
 *
 * @returns which steps ran
 */
export function releaseMemory(): { collected: boolean; trimmed: boolean } {
  if (collector === undefined) collector = collectorOf();
  if (trim === undefined) trim = loadMallocTrim();
  if (collector !== null) {
    v8.setFlagsFromString('--compact-on-every-full-gc');
    try {
      collector();
      // V8 frees the memory of the array buffers a full collection found dead from a background task, and
      // malloc_trim cannot return pages still in use; the next collection, even of the young generation only (a few
      // ms), first waits for that task. Measured at 100,000 notes: RSS after warm-up 547 -> 492 MiB.
      collector({ type: 'minor' });
    } finally {
      v8.setFlagsFromString('--no-compact-on-every-full-gc');
    }
  }
  trim?.(0);
  return { collected: collector !== null, trimmed: trim !== null };
}
