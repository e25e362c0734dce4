import test from 'ava';
import { BridgeError } from '../../src/errors.js';
import { explainPolicyError, parsePolicyBytes } from '../../src/policy/load.js';
import { DEFAULT_LIMITS, LIMIT_TABLE, PolicySchema, rootProblem } from '../../src/policy/schema.js';
import type { Limits } from '../../src/policy/types.js';

const BASE = Object.freeze({ version: 1, root: '/srv/memory', allow: ['projects/**'] });

const bytes = (v: unknown): Uint8Array => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

function verdict(v: unknown): 'ok' | string {
  try {
    parsePolicyBytes(bytes(v));
    return 'ok';
  } catch (err) {
    if (err instanceof BridgeError) return `${err.code}/${err.reason}`;
    return `other: ${String(err)}`;
  }
}

const INVALID = 'unavailable/policy_invalid';

test('schema › the smallest valid policy gets every default', (t) => {
  const p = parsePolicyBytes(bytes(BASE));
  t.is(p.version, 1);
  t.is(p.root, '/srv/memory');
  t.deepEqual([...p.allow], ['projects/**']);
  t.deepEqual([...p.deny], []);
  t.false(p.allowCron);
  t.false(p.allowSubagents);
  t.is(p.names, 'unicode');
  t.deepEqual({ ...p.limits }, { ...DEFAULT_LIMITS });
});

test('schema › the limit table holds the defaults and ceilings (docs/POLICY.md "Limits": whole vaults of 150,000 notes and more)', (t) => {
  const table = Object.fromEntries(LIMIT_TABLE.map((r) => [r.key, [r.default, r.ceiling]]));
  t.deepEqual(table, {
    max_results: [10, 10],
    default_results: [5, 5],
    snippet_chars: [300, 300],
    total_chars: [4000, 4000],
    max_file_bytes: [262144, 1048576],
    max_entries: [200_000, 500_000],
    max_depth: [8, 16],
    read_chars: [8000, 8000],
    max_total_bytes: [1024 ** 3, 4 * 1024 ** 3],
  });
  t.true(Object.isFrozen(LIMIT_TABLE));
  t.true(LIMIT_TABLE.every((r) => Object.isFrozen(r) && r.meaning.length > 0));
});

test('schema › every key of the schema carries a description', (t) => {
  const shape = PolicySchema.shape;
  for (const [key, field] of Object.entries(shape)) t.truthy(field.description, key);
  const limitsShape = (shape.limits.unwrap() as unknown as { shape: Record<string, { description?: string }> }).shape;
  for (const row of LIMIT_TABLE) {
    const d = limitsShape[row.key]?.description ?? '';
    t.true(d.includes(`Default ${row.default}`) && d.includes(`ceiling ${row.ceiling}`), row.key);
  }
});

test('schema › a full policy with every optional key is read as written', (t) => {
  const p = parsePolicyBytes(
    bytes({
      ...BASE,
      deny: ['**/private/**'],
      allow_cron: true,
      allow_subagents: true,
      names: 'unicode',
      limits: { max_results: 7, default_results: 3, snippet_chars: 120, total_chars: 900, max_depth: 4 },
    }),
  );
  t.true(p.allowCron);
  t.true(p.allowSubagents);
  t.is(p.names, 'unicode');
  t.like(p.limits, {
    max_results: 7,
    default_results: 3,
    snippet_chars: 120,
    total_chars: 900,
    max_depth: 4,
    read_chars: 8000,
  });
});

for (const row of LIMIT_TABLE) {
  const key = row.key;
  // Setting one side of a cross-constraint alone is compared with the other side's default.
  test(`schema › limits.${key} at its default is valid`, (t) => {
    t.is(verdict({ ...BASE, limits: { [key]: row.default } }), 'ok');
  });
  test(`schema › limits.${key} at its ceiling ${row.ceiling} is valid`, (t) => {
    t.is(verdict({ ...BASE, limits: { [key]: row.ceiling } }), 'ok');
    t.is(parsePolicyBytes(bytes({ ...BASE, limits: { [key]: row.ceiling } })).limits[key], row.ceiling);
  });
  test(`schema › limits.${key} above its ceiling is invalid`, (t) => {
    t.is(verdict({ ...BASE, limits: { [key]: row.ceiling + 1 } }), INVALID);
    t.regex(
      explainPolicyError(bytes({ ...BASE, limits: { [key]: row.ceiling + 1 } })),
      new RegExp(`limits\\.${key}: an integer from 1 to ${row.ceiling}`),
    );
  });
  // JSON source text of each bad value: 0, negative, non-integer, overflowing to Infinity, and wrong types.
  for (const bad of ['0', '-1', '1.5', '1e400', '"5"', 'null', 'true', '[]', '{}']) {
    test(`schema › limits.${key} = ${bad} is invalid`, (t) => {
      t.is(verdict(`{"version":1,"root":"/srv/memory","allow":["a/**"],"limits":{"${key}":${bad}}}`), INVALID);
    });
  }
}

test('schema › an integer written with a fraction or exponent is that integer (JSON has one number type)', (t) => {
  t.is(
    parsePolicyBytes(bytes('{"version":1.0,"root":"/srv/memory","allow":["a/**"],"limits":{"max_depth":0.4e1}}')).limits
      .max_depth,
    4,
  );
});

test('schema › limits of 1 are valid where no cross-constraint binds', (t) => {
  const ones: Partial<Limits> = {
    max_results: 1,
    default_results: 1,
    snippet_chars: 1,
    total_chars: 1,
    max_file_bytes: 1,
    max_entries: 1,
    max_depth: 1,
    read_chars: 1,
    max_total_bytes: 1,
  };
  t.is(verdict({ ...BASE, limits: ones }), 'ok');
});

// [limits, expected]
const cross: Array<[Partial<Limits>, 'ok' | typeof INVALID]> = [
  [{ max_results: 3, default_results: 3 }, 'ok'],
  [{ max_results: 3, default_results: 2 }, 'ok'],
  [{ max_results: 3, default_results: 4 }, INVALID],
  [{ max_results: 3 }, INVALID], // default_results defaults to 5
  [{ max_results: 5 }, 'ok'],
  [{ max_results: 4 }, INVALID],
  [{ default_results: 5 }, 'ok'], // max_results defaults to 10
  [{ snippet_chars: 100, total_chars: 100 }, 'ok'],
  [{ snippet_chars: 100, total_chars: 99 }, INVALID],
  [{ total_chars: 299 }, INVALID], // snippet_chars defaults to 300
  [{ total_chars: 300 }, 'ok'],
  [{ snippet_chars: 50, total_chars: 60 }, 'ok'],
  [{ snippet_chars: 300 }, 'ok'], // total_chars defaults to 4000
];
for (const [limits, expected] of cross) {
  test(`schema › cross-constraint ${JSON.stringify(limits)} → ${expected}`, (t) => {
    t.is(verdict({ ...BASE, limits }), expected);
  });
}

test('schema › the explanation names the cross-constraint and says a missing key took its default', (t) => {
  t.regex(
    explainPolicyError(bytes({ ...BASE, limits: { max_results: 3 } })),
    /default_results \(5\) must not exceed max_results \(3\).*default/,
  );
  t.regex(
    explainPolicyError(bytes({ ...BASE, limits: { total_chars: 10 } })),
    /total_chars \(10\) must be at least snippet_chars \(300\)/,
  );
});

// [title, document, explanation pattern]
const wrong: Array<[string, unknown, RegExp]> = [
  ['a misspelled top-level key', { ...BASE, alow: ['x'] }, /unknown key "alow"/],
  ['a misspelled limit', { ...BASE, limits: { max_result: 3 } }, /limits: unknown key "max_result"/],
  ['a camel-case flag', { ...BASE, allowCron: true }, /unknown key "allowCron"/],
  ['version 2', { ...BASE, version: 2 }, /version: must be 1/],
  ['version as a string', { ...BASE, version: '1' }, /version: must be 1/],
  ['a missing version', { root: BASE.root, allow: BASE.allow }, /version: required/],
  ['a missing root', { version: 1, allow: BASE.allow }, /root: required/],
  ['a missing allow', { version: 1, root: BASE.root }, /allow: required/],
  ['an empty allow', { ...BASE, allow: [] }, /allow: must list at least one pattern/],
  ['allow as a string', { ...BASE, allow: 'projects/**' }, /allow/],
  ['a number in allow', { ...BASE, allow: ['a/**', 3] }, /allow\[1\]: each pattern must be a string/],
  ['deny as null', { ...BASE, deny: null }, /deny/],
  ['allow_cron as a string', { ...BASE, allow_cron: 'yes' }, /allow_cron: must be true or false/],
  ['allow_subagents as 1', { ...BASE, allow_subagents: 1 }, /allow_subagents: must be true or false/],
  ['an unknown name rule', { ...BASE, names: 'ascii' }, /names: must be "portable" or "unicode"/],
  ['limits as an array', { ...BASE, limits: [] }, /limits/],
  ['an array document', [BASE], /top level/],
  ['a null document', null, /top level/],
  ['a relative root', { ...BASE, root: 'srv/memory' }, /root: must be an absolute path/],
  ['a root with a trailing slash', { ...BASE, root: '/srv/memory/' }, /root: must not end with "\/"/],
  ['a root with a double slash', { ...BASE, root: '/srv//memory' }, /root: must be in normal form/],
  ['a root with a dot component', { ...BASE, root: '/srv/./memory' }, /root: must be in normal form/],
  ['a root with a dot-dot component', { ...BASE, root: '/srv/x/../memory' }, /root: must be in normal form/],
  ['the filesystem root', { ...BASE, root: '/' }, /root: must not be the filesystem root/],
  ['/proc as root', { ...BASE, root: '/proc' }, /root: must not be \/proc/],
  ['a root under /proc', { ...BASE, root: '/proc/self/cwd' }, /root: must not be \/proc/],
  ['a root with a NUL', { ...BASE, root: '/srv/mem\u0000ory' }, /root: must not contain a NUL/],
  ['a root of 4096 bytes', { ...BASE, root: `/${'x'.repeat(4095)}` }, /root: must be at most 4095 bytes/],
  ['an empty root', { ...BASE, root: '' }, /root: must be an absolute path/],
  [
    'an invalid allow pattern',
    { ...BASE, allow: ['a/**', 'b/**', '../x'] },
    /allow\[2\]: a pattern contains a "\." or "\.\." segment/,
  ],
  ['an invalid deny pattern', { ...BASE, deny: ['!x'] }, /deny\[0\]: a pattern starts with "!"/],
  [
    '257 allow patterns',
    { ...BASE, allow: Array.from({ length: 257 }, (_, i) => `p${i}`) },
    /allow: must list at most 256 patterns/,
  ],
  [
    '257 deny patterns',
    { ...BASE, deny: Array.from({ length: 257 }, (_, i) => `p${i}`) },
    /deny: must list at most 256 patterns/,
  ],
];
for (const [title, doc, explanation] of wrong) {
  test(`schema › ${title} makes the policy invalid and the explanation says where`, (t) => {
    t.is(verdict(doc), INVALID);
    t.regex(explainPolicyError(bytes(doc)), explanation);
  });
}

test('schema › /procfs-like names that are not /proc itself are roots like any other', (t) => {
  t.is(rootProblem('/process'), null);
  t.is(rootProblem('/srv/proc'), null);
  t.is(verdict({ ...BASE, root: '/process' }), 'ok');
});

test('schema › a valid policy is explained as valid', (t) => {
  t.is(explainPolicyError(bytes(BASE)), 'valid');
});

test('schema › strict JSON failures are explained with their position', (t) => {
  t.regex(explainPolicyError(bytes('{"version": 1,\n  "version": 1}')), /key appears twice.*line 2, column 3/);
  t.regex(explainPolicyError(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), /byte order mark/);
  t.regex(explainPolicyError(new Uint8Array([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])), /not valid UTF-8/);
  t.regex(explainPolicyError(bytes('{"version": 1} trailing')), /follows the JSON value/);
  t.regex(explainPolicyError(bytes('')), /empty/);
});

test('schema › the explanation lists at most five problems and counts the rest', (t) => {
  const doc = { version: 2, root: 'x', allow: [], deny: 3, names: 'x', allow_cron: 1, allow_subagents: 1 };
  const text = explainPolicyError(bytes(doc));
  t.is(text.split('; ').length, 5);
  t.regex(text, /\(and \d+ more\)$/);
});

test('schema › the policy object and its lists and limits are frozen', (t) => {
  const p = parsePolicyBytes(bytes({ ...BASE, deny: ['x/**'] }));
  t.true(Object.isFrozen(p));
  t.true(Object.isFrozen(p.allow));
  t.true(Object.isFrozen(p.deny));
  t.true(Object.isFrozen(p.limits));
});

test('schema › the policy predicates: deny wins, and a fully denied directory is not entered', (t) => {
  const p = parsePolicyBytes(
    bytes({ ...BASE, allow: ['projects/**', 'decisions/*.md'], deny: ['**/private/**', 'projects/secret.md'] }),
  );
  t.true(p.allowsNote('projects/garden.md'));
  t.true(p.allowsNote('Projects/Deep/x.md'));
  t.false(p.allowsNote('projects/secret.md'));
  t.false(p.allowsNote('projects/private/x.md'));
  t.false(p.allowsNote('other/x.md'));
  t.true(p.allowsNote('decisions/watering.md'));
  t.false(p.allowsNote('decisions/old/watering.md'));
  t.true(p.mayEnter(''));
  t.true(p.mayEnter('projects'));
  t.true(p.mayEnter('projects/deep'));
  t.false(p.mayEnter('projects/private'));
  t.false(p.mayEnter('projects/a/private'));
  t.true(p.mayEnter('decisions'));
  t.false(p.mayEnter('decisions/old'));
  t.false(p.mayEnter('other'));
});

test('schema › a list key holding an object with a "length" member is reported as not a list, never thrown', (t) => {
  // The strict parser's objects have no prototype, so a length check that ran on {"length": [{}]} compared an
  // array of such objects with a number and threw a TypeError out of explainPolicyError.
  const base = { version: 1, root: '/srv/notes', allow: ['**/*.md'] };
  for (const doc of [
    { ...base, allow: { length: [{}] } },
    { ...base, deny: { length: [{}] } },
    { ...base, deny: { length: 300 } },
    { ...base, writers: { users: { length: [{}] } } },
    { ...base, writers: { groups: { length: [{}] } } },
  ]) {
    const text = JSON.stringify(doc);
    const why = explainPolicyError(bytes(text));
    t.not(why, 'valid', text);
    t.false(why.includes('at least') || why.includes('at most'), `${text}: ${why}`);
    const err = t.throws(() => parsePolicyBytes(bytes(text)));
    t.true(err instanceof BridgeError && err.reason === 'policy_invalid', text);
  }
});
