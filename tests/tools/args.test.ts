import test from 'ava';
import { BridgeError } from '../../src/errors.js';
import { HINTS, parseReadArgs, parseSearchArgs } from '../../src/tools/args.js';

function hintOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof BridgeError && err.code === 'invalid_request' && err.reason === 'bad_arguments') return err.hint;
    throw err;
  }
  return undefined;
}

const QUERY = HINTS.query;
const LIMIT = 'limit: an integer from 1 to 10';
const KEYS = HINTS.searchKeys;

test('search arguments › accepts a query with and without a limit', (t) => {
  t.deepEqual(parseSearchArgs({ query: 'garden' }), { query: 'garden', filters: {}, sort: 'relevance' });
  t.deepEqual(parseSearchArgs({ query: 'garden', limit: 10 }), {
    query: 'garden',
    filters: {},
    sort: 'relevance',
    limit: 10,
  });
});

test('search arguments › the query is counted in code points', (t) => {
  t.deepEqual(parseSearchArgs({ query: '😀'.repeat(500) }), {
    query: '😀'.repeat(500),
    filters: {},
    sort: 'relevance',
  });
  t.is(
    hintOf(() => parseSearchArgs({ query: 'a'.repeat(501) })),
    QUERY,
  );
  t.is(
    hintOf(() => parseSearchArgs({ query: '😀'.repeat(501) })),
    QUERY,
  );
});

test('search arguments › an empty, blank or non-string query gets the query hint', (t) => {
  for (const query of ['', '   \n\t', 5, null, ['a']])
    t.is(
      hintOf(() => parseSearchArgs({ query })),
      QUERY,
      JSON.stringify(query),
    );
  t.is(
    hintOf(() => parseSearchArgs({})),
    QUERY,
  );
});

test('search arguments › a limit outside 1…10 or not an integer gets the limit hint', (t) => {
  for (const limit of [0, 11, 2.5, -1, '3', null, Number.NaN])
    t.is(
      hintOf(() => parseSearchArgs({ query: 'a', limit })),
      LIMIT,
      String(limit),
    );
});

test('search arguments › unknown keys are refused', (t) => {
  t.is(
    hintOf(() => parseSearchArgs({ query: 'a', root: '/etc' })),
    KEYS,
  );
  t.is(
    hintOf(() => parseSearchArgs({ query: 5, extra: true })),
    KEYS,
    'unknown keys are reported before field problems',
  );
});

test('search arguments › a non-object gets the arguments hint', (t) => {
  for (const raw of [undefined, null, 'garden', ['garden'], 3]) {
    t.is(
      hintOf(() => parseSearchArgs(raw)),
      HINTS.searchArguments,
    );
  }
});

test('search arguments › hints never echo the value sent', (t) => {
  const hint = hintOf(() => parseSearchArgs({ query: '/etc/passwd'.repeat(60) }));
  t.false(hint!.includes('passwd'));
});

test('read arguments › accepts an id and refuses other shapes with fixed hints', (t) => {
  t.deepEqual(parseReadArgs({ id: 'projects/garden.md' }), { one: { id: 'projects/garden.md' } });
  t.deepEqual(parseReadArgs({ ids: ['a.md', 'b.md'] }), { many: ['a.md', 'b.md'] });
  t.is(
    hintOf(() => parseReadArgs({ id: 'a.md', query: 'x' })),
    'arguments: only id, ids, offset, section and outline are accepted',
  );
  t.is(
    hintOf(() => parseReadArgs({ id: 7 })),
    'id: a non-empty string of at most 512 characters',
  );
  t.is(
    hintOf(() => parseReadArgs({ id: '' })),
    'id: a non-empty string of at most 512 characters',
  );
  t.is(
    hintOf(() => parseReadArgs({ id: 'a'.repeat(513) })),
    'id: a non-empty string of at most 512 characters',
  );
  t.is(
    hintOf(() => parseReadArgs(null)),
    HINTS.readArguments,
  );
});
