/**
 * Preloaded into the server under test (`node --import <dist/bench/sampler.js> …`) to profile one phase only:
 * the first SIGUSR2 starts the V8 sampling profiler through an in-process inspector session, the second stops it
 * and writes the `.cpuprofile` to `$MB_BENCH_PROFILE`. `$MB_BENCH_PROFILE.started` appears once sampling runs,
 * so the driver knows when to begin its calls. Writes nothing to stdout (the MCP channel).
 * `$MB_BENCH_PROFILE_INTERVAL`: sampling interval in microseconds (default 200).
 */
import fs from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.MB_BENCH_PROFILE;
if (out) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => {
        session.post('Profiler.setSamplingInterval', { interval: Number(process.env.MB_BENCH_PROFILE_INTERVAL ?? 200) }, () => {
          session.post('Profiler.start', () => fs.writeFileSync(`${out}.started`, ''));
        });
      });
    } else {
      running = false;
      session.post('Profiler.stop', (err, result) => {
        if (!err) fs.writeFileSync(out, JSON.stringify(result.profile));
      });
    }
  });
}
