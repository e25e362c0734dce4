import test from 'ava';
import { integerFlag, listFlag, parseArgs, UsageError, type FlagSpecs } from '../../src/cli/args.js';

const SPECS: FlagSpecs = {
  home: { type: 'string' },
  limit: { type: 'string' },
  domain: { type: 'string', repeatable: true },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

test('args › accepts --flag value and --flag=value', (t) => {
  const p = parseArgs(['--home', '/a', '--limit=3', 'q'], SPECS);
  t.deepEqual(p.flags, { home: '/a', limit: '3' });
  t.deepEqual(p.positionals, ['q']);
});

test('args › a value after = may be empty or start with a dash', (t) => {
  t.deepEqual(parseArgs(['--limit=-1', '--home='], SPECS).flags, { limit: '-1', home: '' });
});

test('args › booleans take no value', (t) => {
  t.deepEqual(parseArgs(['--dry-run', 'x'], SPECS), { flags: { 'dry-run': true }, positionals: ['x'] });
  t.throws(() => parseArgs(['--dry-run=yes'], SPECS), { instanceOf: UsageError });
});

test('args › repeatable flags collect every value in order', (t) => {
  const p = parseArgs(['--domain', 'work', '--domain=shared'], SPECS);
  t.deepEqual(listFlag(p, 'domain'), ['work', 'shared']);
  t.deepEqual(listFlag(parseArgs([], SPECS), 'domain'), []);
});

test('args › a single-valued flag given twice is a usage error', (t) => {
  t.throws(() => parseArgs(['--home', '/a', '--home', '/b'], SPECS), {
    instanceOf: UsageError,
    message: /more than once/,
  });
});

test('args › an unknown flag is a usage error', (t) => {
  t.throws(() => parseArgs(['--nope'], SPECS), { instanceOf: UsageError, message: /unknown option --nope/ });
  t.throws(() => parseArgs(['-x'], SPECS), { instanceOf: UsageError });
});

test('args › a missing value is a usage error, and a following flag is never swallowed as one', (t) => {
  t.throws(() => parseArgs(['--home'], SPECS), { instanceOf: UsageError, message: /needs a value/ });
  t.throws(() => parseArgs(['--home', '--dry-run'], SPECS), { instanceOf: UsageError, message: /needs a value/ });
});

test('args › -- ends the options: everything after it is positional', (t) => {
  const p = parseArgs(['--home', '/a', '--', '--limit', '-h', '--'], SPECS);
  t.deepEqual(p.flags, { home: '/a' });
  t.deepEqual(p.positionals, ['--limit', '-h', '--']);
  t.deepEqual(parseArgs(['--'], SPECS), { flags: {}, positionals: [] });
});

test('args › a lone dash is positional and short aliases map to long names', (t) => {
  t.deepEqual(parseArgs(['-', '-h'], SPECS), { flags: { help: true }, positionals: ['-'] });
});

test('args › flag names are matched exactly, never by prefix or through the prototype', (t) => {
  t.throws(() => parseArgs(['--hom', '/a'], SPECS), { instanceOf: UsageError });
  t.throws(() => parseArgs(['--constructor', 'x'], SPECS), { instanceOf: UsageError });
  t.throws(() => parseArgs(['--=x'], SPECS), { instanceOf: UsageError });
});

test('args › integerFlag accepts only base-10 integers', (t) => {
  const value = (v: string) => integerFlag(parseArgs([`--limit=${v}`], SPECS), 'limit');
  t.is(value('5'), 5);
  t.is(value('-2'), -2);
  t.is(integerFlag(parseArgs([], SPECS), 'limit'), undefined);
  for (const bad of ['5.0', '1e3', ' 5', '0x10', '', 'five', '99999999999999999999']) {
    t.throws(() => value(bad), { instanceOf: UsageError, message: /must be an integer/ }, bad);
  }
});
