/**
 * `memory-bridge index [--home DIR] [--quiet] [--json]`: build the profile view's persisted index and write it,
 * mode 0600, into the trusted plugin-data directory (docs/DESIGN.md §The persisted index, docs/CLI.md). The only
 * writer of that file: no tool call ever writes it. Runnable from a timer; each run replaces the file atomically.
 *
 * Steps: the home (as for status and doctor); the policy and the root through the trusted walk, and every note
 * scanned, judged and read as a first search would (`buildPersistedIndex`); the plugin-data directory judged by the
 * trust rule right before the new file takes its name (`replaceFile`'s last check); the summary on stdout, progress
 * on stderr. Exit 0 when written, 1 when the policy, the root or the directory is refused or the write fails, 2 on a
 * usage error.
 */
import fs from 'node:fs';
import { getNative } from '../../../native/index.js';
import { replaceFile } from '../../atomic-write.js';
import { BridgeError } from '../../errors.js';
import { pluginDataDirOf, resolveHermesHome } from '../../hermes/home.js';
import { remedyOf } from '../../remedies.js';
import { buildPersistedIndex, persistedIndexPath } from '../../tools/persisted-index.js';
import { openTrustedDir } from '../../trust/path.js';
import { bridgeErrorOf } from '../../trust/refusal.js';
import { boolFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, type Command } from '../command.js';

const PROG = 'memory-bridge index';

/** Notes between two progress lines on stderr. */
const PROGRESS_EVERY = 10_000;

export const command: Command = {
  name: 'index',
  summary: "build the profile's persisted search index (no note text; mode 0600, beside the policy)",
  usage: `usage: memory-bridge index [--home DIR] [--quiet] [--json]

Build the persisted search index of the profile's view and write it to
<home>/plugin-data/memory-bridge/search-index.mbi (mode 0600, replaced atomically). Every note is read and
judged exactly as a first search would: the policy (allow, deny, limits, writers) and the trust rule. The file
holds postings, the term dictionary, field lengths and each note's identity; no titles, snippets or text. A
first call may use an entry only for a note whose identity its own scan shows unchanged; everything else is
indexed again from the note. Run it again (for example from a timer) to keep it fresh. The home is --home,
else $HERMES_HOME, else ~/.hermes.
Exit 0 when the file is written, 1 when the policy, the root or the plugin-data directory is refused or the
write fails, 2 on a usage error.

  --home DIR   the Hermes profile home
  --quiet      no progress lines on stderr
  --json       print the summary as one JSON object`,
  async run(argv) {
    const parsed = parseArgs(argv, { home: { type: 'string' }, quiet: { type: 'boolean' }, json: { type: 'boolean' } });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const { home, notes } = resolveHermesHome(stringFlag(parsed, 'home'));
    for (const note of notes) process.stderr.write(`${PROG}: note: ${note}\n`);
    const quiet = boolFlag(parsed, 'quiet');
    const native = getNative();
    if (native === null) return fail('unsupported_platform');
    const started = performance.now();
    let lastShown = 0;
    const progress = (phase: 'scanned' | 'indexed', count: number): void => {
      if (quiet) return;
      if (phase === 'indexed' && count - lastShown < PROGRESS_EVERY && count !== 0) return;
      lastShown = count;
      process.stderr.write(`${PROG}: ${phase} ${count} notes\n`);
    };
    let build: ReturnType<typeof buildPersistedIndex>;
    try {
      build = buildPersistedIndex(home, native, { progress });
    } catch (err) {
      const refusal = bridgeErrorOf(err);
      if (refusal === undefined) throw err;
      return fail(refusal.reason);
    }
    const file = persistedIndexPath(home);
    try {
      // The directory is judged again right before the new file takes its name (the policy's read judged it too).
      replaceFile(file, build.bytes, 0o600, () =>
        native.close(openTrustedDir(pluginDataDirOf(home), 'policy_dir', native)),
      );
    } catch (err) {
      if (err instanceof BridgeError) return fail(err.reason, 'the plugin-data directory');
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      process.stderr.write(`${PROG}: could not write ${file} (${code})\n`);
      return EXIT.FAILURE;
    }
    const seconds = (performance.now() - started) / 1000;
    const summary = {
      file,
      bytes: fs.statSync(file).size,
      notes: build.notes,
      terms: build.terms,
      postings: build.postings,
      racy: build.racy,
      cut: build.cut ?? null,
      seconds: Math.round(seconds * 100) / 100,
    };
    if (boolFlag(parsed, 'json')) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else process.stdout.write(`${summaryText(summary)}\n`);
    return EXIT.OK;
  },
};

/** The one-paragraph summary of a written index. */
function summaryText(s: {
  file: string;
  bytes: number;
  notes: number;
  terms: number;
  postings: number;
  racy: number;
  cut: string | null;
  seconds: number;
}): string {
  const lines = [
    `wrote ${s.file}: ${s.notes} notes, ${s.terms} terms, ${s.postings} postings, ${s.bytes} bytes in ${s.seconds} s`,
  ];
  if (s.racy > 0)
    lines.push(`${s.racy} notes changed in the last seconds: first calls index them again from their text`);
  if (s.cut !== null)
    lines.push(`the scan was cut by ${s.cut}: the index holds the notes it read (${remedyOf('incomplete')})`);
  return lines.join('\n');
}

/** Say why nothing was written (reason code, what it is about, its remedy) and return the failure exit code. */
function fail(reason: string, what = 'refused'): number {
  process.stderr.write(
    `${PROG}: ${what === 'refused' ? 'refused' : `${what} refused`}: ${reason} → ${remedyOf(reason)}\n`,
  );
  return EXIT.FAILURE;
}
