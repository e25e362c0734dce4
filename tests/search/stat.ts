import type { FileStat } from '../../native/types.js';

/**
 * The identity every in-memory test note carries: the search layer never looks at it, but a `ScannedNote` needs
 * one. A regular owner-only file of root with fixed numbers.
 */
export const STAT: FileStat = {
  dev: 1n,
  ino: 1n,
  mode: 0o100600,
  nlink: 1,
  uid: 0,
  gid: 0,
  size: 0,
  mtimeNs: 0n,
  ctimeNs: 0n,
};
