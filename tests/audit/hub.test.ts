/**
 * `memory-bridge audit --all-homes DIR` (docs/AUDIT.md §Asking the trail): the homes of a fleet hub, each a
 * direct subdirectory of DIR with a policy directory, asked and verified at once as an operator runs it; a home
 * with the trail off is skipped with a note, an untrusted trail is an error, a link is not followed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import { CLI } from '../cli/tree.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';

function audit(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'audit', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('hub › --all-homes asks and verifies every home of a hub; one without a trail is skipped, a link not followed', (t) => {
  const base = makeTempDir('mb-audit-hub-');
  t.teardown(() => removeTree(base));
  const root = mkdirs(base, 'memory');
  writeNote(root, 'work/plan.md', '# Plan\nthe heron ships\n');
  writeNote(root, 'shared/terms.md', '# Terms\nheron is the train\n');
  const hub = mkdirs(base, 'homes');
  const policy = (allow: string[], enabled: boolean) => ({ version: 1, root, allow, audit: { enabled } });
  const laptop = makeHome(hub, policy(['work/**', 'shared/**'], true), 'laptop').home;
  const cron = makeHome(hub, policy(['shared/**'], true), 'cron-box').home;
  makeHome(hub, policy(['**'], false), 'quiet');
  fs.writeFileSync(path.join(hub, 'notes.txt'), 'not a home\n');
  fs.symlinkSync(laptop, path.join(hub, 'link-to-laptop'));
  const bridge = createBridge({ log: () => undefined });
  for (const home of [laptop, cron]) bridge.search({ query: 'heron' }, { home, cron: false, subagent: false });
  bridge.search({ query: 'heron' }, { home: path.join(hub, 'quiet'), cron: false, subagent: false });

  const who = audit(['--all-homes', hub, '--id', 'shared/terms.md']);
  t.is(who.status, 0, who.stderr);
  const lines = who.stdout.trim().split('\n');
  t.is(lines.length, 2, 'one record in each audited home, none twice through the link');
  t.true(lines[0]!.startsWith(`${cron}: `));
  t.true(lines[1]!.startsWith(`${laptop}: `));
  t.regex(who.stderr, /1 home found by --all-homes has no audit trail/);
  const plan = audit(['--all-homes', hub, '--id', 'work/plan.md', '--json']);
  t.deepEqual(
    plan.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as Record<string, unknown>)['memory_bridge.home']),
    [laptop],
  );
  const verify = audit(['verify', '--all-homes', hub]);
  t.is(verify.status, 0, verify.stderr);
  t.is(verify.stdout.trim().split('\n').length, 2);
  t.regex(verify.stdout, /cron-box\/plugin-data\/memory-bridge\/audit: 1 records in 1 files, chain intact/);
  // An audit directory that others may write is refused: named, exit 1; the other homes are still answered.
  fs.chmodSync(path.join(cron, 'plugin-data', 'memory-bridge', 'audit'), 0o777);
  const refused = audit(['--all-homes', hub]);
  t.is(refused.status, 1);
  t.regex(refused.stderr, /cron-box\/plugin-data\/memory-bridge\/audit is refused/);
  t.true(refused.stdout.startsWith(`${laptop}: `));
  t.is(audit(['verify', '--all-homes', path.join(base, 'missing')]).status, 2);
});
