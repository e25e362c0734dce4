/**
 * Child of prewrite.test.ts: takes a read lease on argv[2] (after F_SETSIG SIGURG when argv[3] is "setsig", as
 * Native.openForWriting does), prints `held`, keeps it 300 ms, releases it, prints `released` and exits 0. Linux
 * constants as in native/linux.ts.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { default as Koffi } from 'koffi';

const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
const fcntl = koffi.load('libc.so.6').func('int fcntl(int, int, ...)') as (
  fd: number,
  cmd: number,
  ...r: unknown[]
) => number;
const F_SETSIG = 10;
const F_SETLEASE = 1024;
const F_RDLCK = 0;
const F_UNLCK = 2;
const SIGURG = 23;

const fd = fs.openSync(process.argv[2]!, 'r');
if (process.argv[3] === 'setsig' && fcntl(fd, F_SETSIG, 'int', SIGURG) !== 0) process.exit(2);
if (fcntl(fd, F_SETLEASE, 'int', F_RDLCK) !== 0) process.exit(3);
process.stdout.write('held\n');
setTimeout(() => {
  fcntl(fd, F_SETLEASE, 'int', F_UNLCK);
  process.stdout.write('released\n');
  fs.closeSync(fd);
}, 300);
