/**
 * memory_bridge_read (docs/TOOLS.md, docs/TRUST.md): caller → policy → run kind → resolve the id component by component →
 * capped content.
 */
import { BridgeError } from '../errors.js';
import { countCodePoints } from '../search/snippet.js';
import { noteTitle, parseNote } from '../search/markdown.js';
import { cutVisible, escapeHidden } from '../text/visible.js';
import { getNative } from '../../native/index.js';
import { readNoteById } from '../trust/note.js';
import { validateId } from '../trust/names.js';
import { parseReadArgs } from './args.js';
import { parseCaller } from './caller.js';
import { policyAndRoot } from './start.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import type { ReadResult } from './types.js';

/**
 * The content a read returns for the note text `text` (docs/TOOLS.md §Results; docs/DESIGN.md "Returned text"): hidden
 * controls shown as `<U+XXXX>` escapes, and at most `readChars` code points of that escaped form. A cut falls
 * between two code points of the note, never inside a surrogate pair or an escape, and is followed by a newline
 * and the fixed note `[truncated: first N characters shown]`, N being the code points shown above it (`readChars`
 * unless an escape did not fit whole), so the note always sits on its own line; the note is not counted in
 * `readChars`.
 */
export function capContent(text: string, readChars: number): { content: string; truncated: boolean } {
  const shown = cutVisible(text, readChars);
  if (!shown.cut) return { content: shown.text, truncated: false };
  const n = countCodePoints(shown.text);
  return { content: `${shown.text}\n[truncated: first ${n} characters shown]`, truncated: true };
}

/**
 * Run one read. The id's syntax is validated before the policy is loaded or any filesystem call is made; an id
 * the policy does not allow is refused before the root is opened. Every refusal of the note itself (denied,
 * missing, symlink, hard link, untrusted, too deep, too big, binary, invalid UTF-8) is the same
 * `not_found_or_denied`.
 *
 * @param rawEntryCeiling ScanLimits.rawEntryCeiling (undefined: RAW_ENTRY_CEILING; tests lower it)
 * @throws BridgeError: `invalid_request` (arguments, id syntax), `unavailable` (caller, platform, policy, run kind,
 *   root trust, the raw entry ceiling), `not_found_or_denied` (the note)
 */
export function runRead(args: unknown, caller: unknown, rawEntryCeiling?: number): ReadResult {
  const id = validateId(parseReadArgs(args).id);
  const who = parseCaller(caller);
  const native = getNative();
  if (native === null) throw new BridgeError('unavailable', 'unsupported_platform');
  const { policy, writers, rootFd } = policyAndRoot(who, native, (p) => {
    if (!p.allowsNote(id)) throw new BridgeError('not_found_or_denied', 'denied');
  });
  let text: string;
  try {
    text = readNoteById(rootFd, id, policy, { ...scanLimitsOf(policy), rawEntryCeiling, writers }, native);
  } finally {
    native.close(rootFd);
  }
  const { content, truncated } = capContent(text, policy.limits.read_chars);
  // The same title search shows (docs/DESIGN.md "Titles and file names"), from the whole note, escaped alike.
  return { ok: true, id, title: escapeHidden(noteTitle(parseNote(text), id)), content, truncated };
}
