import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { makeTempDir, removeTree } from '../helpers/fixtures.js';
import { CLI } from './tree.js';

/** A fresh TMPDIR per test, so we can see exactly what the demo leaves behind (it must leave nothing). */
const tmpdirs: string[] = [];
function freshTmp(): string {
  const dir = makeTempDir('mb-demo-');
  tmpdirs.push(dir);
  return dir;
}
test.after.always(() => {
  for (const d of tmpdirs) removeTree(d);
});

const env = (tmp: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmp });

test('demo › the scripted tour passes every step and removes its temporary tree', (t) => {
  const tmp = freshTmp();
  const r = spawnSync(process.execPath, [CLI, 'demo'], { encoding: 'utf8', env: env(tmp), timeout: 120_000 });
  t.is(r.status, 0, r.stdout + r.stderr);
  t.regex(r.stdout, /Every step behaved as described/);
  t.notRegex(r.stdout, /UNEXPECTED/);
  t.regex(r.stdout, /"code": "not_found_or_denied"/);
  t.regex(r.stdout, /cron_refused/);
  t.deepEqual(fs.readdirSync(tmp), [], 'nothing is left in TMPDIR');
});

test('demo › --interactive answers typed searches and reads, and quits at end of input', (t) => {
  const tmp = freshTmp();
  const input = 'asters\nread projects/garden.md\nas visitor\nread projects/garden.md\n';
  const r = spawnSync(process.execPath, [CLI, 'demo', '--interactive'], {
    encoding: 'utf8',
    env: env(tmp),
    input,
    timeout: 120_000,
  });
  t.is(r.status, 0, r.stderr);
  t.regex(r.stdout, /gardener \(interactive\) → memory_bridge_search\(\{"query":"asters"\}\)/);
  t.regex(r.stdout, /"content": "# Lantern Garden/);
  t.regex(r.stdout, /visitor \(interactive\) → memory_bridge_read[\s\S]*"code": "not_found_or_denied"/);
  t.deepEqual(fs.readdirSync(tmp), []);
});

test('demo › SIGTERM while waiting for input removes the temporary tree', async (t) => {
  const tmp = freshTmp();
  const child = spawn(process.execPath, [CLI, 'demo', '--interactive'], {
    env: env(tmp),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('gardener> ')) resolve();
    });
    child.on('exit', () => reject(new Error(`demo exited early: ${out}`)));
  });
  t.is(fs.readdirSync(tmp).length, 1, 'the demo tree exists while it runs');
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.is(await exited, 143);
  t.deepEqual(fs.readdirSync(tmp), [], 'the tree is gone after SIGTERM');
});
