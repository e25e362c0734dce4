import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import test from 'ava';
import { getNative, nativeFor } from '../../native/index.js';
import { makedev, makedevHigh, makedevLow } from '../../native/linux-stat.js';
import { DT, NativeError, RAW, RAW_FLAG_MNT_ID, RAW_STAT_WORDS, fileStatFromRaw } from '../../native/types.js';
import { addAclEntry, makeFifo, makeTempDir, openDescriptorCount, removeTree, writeNote } from '../helpers/fixtures.js';
import { realNative } from './support.js';

const dir = makeTempDir('mb-native-');
test.after.always(() => removeTree(dir));
const native = realNative();

const EINVAL = 22;
const ELOOP = 40;
const ENOTDIR = 20;
const ENOENT = 2;
const EWOULDBLOCK = 11;

function withDir<T>(p: string, fn: (fd: number) => T): T {
  const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function errnoOf(fn: () => unknown): number | string {
  try {
    fn();
  } catch (err) {
    return err instanceof NativeError ? err.errno : String(err);
  }
  return 'no error';
}

test('native › getNative is cached and verified on linux x64 only', (t) => {
  t.is(getNative(), native);
  t.is(native.platform, 'linux');
  t.is(native.verified, process.arch === 'x64');
});

for (const bad of ['', '.', '..', 'a/b', '/abs', 'trail/', 'nul\0byte', 'lone\ud800']) {
  test(`native › ${JSON.stringify(bad)} is refused with EINVAL before any system call`, (t) => {
    withDir(dir, (fd) => {
      t.is(
        errnoOf(() => native.openDirAt(fd, bad)),
        EINVAL,
      );
      t.is(
        errnoOf(() => native.openFileAt(fd, bad)),
        EINVAL,
      );
      t.is(
        errnoOf(() => native.statAt(fd, bad)),
        EINVAL,
      );
    });
  });
}

test('native › a symlink is never followed: ELOOP for files, ENOTDIR or ELOOP for directories', (t) => {
  const sub = path.join(dir, 'links');
  fs.mkdirSync(sub);
  writeNote(sub, 'target.md', 'x');
  fs.mkdirSync(path.join(sub, 'realdir'));
  fs.symlinkSync('target.md', path.join(sub, 'file-link'));
  fs.symlinkSync('realdir', path.join(sub, 'dir-link'));
  withDir(sub, (fd) => {
    t.is(
      errnoOf(() => native.openFileAt(fd, 'file-link')),
      ELOOP,
    );
    t.true([ENOTDIR, ELOOP].includes(errnoOf(() => native.openDirAt(fd, 'dir-link')) as number));
    t.is(
      errnoOf(() => native.openDirAt(fd, 'target.md')),
      ENOTDIR,
    );
    t.is(
      errnoOf(() => native.openFileAt(fd, 'missing')),
      ENOENT,
    );
    const st = native.statAt(fd, 'dir-link');
    t.is(st.mode & 0o170000, 0o120000, 'statAt reports the link itself');
  });
});

test('native › opening a FIFO without a writer returns at once', (t) => {
  makeFifo(path.join(dir, 'fifo'));
  withDir(dir, (fd) => {
    const f = native.openFileAt(fd, 'fifo');
    try {
      t.is(native.fstat(f).mode & 0o170000, 0o010000);
    } finally {
      native.close(f);
    }
  });
});

test('native › statAt and fstat agree with each other and with fs.statSync (dev, ino, times in ns)', (t) => {
  const file = writeNote(dir, 'stat.md', 'hello');
  const ref = fs.statSync(file, { bigint: true });
  withDir(dir, (fd) => {
    const a = native.statAt(fd, 'stat.md');
    const f = native.openFileAt(fd, 'stat.md');
    try {
      const b = native.fstat(f);
      t.deepEqual(a, b);
      t.is(a.dev, ref.dev);
      t.is(a.ino, ref.ino);
      t.is(a.size, 5);
      t.is(a.nlink, 1);
      t.is(a.uid, Number(ref.uid));
      t.is(a.mode, Number(ref.mode));
      t.is(a.mtimeNs, ref.mtimeNs);
      t.is(a.ctimeNs, ref.ctimeNs);
    } finally {
      native.close(f);
    }
    const d = native.fstat(fd);
    t.is(d.ino, fs.statSync(dir, { bigint: true }).ino);
  });
});

test('native › listDir returns raw name bytes without . and .., and can list the same descriptor again', (t) => {
  const sub = path.join(dir, 'list');
  fs.mkdirSync(sub);
  const raw = Buffer.from([0x62, 0xff, 0xfe, 0x2e, 0x6d, 0x64]); // "b\xff\xfe.md": not UTF-8
  fs.writeFileSync(Buffer.concat([Buffer.from(`${sub}/`), raw]), 'x');
  fs.writeFileSync(path.join(sub, 'a.md'), 'x');
  fs.mkdirSync(path.join(sub, 'd'));
  fs.symlinkSync('a.md', path.join(sub, 'l'));
  withDir(sub, (fd) => {
    const first = native.listDir(fd, 100);
    const second = native.listDir(fd, 100);
    if (first === 'too_many' || second === 'too_many') return t.fail('unexpected too_many');
    const show = (es: typeof first) => es.map((e) => `${e.name.toString('hex')}:${e.type}`).sort();
    t.deepEqual(show(first), show(second));
    t.deepEqual(show(first), [
      `${Buffer.from('a.md').toString('hex')}:${DT.REG}`,
      `${raw.toString('hex')}:${DT.REG}`,
      `${Buffer.from('d').toString('hex')}:${DT.DIR}`,
      `${Buffer.from('l').toString('hex')}:${DT.LNK}`,
    ]);
    t.true(first.every((e) => Buffer.isBuffer(e.name)));
  });
});

test('native › listDir answers too_many as soon as more than maxEntries entries were seen', (t) => {
  const sub = path.join(dir, 'many');
  fs.mkdirSync(sub);
  for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(sub, `n${i}.md`), 'x');
  withDir(sub, (fd) => {
    t.is(native.listDir(fd, 4), 'too_many');
    const all = native.listDir(fd, 5);
    t.true(Array.isArray(all) && all.length === 5);
    t.deepEqual(native.listDir(fd, 0), 'too_many');
  });
});

test('native › findEntry sees exactly the names listDir lists, counts every entry, and answers too_many at the same point', (t) => {
  if (native.findEntry === undefined) return t.pass('this binding has no findEntry (listDir is used instead)');
  const sub = path.join(dir, 'find');
  fs.mkdirSync(sub);
  const raw = Buffer.from([0x63, 0xff, 0x2e, 0x6d, 0x64]); // "c\xff.md": not UTF-8
  fs.writeFileSync(Buffer.concat([Buffer.from(`${sub}/`), raw]), 'x');
  for (let i = 0; i < 700; i++) fs.writeFileSync(path.join(sub, `Note-${i}.md`), 'x');
  fs.mkdirSync(path.join(sub, 'd'));
  withDir(sub, (fd) => {
    const listed = native.listDir(fd, 10_000);
    if (listed === 'too_many') return t.fail('unexpected too_many');
    t.is(listed.length, 702);
    for (const e of listed) t.deepEqual(native.findEntry!(fd, e.name, 10_000), { count: 702, found: true });
    // A case or length variant of a listed name, a prefix of one, and the dot entries are not entries.
    for (const name of ['note-1.md', 'Note-1.m', 'Note-1.mdx', 'Note-', '.', '..', 'c\u00ff.md']) {
      t.deepEqual(native.findEntry!(fd, Buffer.from(name), 10_000), { count: 702, found: false }, name);
    }
    t.is(native.findEntry!(fd, Buffer.from('d'), 701), 'too_many');
    t.is(native.listDir(fd, 701), 'too_many');
    t.deepEqual(native.findEntry!(fd, Buffer.from('d'), 702), { count: 702, found: true });
  });
});

test('native › listDir handles a directory larger than one getdents buffer', (t) => {
  const sub = path.join(dir, 'big');
  fs.mkdirSync(sub);
  const n = 3000;
  for (let i = 0; i < n; i++)
    fs.writeFileSync(path.join(sub, `note-with-a-longer-name-${String(i).padStart(5, '0')}.md`), '');
  withDir(sub, (fd) => {
    const listed = native.listDir(fd, n);
    if (listed === 'too_many') return t.fail('unexpected too_many');
    t.is(new Set(listed.map((e) => e.name.toString())).size, n);
    t.is(native.listDir(fd, n - 1), 'too_many');
  });
});

test('native › readAcl: none without an ACL, raw bytes with one, error on a filesystem without ACL support', (t) => {
  const plain = writeNote(dir, 'acl-none.md', 'x');
  const withAcl = writeNote(dir, 'acl-some.md', 'x');
  addAclEntry(withAcl, 'user', 4242, 4);
  const fdPlain = fs.openSync(plain, 'r');
  const fdAcl = fs.openSync(withAcl, 'r');
  const fdProc = fs.openSync('/proc/self/status', 'r');
  try {
    t.deepEqual(native.readAcl(fdPlain), { kind: 'none' });
    const acl = native.readAcl(fdAcl);
    t.is(acl.kind, 'linux');
    if (acl.kind === 'linux') t.is(acl.bytes.readUInt32LE(0), 2);
    const proc = native.readAcl(fdProc);
    t.is(proc.kind, 'error');
    t.deepEqual(native.readAcl(999_999), { kind: 'error', errno: 9 });
  } finally {
    fs.closeSync(fdPlain);
    fs.closeSync(fdAcl);
    fs.closeSync(fdProc);
  }
});

test('native › every descriptor the binding opens has O_CLOEXEC', (t) => {
  writeNote(dir, 'cloexec.md', 'x');
  const root = native.openRoot();
  const d = native.openDirAt(root, 'tmp');
  const f = withDir(dir, (fd) => native.openFileAt(fd, 'cloexec.md'));
  try {
    for (const fd of [root, d, f]) {
      const flags = /flags:\s+([0-7]+)/.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      t.truthy(flags);
      t.not(Number.parseInt(flags!, 8) & 0o2000000, 0, `fd ${fd} lacks O_CLOEXEC`);
    }
  } finally {
    native.close(f);
    native.close(d);
    native.close(root);
  }
});

test('native › pread reads at a position into a buffer offset; 0 at end of file', (t) => {
  writeNote(dir, 'pread.md', '0123456789');
  withDir(dir, (fd) => {
    const f = native.openFileAt(fd, 'pread.md');
    try {
      const buf = Buffer.alloc(8, 0x2e);
      t.is(native.pread(f, buf, 2, 4, 3), 4);
      t.is(buf.toString(), '..3456..');
      t.is(native.pread(f, buf, 0, 8, 10), 0);
      t.is(
        errnoOf(() => native.pread(f, buf, 6, 4, 0)),
        EINVAL,
      );
    } finally {
      native.close(f);
    }
  });
});

test('native › flock: a second exclusive non-blocking lock on another descriptor gets EWOULDBLOCK', (t) => {
  writeNote(dir, 'lock.md', 'x');
  withDir(dir, (fd) => {
    const a = native.openFileAt(fd, 'lock.md');
    const b = native.openFileAt(fd, 'lock.md');
    try {
      native.flock(a, 2 | 4);
      t.is(
        errnoOf(() => native.flock(b, 2 | 4)),
        EWOULDBLOCK,
      );
      native.flock(a, 8);
      t.notThrows(() => native.flock(b, 2 | 4));
    } finally {
      native.close(a);
      native.close(b);
    }
  });
});

test('native › opening a socket named like a note does not hang', async (t) => {
  const sock = path.join(dir, 'sock.md');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(sock, resolve));
  try {
    withDir(dir, (fd) => {
      const st = native.statAt(fd, 'sock.md');
      t.is(st.mode & 0o170000, 0o140000);
      t.is(
        errnoOf(() => native.openFileAt(fd, 'sock.md')),
        6,
      ); // ENXIO
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('native › close reports a bad descriptor; opening and closing leaks nothing', (t) => {
  const before = openDescriptorCount();
  for (let i = 0; i < 200; i++) native.close(native.openRoot());
  t.is(openDescriptorCount(), before);
  t.is(
    errnoOf(() => native.close(999_999)),
    9,
  );
});

test('native › platforms without bindings get null (callers refuse with unsupported_platform)', (t) => {
  t.is(nativeFor('win32', 'x64'), null);
  t.is(nativeFor('freebsd', 'x64'), null);
  t.is(nativeFor('linux', 'ia32'), null);
  t.is(nativeFor('linux', 'riscv64'), null);
  t.is(nativeFor('darwin', 'ppc64'), null);
});

test('native › the macOS binding is only loaded on macOS: elsewhere its library is absent and the answer is null', (t) => {
  if (process.platform === 'darwin') return t.pass();
  t.is(nativeFor('darwin', 'arm64'), null);
});

test('native › statRawAt decodes (fileStatFromRaw) to exactly what statAt returns, for notes, directories and symlinks', (t) => {
  const sub = path.join(dir, 'raw');
  fs.mkdirSync(sub);
  writeNote(sub, 'note.md', 'raw words');
  fs.mkdirSync(path.join(sub, 'inner'));
  fs.symlinkSync('note.md', path.join(sub, 'link.md'));
  const statRawAt = native.statRawAt;
  if (statRawAt === undefined) return t.fail('the linux binding offers statRawAt');
  const words = new Uint32Array(RAW_STAT_WORDS);
  withDir(sub, (fd) => {
    for (const name of ['note.md', 'inner', 'link.md']) {
      words.fill(0xffffffff);
      statRawAt(fd, Buffer.from(`${name}\0`), words);
      t.deepEqual(fileStatFromRaw(words), native.statAt(fd, name), name);
    }
  });
});

test('native › statRawAt refuses names that are not one NUL-terminated component, before any system call', (t) => {
  const words = new Uint32Array(RAW_STAT_WORDS);
  withDir(dir, (fd) => {
    for (const bad of ['', '\0', '.\0', '..\0', 'a/b\0', 'a\0b\0', 'no-terminator', '/abs\0']) {
      t.is(
        errnoOf(() => native.statRawAt!(fd, Buffer.from(bad, 'latin1'), words)),
        EINVAL,
        JSON.stringify(bad),
      );
    }
    t.is(
      errnoOf(() => native.statRawAt!(fd, Buffer.from(`${'n'.repeat(256)}\0`), words)),
      36,
      'longer than NAME_MAX',
    );
    t.is(
      errnoOf(() => native.statRawAt!(fd, Buffer.from('absent.md\0'), words)),
      ENOENT,
    );
  });
});

test('native › the raw device words hold makedev(major, minor) for majors and minors across every bit range', (t) => {
  const samples = [
    0, 1, 0xff, 0x100, 0xfff, 0x1000, 0xfffff, 0x100000, 0xfffff000, 0xffffffff, 0x12345678, 0x8000_0000,
  ];
  for (const major of samples) {
    for (const minor of samples) {
      const joined = (BigInt(makedevHigh(major, minor)) << 32n) | BigInt(makedevLow(major, minor));
      t.is(joined, makedev(major, minor), `${major}:${minor}`);
    }
  }
});

test('native › fileStatFromRaw reads 64-bit fields and signed times from their word pairs', (t) => {
  const words = new Uint32Array(RAW_STAT_WORDS);
  words[RAW.MODE] = 0o100600;
  words[RAW.INO_LO] = 0x89abcdef;
  words[RAW.INO_HI] = 0x01234567;
  words[RAW.SIZE_LO] = 5;
  words[RAW.SIZE_HI] = 1;
  words[RAW.MTIME_S_LO] = 0xffffffff; // -1 s
  words[RAW.MTIME_S_HI] = 0xffffffff;
  words[RAW.MTIME_NS] = 250;
  words[RAW.CTIME_S_LO] = 2;
  words[RAW.CTIME_NS] = 999_999_999;
  let st = fileStatFromRaw(words);
  t.is(st.ino, 0x0123456789abcdefn);
  t.is(st.size, 0x1_0000_0005);
  t.is(st.mtimeNs, -1_000_000_000n + 250n);
  t.is(st.ctimeNs, 2_999_999_999n);
  t.false('mntId' in st, 'no mount id unless the flag says it was reported');
  words[RAW.FLAGS] = RAW_FLAG_MNT_ID;
  words[RAW.MNT_LO] = 7;
  st = fileStatFromRaw(words);
  t.is(st.mntId, 7n);
});
