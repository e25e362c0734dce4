/**
 * Entry point of the FFI layer: picks the binding for this platform and architecture.
 *
 * Linux x64 (verified) and arm64, macOS arm64 and x64 (both unverified: written from documented facts). Every other
 * platform, or a machine where koffi or libc cannot be loaded, gets null, and callers refuse everything with the
 * reason `unsupported_platform`.
 */
import { createRequire } from 'node:module';
import type { default as Koffi } from 'koffi';
import { createDarwinNative } from './darwin.js';
import { createLinuxNative } from './linux.js';
import type { Native } from './types.js';

export { loadMallocTrim } from './malloc-trim.js';
export { DT, NativeError, ResourceExhaustedError } from './types.js';
export type { AclRead, DarwinAclEntry, DirEntry, FileStat, Native } from './types.js';

let cached: Native | null | undefined;

/**
 * The `Native` bindings for this process, built once and cached (including a null answer).
 * koffi is required lazily so that an unsupported platform never loads its native module, and only the binding
 * for the running platform loads its C library.
 *
 * @returns the bindings, or null on any platform/arch without bindings or when loading them fails
 */
export function getNative(): Native | null {
  if (cached !== undefined) return cached;
  cached = nativeFor(process.platform, process.arch, true);
  return cached;
}

/**
 * Builds (uncached) the bindings for a platform/arch pair; null for anything without bindings, or when koffi or
 * the platform's C library cannot be loaded here. `getNative` is the one to use; this exists so the platform
 * choice itself can be tested.
 *
 * @param log when true, a load failure is reported on stderr as a short operator line (no paths)
 */
export function nativeFor(platform: string, arch: string, log = false): Native | null {
  if (platform !== 'linux' && platform !== 'darwin') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
    return platform === 'linux' ? createLinuxNative(koffi, arch) : createDarwinNative(koffi, arch);
  } catch (err) {
    // Operator log only: a short reason code, no paths.
    if (log)
      process.stderr.write(
        `memory-bridge: native bindings unavailable (${err instanceof Error ? err.name : 'error'})\n`,
      );
    return null;
  }
}
