import test from 'ava';
import { MAX_JSON_DEPTH, parseStrictJson, StrictJsonError, type StrictJsonReason } from '../../src/policy/json.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function reasonOf(bytes: Uint8Array): StrictJsonReason | 'ok' | string {
  try {
    parseStrictJson(bytes);
    return 'ok';
  } catch (err) {
    if (err instanceof StrictJsonError) return err.reason;
    return `other: ${String(err)}`;
  }
}

function utf16(s: string, endian: 'le' | 'be', bom: boolean): Uint8Array {
  const le = Buffer.from((bom ? '\ufeff' : '') + s, 'utf16le');
  if (endian === 'le') return le;
  const be = Buffer.alloc(le.length);
  for (let i = 0; i < le.length; i += 2) {
    be[i] = le[i + 1]!;
    be[i + 1] = le[i]!;
  }
  return be;
}

const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const nestObjects = (n: number): string => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

// [title, bytes, expected reason or 'ok']
const table: Array<[string, Uint8Array, StrictJsonReason | 'ok']> = [
  ['a plain object', utf8('{"version": 1, "allow": ["a/**"]}'), 'ok'],
  ['surrounding whitespace of all four kinds', utf8(' \t\r\n{}\n\t '), 'ok'],
  ['a top-level scalar', utf8('42'), 'ok'],
  ['a top-level string', utf8('"x"'), 'ok'],
  ['true, false and null', utf8('[true,false,null]'), 'ok'],
  ['numbers in every RFC form', utf8('[0,-0,1,-1,10,1.5,-0.25,1e3,1E+3,1e-3,123456789012345678901234567890]'), 'ok'],
  ['every short escape', utf8('"\\" \\\\ \\/ \\b \\f \\n \\r \\t"'), 'ok'],
  ['a \\u escape and a surrogate pair', utf8('"\\u00e9 \\ud83c\\udf31"'), 'ok'],
  ['raw non-ASCII UTF-8', utf8('{"root": "/srv/メモ 🌱"}'), 'ok'],
  ['keys that differ only in case', utf8('{"a":1,"A":2}'), 'ok'],
  ['the same key in sibling objects', utf8('[{"a":1},{"a":2}]'), 'ok'],
  ['a "__proto__" key as an ordinary key', utf8('{"__proto__": {"x": 1}}'), 'ok'],
  [`nesting exactly ${MAX_JSON_DEPTH} deep`, utf8(nest(MAX_JSON_DEPTH)), 'ok'],
  [`objects nested exactly ${MAX_JSON_DEPTH} deep`, utf8(nestObjects(MAX_JSON_DEPTH)), 'ok'],

  ['a top-level duplicate key', utf8('{"version": 1, "version": 1}'), 'duplicate_key'],
  ['a duplicate key nested two levels deep', utf8('{"limits": {"x": {"a": 1, "b": 2, "a": 3}}}'), 'duplicate_key'],
  ['a duplicate key spelled with an escape', utf8('{"allow": 1, "\\u0061llow": 2}'), 'duplicate_key'],
  ['a duplicate key inside an array element', utf8('[1, {"k": 1, "k": 1}]'), 'duplicate_key'],
  ['a UTF-8 byte order mark', new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), 'bom'],
  ['UTF-16 LE with BOM', utf16('{}', 'le', true), 'invalid_utf8'],
  ['UTF-16 BE with BOM', utf16('{}', 'be', true), 'invalid_utf8'],
  ['UTF-16 LE without BOM', utf16('{"a":1}', 'le', false), 'unexpected_char'],
  ['UTF-16 BE without BOM', utf16('{"a":1}', 'be', false), 'unexpected_char'],
  ['a lone continuation byte', new Uint8Array([0x22, 0x80, 0x22]), 'invalid_utf8'],
  ['an overlong encoding of "/"', new Uint8Array([0x22, 0xc0, 0xaf, 0x22]), 'invalid_utf8'],
  ['an encoded surrogate (CESU-8)', new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]), 'invalid_utf8'],
  ['a truncated multi-byte sequence', new Uint8Array([0x22, 0xe3, 0x81]), 'invalid_utf8'],
  ['an empty file', new Uint8Array(0), 'empty'],
  ['only whitespace', utf8(' \n '), 'empty'],
  ['trailing garbage', utf8('{} x'), 'trailing_data'],
  ['a second value', utf8('{}{}'), 'trailing_data'],
  ['a trailing NUL byte', utf8('{}\0'), 'trailing_data'],
  ['a truncated object', utf8('{"a": 1'), 'unexpected_end'],
  ['a truncated string', utf8('{"a'), 'unexpected_end'],
  ['a truncated literal', utf8('[tru'), 'unexpected_end'],
  ['a truncated escape', utf8('"\\u00'), 'unexpected_end'],
  ['a truncated exponent', utf8('1e'), 'unexpected_end'],
  [`nesting ${MAX_JSON_DEPTH + 1} deep`, utf8(nest(MAX_JSON_DEPTH + 1)), 'too_deep'],
  [`objects nested ${MAX_JSON_DEPTH + 1} deep`, utf8(nestObjects(MAX_JSON_DEPTH + 1)), 'too_deep'],
  ['a trailing comma in an array', utf8('[1,]'), 'unexpected_char'],
  ['a trailing comma in an object', utf8('{"a":1,}'), 'unexpected_char'],
  ['a single-quoted string', utf8("{'a':1}"), 'unexpected_char'],
  ['an unquoted key', utf8('{a:1}'), 'unexpected_char'],
  ['a comment', utf8('{} // c'), 'trailing_data'],
  ['a leading comment', utf8('/* c */ {}'), 'unexpected_char'],
  ['NaN', utf8('NaN'), 'unexpected_char'],
  ['Infinity', utf8('[Infinity]'), 'unexpected_char'],
  ['a leading zero', utf8('01'), 'bad_number'],
  ['a leading plus', utf8('+1'), 'unexpected_char'],
  ['a bare decimal point', utf8('1.'), 'unexpected_end'],
  ['a fraction without integer part', utf8('.5'), 'unexpected_char'],
  ['a hex number', utf8('0x10'), 'trailing_data'],
  ['a raw tab inside a string', utf8('"a\tb"'), 'control_char'],
  ['a raw newline inside a string', utf8('"a\nb"'), 'control_char'],
  ['an unknown escape', utf8('"\\x41"'), 'bad_escape'],
  ['a short \\u escape', utf8('"\\u12"'), 'bad_escape'],
  ['a lone high surrogate escape', utf8('"\\ud800"'), 'lone_surrogate'],
  ['a lone low surrogate escape', utf8('"\\udc00x"'), 'lone_surrogate'],
  ['a high surrogate escape followed by a raw character', utf8('"\\ud800a"'), 'lone_surrogate'],
  ['a missing colon', utf8('{"a" 1}'), 'unexpected_char'],
  ['a missing comma', utf8('[1 2]'), 'unexpected_char'],
  ['an upper-case literal', utf8('True'), 'unexpected_char'],
];

for (const [title, bytes, expected] of table) {
  test(`policy json › ${expected === 'ok' ? 'accepts' : `refuses (${expected})`} ${title}`, (t) => {
    t.is(reasonOf(bytes), expected);
  });
}

test('policy json › anything it accepts JSON.parse also accepts, with the same value', (t) => {
  for (const [, bytes, expected] of table) {
    if (expected !== 'ok') continue;
    const ours = parseStrictJson(bytes);
    // Compared as canonical text: JSON.parse keeps -0 while text round trips print it as 0.
    t.is(JSON.stringify(ours), JSON.stringify(JSON.parse(new TextDecoder().decode(bytes))));
  }
});

test('policy json › decodes escapes, numbers and nesting to the same values as JSON.parse', (t) => {
  const text = '{"s":"a\\"b\\\\c\\u00e9\\ud83c\\udf31","n":[-0.5,1e2,0],"o":{"t":true,"f":false,"z":null}}';
  t.deepEqual(JSON.parse(JSON.stringify(parseStrictJson(utf8(text)))), JSON.parse(text));
});

test('policy json › objects have no prototype, so "__proto__" cannot change one', (t) => {
  const v = parseStrictJson(utf8('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
  t.is(Object.getPrototypeOf(v), null);
  t.deepEqual(Object.keys(v), ['__proto__']);
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

test('policy json › the error carries a reason and an offset but none of the input text', (t) => {
  const secret = 'SECRET-VALUE';
  const err = t.throws(() => parseStrictJson(utf8(`{"${secret}": 1, "${secret}": 2}`)), {
    instanceOf: StrictJsonError,
  });
  t.is(err?.reason, 'duplicate_key');
  t.is(err?.offset, 20);
  t.false(err?.message.includes(secret));
});

test('policy json › a document of 200,000 nested-array openers fails on depth without overflowing the stack', (t) => {
  t.is(reasonOf(utf8('['.repeat(200_000))), 'too_deep');
});

test('policy json › a large flat document with many keys is accepted', (t) => {
  const keys = Array.from({ length: 20_000 }, (_, i) => `"k${i}": ${i}`).join(',');
  const v = parseStrictJson(utf8(`{${keys}}`)) as Record<string, number>;
  t.is(v.k19999, 19999);
});
