import test from 'ava';
import fs from 'node:fs';
import { runSurface, type SurfaceName } from '../../src/hermes/surfaces.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { Caller } from '../../src/tools/types.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';

// The Hermes surfaces under the trust rule, as root and (scripts/test.js) as an unprivileged user: a note that
// stops being trusted between two turns is neither recalled, offered nor expanded; trusted again, it is.
const tmp = makeTempDir('mb-surfaces-trust-');
test.after.always(() => removeTree(tmp));

const bridge = createBridge({ log: () => undefined });
const surface = (name: SurfaceName, args: unknown, who: Caller) =>
  runSurface(bridge, name, args, who, () => undefined) as {
    context?: string | null;
    items?: { text: string }[];
  };
function caller(home: string): Caller {
  return { home, cron: false, subagent: false };
}

test('recall › a note edited to untrusted between turns is not recalled', (t) => {
  const notes = mkdirs(tmp, 'edited');
  const file = writeNote(notes, 'projects/orchard.md', '# Orchard\n\nThe quince orchard is pruned in March.\n');
  const h = makeHome(tmp, { version: 1, root: notes, allow: ['**'], recall: { enabled: true } }, 'home-edited').home;
  t.true(
    surface('hermes_recall', { message: 'quince orchard' }, caller(h)).context?.includes('projects/orchard.md') ===
      true,
  );
  fs.chmodSync(file, 0o666);
  t.is(surface('hermes_recall', { message: 'quince orchard' }, caller(h)).context, null);
  fs.chmodSync(file, 0o600);
  t.truthy(surface('hermes_recall', { message: 'quince orchard' }, caller(h)).context);
});

test('references › a note edited to untrusted is neither offered nor expanded', (t) => {
  const notes = mkdirs(tmp, 'edited-ref');
  const file = writeNote(notes, 'projects/orchard.md', '# Orchard\n\nThe quince orchard.\n');
  const h = makeHome(tmp, { version: 1, root: notes, allow: ['**'] }, 'home-edited-ref').home;
  t.deepEqual(
    surface('hermes_complete', { query: 'orch', limit: 10 }, caller(h)).items!.map((i) => i.text),
    ['projects/orchard.md'],
  );
  fs.chmodSync(file, 0o646);
  t.deepEqual(surface('hermes_complete', { query: 'orch', limit: 10 }, caller(h)).items, []);
  t.is(surface('hermes_expand', { target: 'projects/orchard.md' }, caller(h)).context, null);
});
