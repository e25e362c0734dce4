/**
 * glibc's `malloc_trim`, the one C call of the memory release (`releaseMemory` in src/tools/collect.ts) and the
 * only FFI outside the platform bindings: kept here so that every koffi load lives in `native/`.
 */
import { createRequire } from 'node:module';
import type { default as Koffi } from 'koffi';

/**
 * Loads `int malloc_trim(size_t pad)` from glibc's `libc.so.6` (man malloc_trim(3): returns 1 when memory was
 * given back to the system, 0 when none could be).
 *
 * @returns the function (argument: bytes of free space to keep at the top of the heap; 0 keeps none), or null on a
 *   platform other than Linux, or when koffi, `libc.so.6` or the symbol cannot be loaded (musl has neither); never throws
 */
export function loadMallocTrim(): ((pad: number) => number) | null {
  if (process.platform !== 'linux') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
    return koffi.load('libc.so.6').func('int malloc_trim(size_t)') as (pad: number) => number;
  } catch {
    return null;
  }
}
