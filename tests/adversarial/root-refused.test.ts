/**
 * A notes root that fails the trust rule (here: mode 0770, group-writable) over a real MCP stdio client
 * (`memory-bridge mcp`): the server says once at start that the root is the problem, with the remedy and the root's
 * path; each refused call's operator line names the root (`root_untrusted root=group_writable`), never as if a note
 * were at fault; the model only gets `unavailable` with no path. Every call still judges the root again: fixed while
 * the server runs, the next call is served; broken again, the next call is refused (docs/CLI.md §Refusals and
 * remedies, docs/TRUST.md). Runs as root and, from scripts/test.js, as an unprivileged user.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { refusalRemedy } from '../../src/remedies.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { connectMcp } from './mcp-client.js';
import { UNAVAILABLE } from './support.js';

/** Poll until `ok()` holds (stderr arrives on its own pipe, after or before the answer). */
async function waitFor(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
}

test('root › a group-writable root is named at start and in each refusal line as the root, and is judged on every call', async (t) => {
  const base = makeTempDir('mb-root-refused-');
  try {
    const root = mkdirs(base, 'notes');
    writeNote(root, 'garden.md', '# Garden\n\nThe heron visits the pond at dawn.\n');
    fs.chmodSync(root, 0o770);
    const { home } = makeHome(base, { version: 1, root, allow: ['**'] });
    const s = await connectMcp(home);
    try {
      const first = await s.call('memory_bridge_search', { query: 'heron' });
      t.true(first.isError);
      t.is(first.text, UNAVAILABLE, 'the model sees only unavailable');
      t.false(first.text.includes(base), 'no path reaches the model');

      const remedy = refusalRemedy('group_writable', 'root');
      const start = `memory-bridge mcp: every call will be unavailable until this is fixed: root_untrusted root=group_writable (root ${root}) → ${remedy}\n`;
      const perCall = 'memory-bridge: memory_bridge_search root_untrusted root=group_writable';
      const lines = (): string[] => s.stderr().split('\n');
      await waitFor(() => lines().includes(`${perCall} → ${remedy}`), 'the first refusal line');
      t.true(s.stderr().startsWith(start), s.stderr());
      t.true(remedy.includes('chmod g-w') && remedy.includes("policy's root"), remedy);
      t.false(remedy.includes(base), 'the remedy itself names no path');

      // The remedy once, then the short line; never the bare reason that reads as a note's.
      t.is((await s.call('memory_bridge_search', { query: 'heron' })).text, UNAVAILABLE);
      await waitFor(() => lines().includes(perCall), 'the second refusal line');
      t.false(
        lines().some((l) => / memory_bridge_search group_writable/.test(l)),
        s.stderr(),
      );

      // Fixed while the server runs: the next call is served, no restart.
      fs.chmodSync(root, 0o700);
      const fixed = await s.call('memory_bridge_search', { query: 'heron' });
      t.false(fixed.isError, fixed.text);
      t.deepEqual(
        JSON.parse(fixed.text).results.map((r: { id: string }) => r.id),
        ['garden.md'],
      );

      // Broken again: the next call is refused again, and a read too.
      fs.chmodSync(root, 0o770);
      const again = await s.call('memory_bridge_read', { id: 'garden.md' });
      t.is(again.text, UNAVAILABLE);
      await waitFor(
        () => lines().some((l) => l.startsWith('memory-bridge: memory_bridge_read root_untrusted root=group_writable')),
        'the read refusal line',
      );
      t.is(
        lines().filter((l) => l.startsWith('memory-bridge mcp: every call')).length,
        1,
        'the start line is said once',
      );
    } finally {
      await s.close();
    }
  } finally {
    removeTree(base);
  }
});

test('root › a root that passes the trust rule gets no start line', async (t) => {
  const base = makeTempDir('mb-root-fine-');
  try {
    const root = mkdirs(base, 'notes');
    writeNote(root, 'garden.md', '# Garden\n\nThe heron visits the pond at dawn.\n');
    const { home } = makeHome(base, { version: 1, root, allow: ['**'] });
    const s = await connectMcp(home);
    try {
      t.false((await s.call('memory_bridge_search', { query: 'heron' })).isError);
    } finally {
      await s.close();
    }
    t.is(s.stderr(), '');
  } finally {
    removeTree(base);
  }
});

test('root › a group-writable directory above the root is the root walk too', async (t) => {
  const base = makeTempDir('mb-root-above-');
  try {
    const above = mkdirs(base, 'shared');
    const root = mkdirs(above, 'notes');
    writeNote(root, 'garden.md', '# Garden\n\nThe heron visits the pond at dawn.\n');
    fs.chmodSync(above, 0o770);
    const { home } = makeHome(base, { version: 1, root, allow: ['**'] });
    const s = await connectMcp(home);
    try {
      t.is((await s.call('memory_bridge_search', { query: 'heron' })).text, UNAVAILABLE);
      await waitFor(() => s.stderr().includes('memory_bridge_search root_untrusted root=group_writable'), 'the line');
    } finally {
      await s.close();
    }
    t.true(
      s
        .stderr()
        .startsWith(
          `memory-bridge mcp: every call will be unavailable until this is fixed: root_untrusted root=group_writable (root ${path.join(above, 'notes')}) → `,
        ),
      s.stderr(),
    );
  } finally {
    removeTree(base);
  }
});
