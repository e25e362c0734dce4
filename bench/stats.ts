/**
 * Order statistics for latency samples (milliseconds). Percentiles use the nearest-rank method on a sorted copy,
 * so p50 of an even-sized sample is the lower middle value (no interpolation between two real measurements).
 */

/** The `p`-th percentile (0 < p ≤ 100) by nearest rank; NaN for an empty sample. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}

/** Median (p50 by nearest rank). */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Summary of one sample: count, p50, p95, min, max (ms, rounded to 0.01). */
export interface Summary {
  n: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

const r2 = (x: number): number => Math.round(x * 100) / 100;

/** Summarise `samples`; all fields NaN-free only when the sample is non-empty. */
export function summarise(samples: readonly number[]): Summary {
  return {
    n: samples.length,
    p50: r2(percentile(samples, 50)),
    p95: r2(percentile(samples, 95)),
    min: r2(Math.min(...samples)),
    max: r2(Math.max(...samples)),
  };
}

/** Appends `value` to the list of `key` in `lists`, creating it. */
export function pushTo<T>(lists: Record<string, T[]>, key: string, value: T): void {
  const list = lists[key];
  if (list === undefined) lists[key] = [value];
  else list.push(value);
}
