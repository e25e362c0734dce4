/**
 * Leakage (docs/TOOLS.md, docs/SEARCH.md): a denied or untrusted note that matches a query never changes a search response by a
 * single byte — ids, titles, snippets, order, `truncated`, `incomplete` — including at the edges of every budget (max_entries,
 * max_total_bytes, the depth look-ahead, limit and total_chars) where such a note could shift a flag. Denied and
 * missing reads are byte-identical. No output (tool JSON, CLI stdout and stderr, MCP text) names the root or home.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { FOREIGN_GID, FOREIGN_UID, addAclEntry, isRoot, writeNote } from '../helpers/fixtures.js';
import { createBridge } from '../../src/tools/bridge.js';
import { connectMcp } from './mcp-client.js';
import { CLI, MARK, NOT_FOUND, assertClean, makeArena, planted, type Arena } from './support.js';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});

/** Allowed notes, all matching "lantern" with different weights; sizes are what the byte budget sees. */
const ALLOWED: Record<string, string> = {
  'b-garden.md': '# Garden lantern\n\nThe lantern by the garden gate.\n',
  'c-notes/visit.md': '# Visit\n\nBring a lantern and a notebook. lantern lantern.\n',
  'c-notes/deep/er/still.md': '# Still\n\nA quiet lantern note three levels down.\n',
  'd-plain.md': 'No heading here, only one lantern mention and the word garden.\n',
};
const DENY = ['**/private/**', '**/*.deny.md'];

const QUERIES: [string, number | undefined][] = [
  ['lantern', undefined],
  ['lantern', 1],
  ['lantern', 2],
  ['lantern', 10],
  ['lantern garden', 3],
  ['lant', 10],
  ['lanterm', 10],
  ['garden', 10],
  ['notebook quiet', 10],
  [MARK.denied, 10],
  [MARK.untrusted, 10],
  [`lantern ${MARK.denied} ${MARK.untrusted}`, 10],
];

function responses(a: Arena): string[] {
  return QUERIES.map(([q, limit]) => JSON.stringify(a.search(q, limit)));
}

function arena(policy: Record<string, unknown> = {}): Arena {
  const a = makeArena({ deny: DENY, ...policy });
  arenas.push(a);
  for (const [id, text] of Object.entries(ALLOWED)) writeNote(a.root, id, text);
  return a;
}

/** Intruders: [name, id, plant it (returns an undo)]. Ids sort before, between and after the allowed notes. */
type Intruder = [string, string, (a: Arena) => void];
function intruders(): Intruder[] {
  const note = (mark: string) => `${planted(mark)}\n${'lantern garden notebook quiet '.repeat(20)}\n`;
  const list: Intruder[] = [];
  for (const at of ['a-', 'c-notes/', 'c-notes/deep/er/', 'c-notes/deep/er/x/', 'z-']) {
    list.push([
      `denied by pattern (${at})`,
      `${at}x.deny.md`,
      (a) => void writeNote(a.root, `${at}x.deny.md`, note(MARK.denied)),
    ]);
    const dir = at.endsWith('/') ? at : `${at}dir/`;
    list.push([
      `denied directory (${at})`,
      `${dir}private/x.md`,
      (a) => void writeNote(a.root, `${dir}private/x.md`, note(MARK.denied)),
    ]);
    list.push([
      `group-writable (${at})`,
      `${at}gw.md`,
      (a) => void writeNote(a.root, `${at}gw.md`, note(MARK.untrusted), 0o620),
    ]);
    list.push([
      `world-writable (${at})`,
      `${at}ww.md`,
      (a) => void writeNote(a.root, `${at}ww.md`, note(MARK.untrusted), 0o606),
    ]);
    list.push([
      `ACL write grant (${at})`,
      `${at}acl.md`,
      (a) => addAclEntry(writeNote(a.root, `${at}acl.md`, note(MARK.untrusted)), 'user', 4242, 6),
    ]);
    list.push([
      `hard link (${at})`,
      `${at}hl.md`,
      (a) => {
        const f = writeNote(a.root, `${at}hl.md`, note(MARK.untrusted));
        fs.linkSync(f, path.join(a.outside, `hl-${at.replace(/\//g, '_')}`));
      },
    ]);
    list.push([
      `symlink to outside (${at})`,
      `${at}sl.md`,
      (a) => {
        writeNote(a.root, `${at}keep.txt`, 'not a note');
        fs.symlinkSync(path.join(a.outside, 'secret.md'), path.join(a.root, `${at}sl.md`));
      },
    ]);
    if (isRoot) {
      list.push([
        `foreign owner (${at})`,
        `${at}fo.md`,
        (a) => fs.chownSync(writeNote(a.root, `${at}fo.md`, note(MARK.untrusted)), FOREIGN_UID, FOREIGN_GID),
      ]);
    }
  }
  return list;
}

/** The policies under which every intruder must be invisible: defaults, and each budget set exactly at its edge. */
function budgetPolicies(): [string, Record<string, unknown>][] {
  const sizes = Object.values(ALLOWED).map((s) => Buffer.byteLength(s));
  const total = sizes.reduce((x, y) => x + y, 0);
  return [
    ['defaults', {}],
    ['max_entries exactly the allowed count', { limits: { max_entries: 4 } }],
    ['max_entries one below the allowed count', { limits: { max_entries: 3 } }],
    ['max_total_bytes exactly the allowed total', { limits: { max_total_bytes: total } }],
    ['max_total_bytes one byte short', { limits: { max_total_bytes: total - 1 } }],
    ['max_depth at the deepest allowed note', { limits: { max_depth: 4 } }],
    ['max_depth one above the middle', { limits: { max_depth: 2 } }],
    ['tight total_chars and snippet_chars', { limits: { total_chars: 120, snippet_chars: 40 } }],
    ['max_results 1', { limits: { max_results: 1, default_results: 1 } }],
  ];
}

test('leakage › the budget edges above are real: "incomplete" appears exactly where a limit cut allowed notes', (t) => {
  const expected: Record<string, boolean> = {
    defaults: false,
    'max_entries exactly the allowed count': false,
    'max_entries one below the allowed count': true,
    'max_total_bytes exactly the allowed total': false,
    'max_total_bytes one byte short': true,
    'max_depth at the deepest allowed note': false,
    'max_depth one above the middle': true,
    'tight total_chars and snippet_chars': false,
    'max_results 1': false,
  };
  for (const [policyName, policy] of budgetPolicies()) {
    const a = arena(policy);
    for (const [q, limit] of QUERIES) {
      const r = a.search(q, limit) as { ok: boolean; incomplete?: unknown; truncated?: boolean };
      t.is('incomplete' in r, expected[policyName] === true, `${policyName}: ${q}`);
      if ('incomplete' in r) t.true(r.incomplete === true && r.truncated === true, policyName);
    }
  }
});

for (const [policyName, policy] of budgetPolicies()) {
  test(`leakage › search is byte-identical with and without each denied or untrusted intruder (${policyName})`, (t) => {
    const a = arena(policy);
    const baseline = responses(a);
    // Warm and cold alike: a second baseline after the index is warm must equal the first.
    t.deepEqual(responses(a), baseline, 'warm equals cold');
    for (const [name, id, plant] of intruders()) {
      // Each intruder in a fresh copy of the tree, so no earlier intruder can mask a later one.
      const b = arena(policy);
      plant(b);
      const got = responses(b);
      for (let i = 0; i < got.length; i++) {
        t.is(got[i], baseline[i], `${name}: query ${JSON.stringify(QUERIES[i])}`);
        assertClean(t, got[i], b, name);
      }
      t.is(JSON.stringify(b.read(id)), NOT_FOUND, `${name}: read`);
      b.cleanup();
      arenas.splice(arenas.indexOf(b), 1);
    }
  });
}

test('leakage › denied, untrusted and missing reads are byte-identical, whatever the reason', (t) => {
  const a = arena();
  for (const [, , plant] of intruders()) plant(a);
  const ids = intruders().map(([, id]) => id);
  for (const id of [...ids, 'missing.md', 'c-notes/missing.md', 'nowhere/at/all.md', 'a-dir/private/x.md']) {
    t.is(JSON.stringify(a.read(id)), NOT_FOUND, id);
  }
});

test('leakage › no output of the CLI or the MCP server names the root, the home or the temp tree', async (t) => {
  const a = arena();
  for (const [, , plant] of intruders()) plant(a);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const runs: string[][] = [
    ['search', '--home', a.home, '--run-kind', 'interactive', '--', 'lantern'],
    ['search', '--home', a.home, '--run-kind', 'interactive', '--', MARK.denied],
    ['read', '--home', a.home, '--run-kind', 'interactive', '--', 'b-garden.md'],
    ['read', '--home', a.home, '--run-kind', 'interactive', '--', 'a-dir/private/x.md'],
    ['read', '--home', a.home, '--run-kind', 'interactive', '--', '../outside/secret.md'],
    ['read', '--home', a.home, '--', 'b-garden.md'],
    ['read', '--home', `${a.home}-missing`, '--run-kind', 'interactive', '--', 'b-garden.md'],
  ];
  for (const args of runs) {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env });
    assertClean(t, r.stdout, a, `stdout of ${args.join(' ')}`);
    // stderr is the operator's: reason codes only, never a path either.
    assertClean(t, r.stderr, a, `stderr of ${args.join(' ')}`);
  }
  const s = await connectMcp(a.home);
  try {
    for (const [tool, args] of [
      ['memory_bridge_search', { query: 'lantern' }],
      ['memory_bridge_search', { query: MARK.untrusted, limit: 10 }],
      ['memory_bridge_read', { id: 'b-garden.md' }],
      ['memory_bridge_read', { id: 'z-acl.md' }],
      ['memory_bridge_read', { id: `${a.root}/b-garden.md` }],
      ['memory_bridge_read', { id: 'x', extra: a.root }],
    ] as const) {
      const { text } = await s.call(tool, args);
      assertClean(t, text, a, `${tool} ${JSON.stringify(args).slice(0, 40)}`);
    }
    fs.writeFileSync(a.policyPath, '{"broken": ');
    assertClean(t, (await s.call('memory_bridge_search', { query: 'lantern' })).text, a, 'broken policy');
    assertClean(t, s.stderr(), a, 'MCP stderr');
  } finally {
    await s.close();
  }
});

test('leakage › after a policy edit denies indexed notes, a warm index answers byte for byte like a fresh process', (t) => {
  const a = arena();
  for (let i = 0; i < 12; i++)
    writeNote(
      a.root,
      `${i % 2 === 0 ? 'priv' : 'pub'}/n${i}.md`,
      `# N${i}\n\nlantern ${'garden '.repeat(i)}${i % 3 === 0 ? '' : 'gate'}\n`,
    );
  const queries = ['lantern', 'garden', 'gate lantern', 'gard', 'lanterm'];
  for (const q of queries) a.search(q, 10); // warm the index with every note visible
  a.setPolicy({ deny: [...DENY, 'priv/**'] });
  const warm = queries.map((q) => JSON.stringify(a.search(q, 10)));
  const fresh = createBridge({ log: () => {} });
  const cold = queries.map((q) => JSON.stringify(fresh.search({ query: q, limit: 10 }, a.caller)));
  t.deepEqual(warm, cold);
  t.false(warm.some((r) => r.includes('priv/')));
});
