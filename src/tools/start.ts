/**
 * The start every tool call shares (docs/TOOLS.md, docs/POLICY.md, docs/TRUST.md): the caller's policy, read fresh through the trusted
 * walk; the run-kind rule; the tool's own check of the request against that policy; then the root, opened through
 * the trusted walk. One `WalkMemo` serves both walks, so the root's walk starts below the directories the policy's
 * walk judged in this call (usually `/`, `/home` or `/tmp` and a few more); it is closed before this returns.
 */
import type { Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import { refusalRemedy, refusalWords } from '../remedies.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { loadPolicyAndWriters } from '../policy/load.js';
import type { Writers } from '../trust/writers.js';
import type { Policy } from '../policy/types.js';
import { openTrustedDir, WalkMemo } from '../trust/path.js';
import { requireNative } from '../trust/rule.js';
import { checkRunKind, parseCaller, type CheckedCaller } from './caller.js';

/**
 * @param caller the checked caller (`parseCaller`): its home, and the `cron` and `subagent` flags of the run-kind rule
 * @param check  the tool's own refusals that depend on the policy (throws BridgeError), run before the root opens
 * @param seen   told the policy as soon as it is loaded, before any refusal that depends on it (the audit trail
 *   needs the policy of refused calls too: src/tools/bridge.ts)
 * @returns the policy, this call's named writers (resolved now; the root itself and everything below it are judged
 *   with them) and an open descriptor of the root, which the caller closes
 * @throws BridgeError from `loadPolicyAndWriters`, `checkRunKind`, `check` or the root's walk (`openTrustedDir`)
 */
export function policyAndRoot(
  caller: CheckedCaller,
  native: Native,
  check: (policy: Policy) => void,
  seen: (policy: Policy) => void = () => undefined,
): { policy: Policy; writers: Writers; rootFd: number } {
  const memo = new WalkMemo(native);
  try {
    const { policy, writers } = loadPolicyAndWriters(caller.home, memo);
    seen(policy);
    checkRunKind(caller, policy);
    check(policy);
    return { policy, writers: writers.writers, rootFd: openRoot(policy.root, native, memo, writers.writers) };
  } finally {
    memo.close();
  }
}

/** Reasons of a root walk that are not the root's fault (the process or the platform): logged as they are. */
const NOT_THE_ROOTS: ReadonlySet<Reason> = new Set<Reason>(['resource_exhausted', 'unsupported_platform', 'internal']);

/**
 * The policy's root through the trusted walk (`openTrustedDir`), a refusal marked as the root's (`subject: 'root'`,
 * so the operator log says `root_untrusted root=<reason>`; the reason, the public code and the audit record stay
 * what the walk said).
 *
 * @returns an open directory descriptor of the root; the caller closes it
 * @throws BridgeError('unavailable', reason, undefined, 'root') for the walk's refusals of the root or a directory
 *   above it; `resource_exhausted` and `unsupported_platform` unmarked
 */
function openRoot(root: string, native: Native, memo: WalkMemo | undefined, writers: Writers): number {
  try {
    return openTrustedDir(root, 'root', native, memo, writers);
  } catch (err) {
    const refusal = bridgeErrorOf(err);
    if (refusal === undefined || NOT_THE_ROOTS.has(refusal.reason)) throw err;
    throw new BridgeError(refusal.code, refusal.reason, refusal.hint, 'root');
  }
}

/** A refusal every call would meet (`refusalAtStart`); `root` is the policy's root path when `subject` is `root`. */
export interface StartRefusal {
  reason: Reason;
  subject?: 'root';
  root?: string;
}

/**
 * The start-up line's text after "every call will be unavailable until this is fixed: ": the refusal's words and its
 * remedy (src/remedies.ts `refusalWords`, `refusalRemedy`), e.g. `policy_missing → create the policy: …`, or for the
 * root `root_untrusted root=group_writable (root /home/me/notes) → the policy's root …`. Operator output: it names
 * the root's path (JSON-quoted unless it is plain printable ASCII), never a note.
 */
export function startRefusalText(refusal: StartRefusal): string {
  const where =
    refusal.root === undefined
      ? ''
      : ` (root ${/^[\x21-\x7e]{1,4096}$/.test(refusal.root) ? refusal.root : JSON.stringify(refusal.root)})`;
  return `${refusalWords(refusal.reason, refusal.subject)}${where} → ${refusalRemedy(refusal.reason, refusal.subject)}`;
}

/**
 * Whether a call by `caller` would be refused before its request is even looked at: the caller record
 * (`parseCaller`), its policy (`loadPolicyAndWriters`: trusted read, strict parse, writers resolved), the run-kind
 * rule (`checkRunKind`) and the root's trusted walk with the policy's writers (`openRoot`, the rule every call
 * applies). For a server's start-up line (`memory-bridge mcp`, `memory-bridge serve` per client); it decides
 * nothing, since every call still does all of this again: a root fixed later serves the next call, a root broken
 * later is refused at the next call.
 *
 * @returns the refusal (reason, and for the root `subject: 'root'` and its path), or null when such a call gets past
 *   the caller, the policy, the run kind and the root
 * @throws nothing but what is not a refusal (a bug)
 */
export function refusalAtStart(caller: unknown, bindings?: Native): StartRefusal | null {
  let root: string | undefined;
  let memo: WalkMemo | undefined;
  try {
    const native = bindings ?? requireNative();
    memo = new WalkMemo(native);
    const checked = parseCaller(caller);
    const { policy, writers } = loadPolicyAndWriters(checked.home, memo);
    checkRunKind(checked, policy);
    root = policy.root;
    native.close(openRoot(policy.root, native, memo, writers.writers));
    return null;
  } catch (err) {
    const refusal = bridgeErrorOf(err);
    if (refusal === undefined) throw err;
    return refusal.subject === 'root' && root !== undefined
      ? { reason: refusal.reason, subject: 'root', root }
      : { reason: refusal.reason };
  } finally {
    memo?.close();
  }
}
