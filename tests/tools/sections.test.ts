/**
 * memory_bridge_read `section`, `outline` and `ids` (docs/TOOLS.md §memory_bridge_read) over real notes: sections of
 * every heading level, setext headings, headings inside code ignored, duplicates (the first wins), a section longer
 * than read_chars read on with offsets, an unknown section's fixed hint, and a multi-read whose items answer exactly
 * as single reads under one total_chars budget.
 */
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import { HINTS } from '../../src/tools/args.js';
import type { ManyReadResult, OutlineResult, ReadResult } from '../../src/tools/types.js';
import { writeNote } from '../helpers/fixtures.js';
import { worldTracker } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

const RUNBOOK = [
  '---',
  'title: Runbook',
  'tags: [ops]',
  '---',
  '# Runbook',
  'intro',
  '## Rollout plan',
  'step one',
  '### Canary',
  'five percent',
  '#### Watch',
  'graphs',
  '##### Alerts',
  'pager',
  '###### Quiet',
  'hush',
  '## Rollback',
  'undo',
  '```',
  '## Not a heading',
  '```',
  'Setext one',
  '==========',
  'under setext one',
  '',
  'Setext two',
  '----------',
  'under setext two',
  '## Rollout plan',
  'the second one',
  '',
].join('\n');

function setup(fields: Record<string, unknown> = {}) {
  const w = world({ allow: ['**/*.md'], deny: ['private/**'], ...fields });
  writeNote(w.root, 'runbook.md', RUNBOOK);
  writeNote(w.root, 'plain.md', 'no headings at all\n');
  writeNote(w.root, 'private/secret.md', '# Secret\n## Rollout plan\ncode 4711\n');
  return { w, bridge: createBridge({ log: () => undefined }) };
}

test('section › every level reads to the next heading of the same or a higher level', (t) => {
  const { w, bridge } = setup();
  const read = (section: string) => bridge.read({ id: 'runbook.md', section }, w.caller) as ReadResult;
  t.is(read('Runbook').content.split('\n')[0], '# Runbook');
  t.true(read('Runbook').content.includes('undo'), 'a level-1 section runs on past level-2 headings');
  t.is(
    read('Rollout plan').content,
    '## Rollout plan\nstep one\n### Canary\nfive percent\n#### Watch\ngraphs\n##### Alerts\npager\n###### Quiet\nhush\n',
  );
  t.is(read('Rollout plan').section, 'Rollout plan');
  t.is(
    read('Canary').content,
    '### Canary\nfive percent\n#### Watch\ngraphs\n##### Alerts\npager\n###### Quiet\nhush\n',
  );
  t.is(read('Watch').content, '#### Watch\ngraphs\n##### Alerts\npager\n###### Quiet\nhush\n');
  t.is(read('Alerts').content, '##### Alerts\npager\n###### Quiet\nhush\n');
  t.is(read('Quiet').content, '###### Quiet\nhush\n');
  // Code-block lines are no heading: Rollback runs through the fence to the setext level-1 heading.
  t.is(read('Rollback').content, '## Rollback\nundo\n```\n## Not a heading\n```\n');
  t.is(read('Setext two').content, 'Setext two\n----------\nunder setext two\n');
  t.true(read('Setext one').content.startsWith('Setext one\n==========\nunder setext one\n\nSetext two'));
});

test('section › slugs, link forms and case find the heading; the first of duplicates wins', (t) => {
  const { w, bridge } = setup();
  const read = (section: string) => bridge.read({ id: 'runbook.md', section }, w.caller) as ReadResult;
  for (const s of ['rollout-plan', 'ROLLOUT PLAN', 'Rollout%20plan', '#Rollout plan', 'Runbook#Rollout plan'])
    t.true(read(s).content.startsWith('## Rollout plan\nstep one'), s);
  t.false(read('Rollout plan').content.includes('the second one'));
});

test('section › an unknown section and a heading only inside code give one fixed hint; a denied note stays not_found_or_denied', (t) => {
  const { w, bridge } = setup();
  const unknown = {
    ok: false,
    error: { code: 'invalid_request', message: 'The request is invalid.', hint: HINTS.unknownSection },
  };
  t.deepEqual(bridge.read({ id: 'runbook.md', section: 'Not a heading' }, w.caller), unknown);
  t.deepEqual(bridge.read({ id: 'runbook.md', section: 'nothing like it' }, w.caller), unknown);
  t.deepEqual(bridge.read({ id: 'plain.md', section: 'x' }, w.caller), unknown);
  const denied = bridge.read({ id: 'private/secret.md' }, w.caller);
  t.deepEqual(denied, {
    ok: false,
    error: { code: 'not_found_or_denied', message: 'No readable document has that id.' },
  });
  t.deepEqual(bridge.read({ id: 'private/secret.md', section: 'Rollout plan' }, w.caller), denied);
  t.deepEqual(bridge.read({ id: 'private/secret.md', section: 'no such heading' }, w.caller), denied);
  t.deepEqual(bridge.read({ id: 'missing.md', section: 'Rollout plan' }, w.caller), denied);
});

test('section › a section longer than read_chars is read on with offset inside it', (t) => {
  const { w, bridge } = setup({ limits: { read_chars: 20 } });
  let offset = 0;
  let whole = '';
  for (let i = 0; i < 20; i++) {
    const r = bridge.read({ id: 'runbook.md', section: 'Canary', offset }, w.caller) as ReadResult;
    t.true(r.ok);
    whole += r.truncated ? r.content.slice(0, r.content.lastIndexOf('\n[truncated:')) : r.content;
    if (!r.truncated) break;
    offset = r.next_offset!;
  }
  t.is(whole, '### Canary\nfive percent\n#### Watch\ngraphs\n##### Alerts\npager\n###### Quiet\nhush\n');
});

test('outline › levels, texts and offsets a read can start from; code and front matter skipped; at most 200', (t) => {
  const { w, bridge } = setup();
  const r = bridge.read({ id: 'runbook.md', outline: true }, w.caller) as OutlineResult;
  t.deepEqual(
    r.outline.map((h) => [h.level, h.text]),
    [
      [1, 'Runbook'],
      [2, 'Rollout plan'],
      [3, 'Canary'],
      [4, 'Watch'],
      [5, 'Alerts'],
      [6, 'Quiet'],
      [2, 'Rollback'],
      [1, 'Setext one'],
      [2, 'Setext two'],
      [2, 'Rollout plan'],
    ],
  );
  t.false(r.truncated);
  for (const h of r.outline) {
    const at = bridge.read({ id: 'runbook.md', offset: h.offset }, w.caller) as ReadResult;
    t.true(at.content.replace(/^#+ /u, '').startsWith(h.text), h.text);
  }
  writeNote(w.root, 'many.md', Array.from({ length: 250 }, (_, i) => `## H${i}\n`).join(''));
  const many = bridge.read({ id: 'many.md', outline: true }, w.caller) as OutlineResult;
  t.is(many.outline.length, 200);
  t.true(many.truncated);
  t.deepEqual((bridge.read({ id: 'plain.md', outline: true }, w.caller) as OutlineResult).outline, []);
});

test('ids › each item answers as its single read, in order, under one total_chars budget', (t) => {
  const { w, bridge } = setup();
  const asked = ['plain.md', 'private/secret.md', 'missing.md', 'runbook.md', '../x.md'];
  const many = bridge.read({ ids: asked }, w.caller) as ManyReadResult;
  t.true(many.ok);
  t.deepEqual(
    many.notes,
    asked.map((id) => bridge.read({ id }, w.caller)),
  );
  // total_chars bounds the answers together (snippet_chars lowered with it, as the policy requires); read_chars,
  // larger here, still bounds each one.
  const small = setup({ limits: { total_chars: 30, snippet_chars: 30, read_chars: 8000 } });
  const cut = small.bridge.read({ ids: ['plain.md', 'runbook.md', 'plain.md'] }, small.w.caller) as ManyReadResult;
  const [a, b, c] = cut.notes as ReadResult[];
  t.is(a!.content, 'no headings at all\n');
  t.true(b!.truncated);
  t.is(b!.next_offset, 30 - 19);
  t.is(c!.content, '');
  t.true(c!.truncated);
  t.is(c!.next_offset, 0);
  t.true(cut.truncated);
  // read_chars smaller than total_chars: each note is cut at read_chars, and the total still shares total_chars.
  const each = setup({ limits: { total_chars: 40, snippet_chars: 40, read_chars: 25 } });
  const both = each.bridge.read({ ids: ['runbook.md', 'runbook.md'] }, each.w.caller) as ManyReadResult;
  const [x, y] = both.notes as ReadResult[];
  t.is(x!.next_offset, 25);
  t.is(y!.next_offset, 15);
  t.true(both.truncated);
});

test('read arguments › id and ids exclude each other; outline goes alone; bad values get fixed hints', (t) => {
  const { w, bridge } = setup();
  const hint = (args: unknown) => {
    const r = bridge.read(args, w.caller);
    return r.ok ? 'ok' : r.error.hint;
  };
  t.is(hint({ id: 'plain.md', ids: ['plain.md'] }), HINTS.readArguments);
  t.is(hint({}), HINTS.readArguments);
  t.is(hint({ ids: ['plain.md'], offset: 1 }), HINTS.readArguments);
  t.is(hint({ id: 'plain.md', outline: true, section: 'x' }), HINTS.readArguments);
  t.is(hint({ ids: [] }), HINTS.ids);
  t.is(hint({ ids: ['a', 'b', 'c', 'd', 'e', 'f'] }), HINTS.ids);
  t.is(hint({ id: 'plain.md', section: '' }), HINTS.section);
  t.is(hint({ id: 'plain.md', section: 'x'.repeat(201) }), HINTS.section);
  t.is(hint({ id: 'plain.md', outline: false }), HINTS.outline);
  t.is(hint({ id: 'plain.md', sections: 'x' }), HINTS.readKeys);
});
