/**
 * Preloaded into the server under test (`node --import <dist/bench/sampler.js> …`) to profile one phase only:
 * the first SIGUSR2 starts the V8 sampling profiler through an in-process inspector session, the second stops it
 * and writes the `.cpuprofile` to `$MB_BENCH_PROFILE`. `$MB_BENCH_PROFILE.started` appears once sampling runs,
 * so the driver knows when to begin its calls. Writes nothing to stdout (the MCP channel).
 * `$MB_BENCH_PROFILE_INTERVAL`: sampling interval in microseconds (default 200).
 *
 * With `$MB_BENCH_MEMORY` set instead, each SIGUSR2 appends one JSON line to that file: process.memoryUsage() and
 * the V8 heap spaces, then (when the server runs with --expose-gc) the same after a full garbage collection, to
 * tell live index memory from collectable garbage and heap slack.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector';
import v8 from 'node:v8';

const memoryOut = process.env.MB_BENCH_MEMORY;
if (memoryOut) {
  const snapshot = (): Record<string, unknown> => {
    const mib = (x: number): number => Math.round((x / 1048576) * 10) / 10;
    const m = process.memoryUsage();
    return {
      rss: mib(m.rss),
      heapTotal: mib(m.heapTotal),
      heapUsed: mib(m.heapUsed),
      external: mib(m.external),
      arrayBuffers: mib(m.arrayBuffers),
      spaces: Object.fromEntries(
        v8
          .getHeapSpaceStatistics()
          .map((sp) => [sp.space_name, { size: mib(sp.space_size), used: mib(sp.space_used_size) }]),
      ),
    };
  };
  process.on('SIGUSR2', () => {
    const before = snapshot();
    const gc = (globalThis as { gc?: () => void }).gc;
    let after: Record<string, unknown> | null = null;
    if (gc) {
      gc();
      after = snapshot();
    }
    fs.appendFileSync(memoryOut, `${JSON.stringify({ before, afterFullGc: after })}\n`);
  });
}

const out = process.env.MB_BENCH_PROFILE;
if (out) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => {
        session.post(
          'Profiler.setSamplingInterval',
          { interval: Number(process.env.MB_BENCH_PROFILE_INTERVAL ?? 200) },
          () => {
            session.post('Profiler.start', () => fs.writeFileSync(`${out}.started`, ''));
          },
        );
      });
    } else {
      running = false;
      session.post('Profiler.stop', (err, result) => {
        if (!err) fs.writeFileSync(out, JSON.stringify(result.profile));
      });
    }
  });
}
