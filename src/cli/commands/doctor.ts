/**
 * `memory-bridge doctor [--home DIR] [--json] [--explain ID]`: probe a profile the way tool calls would and say
 * what to fix (docs/HERMES.md, docs/CLI.md). Read-only. Exit 0 when calls can be served (or, with --explain, when the note
 * is visible), 1 otherwise.
 */
import {
  runDoctor,
  explainNote,
  formatDoctor,
  LISTABLE_REASONS,
  listSkipped,
  TREE_REASONS,
} from '../../hermes/doctor.js';
import { listCommand, SAMPLES_PER_REASON } from '../../hermes/skip-samples.js';
import { displayPath } from '../../text/operator.js';
import { resolveHermesHome } from '../../hermes/home.js';
import { boolFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, packageVersion, type Command } from '../command.js';

/** `text` broken at spaces into lines of at most `width` columns, each indented by `indent` spaces. */
function fillLines(text: string, indent: number, width: number): string {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > width) {
      lines.push(pad + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(pad + line);
  return lines.join('\n');
}

export const command: Command = {
  name: 'doctor',
  summary: 'probe the policy, the root and the tree of a profile and report what to fix',
  usage: `usage: memory-bridge doctor [--home DIR] [--json] [--explain ID | --list REASON]

Checks, read-only: the platform bindings; the home (absolute, reached without a symbolic link); the installed
plugin shim (its recorded node binary and CLI still exist, and everything Node would load for the worker is
trusted, ACLs included); the Hermes API the shim found when Hermes last loaded it; the policy file (trusted path,
strict parse, with the exact problem); the root directory chain from /; the whole tree, counting skipped
files by reason code with a remedy for each and naming the first ${SAMPLES_PER_REASON} of each (with the --list command
for the rest); and the view's persisted index (exists, trusted, age, a dry load against that scan, the command
that refreshes it; a warning at most). Says "unverified platform" where the bindings were never run (macOS,
Linux aarch64). The home is --home, else $HERMES_HOME, else ~/.hermes.
Exit 0 when tool calls can be served, 1 when they would be unavailable.

  --home DIR     the Hermes profile home
  --json         print {"ok", "checks": [{"name", "ok", "reason"?, "remedy"?}], "counts": {"<reason>": n},
                 "skipped": {"<reason>": [first paths]}, "persistedIndex": {...} as status --json gives it}
  --explain ID   say why the note ID (as search returns it) is or is not visible; exit 0 only when it is
  --list REASON  print the paths (relative to the root, one per line) that the scan skipped for REASON: any
                 reason code doctor counts, e.g.
${fillLines(`${TREE_REASONS.join(', ')};`, 17, 120)}
                 too_deep prints the visible notes below limits.max_depth (also those below the 16-segment id
                 limit, which no max_depth reaches), the ones a "cut by max_depth" line counts`,
  async run(argv) {
    const parsed = parseArgs(argv, {
      home: { type: 'string' },
      json: { type: 'boolean' },
      explain: { type: 'string' },
      list: { type: 'string' },
    });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const resolved = resolveHermesHome(stringFlag(parsed, 'home'));
    const list = stringFlag(parsed, 'list');
    if (list !== undefined) {
      if (stringFlag(parsed, 'explain') !== undefined) throw new UsageError('--list and --explain do not go together');
      if (!LISTABLE_REASONS.includes(list))
        throw new UsageError(`--list: unknown reason ${JSON.stringify(list)}; one of ${LISTABLE_REASONS.join(', ')}`);
      const listed = listSkipped(resolved.home, list);
      if ('problem' in listed) {
        process.stderr.write(`memory-bridge doctor: ${listed.problem}\n`);
        return EXIT.FAILURE;
      }
      if (boolFlag(parsed, 'json')) {
        process.stdout.write(`${JSON.stringify({ reason: list, root: listed.root, paths: listed.paths }, null, 2)}\n`);
      } else {
        for (const p of listed.paths) process.stdout.write(`${displayPath(p)}\n`);
        const stopped =
          listed.cut === undefined
            ? ''
            : listed.cut !== 'max_depth'
              ? ` (the scan stopped at limits.${listed.cut}: there may be more)`
              : ` (notes lie below limits.max_depth: ${listCommand(resolved.home, 'too_deep')} names them)`;
        process.stderr.write(
          `memory-bridge doctor: ${listed.paths.length} skipped as ${list} under ${listed.root}${stopped}; ${listed.remedy}\n`,
        );
      }
      return EXIT.OK;
    }
    const explain = stringFlag(parsed, 'explain');
    const result =
      explain === undefined
        ? runDoctor(resolved.home, {
            version: packageVersion(),
            ...(resolved.relative === undefined ? {} : { relativeHome: resolved.relative }),
          })
        : explainNote(resolved.home, explain);
    if (boolFlag(parsed, 'json')) {
      process.stdout.write(`${JSON.stringify(result.report, null, 2)}\n`);
    } else {
      const header = [
        `Hermes home: ${resolved.home} (from ${resolved.source})`,
        ...resolved.notes.map((n) => `Note: ${n}`),
      ];
      if (explain !== undefined) header.push(`Note id: ${JSON.stringify(explain)}`);
      const footer =
        explain === undefined
          ? undefined
          : {
              ok: 'Result: the note is visible to this profile.',
              fail: 'Result: the note is not visible to this profile.',
            };
      process.stdout.write(`${formatDoctor(result, header, footer)}\n`);
    }
    return result.report.ok ? EXIT.OK : EXIT.FAILURE;
  },
};
