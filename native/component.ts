/**
 * The single-component rule for names passed to openat/statx/fstatat: the C-string encoder that enforces it on
 * strings, and `requireRawComponent` on raw name bytes. Shared by the per-platform bindings; no FFI here.
 */
import type { NativeErrors } from './errno.js';

/** Matches a lone UTF-16 surrogate (in `u` mode a well-formed pair is one code point and does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Longest name component in bytes (NAME_MAX): 255 on Linux and on macOS. */
const NAME_MAX = 255;

/** Room for one component plus its NUL terminator, well above NAME_MAX. */
const NAME_BUFFER_BYTES = 4096;

/**
 * Encodes one path component as a NUL-terminated UTF-8 C string in a reused scratch buffer.
 *
 * Rejects (NativeError code EINVAL) before any system call: the empty string, `.`, `..`, anything containing `/`
 * or NUL, and strings with lone surrogates (whose UTF-8 encoding would silently become U+FFFD and name a
 * different file). A component longer than the buffer gives ENAMETOOLONG. The returned buffer is valid until the
 * next call: bindings are synchronous, so each call encodes right before its system call.
 */
export class ComponentEncoder {
  private readonly scratch = Buffer.allocUnsafe(NAME_BUFFER_BYTES);

  /** @param errors the platform's error table (ENAMETOOLONG is 36 on Linux, 63 on macOS) */
  constructor(private readonly errors: NativeErrors) {}

  encode(call: string, name: string): Buffer {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
      throw this.errors.of(call, 'EINVAL');
    }
    if (LONE_SURROGATE.test(name)) throw this.errors.of(call, 'EINVAL');
    // Three bytes per UTF-16 unit is the worst case, so short names skip the exact length computation.
    if (name.length * 3 >= NAME_BUFFER_BYTES && Buffer.byteLength(name, 'utf8') >= NAME_BUFFER_BYTES) {
      throw this.errors.of(call, 'ENAMETOOLONG');
    }
    const written = this.scratch.write(name, 0, 'utf8');
    this.scratch[written] = 0;
    return this.scratch;
  }
}

/**
 * The single-component rule for a raw NUL-terminated name (the form the stat thread and the watches pass; see
 * `ComponentEncoder` for the string form): at least one byte before the one terminating NUL, no other NUL, no `/`,
 * not `.` or `..`. Allocation-free, one pass over the bytes.
 *
 * @param call   the system call named in the error (e.g. 'statx', 'fstatat')
 * @param errors the platform's error table
 * @throws NativeError EINVAL when the rule fails, ENAMETOOLONG for more than NAME_MAX bytes
 */
export function requireRawComponent(cname: Uint8Array, call: string, errors: NativeErrors): void {
  const n = cname.length - 1;
  if (n < 1 || cname[n] !== 0) throw errors.of(call, 'EINVAL');
  if (n > NAME_MAX) throw errors.of(call, 'ENAMETOOLONG');
  let bad = false;
  for (let i = 0; i < n; i++) {
    const b = cname[i]!;
    bad ||= b === 0 || b === 0x2f;
  }
  if (bad || (cname[0] === 0x2e && (n === 1 || (n === 2 && cname[1] === 0x2e)))) throw errors.of(call, 'EINVAL');
}

/** A NUL-terminated C string for fixed paths ("/", "", "."), allocated once. */
export function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf8');
}
