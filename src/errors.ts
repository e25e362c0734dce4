/**
 * One error type for every refusal inside memory-bridge.
 *
 * Each refusal carries a short operator-facing `reason` (logged on stderr, counted by `doctor`) and maps to exactly
 * one of the three public codes of docs/TOOLS.md. The public JSON never carries the reason, a path, a file name or
 * system error text: only the fixed message for the code and, for `invalid_request`, a hint naming the argument.
 * A leaf: it imports nothing of the project (what a failed system call stands for is `bridgeErrorOf` in
 * src/trust/refusal.ts, above the bindings).
 */

/** The three public error codes (docs/TOOLS.md). */
export type PublicCode = 'invalid_request' | 'unavailable' | 'not_found_or_denied';

/** Fixed public messages, one per code (docs/TOOLS.md). */
export const PUBLIC_MESSAGES: Readonly<Record<PublicCode, string>> = Object.freeze({
  invalid_request: 'The request is invalid.',
  unavailable: 'Memory is unavailable.',
  not_found_or_denied: 'No readable document has that id.',
});

/**
 * Operator reason codes. Short, stable, safe to log: they never include paths or contents.
 * Grouped by where they arise.
 */
export type Reason =
  // caller and run kind (docs/POLICY.md)
  | 'no_home'
  | 'bad_home'
  | 'cron_refused'
  | 'subagent_refused'
  | 'run_kind_refused'
  | 'bad_caller'
  // policy (docs/POLICY.md)
  | 'policy_missing'
  | 'policy_invalid'
  | 'policy_too_large'
  | 'policy_untrusted'
  // trust (docs/TRUST.md)
  | 'symlink'
  | 'hard_link'
  | 'untrusted_owner'
  | 'group_writable'
  | 'world_writable'
  | 'acl_write'
  | 'acl_unreadable'
  | 'open_for_write'
  | 'other_device'
  | 'not_directory'
  | 'not_regular'
  | 'too_large'
  | 'binary'
  | 'invalid_utf8'
  | 'bad_name'
  | 'hidden'
  | 'not_markdown'
  | 'denied'
  | 'too_deep'
  | 'missing'
  | 'sticky_tmp'
  | 'root_untrusted'
  | 'entry_ceiling'
  | 'io_error'
  | 'resource_exhausted'
  | 'unsupported_platform'
  // requests
  | 'bad_arguments'
  | 'bad_id'
  // audit trail (docs/AUDIT.md)
  | 'audit_unwritable'
  // worker / plugin transport
  | 'worker_protocol'
  | 'internal';

/**
 * A refusal with a public code and an operator reason.
 *
 * @param code   public code sent to the model (docs/TOOLS.md)
 * @param reason operator reason code (stderr logs, doctor counts)
 * @param hint   only for `invalid_request`: which argument and what it must be, e.g. "limit: an integer from 1 to 10"
 * @param subject what the reason is about when it is not the requested note: `root` when the policy's root (or a
 *   directory above it) failed its trusted walk, so the operator log says `root_untrusted root=<reason>` and not a
 *   bare `<reason>` that reads as a note's (docs/CLI.md §Refusals and remedies); the model never sees it
 */
export class BridgeError extends Error {
  override readonly name = 'BridgeError';
  constructor(
    readonly code: PublicCode,
    readonly reason: Reason,
    readonly hint?: string,
    readonly subject?: 'root',
  ) {
    super(`${code}: ${reason}`);
  }
}

/** The public error JSON of docs/TOOLS.md. */
export interface ErrorResult {
  ok: false;
  error: { code: PublicCode; message: string; hint?: string };
}

/** Build the public error JSON for a code; `hint` is dropped unless the code is `invalid_request`. */
export function errorResult(code: PublicCode, hint?: string): ErrorResult {
  const error: ErrorResult['error'] = { code, message: PUBLIC_MESSAGES[code] };
  if (code === 'invalid_request' && hint !== undefined) error.hint = hint;
  return { ok: false, error };
}
