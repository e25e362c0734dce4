/**
 * The start every tool call shares (docs/TOOLS.md, docs/POLICY.md, docs/TRUST.md): the caller's policy, read fresh through the trusted
 * walk; the run-kind rule; the tool's own check of the request against that policy; then the root, opened through
 * the trusted walk. One `WalkMemo` serves both walks, so the root's walk starts below the directories the policy's
 * walk judged in this call (usually `/`, `/home` or `/tmp` and a few more); it is closed before this returns.
 */
import type { Native } from '../../native/types.js';
import type { Reason } from '../errors.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { loadPolicyAndWriters } from '../policy/load.js';
import type { Writers } from '../trust/writers.js';
import type { Policy } from '../policy/types.js';
import { openTrustedDir, WalkMemo } from '../trust/path.js';
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
    return {
      policy,
      writers: writers.writers,
      rootFd: openTrustedDir(policy.root, 'root', native, memo, writers.writers),
    };
  } finally {
    memo.close();
  }
}

/**
 * Whether a call by `caller` would be refused before its request is even looked at: the caller record
 * (`parseCaller`), its policy (`loadPolicyAndWriters`: trusted read, strict parse, writers resolved) and the run-kind
 * rule (`checkRunKind`). For a server's start-up line (`memory-bridge mcp`); it decides nothing, since every call
 * still does all of this again.
 *
 * @returns the refusal's reason code, or null when such a call gets past the caller, the policy and the run kind
 * @throws nothing but what is not a refusal (a bug)
 */
export function refusalAtStart(caller: unknown): Reason | null {
  try {
    const checked = parseCaller(caller);
    const { policy } = loadPolicyAndWriters(checked.home);
    checkRunKind(checked, policy);
    return null;
  } catch (err) {
    const refusal = bridgeErrorOf(err);
    if (refusal === undefined) throw err;
    return refusal.reason;
  }
}
