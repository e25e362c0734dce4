/**
 * Lower RLIMIT_NOFILE of a running process (Linux prlimit(2) through koffi, the project's FFI), so a test can let
 * a process load its modules first and then run out of descriptors in the call under test: `ulimit -n` before
 * exec would mostly starve Node's own module loading, which opens files concurrently.
 */
import { createRequire } from 'node:module';
import type { default as Koffi } from 'koffi';

/** RLIMIT_NOFILE (asm-generic; x86_64 and aarch64). */
const RLIMIT_NOFILE = 7;

let prlimitFn:
  | ((pid: number, resource: number, next: BigUint64Array | null, old: BigUint64Array | null) => number)
  | undefined;

/**
 * Set the soft limit on open descriptors of process `pid` (0: this process) to `n`, keeping its hard limit (raising
 * a hard limit needs CAP_SYS_RESOURCE, which a container's root may lack); `n` above the hard limit is clamped to it.
 *
 * @throws Error when prlimit fails (the errno in the message)
 */
export function setOpenFileLimit(pid: number, n: number): void {
  const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
  if (prlimitFn === undefined) {
    const libc = koffi.load('libc.so.6');
    prlimitFn = libc.func('int prlimit(int pid, int resource, const uint64_t *next, _Out_ uint64_t *old)') as never;
  }
  const old = new BigUint64Array(2);
  if (prlimitFn!(pid, RLIMIT_NOFILE, null, old) !== 0) throw new Error(`prlimit failed: errno ${koffi.errno()}`);
  const soft = BigInt(n) < old[1]! ? BigInt(n) : old[1]!;
  if (prlimitFn!(pid, RLIMIT_NOFILE, new BigUint64Array([soft, old[1]!]), null) !== 0) {
    throw new Error(`prlimit failed: errno ${koffi.errno()}`);
  }
}
