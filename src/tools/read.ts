/**
 * memory_bridge_read (PRODUCT.md §2, §5): caller → policy → run kind → resolve the id component by component →
 * capped content.
 */
import { BridgeError } from '../errors.js';
import { getNative } from '../../native/index.js';
import { readNoteById } from '../trust/note.js';
import { validateId } from '../trust/names.js';
import { parseReadArgs } from './args.js';
import { callerHome } from './caller.js';
import { policyAndRoot } from './start.js';
import { scanLimitsOf } from './search.js';
import type { ReadResult } from './types.js';

/**
 * Cut `text` to at most `readChars` code points (PRODUCT.md §2). A cut text is followed by a newline and the fixed
 * note `[truncated: first N characters shown]`, so the note always sits on its own line; the note is not counted
 * in `readChars`. Never splits a code point.
 */
export function capContent(text: string, readChars: number): { content: string; truncated: boolean } {
  if (text.length <= readChars) return { content: text, truncated: false };
  let end = 0;
  let n = 0;
  while (end < text.length && n < readChars) {
    const c = text.charCodeAt(end);
    end +=
      c >= 0xd800 && c <= 0xdbff && end + 1 < text.length && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    n++;
  }
  if (end >= text.length) return { content: text, truncated: false };
  return { content: `${text.slice(0, end)}\n[truncated: first ${readChars} characters shown]`, truncated: true };
}

/**
 * Run one read. The id's syntax is validated before the policy is loaded or any filesystem call is made; an id
 * the policy does not allow is refused before the root is opened. Every refusal of the note itself (denied,
 * missing, symlink, hard link, untrusted, too deep, too big, binary, invalid UTF-8) is the same
 * `not_found_or_denied`.
 *
 * @throws BridgeError: `invalid_request` (arguments, id syntax), `unavailable` (caller, platform, policy, run kind,
 *   root trust), `not_found_or_denied` (the note)
 */
export function runRead(args: unknown, caller: unknown): ReadResult {
  const id = validateId(parseReadArgs(args).id);
  const home = callerHome(caller);
  const native = getNative();
  if (native === null) throw new BridgeError('unavailable', 'unsupported_platform');
  const { policy, rootFd } = policyAndRoot(home, caller, native, (p) => {
    if (!p.allowsNote(id)) throw new BridgeError('not_found_or_denied', 'denied');
  });
  let text: string;
  try {
    text = readNoteById(rootFd, id, policy, scanLimitsOf(policy), native);
  } finally {
    native.close(rootFd);
  }
  const { content, truncated } = capContent(text, policy.limits.read_chars);
  return { ok: true, id, content, truncated };
}
