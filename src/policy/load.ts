/**
 * Loading the per-profile policy (docs/POLICY.md): trusted bytes → strict JSON → strict schema → compiled
 * patterns → one frozen `Policy`. Called on every tool call, so edits and revocations apply at once. Any
 * failure makes memory unavailable; there is no fallback to defaults.
 */
import path from 'node:path';
import { BridgeError, type Reason } from '../errors.js';
import { isNormalAbsolute, readTrustedFile, type WalkMemo } from '../trust/path.js';
import { PatternError, PatternSet, PATTERN_REASON_TEXT } from './glob.js';
import { parseStrictJson, StrictJsonError, type StrictJsonReason } from './json.js';
import { PolicySchema, type PolicyDocument } from './schema.js';
import { defaultRecallChars } from './surfaces.js';
import type { Limits, Policy } from './types.js';
import { resolveWriters, type ResolvedWriters } from './accounts.js';

/** Largest policy file accepted, in bytes (docs/POLICY.md: 64 KiB). */
export const MAX_POLICY_BYTES = 65_536;

/** `<home>/plugin-data/memory-bridge/policy.json` for an absolute `home` (docs/POLICY.md). */
export function policyPath(home: string): string {
  return path.posix.join(home, 'plugin-data', 'memory-bridge', 'policy.json');
}

/** Trust reasons from `readTrustedFile` mapped to policy reasons; reasons not listed become `policy_untrusted`. */
function policyReasonOf(reason: Reason): Reason {
  if (reason === 'missing') return 'policy_missing';
  if (reason === 'too_large') return 'policy_too_large';
  // Not a verdict on the file: this platform has no trust rule at all.
  if (reason === 'unsupported_platform') return reason;
  return 'policy_untrusted';
}

/**
 * Read and validate the policy of the profile home `home`.
 *
 * The file is read with `readTrustedFile` (descriptor walk from `/`, owner/mode/ACL/link checks on every
 * directory and on the file, at most 64 KiB), then parsed by `parsePolicyBytes`.
 *
 * @param home absolute, normal profile home directory (it comes from the host, never from tool arguments)
 * @param memo this call's walk memo (`WalkMemo`), so the root's walk can start below directories judged here
 * @returns a frozen Policy
 * @throws BridgeError('unavailable', reason) with reason `bad_home` (home not absolute and normal),
 *   `policy_missing`, `policy_too_large`, `policy_untrusted` (any other trust refusal on the path or the file),
 *   `unsupported_platform`, or `policy_invalid` (strict JSON, schema or pattern failure)
 */
export function loadPolicy(home: string, memo?: WalkMemo): Policy {
  return loadPolicyAndWriters(home, memo).policy;
}

/**
 * `loadPolicy`, and the policy's named writers resolved now (`resolveWriters`: names looked up in the system's
 * user and group databases on every call). A name that is not there makes the policy invalid for this call.
 *
 * @returns the frozen Policy (the same object for the same bytes) and this call's writers
 * @throws what `loadPolicy` throws, and `WritersError` (BridgeError('unavailable', 'policy_invalid') with an
 *   operator `detail`) for an unknown name or an unreadable database
 */
export function loadPolicyAndWriters(home: string, memo?: WalkMemo): { policy: Policy; writers: ResolvedWriters } {
  const policy = readPolicy(home, memo);
  return { policy, writers: resolveWriters(policy.writers) };
}

function readPolicy(home: string, memo?: WalkMemo): Policy {
  if (!isNormalAbsolute(home)) throw new BridgeError('unavailable', 'bad_home');
  let bytes: Buffer;
  try {
    bytes = readTrustedFile(policyPath(home), MAX_POLICY_BYTES, undefined, memo);
  } catch (err) {
    if (err instanceof BridgeError) throw new BridgeError('unavailable', policyReasonOf(err.reason));
    throw err;
  }
  return parsePolicyBytes(bytes);
}

/**
 * Validate policy bytes without touching the filesystem (for `doctor`, `status` and tests).
 *
 * @param bytes the whole policy file
 * @returns a frozen Policy whose predicates implement `NoteFilter`
 * @throws BridgeError('unavailable', 'policy_invalid') for anything wrong, and never any other exception for any
 *   input bytes (`explainPolicyError` says what is wrong)
 */
export function parsePolicyBytes(bytes: Uint8Array): Policy {
  // latin1 maps bytes one-to-one onto characters, so equal keys mean equal bytes.
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const hit = parsed.get(key);
  if (hit !== undefined) {
    parsed.delete(key);
    parsed.set(key, hit);
    return hit;
  }
  let policy: Policy;
  try {
    const value = parseStrictJson(bytes);
    const result = PolicySchema.safeParse(value);
    if (!result.success) throw new BridgeError('unavailable', 'policy_invalid');
    policy = buildPolicy(result.data);
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    throw new BridgeError('unavailable', 'policy_invalid');
  }
  parsed.set(key, policy);
  if (parsed.size > PARSED_CACHE_ENTRIES) parsed.delete(parsed.keys().next().value!);
  return policy;
}

/**
 * Recently parsed policies by exact byte content (least recently used first). A Policy is a frozen, pure function
 * of the bytes, so a hit is the same answer without re-validating and recompiling up to 256 × 64 pattern
 * alternatives on every call. The trusted read that produced the bytes still happens on every call; any edit
 * changes the bytes and misses. At most 8 × 64 KiB of keys.
 */
const PARSED_CACHE_ENTRIES = 8;
const parsed = new Map<string, Policy>();

function buildPolicy(doc: PolicyDocument): Policy {
  // The schema already validated every pattern; compile cannot disagree, but would throw PatternError if it did.
  const allow = PatternSet.compile(doc.allow);
  const deny = PatternSet.compile(doc.deny);
  const limits: Readonly<Limits> = Object.freeze({ ...doc.limits });
  const policy: Policy = {
    version: 1,
    root: doc.root,
    allow: Object.freeze([...doc.allow]),
    deny: Object.freeze([...doc.deny]),
    allowCron: doc.allow_cron,
    allowSubagents: doc.allow_subagents,
    names: doc.names,
    limits,
    writers: Object.freeze({
      users: Object.freeze([...doc.writers.users]),
      groups: Object.freeze([...doc.writers.groups]),
    }),
    audit: Object.freeze({ ...doc.audit }),
    recall: Object.freeze({
      ...doc.recall,
      max_chars: doc.recall.max_chars ?? defaultRecallChars(limits.total_chars),
    }),
    promptSection: Object.freeze({ ...doc.prompt_section }),
    allowsNote: (id: string): boolean => allow.matches(id) && !deny.matches(id),
    mayEnter: (dirId: string): boolean => allow.mayContainBelow(dirId) && !deny.coversAllBelow(dirId),
  };
  return Object.freeze(policy);
}

const JSON_REASON_TEXT: Readonly<Record<StrictJsonReason, string>> = Object.freeze({
  bom: 'the file starts with a byte order mark; save it as UTF-8 without BOM',
  invalid_utf8: 'the file is not valid UTF-8 (UTF-16 or another encoding?)',
  empty: 'the file is empty',
  unexpected_end: 'the JSON ends too early',
  unexpected_char: 'unexpected character',
  control_char: 'a raw control character inside a string (escape it)',
  bad_escape: 'an invalid escape inside a string',
  lone_surrogate: 'a \\u escape leaves an unpaired surrogate',
  bad_number: 'a malformed number',
  duplicate_key: 'a key appears twice in the same object',
  too_deep: 'objects or arrays are nested too deeply',
  trailing_data: 'something follows the JSON value',
});

/** Line and column (1-based, in characters) of a UTF-16 offset in the decoded text. */
function lineColumn(bytes: Uint8Array, offset: number): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes).slice(0, offset);
    const lines = text.split('\n');
    return `line ${lines.length}, column ${lines[lines.length - 1]!.length + 1}`;
  } catch {
    return 'the start';
  }
}

function issuePath(p: readonly PropertyKey[]): string {
  let out = '';
  for (const k of p) {
    if (typeof k === 'number') out += `[${k}]`;
    else out += out === '' ? String(k) : `.${String(k)}`;
  }
  return out === '' ? '(top level)' : out;
}

/** True when `p` names a key or index that exists in `value` (zod issues do not carry the input by default). */
function isPresent(value: unknown, p: readonly PropertyKey[]): boolean {
  let cur: unknown = value;
  for (const k of p) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return false;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return true;
}

/**
 * A short operator-facing description of what is wrong with policy bytes — the JSON position, the key, the limit
 * or the pattern index — for `doctor`. Never part of tool output.
 *
 * @returns "valid" when `parsePolicyBytes` would accept the bytes; otherwise up to five problems joined by "; "
 */
export function explainPolicyError(bytes: Uint8Array): string {
  let value: unknown;
  try {
    value = parseStrictJson(bytes);
  } catch (err) {
    if (err instanceof StrictJsonError) {
      const where = err.reason === 'bom' || err.reason === 'invalid_utf8' ? '' : ` at ${lineColumn(bytes, err.offset)}`;
      return `not strict JSON: ${JSON_REASON_TEXT[err.reason]}${where}`;
    }
    return 'not strict JSON';
  }
  const parsed = PolicySchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
        return `${issuePath(issue.path)}: unknown key ${keys}`;
      }
      if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && !isPresent(value, issue.path))
        return `${issuePath(issue.path)}: required`;
      return `${issuePath(issue.path)}: ${issue.message}`;
    });
    const more = parsed.error.issues.length > 5 ? ` (and ${parsed.error.issues.length - 5} more)` : '';
    return issues.join('; ') + more;
  }
  try {
    buildPolicy(parsed.data);
  } catch (err) {
    if (err instanceof PatternError) return `pattern ${err.index}: ${PATTERN_REASON_TEXT[err.reason]}`;
    return 'the policy could not be built';
  }
  return 'valid';
}
