/**
 * CPU cost of a call, for the tests that judge how work grows with input size (a ratio between two sizes in the
 * same run, never an absolute time: speed targets live in `npm run bench`). CPU time of this process only, so other
 * processes on the machine do not count; noise (garbage collection, shared caches) only ever raises a measurement.
 */

/** CPU milliseconds of this process so far (user + system). */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * CPU milliseconds per call of `f`, the best of five batches of at least 3 ms each (after one warm-up call): the
 * best batch is the one least disturbed by garbage collection and by other processes sharing the caches.
 */
export function perCall(f: () => void): number {
  f();
  let best = Number.POSITIVE_INFINITY;
  for (let batch = 0; batch < 5; batch++) {
    let calls = 0;
    const t0 = cpuMs();
    let elapsed = 0;
    do {
      f();
      calls++;
      elapsed = cpuMs() - t0;
    } while (elapsed < 3);
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

/**
 * The ratio of the cost of `f(large)` to that of `f(small)`, the lowest of up to three measurements (one that is
 * already at most `limit` ends the search): noise only ever raises a measured ratio, work that grows faster than
 * the input raises all three.
 */
export function costRatio<T>(f: (input: T) => void, small: T, large: T, limit: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < 3 && best > limit; attempt++) {
    best = Math.min(best, perCall(() => f(large)) / perCall(() => f(small)));
  }
  return best;
}
