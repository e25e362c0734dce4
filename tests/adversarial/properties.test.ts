/**
 * Property tests (issue item 6) with fast-check, end to end where it matters:
 * - random ids through the real bridge never serve a byte from outside the root, from a denied note, or from
 *   anything but the regular, allowed note stored at exactly that id;
 * - random and mutated policy files written into a real home give a working policy or `unavailable`, in exact
 *   agreement with parsePolicyBytes, and never an exception;
 * - random ACL bytes never crash the parser nor pass as "no ACL": `aclReason` agrees with an independent oracle of
 *   the kernel's structure rules plus the write-grant rule, and bytes the kernel itself accepts are parsed.
 * numRuns are modest for the default run; MB_SOAK=1 multiplies them by 20.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { BridgeError } from '../../src/errors.js';
import { parsePolicyBytes } from '../../src/policy/load.js';
import { aclReason } from '../../src/trust/rule.js';
import { ACL_TAG, aclBytes, setXattr, writeNote } from '../helpers/fixtures.js';
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { ALL_MARKS, MARK, UNAVAILABLE, makeArena, planted, type Arena } from './support.js';

const SOAK = process.env.MB_SOAK === '1' ? 20 : 1;
const native = getNative() as Native;

let a: Arena;
const CONTENT = new Map<string, string>();
test.before(() => {
  a = makeArena({ deny: ['private/**', '**/*.secret.md'], names: 'unicode' });
  const notes: Record<string, string> = {
    'a.md': '# A\n\nalpha\n',
    'b/c.md': '# C\n\ngamma\n',
    'b/d/e.md': '# E\n\nepsilon\n',
    'caf\u00e9.md': '# Cafe\n\ncoffee\n',
    'with space.md': '# Space\n\nspace\n',
  };
  for (const [id, text] of Object.entries(notes)) {
    writeNote(a.root, id, text);
    CONTENT.set(id, text);
  }
  writeNote(a.root, 'private/p.md', planted(MARK.denied));
  writeNote(a.root, 'b/x.secret.md', planted(MARK.denied));
  fs.symlinkSync(a.outside, path.join(a.root, 'link'));
  fs.symlinkSync(path.join(a.outside, 'secret.md'), path.join(a.root, 'b/leaf.md'));
  fs.linkSync(path.join(a.outside, 'secret.md'), path.join(a.root, 'hard.md'));
});
test.after.always(() => a?.cleanup());

const SEGMENTS = [
  'a.md',
  'b',
  'c.md',
  'd',
  'e.md',
  'caf\u00e9.md',
  'cafe\u0301.md',
  'CAF\u00c9.md',
  'with space.md',
  'private',
  'p.md',
  'x.secret.md',
  'link',
  'secret.md',
  'leaf.md',
  'hard.md',
  'outside',
  'memory',
  '..',
  '.',
  '',
  '...',
  '%2e%2e',
  '%2f',
  '\\',
  'C:',
  'con.md',
  ' ',
  'a.md ',
  'a.md.',
  'A.md',
  'a.MD',
  '\u0000',
  '\n',
  '\u202e',
  '\u200b',
  '~',
  '*',
  '**',
  '?',
  '[a]',
  '{a,b}.md',
  'file:',
  '/',
];

const idArb = fc.oneof(
  fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 6 }).map((s) => s.join('/')),
  fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }).map((s) => s.join('')),
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
);

test('properties › a random id never serves anything but the allowed regular note stored at exactly that id', (t) => {
  fc.assert(
    fc.property(idArb, (id) => {
      const r = a.read(id);
      const text = JSON.stringify(r);
      for (const m of ALL_MARKS) if (text.toLowerCase().includes(m)) return false;
      if (!r.ok) return r.error.code === 'invalid_request' || r.error.code === 'not_found_or_denied';
      // Served: the id must be one of the planted allowed notes, byte for byte, with its exact content.
      return 'content' in r && r.id === id && CONTENT.get(id) === r.content;
    }),
    { numRuns: 1500 * SOAK },
  );
  t.pass();
});

test('properties › every id search returns reads back to the same allowed note', (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom('alpha', 'gamma', 'epsilon', 'coffee', 'space', 'lantern', MARK.outside, MARK.denied),
      (q) => {
        const r = a.search(q, 10);
        if (!r.ok || !('results' in r)) return false;
        if (ALL_MARKS.some((m) => JSON.stringify(r).toLowerCase().includes(m))) return false;
        return r.results.every((hit) => CONTENT.has(hit.id) && a.read(hit.id).ok);
      },
    ),
    { numRuns: 40 * SOAK },
  );
  t.pass();
});

const VALID = (root: string) =>
  JSON.stringify({ version: 1, root, allow: ['**'], deny: ['private/**'], limits: { max_results: 5 } });

test.serial(
  'properties › random and mutated policy files give a working policy or unavailable, exactly as parsePolicyBytes decides',
  (t) => {
    const b = makeArena();
    try {
      writeNote(b.root, 'n.md', '# N\n\nlantern\n');
      const valid = Buffer.from(VALID(b.root));
      const mutated = fc
        .array(
          fc.tuple(
            fc.nat({ max: valid.length }),
            fc.integer({ min: 0, max: 255 }),
            fc.constantFrom('set', 'insert', 'delete'),
          ),
          { minLength: 0, maxLength: 3 },
        )
        .map((edits) => {
          const bytes = Array.from(valid);
          for (const [at, value, kind] of edits) {
            const i = Math.min(at, bytes.length);
            if (kind === 'set' && i < bytes.length) bytes[i] = value;
            else if (kind === 'insert') bytes.splice(i, 0, value);
            else bytes.splice(i, 1);
          }
          return Buffer.from(bytes);
        });
      const tokens = fc
        .array(
          fc.constantFrom(
            '{',
            '}',
            '[',
            ']',
            ',',
            ':',
            '"version"',
            '1',
            '"root"',
            JSON.stringify(b.root),
            '"allow"',
            '["**"]',
            '"deny"',
            '[]',
            'null',
            'true',
            ' ',
            '"limits"',
            '{}',
          ),
          { maxLength: 24 },
        )
        .map((parts) => Buffer.from(parts.join('')));
      fc.assert(
        fc.property(
          fc.oneof(
            mutated,
            tokens,
            fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u)),
          ),
          (bytes) => {
            fs.writeFileSync(b.policyPath, bytes);
            let parsed: boolean;
            try {
              parsePolicyBytes(bytes);
              parsed = true;
            } catch (err) {
              if (!(err instanceof BridgeError)) return false;
              parsed = false;
            }
            const search = JSON.stringify(b.search('lantern'));
            const read = JSON.stringify(b.read('n.md'));
            if (!parsed) return search === UNAVAILABLE && read === UNAVAILABLE;
            // A valid policy may still be unavailable (e.g. a mutated root that is not a trusted directory), never a throw.
            return (
              (search.startsWith('{"ok":true') || search === UNAVAILABLE) &&
              (read.startsWith('{"ok":') || read === UNAVAILABLE)
            );
          },
        ),
        { numRuns: 400 * SOAK },
      );
      t.pass();
    } finally {
      b.cleanup();
    }
  },
);

/** Independent oracle of docs/TRUST.md §ACLs / docs/PLATFORM.md §Linux ACL bytes for Linux ACL bytes: the reason aclReason must give. */
function oracle(bytes: Uint8Array, uid: number): 'acl_unreadable' | 'acl_write' | null {
  if (bytes.length < 4 || (bytes.length - 4) % 8 !== 0) return 'acl_unreadable';
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(0, true) !== 2) return 'acl_unreadable';
  const n = (bytes.length - 4) / 8;
  if (n < 3) return 'acl_unreadable';
  const order = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20];
  const seen: number[] = [];
  let write = false;
  for (let i = 0; i < n; i++) {
    const tag = dv.getUint16(4 + 8 * i, true);
    const perm = dv.getUint16(6 + 8 * i, true);
    const id = dv.getUint32(8 + 8 * i, true);
    const rank = order.indexOf(tag);
    if (rank < 0 || perm > 7) return 'acl_unreadable';
    const last = seen.length === 0 ? -1 : order.indexOf(seen[seen.length - 1]!);
    if (rank < last) return 'acl_unreadable';
    if (rank === last && tag !== 0x02 && tag !== 0x08) return 'acl_unreadable';
    const named = tag === 0x02 || tag === 0x08;
    if (!named && id !== 0xffffffff) return 'acl_unreadable';
    seen.push(tag);
    if ((perm & 2) !== 0 && tag !== 0x01 && !(tag === 0x02 && (id === uid || id === 0))) write = true;
  }
  const count = (tag: number) => seen.filter((x) => x === tag).length;
  if (seen[0] !== 0x01 || count(0x04) !== 1 || seen[seen.length - 1] !== 0x20) return 'acl_unreadable';
  const named = count(0x02) + count(0x08);
  if (named > 0 !== (count(0x10) === 1)) return 'acl_unreadable';
  return write ? 'acl_write' : null;
}

const entryArb = fc.record({
  tag: fc.constantFrom(
    ACL_TAG.USER_OBJ,
    ACL_TAG.USER,
    ACL_TAG.GROUP_OBJ,
    ACL_TAG.GROUP,
    ACL_TAG.MASK,
    ACL_TAG.OTHER,
    0,
    0x40,
    0x03,
  ),
  perm: fc.oneof(fc.integer({ min: 0, max: 7 }), fc.constantFrom(8, 0xffff)),
  id: fc.oneof(fc.constantFrom(0, 0xffffffff, 1000, 65534, process.getuid?.() ?? 0), fc.nat()),
});
/** Mostly well-shaped ACLs (so the valid region is reached), then arbitrary bytes. */
const aclArb = fc.oneof(
  fc.array(entryArb, { minLength: 0, maxLength: 8 }).map((es) =>
    aclBytes(
      es.map((e) => ({
        ...e,
        id: e.tag === ACL_TAG.USER || e.tag === ACL_TAG.GROUP ? e.id : e.id % 3 === 0 ? e.id : 0xffffffff,
      })),
    ),
  ),
  fc
    .tuple(
      fc.integer({ min: 0, max: 7 }),
      fc.array(
        fc.tuple(
          fc.constantFrom('u', 'g'),
          fc.integer({ min: 0, max: 7 }),
          fc.constantFrom(0, 1000, process.getuid?.() ?? 0),
        ),
        { maxLength: 3 },
      ),
      fc.integer({ min: 0, max: 7 }),
      fc.integer({ min: 0, max: 7 }),
      fc.integer({ min: 0, max: 7 }),
    )
    .map(([u, named, g, m, o]) => {
      const users = named.filter((x) => x[0] === 'u').map(([, p, id]) => ({ tag: ACL_TAG.USER, perm: p, id }));
      const groups = named.filter((x) => x[0] === 'g').map(([, p, id]) => ({ tag: ACL_TAG.GROUP, perm: p, id }));
      const mask = named.length > 0 ? [{ tag: ACL_TAG.MASK, perm: m }] : [];
      return aclBytes([
        { tag: ACL_TAG.USER_OBJ, perm: u },
        ...users,
        { tag: ACL_TAG.GROUP_OBJ, perm: g },
        ...groups,
        ...mask,
        { tag: ACL_TAG.OTHER, perm: o },
      ]);
    }),
  fc.uint8Array({ maxLength: 80 }).map((u) => Buffer.from(u)),
  fc.uint8Array({ minLength: 4, maxLength: 76 }).map((u) => {
    const b = Buffer.from(u.slice(0, 4 + 8 * Math.floor((u.length - 4) / 8)));
    b.writeUInt32LE(2, 0);
    return b;
  }),
);

test('properties › random ACL bytes never crash the parser, never pass as "no ACL", and agree with an independent oracle', (t) => {
  const uid = process.getuid?.() ?? 0;
  fc.assert(
    fc.property(aclArb, (bytes) => {
      let got: string | null;
      try {
        got = aclReason({ kind: 'linux', bytes }, uid);
      } catch {
        return false;
      }
      return got === oracle(bytes, uid);
    }),
    { numRuns: 5000 * SOAK },
  );
  t.pass();
});

test('properties › ACL bytes the kernel accepts and stores are read back and judged by the same rule', (t) => {
  const uid = process.getuid?.() ?? 0;
  const file = writeNote(a.tmp, 'acl-probe/f', 'x');
  let stored = 0;
  fc.assert(
    fc.property(aclArb, (bytes) => {
      // Opened first: an ACL without owner read would otherwise lock a non-root owner out of its own file.
      const fd = fs.openSync(file, fs.constants.O_RDONLY);
      try {
        try {
          setXattr(file, 'system.posix_acl_access', bytes);
        } catch {
          return true; // the kernel refused the structure: such bytes never come from a real file
        }
        stored++;
        const acl = native.readAcl(fd);
        // The kernel may turn a minimal ACL back into plain mode bits ("no ACL"); otherwise the bytes come back.
        if (acl.kind === 'none') return true;
        if (acl.kind !== 'linux') return false;
        return aclReason(acl, uid) === oracle(acl.bytes, uid);
      } finally {
        fs.closeSync(fd);
        fs.rmSync(file);
        fs.writeFileSync(file, 'x', { mode: 0o600 });
      }
    }),
    { numRuns: 300 * SOAK },
  );
  t.log(`${stored} ACLs stored by the kernel`);
  t.true(stored > 0);
});
