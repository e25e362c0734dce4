/**
 * Small helpers shared by the trust tests: simple NoteFilter and KnownNotes implementations (the policy and the
 * search index implement these contracts in production; here they are plain predicates over ids).
 */
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { BridgeError } from '../../src/errors.js';
import { CallerView } from '../../src/trust/view.js';
import type { KnownNotes, NoteFilter, ScanLimits, ScanResult } from '../../src/trust/types.js';

/** The real bindings; the trust tests only run where they exist. */
export function realNative(): Native {
  const native = getNative();
  if (native === null) throw new Error('no native bindings on this platform');
  return native;
}

/**
 * A filter that allows every note except ids under a denied prefix (or equal to a denied id), and enters every
 * directory except denied ones. `deny` entries ending in `/` are directory prefixes.
 */
export function filterDenying(...deny: string[]): NoteFilter {
  const denied = (id: string): boolean => deny.some((d) => (d.endsWith('/') ? id.startsWith(d) : id === d));
  return {
    allowsNote: (id) => !denied(id),
    mayEnter: (dirId) => !denied(`${dirId}/`),
  };
}

export const ALLOW_ALL: NoteFilter = filterDenying();

/**
 * Default limits of docs/POLICY.md with the portable name rule, overridable per test. The racy margin is 0 because
 * these tests write notes a moment before scanning them; the racy rule has its own tests with the real margin.
 */
export function limits(over: Partial<ScanLimits> = {}): ScanLimits {
  return {
    names: 'portable',
    maxEntries: 2000,
    maxDepth: 8,
    maxTotalBytes: 16 * 1024 * 1024,
    maxFileBytes: 262144,
    racyMarginMs: 0,
    ...over,
  };
}

/** KnownNotes backed by a map from id to identity key. */
export class KeyMap implements KnownNotes {
  readonly keys = new Map<string, string>();
  has(id: string, key: string): boolean {
    return this.keys.get(id) === key;
  }
}

/** KnownNotes that learns every note a scan returns, like the search index's sync. */
export class Learning extends KeyMap {
  /** @param memo what this view's scans keep between calls (pass it to scanTree as `{ view: memo }`) */
  constructor(readonly memo: CallerView = new CallerView()) {
    super();
  }

  learn(r: ScanResult): ScanResult {
    this.keys.clear();
    for (const n of r.notes) this.keys.set(n.id, n.key);
    return r;
  }
}

export const NONE_KNOWN: KnownNotes = { has: () => false };

/** The operator reason of a thrown BridgeError, or a marker when something else was thrown. */
export function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof BridgeError) return `${err.code}/${err.reason}`;
    return `other: ${String(err)}`;
  }
  return 'no error';
}
