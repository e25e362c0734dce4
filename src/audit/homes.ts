/**
 * The profile homes of a fleet hub for `memory-bridge audit --all-homes DIR` (docs/AUDIT.md §Asking the trail):
 * every direct subdirectory of DIR that holds `plugin-data/memory-bridge/` (docs/HTTP.md §A hub and its nodes
 * keeps one home per node there). Symbolic links are not followed; each home's audit directory is still opened
 * through the trusted walk when it is read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { policyDirOf } from './files.js';

/** Most homes one DIR may name (a hub with more is refused rather than listed without end). */
export const MAX_HOMES = 10_000;

/**
 * The homes under `dir`, in byte order of their names.
 *
 * @param dir an absolute directory
 * @throws Error (the system's) when `dir` cannot be listed; RangeError past MAX_HOMES
 */
export function homesUnder(dir: string): string[] {
  const homes: string[] = [];
  const names = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of names) {
    const home = path.join(dir, name);
    try {
      if (!fs.lstatSync(policyDirOf(home)).isDirectory()) continue;
    } catch {
      continue;
    }
    homes.push(home);
    if (homes.length > MAX_HOMES) throw new RangeError(`more than ${MAX_HOMES} homes under ${dir}`);
  }
  return homes;
}
