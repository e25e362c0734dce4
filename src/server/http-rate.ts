/**
 * The per-client rate limit of `serve` (docs/HTTP.md, "Limits"): one token bucket per client name.
 */
import { performance } from 'node:perf_hooks';

/** Milliseconds from an arbitrary origin that never goes backwards (production: `performance.now`). */
export type Clock = () => number;

/**
 * One token bucket per client name (docs/HTTP.md, "Limits"): `burst` tokens at most, refilled at `perSecond`, one
 * taken per request. Time comes from `clock` (monotonic milliseconds), so a test can stop it.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly clock: Clock = () => performance.now(),
  ) {}

  /** Take one token for `name`: 0 when granted, else the whole seconds to wait (at least 1). */
  take(name: string): number {
    const now = this.clock();
    let b = this.buckets.get(name);
    if (b === undefined) {
      b = { tokens: this.burst, at: now };
      this.buckets.set(name, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  /** Drop buckets that are full again (they hold no information) once more than `keep` are kept. */
  prune(keep: number): void {
    if (this.buckets.size <= keep) return;
    const now = this.clock();
    for (const [name, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(name);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}
