/**
 * The start every tool call shares (docs/TOOLS.md, docs/POLICY.md, docs/TRUST.md): the caller's policy, read fresh through the trusted
 * walk; the run-kind rule; the tool's own check of the request against that policy; then the root, opened through
 * the trusted walk. One `WalkMemo` serves both walks, so the root's walk starts below the directories the policy's
 * walk judged in this call (usually `/`, `/home` or `/tmp` and a few more); it is closed before this returns.
 */
import type { Native } from '../../native/types.js';
import { loadPolicy } from '../policy/load.js';
import type { Policy } from '../policy/types.js';
import { openTrustedDir, WalkMemo } from '../trust/path.js';
import { checkRunKind, type CheckedCaller } from './caller.js';

/**
 * @param caller the checked caller (`parseCaller`): its home, and the `cron` and `subagent` flags of the run-kind rule
 * @param check  the tool's own refusals that depend on the policy (throws BridgeError), run before the root opens
 * @returns the policy and an open descriptor of the root, which the caller closes
 * @throws BridgeError from `loadPolicy`, `checkRunKind`, `check` or the root's walk (`openTrustedDir`)
 */
export function policyAndRoot(
  caller: CheckedCaller,
  native: Native,
  check: (policy: Policy) => void,
): { policy: Policy; rootFd: number } {
  const memo = new WalkMemo(native);
  try {
    const policy = loadPolicy(caller.home, memo);
    checkRunKind(caller, policy);
    check(policy);
    return { policy, rootFd: openTrustedDir(policy.root, 'root', native, memo) };
  } finally {
    memo.close();
  }
}
