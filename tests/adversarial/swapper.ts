/**
 * The second process of the race tests: swaps things inside a memory root in a tight loop until killed.
 * Run as `node swapper.js <json>` where json is `{root, outside, kinds: string[]}`; prints "ready" once the first
 * round is done. Kinds:
 * - `dir`: `swap/` (a trusted directory) ⇄ a symlink to `outside/` (rename of a prepared hidden symlink).
 * - `hardlink`: `hl.md` ⇄ a hard link to `outside/secret.md` (rename over), and `hl.md` gaining an outside link.
 * - `flip`: `flip.md` ⇄ a group-writable note carrying the untrusted marker (rename over).
 * - `chmod`: `cw.md` made group-writable, the marker written into it, then safe text written back and 0600 again.
 * - `root`: the root directory itself ⇄ a symlink to `outside/`.
 * Hidden names (leading dot) are used for staging: the name rule skips them, so they never count as notes.
 */
import fs from 'node:fs';
import path from 'node:path';

interface Config {
  root: string;
  outside: string;
  kinds: string[];
  safe: string;
  untrusted: string;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
const { root, outside } = cfg;
const p = (...parts: string[]): string => path.join(root, ...parts);

function quiet(fn: () => void): void {
  try {
    fn();
  } catch {
    // A reader may hold nothing here: every step is independent and the next round repairs the layout.
  }
}

function writeMode(file: string, text: string, mode: number): void {
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
}

const steps: Array<() => void> = [];
if (cfg.kinds.includes('dir')) {
  quiet(() => fs.symlinkSync(outside, p('.swaplink')));
  steps.push(() => {
    quiet(() => fs.renameSync(p('swap'), p('.swapdir')));
    quiet(() => fs.renameSync(p('.swaplink'), p('swap')));
    quiet(() => fs.renameSync(p('swap'), p('.swaplink')));
    quiet(() => fs.renameSync(p('.swapdir'), p('swap')));
  });
}
if (cfg.kinds.includes('hardlink')) {
  steps.push(() => {
    quiet(() => fs.linkSync(path.join(outside, 'secret.md'), p('.hltmp')));
    quiet(() => fs.renameSync(p('.hltmp'), p('hl.md')));
    quiet(() => writeMode(p('.hlgood'), cfg.safe, 0o600));
    quiet(() => fs.renameSync(p('.hlgood'), p('hl.md')));
    quiet(() => fs.linkSync(p('hl.md'), path.join(outside, 'grab')));
    quiet(() => fs.unlinkSync(path.join(outside, 'grab')));
  });
}
if (cfg.kinds.includes('flip')) {
  steps.push(() => {
    quiet(() => writeMode(p('.untrusted'), cfg.untrusted, 0o620));
    quiet(() => fs.renameSync(p('.untrusted'), p('flip.md')));
    quiet(() => writeMode(p('.trusted'), cfg.safe, 0o600));
    quiet(() => fs.renameSync(p('.trusted'), p('flip.md')));
  });
}
if (cfg.kinds.includes('chmod')) {
  steps.push(() => {
    quiet(() => fs.chmodSync(p('cw.md'), 0o620));
    quiet(() => fs.writeFileSync(p('cw.md'), cfg.untrusted));
    quiet(() => fs.writeFileSync(p('cw.md'), cfg.safe));
    quiet(() => fs.chmodSync(p('cw.md'), 0o600));
  });
}
if (cfg.kinds.includes('root')) {
  const real = `${root}.real`;
  const link = `${root}.link`;
  quiet(() => fs.symlinkSync(outside, link));
  steps.push(() => {
    quiet(() => fs.renameSync(root, real));
    quiet(() => fs.renameSync(link, root));
    quiet(() => fs.renameSync(root, link));
    quiet(() => fs.renameSync(real, root));
  });
}

for (const step of steps) step();
process.stdout.write('ready\n');
for (;;) for (const step of steps) step();
