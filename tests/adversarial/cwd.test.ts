/**
 * Ids are never resolved against the working directory: not in-process after chdir, not through the CLI or the MCP
 * server started in a directory full of same-named notes, and a relative policy root or caller home is refused
 * rather than resolved against the cwd.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import test from 'ava';
import { writeNote } from '../helpers/fixtures.js';
import { connectMcp } from './mcp-client.js';
import { CLI, MARK, NOT_FOUND, UNAVAILABLE, assertClean, idsOf, makeArena, planted, type Arena } from './support.js';

let a: Arena;
test.before(() => {
  a = makeArena();
  writeNote(a.root, 'notes/plain.md', '# Plain\n\nlantern\n');
  // Decoys in the directory the process will be started in, under the same ids a model might try.
  for (const id of ['a.md', 'notes/decoy.md', 'memory/a.md', 'secret.md'])
    writeNote(a.outside, id, planted(MARK.outside));
});
test.after.always(() => a?.cleanup());

const IDS = ['a.md', 'notes/decoy.md', 'memory/a.md', 'secret.md', 'outside/secret.md'];

test.serial('cwd › in-process, after chdir into a directory of decoys, ids still resolve only from the root', (t) => {
  const before = process.cwd();
  process.chdir(a.outside);
  try {
    for (const id of IDS) t.is(JSON.stringify(a.read(id)), NOT_FOUND, id);
    const r = a.search(`lantern ${MARK.outside}`, 10);
    assertClean(t, r, a);
    t.deepEqual(idsOf(r), ['notes/plain.md']);
    t.true(a.read('notes/plain.md').ok);
  } finally {
    process.chdir(before);
  }
});

test.serial('cwd › a relative policy root or caller home is unavailable, whatever the cwd holds', (t) => {
  const before = process.cwd();
  process.chdir(a.tmp);
  try {
    for (const root of ['memory', './memory', 'outside', '.', '', '~/memory']) {
      a.setPolicy({ root });
      t.is(JSON.stringify(a.read('notes/plain.md')), UNAVAILABLE, root);
      t.is(JSON.stringify(a.search('lantern')), UNAVAILABLE, root);
    }
    a.setPolicy({});
    for (const home of ['home', './home', path.relative(a.tmp, a.home), '~']) {
      const c = { ...a.caller, home };
      t.is(JSON.stringify(a.bridge.read({ id: 'notes/plain.md' }, c)), UNAVAILABLE, home);
      t.is(JSON.stringify(a.bridge.search({ query: 'lantern' }, c)), UNAVAILABLE, home);
    }
  } finally {
    process.chdir(before);
    a.setPolicy({});
  }
});

test('cwd › the CLI started inside a directory of decoys never reads them', (t) => {
  for (const id of IDS) {
    const r = spawnSync(process.execPath, [CLI, 'read', '--home', a.home, '--run-kind', 'interactive', '--', id], {
      cwd: a.outside,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    t.is(r.status, 1, id);
    t.is(r.stdout.trim(), NOT_FOUND, id);
    assertClean(t, r.stdout + r.stderr, a, id);
  }
  const s = spawnSync(
    process.execPath,
    [CLI, 'search', '--home', a.home, '--run-kind', 'interactive', '--limit', '10', '--', 'lantern', MARK.outside],
    {
      cwd: a.outside,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    },
  );
  t.is(s.status, 0);
  assertClean(t, s.stdout + s.stderr, a);
  t.deepEqual(idsOf(JSON.parse(s.stdout)), ['notes/plain.md']);
});

test('cwd › the MCP server started inside a directory of decoys never reads them', async (t) => {
  const s = await connectMcp(a.home, {}, a.outside);
  try {
    for (const id of IDS) {
      const { text } = await s.call('memory_bridge_read', { id });
      t.is(text, NOT_FOUND, id);
    }
    const { text } = await s.call('memory_bridge_search', { query: `lantern ${MARK.outside}`, limit: 10 });
    assertClean(t, text, a);
    t.deepEqual(idsOf(JSON.parse(text)), ['notes/plain.md']);
  } finally {
    await s.close();
  }
});
