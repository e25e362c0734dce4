/**
 * The single-component rule for names passed to openat/statx/fstatat, and the C-string encoder that enforces it.
 * Shared by the per-platform bindings; no FFI here.
 */
import type { NativeErrors } from './errno.js';

/** Matches a lone UTF-16 surrogate (in `u` mode a well-formed pair is one code point and does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Room for one component plus its NUL terminator; NAME_MAX is 255 bytes on Linux and macOS. */
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

/** A NUL-terminated C string for fixed paths ("/", "", "."), allocated once. */
export function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf8');
}
