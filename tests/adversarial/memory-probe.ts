/**
 * Child process of the memory test (run with `node --expose-gc memory-probe.js <calls>`): builds an arena, warms
 * the bridge up, then makes `calls` more calls (reads, searches and failing calls) and prints
 * `{"warm": heapUsed after warm-up, "after": heapUsed after the calls}` in bytes, each after a full GC.
 */
import fs from 'node:fs';
import { writeNote } from '../helpers/fixtures.js';
import { makeArena } from './support.js';

const calls = Number(process.argv[2] ?? '10000');
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const a = makeArena({ deny: ['private/**'] });
try {
  for (let i = 0; i < 40; i++)
    writeNote(a.root, `d${i % 4}/n${i}.md`, `# Note ${i}\n\nlantern garden ${i} ${'words '.repeat(i)}\n`);
  writeNote(a.root, 'private/x.md', 'denied');
  const badCaller = { home: `${a.home}-missing`, cron: false, subagent: false };
  const round = (i: number): void => {
    switch (i % 8) {
      case 0:
        a.search('lantern', 10);
        break;
      case 1:
        a.search(`garden ${i % 40}`, 3);
        break;
      case 2:
        a.read(`d${i % 4}/n${(i % 10) * 4 + (i % 4)}.md`);
        break;
      case 3:
        a.read('private/x.md');
        break;
      case 4:
        a.read('missing.md');
        break;
      case 5:
        a.bridge.search({ query: 'x', bogus: i }, a.caller);
        break;
      case 6:
        a.bridge.read({ id: 'd0/n0.md' }, badCaller);
        break;
      default:
        a.read('../outside/secret.md');
    }
  };
  for (let i = 0; i < 2000; i++) round(i);
  gc();
  gc();
  const warm = process.memoryUsage().heapUsed;
  for (let i = 0; i < calls; i++) round(i);
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  fs.writeSync(1, `${JSON.stringify({ warm, after })}\n`);
} finally {
  a.cleanup();
}
