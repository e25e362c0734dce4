import fs from 'node:fs';
import test from 'ava';
import { releaseMemory } from '../../src/tools/collect.js';

/** VmRSS of this process in bytes (Linux). */
function rss(): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return Number(m![1]) * 1024;
}

test.serial('releaseMemory collects what was dropped and gives the pages back to the system', (t) => {
  // What a first-call build drops: many strings on the heap, and large and small array buffers.
  let strings: string[] | null = Array.from({ length: 200_000 }, (_, i) => `note ${i} ${'x'.repeat(100)}`);
  let buffers: Uint8Array[] | null = Array.from({ length: 2_000 }, (_, i) =>
    new Uint8Array(i % 10 === 0 ? 200_000 : 4_000).fill(1),
  );
  const held = process.memoryUsage();
  const before = rss();
  t.true(held.arrayBuffers > 40e6);
  strings = null;
  buffers = null;
  const { collected, trimmed } = releaseMemory();
  t.true(collected, 'a full collection ran');
  t.is(trimmed, process.platform === 'linux', 'malloc_trim ran where glibc offers it');
  const after = process.memoryUsage();
  t.true(after.arrayBuffers < held.arrayBuffers - 40e6, `array buffers ${held.arrayBuffers} -> ${after.arrayBuffers}`);
  t.true(after.heapUsed < held.heapUsed - 15e6, `heap ${held.heapUsed} -> ${after.heapUsed}`);
  t.true(rss() < before - 40e6, `RSS ${before} -> ${rss()}`);
  t.is(strings, null);
  t.is(buffers, null);
});
