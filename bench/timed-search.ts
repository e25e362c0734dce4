/**
 * One in-process search timed by the wall clock and by the process's CPU time (user + system, every thread: the
 * stat thread's share counts), for the bench sections that compare a narrowed or filtered search with the same
 * warm search without it (bench/within.ts, bench/filters.ts). They judge on CPU time, which a machine shared with
 * other work disturbs far less than the wall clock; both are reported.
 */
import { type IndexCache, runSearch } from '../src/tools/search.js';
import type { Caller } from '../src/tools/types.js';

/** Wall clock and CPU time of one search, in milliseconds. */
export interface Sample {
  ms: number;
  cpuMs: number;
}

/**
 * Times one `runSearch` of `args` as `caller` through `cache`.
 *
 * @param section the bench section, named in the error
 * @throws Error when the search is refused (a section measures answers, not errors)
 */
export function timedSearch(args: Record<string, unknown>, caller: Caller, cache: IndexCache, section: string): Sample {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = runSearch(args, caller, cache);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (!r.ok) throw new Error(`${section} bench: a search was refused`);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}
