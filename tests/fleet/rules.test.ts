/**
 * Truth tables for the pure rules of the fleet export: card validation and the live rule, the layout's segment
 * sanitising (by threat: traversal, NUL, invisible characters, case, length), the ten credential kinds, and the
 * front matter's quoting.
 */
import test from 'ava';
import fc from 'fast-check';
import { isLive, normalisePointId, parseCard, type Card } from '../../src/fleet/card.js';
import {
  cardLocation,
  domainSegment,
  freeTextSegment,
  historyFile,
  isPortableName,
  parseHistoryFile,
} from '../../src/fleet/layout.js';
import { cardTitle, parseRendered, renderCard, withoutHeadingMarks, yamlString } from '../../src/fleet/render.js';
import {
  findSecrets,
  namePlaceholder,
  redact,
  redactForName,
  secretKinds,
  SECRET_KINDS,
  STEPS_PER_CHAR,
  type SecretKind,
} from '../../src/fleet/secrets.js';
import { SECRET_SAMPLES as SAMPLES } from './helpers.js';

const ID = '6f1c2b7e-1111-4a5b-9c3d-000000000001';

function card(over: Partial<Card> = {}): Card {
  return {
    id: ID,
    text: 'hello',
    domain: 'work',
    client_id: 'hermes',
    slot_name: 'gpu',
    memory_type: 'slot',
    status: 'active',
    pinned: false,
    revision: 1,
    entities: [],
    relations: [],
    author_node: null,
    author_profile: null,
    created_at: 1_760_000_000,
    updated_at: 1_760_000_000,
    expires_at: 0,
    ...over,
  };
}

// ---------------------------------------------------------------- cards

test('card › an older card without memory_type, revision, entities, relations or updated_at gets the documented defaults', (t) => {
  const r = parseCard({
    id: ID.toUpperCase(),
    payload: { text: 't', domain: 'work', status: 'active', created_at: 100 },
  });
  if (!r.ok) return t.fail('should parse');
  t.is(r.card.id, ID);
  t.is(r.card.client_id, 'generic');
  t.is(r.card.slot_name, 'episodic');
  t.is(r.card.memory_type, 'episodic');
  t.is(r.card.revision, 1);
  t.deepEqual(r.card.entities, []);
  t.deepEqual(r.card.relations, []);
  t.is(r.card.updated_at, 100);
  t.is(r.card.expires_at, 0);
  t.false(r.card.pinned);
});

test('card › a card with a slot name but no memory_type is a slot card', (t) => {
  const r = parseCard({
    id: 7,
    payload: { text: 't', domain: 'work', slot_name: 'gpu', status: 'active', created_at: 1 },
  });
  t.true(r.ok && r.card.memory_type === 'slot' && r.card.id === '7');
});

test('card › malformed payloads and ids are rejected, not thrown', (t) => {
  const good = { text: 't', domain: 'work', status: 'active', created_at: 1 };
  const bad: unknown[] = [
    null,
    'text',
    [],
    { ...good, text: 5 },
    { ...good, domain: undefined },
    { ...good, revision: 0 },
    { ...good, revision: 1.5 },
    { ...good, created_at: -1 },
    { ...good, expires_at: 'never' },
    { ...good, entities: Array.from({ length: 16 }, () => 'e') },
    { ...good, relations: [{ source: 'a' }] },
    { ...good, memory_type: 'semantic' },
    { ...good, pinned: 'yes' },
  ];
  for (const payload of bad) t.false(parseCard({ id: ID, payload }).ok, JSON.stringify(payload));
  for (const id of ['../../etc', '', 'x', -1, 1.5, null, { a: 1 }, `${ID}/..`]) {
    const r = parseCard({ id, payload: good });
    t.false(r.ok);
    t.is(r.ok ? 'x' : r.id, null);
  }
  t.is(normalisePointId('6F1C2B7E11114A5B9C3D000000000001'), ID);
});

test('card › live rule: active and (pinned, no expiry, or expiry in the future)', (t) => {
  const now = 1000;
  t.true(isLive(card({ expires_at: 0 }), now));
  t.true(isLive(card({ expires_at: 1001 }), now));
  t.false(isLive(card({ expires_at: 1000 }), now));
  t.false(isLive(card({ expires_at: 999 }), now));
  t.true(isLive(card({ expires_at: 999, pinned: true }), now));
  t.false(isLive(card({ status: 'archived' }), now));
  t.false(isLive(card({ status: 'archived', pinned: true }), now));
});

// ---------------------------------------------------------------- layout

test('layout › only exactly work, personal and shared are literal domain folders', (t) => {
  for (const d of ['work', 'personal', 'shared']) t.is(domainSegment(d), d);
  const hostile = [
    'Work',
    'WORK',
    'work\u200b',
    '\u202ework',
    'work ',
    ' work',
    'work/..',
    '..',
    '.',
    '',
    'wörk',
    'all',
    'work\u0000',
    'w/o/r/k',
    'x'.repeat(5000),
    'shared\n',
    '\uFEFFpersonal',
    'personal\u0301',
  ];
  const seen = new Set<string>();
  for (const d of hostile) {
    const seg = domainSegment(d);
    t.true(isPortableName(seg), `${JSON.stringify(d)} → ${seg}`);
    t.false(['work', 'personal', 'shared'].includes(seg.toLowerCase()), seg);
    t.regex(seg, /-[0-9a-f]{12}$/);
    t.true(seg.length <= 80);
    seen.add(seg);
  }
  t.is(seen.size, hostile.length, 'different raw domains never share a folder');
});

test('layout › client and slot names stay literal only when already portable, lower-case, short and not reserved', (t) => {
  t.is(freeTextSegment('hermes-node_1.2'), 'hermes-node_1.2');
  for (const raw of [
    '..',
    '.',
    '.hidden',
    'a/b',
    '../../etc/passwd',
    'a\u0000b',
    'a\u200bb',
    'a\u202eb',
    'Ünïcode',
    'sp ace',
    '',
    'x'.repeat(65),
    'back\\slash',
    'Hermes',
    'HERMES',
    'gpu_Profile',
  ]) {
    const seg = freeTextSegment(raw);
    t.true(isPortableName(seg), `${JSON.stringify(raw)} → ${seg}`);
    t.regex(seg, /-[0-9a-f]{12}$/);
    t.false(seg.includes('/'));
  }
  for (const raw of ['history', 'HISTORY', 'History', 'hIsToRy']) {
    const seg = freeTextSegment(raw, ['history']);
    t.not(seg.toLowerCase(), 'history', raw);
    t.regex(seg, /-[0-9a-f]{12}$/);
  }
  // Names that differ only in case never fold to one segment (case-insensitive filesystems and policy patterns).
  const folded = ['hermes', 'Hermes', 'HERMES', 'hErMeS'].map((r) => freeTextSegment(r).toLowerCase());
  t.is(new Set(folded).size, 4, folded.join(' '));
  t.is(
    cardLocation({
      id: ID,
      domain: 'work',
      client_id: 'HISTORY',
      slot_name: 'x',
      memory_type: 'episodic',
    }).dir[1].toLowerCase() === 'history',
    false,
  );
  t.not(freeTextSegment('a b'), freeTextSegment('a_b'), 'a changed name never equals an unchanged one');
  t.not(freeTextSegment('a b'), freeTextSegment('a\tb'), 'two different raw values do not merge');
});

test('layout › a hostile card can only ever land three segments deep inside the output', (t) => {
  const loc = cardLocation({
    id: ID,
    domain: '../..',
    client_id: '/etc',
    slot_name: '../../../root/.ssh/authorized_keys',
    memory_type: 'slot',
  });
  const segs = loc.relPath.split('/');
  t.is(segs.length, 3);
  for (const s of segs) t.true(isPortableName(s));
  t.true(loc.file.endsWith(`--${ID}.md`));
  const ep = cardLocation({
    id: '42',
    domain: 'personal',
    client_id: 'generic',
    slot_name: 'whatever',
    memory_type: 'episodic',
  });
  t.is(ep.relPath, 'personal/generic/episodic--42.md');
});

test('layout › history names carry revision and UTC time and parse back', (t) => {
  const name = historyFile(`gpu--${ID}`, 3, Date.UTC(2026, 10, 30, 2, 51, 3) / 1000 + 0.7);
  t.is(name, `gpu--${ID}--r3-20261130T025103Z.md`);
  t.deepEqual(parseHistoryFile(`gpu--${ID}`, name), { revision: 3, stamp: '20261130T025103Z' });
  t.is(parseHistoryFile(`gpu--${ID}`, `other--${ID}--r3-20261130T025103Z.md`), null);
  t.true(isPortableName(name));
});

// ---------------------------------------------------------------- secrets

test('secrets › each of the fifteen kinds is found and named, inside ordinary text', (t) => {
  t.is(SECRET_KINDS.length, 15);
  for (const kind of SECRET_KINDS) {
    const text = `the value (${SAMPLES[kind]}) is here`;
    t.deepEqual(secretKinds(text), [kind], kind);
  }
  t.deepEqual(secretKinds(`github_pat_11ABCDEFG0${'a'.repeat(40)}`), ['github_token']);
  t.deepEqual(
    secretKinds('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA'),
    ['private_key'],
    'an unterminated block still counts',
  );
});

test('secrets › look-alikes are not flagged: git SHA, sha256 digest, short prefixes, words', (t) => {
  const clean = [
    'commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904',
    `image sha256:${'e3b0c442'.repeat(8)}`,
    `SHA256:${'E3B0C442'.repeat(8)}`,
    'task-management-and-more-things-here',
    'tok_short',
    'sk-short',
    'ghp_tooShort123',
    'AKIA123',
    'xoxb-123',
    '12345:abc',
    `a 63-hex ${'a'.repeat(63)}`,
    `a 65-hex run ${'b'.repeat(65)}`,
    '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----',
    'uuid 6f1c2b7e-1111-4a5b-9c3d-000000000001',
  ];
  for (const s of clean) t.deepEqual(findSecrets(s), [], s);
});

test('secrets › redaction replaces each finding with its kind and leaves nothing behind', (t) => {
  const text = `a ${SAMPLES.aws_access_key} b ${SAMPLES.github_token} c\n${SAMPLES.private_key}\nend`;
  const out = redact(text);
  t.is(out, 'a [redacted:aws_access_key] b [redacted:github_token] c\n[redacted:private_key]\nend');
  t.deepEqual(findSecrets(out), []);
  t.is(redact('nothing here'), 'nothing here');
  // A 64-hex run inside a PEM block collapses into the one block replacement.
  const pem = `-----BEGIN PRIVATE KEY-----\n${'ab'.repeat(32)}\n-----END PRIVATE KEY-----`;
  t.is(redact(pem), '[redacted:private_key]');
});

test('secrets › a name placeholder, sanitised and hashed into a segment, never matches a credential pattern', (t) => {
  for (const kind of SECRET_KINDS) {
    const raw = `pre_${SAMPLES[kind]}_post`;
    const named = redactForName(raw);
    t.true(named.includes(namePlaceholder(kind)), kind);
    for (const seg of [freeTextSegment(named), domainSegment(named), `${freeTextSegment(named)}--${ID}.md`]) {
      t.deepEqual(findSecrets(seg), [], `${kind}: ${seg}`);
    }
  }
});

/** Per kind: values that must be found as exactly that kind, and near misses that must not be found at all. */
const KIND_TABLE: Record<SecretKind, { yes: string[]; no: string[] }> = {
  hex_key: {
    yes: ['f'.repeat(64), `key=${'0A'.repeat(32)};`],
    no: ['f'.repeat(63), 'f'.repeat(65), `sha256:${'0'.repeat(64)}`],
  },
  flk_token: {
    yes: ['flk_0123456789abcdef', '-flk_AAAAAAAAAAAAAAAA-x'],
    no: ['flk_0123456789abcde', 'xflk_0123456789abcdef'],
  },
  tok_token: {
    yes: ['tok_live_0123456789ab', '_tok_0123456789abcdef'],
    no: ['tok_012345678901234', 'stok_0123456789abcdef'],
  },
  cfut_token: { yes: ['cfut_0123456789abcdef'], no: ['cfut_0123456789abcde', 'acfut_0123456789abcdef'] },
  openai_key: {
    yes: [`sk-${'a'.repeat(20)}`, `sk-proj-${'B'.repeat(20)}`],
    no: [`sk-${'a'.repeat(19)}`, `task-${'a'.repeat(30)}`],
  },
  github_token: {
    yes: [`ghp_${'a'.repeat(36)}`, `ghs_${'1'.repeat(40)}`, `github_pat_${'a_'.repeat(20)}`],
    no: [`ghp_${'a'.repeat(35)}`, `ghx_${'a'.repeat(36)}`, `github_pat_${'a'.repeat(39)}`, `aghp_${'a'.repeat(36)}`],
  },
  aws_access_key: { yes: ['AKIA' + 'ABCDEFGHIJ012345'], no: ['AKIA' + 'ABCDEFGHIJ01234', 'AKIA' + 'abcdefghij012345'] },
  slack_token: {
    yes: ['xoxb-1234567890', 'xoxp-12-34-56-78-ab'],
    no: ['xoxb-123456789', 'xoxz-1234567890', 'axoxb-1234567890'],
  },
  telegram_bot_token: {
    yes: [`12345678:${'A'.repeat(35)}`, `bot1234567890:${'a_-'.repeat(12)}`],
    no: [`1234567:${'A'.repeat(35)}`, `12345678901:${'A'.repeat(35)}`, `12345678:${'A'.repeat(34)}`],
  },
  private_key: {
    yes: ['-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----', '-----BEGIN PRIVATE KEY-----\nMIIE'],
    no: [
      '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
      '-----BEGIN rsa PRIVATE KEY-----',
      'PRIVATE KEY',
    ],
  },
  pgp_private_key: {
    yes: [
      '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----',
      '-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOY',
    ],
    no: [
      '-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQIN\n-----END PGP PUBLIC KEY BLOCK-----',
      '-----BEGIN PGP SIGNATURE-----\niQIz',
    ],
  },
  aws_secret_key: {
    yes: [
      'aws_secret_access_key = ' + 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      `AWS_SECRET_ACCESS_KEY=${'A'.repeat(39)}+`,
      `"SecretAccessKey": "${'abc/'.repeat(10)}"`,
      `secret-access-key: '${'9'.repeat(40)}'`,
    ],
    no: [
      `aws_secret_access_key = ${'a'.repeat(39)}`,
      'aws_secret_access_key = <your key here>',
      `the secret access key is rotated monthly ${'a'.repeat(40)}`,
      `aws_access_key_id = ${'A'.repeat(40)}`,
    ],
  },
  aws_session_key: {
    yes: ['ASIA' + 'Y34FZKBOKMUTVV7A'],
    no: ['ASIA' + 'Y34FZKBOKMUTVV7', 'ASIA' + 'y34fzkbokmutvv7a', 'XASIA' + 'Y34FZKBOKMUTVV7A'],
  },
  google_api_key: {
    yes: ['AIza' + 'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY', `key=AIza${'_'.repeat(35)}`],
    no: ['AIza' + 'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBW', `xAIza${'a'.repeat(35)}`, `Aiza${'a'.repeat(35)}`],
  },
  slack_app_token: {
    yes: ['xapp-1-A0123456789-1234567890123-abcdef'],
    no: ['xapp-1-A01234', 'axapp-1-A0123456789-12', 'xapp_1-A0123456789-123'],
  },
};

test('secrets › table per kind: each positive is found as its kind, each near miss is not found at all', (t) => {
  t.deepEqual(Object.keys(KIND_TABLE).sort(), [...SECRET_KINDS].sort());
  for (const kind of SECRET_KINDS) {
    for (const v of KIND_TABLE[kind].yes) {
      t.deepEqual(secretKinds(`before ${v} after`), [kind], `${kind} should match: ${v}`);
      t.deepEqual(findSecrets(redact(`before ${v} after`)), [], `${kind} redacts clean: ${v}`);
    }
    for (const v of KIND_TABLE[kind].no)
      t.deepEqual(findSecrets(`before ${v} after`), [], `${kind} must not match: ${v}`);
  }
  // An AWS secret is redacted without its label, so the redacted text still says what was there.
  t.is(redact(SAMPLES.aws_secret_key), 'aws_secret_access_key = [redacted:aws_secret_key]');
});

/** The regular expressions the finder replaced, for the original ten kinds: an oracle for the hand-written rules. */
const ORACLE: ReadonlyArray<readonly [SecretKind, RegExp]> = [
  ['hex_key', /(?<![0-9A-Fa-f])(?<![Ss][Hh][Aa]256:)[0-9A-Fa-f]{64}(?![0-9A-Fa-f])/g],
  ['flk_token', /(?<![A-Za-z0-9])flk_[A-Za-z0-9_-]{16,}/g],
  ['tok_token', /(?<![A-Za-z0-9])tok_[A-Za-z0-9_-]{16,}/g],
  ['cfut_token', /(?<![A-Za-z0-9])cfut_[A-Za-z0-9_-]{16,}/g],
  ['openai_key', /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}/g],
  ['github_token', /(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})/g],
  ['aws_access_key', /(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}/g],
  ['slack_token', /(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}/g],
  ['telegram_bot_token', /(?<![0-9])[0-9]{8,10}:[A-Za-z0-9_-]{35,}/g],
  ['private_key', /-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY-----|[\s\S]*$)/g],
];

test('secrets › on generated text the linear finder covers every match of the original ten expressions, and finds only their matches', (t) => {
  const ten = new Set<SecretKind>(ORACLE.map(([k]) => k));
  const piece = fc.constantFrom(
    'flk_',
    'tok_',
    'cfut_',
    'sk-',
    'ghp_',
    'gho_',
    'github_pat_',
    'AKIA',
    'xoxb-',
    'xoxq-',
    '12345678',
    '901',
    ':',
    '-----BEGIN ',
    '-----END ',
    'RSA ',
    'PRIVATE KEY',
    '-----',
    'sha256:',
    'abcdef0123456789',
    'ABCDEFGHIJKLMNOP',
    '0123456789',
    '_',
    '-',
    ' ',
    '\n',
    'x',
    'A',
    'é',
    '\u{1F600}',
    // Whole or nearly whole tokens, so every kind is met often, alone and glued to its neighbours.
    'a3f1'.repeat(16),
    'a3f1'.repeat(8),
    '123456789:',
    'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1',
    'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8',
    '-----BEGIN RSA PRIVATE KEY-----',
    '-----END RSA PRIVATE KEY-----',
  );
  // Two properties. (1) Every character a regular expression matched is covered by a finding of the same kind.
  // (2) Every finding is a match of its kind's expression anchored at the finding's start, of the same length. The
  // finder may find more than the old scan: a scan of matchAll never starts inside an earlier match, so in
  // `12345678:<35 token chars>123456789:<token>` it missed the second token, glued to the first; the finder flags both.
  const sticky = new Map(ORACLE.map(([k, re]) => [k, new RegExp(re.source, 'y')] as const));
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
      const text = parts.join('');
      const got = findSecrets(text).filter((f) => ten.has(f.kind));
      for (const [kind, re] of ORACLE) {
        for (const m of text.matchAll(re)) {
          for (let i = m.index; i < m.index + m[0].length; i++) {
            if (!got.some((f) => f.kind === kind && f.start <= i && i < f.end)) return false;
          }
        }
      }
      for (const f of got) {
        const re = sticky.get(f.kind)!;
        re.lastIndex = f.start;
        const m = re.exec(text);
        if (m === null || m[0].length !== f.end - f.start) return false;
      }
      return true;
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('secrets › work is linear on crafted text: counted steps stay under the per-character bound at 64 KiB and 1 MiB', (t) => {
  // Each input repeats a near miss of some rule (a prefix whose token falls short, an armour line without its end,
  // labels without keys, runs the rules extend), the shapes that make a backtracking pattern quadratic.
  const crafted: Record<string, (n: number) => string> = {
    'token prefixes back to back': (n) => 'tok_sk-ghp_xoxb-AIzaflk_'.repeat(n / 24),
    'tokens one short': (n) => `${`sk-${'a'.repeat(19)}`}!${`AIza${'b'.repeat(34)}`}!`.repeat(n / 60),
    'digits and colons': (n) => `${'1'.repeat(9)}:${'x'.repeat(34)}!`.repeat(n / 45),
    'one long digit run then colons': (n) => `${'7'.repeat(n / 2)}${':a'.repeat(n / 4)}`,
    'PEM header words without an end': (n) => `-----BEGIN ${'PRIVATE KEY '.repeat(n / 12)}`,
    'PEM begin, then end lines that never close': (n) =>
      `-----BEGIN RSA PRIVATE KEY-----${'-----END PRIVATE KEY '.repeat(n / 21)}`,
    'PEM begins without a label': (n) => '-----BEGIN X'.repeat(n / 12),
    'PGP begins': (n) => '-----BEGIN PGP PRIVATE KEY BLOCK----'.repeat(n / 36),
    'AWS labels without keys': (n) => `aws_secret_access_key = ${'a'.repeat(39)} `.repeat(n / 64),
    'secret words': (n) => 'SECRETsecret'.repeat(n / 12),
    'one hex run': (n) => 'a'.repeat(n),
    'hex runs of 63': (n) => `${'b'.repeat(63)}-`.repeat(n / 64),
    'upper case run': (n) => 'ASIAAKIA'.repeat(n / 8),
  };
  for (const [name, make] of Object.entries(crafted)) {
    const perChar: number[] = [];
    for (const n of [64 * 1024, 1024 * 1024]) {
      const text = make(n);
      const meter = { steps: 0 };
      findSecrets(text, meter);
      t.true(meter.steps <= STEPS_PER_CHAR * text.length + 1000, `${name}: ${meter.steps} steps for ${text.length}`);
      perChar.push(meter.steps / text.length);
    }
    // Sixteen times the input, about the same work per character: no hidden quadratic term.
    t.true(perChar[1]! <= perChar[0]! * 1.1 + 0.5, `${name}: ${perChar.join(' -> ')} steps per character`);
  }
});

// ---------------------------------------------------------------- render

test('render › every front matter string is one quoted line, whatever the card holds', (t) => {
  const nasty = 'x"\\\n---\nevil: true\u2028\u202e\u200b\u0000\ud800';
  const bytes = renderCard(
    card({
      client_id: nasty,
      slot_name: nasty,
      author_node: nasty,
      entities: [nasty],
      relations: [{ source: nasty, relation: 'r', target: 't' }],
    }),
  );
  const text = bytes.toString('utf8');
  const end = text.indexOf('\n---\n', 4);
  const front = text.slice(4, end).split('\n');
  for (const line of front) t.regex(line, /^(?:[a-z_]+:(?: |$)| {2}- \{)/, line);
  t.false(front.some((l) => l.startsWith('evil')));
  t.false(text.includes('\u0000'));
  t.false(text.includes('\u202e'));
  t.true(new TextDecoder('utf-8', { fatal: true }).decode(bytes).length > 0);
  t.is(yamlString('a"b\\c\u0001'), '"a\\"b\\\\c\\u0001"');
});

test('render › title is the slot name for slots and the first text line for episodic cards', (t) => {
  t.is(cardTitle(card({ memory_type: 'slot', slot_name: 'gpu_profile', text: '# other' })), 'gpu_profile');
  t.is(cardTitle(card({ memory_type: 'episodic', text: '\n\n## Met Sam\u202e at noon\nmore' })), 'Met Sam at noon');
  t.is(cardTitle(card({ memory_type: 'episodic', text: '   ' })), 'Episodic memory');
  const r = renderCard(
    card({ memory_type: 'episodic', text: 'one\ntwo', created_at: 0, updated_at: 1.9, expires_at: 86400 }),
  ).toString();
  t.true(r.includes('\n---\n\n# one\n\none\ntwo\n'));
  t.true(r.includes('created_at: "1970-01-01T00:00:00Z"'));
  t.true(r.includes('expires_at: "1970-01-02T00:00:00Z"'));
});

test('render › an episodic title drops leading # marks as the pattern ^\\s*#+\\s* did, on any line', (t) => {
  const piece = fc.constantFrom(' ', '\t', '\u2028', '\u00a0', '\r', '#', '##', 'a', 'Met Sam');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
      const line = parts.join('');
      return withoutHeadingMarks(line) === line.replace(/^\s*#+\s*/, '');
    }),
    { numRuns: 3000, seed: 22 },
  );
  t.is(cardTitle(card({ memory_type: 'episodic', text: `${' '.repeat(100_000)}#${' '.repeat(100_000)}x` })), 'x');
});

test('render › parseRendered reads back revision, update time and body', (t) => {
  const c = card({ revision: 4, updated_at: 1_760_000_123.4, text: 'body\nline' });
  const facts = parseRendered(renderCard(c));
  t.deepEqual(facts, { revision: 4, updatedAt: 1_760_000_123, body: 'body\nline\n' });
  t.is(parseRendered(Buffer.from('# not ours\n')), null);
});
