/**
 * `memory-bridge audit`: ask a profile's audit trail what was released, and `memory-bridge audit verify`: check its
 * hash chain (docs/AUDIT.md §Asking the trail, §Tamper evidence). Operator commands: they name paths and say what to
 * do. They only read.
 */
import path from 'node:path';
import { queryTrail, formatRecord, isoOf, type AuditFilter } from '../../audit/query.js';
import { verifyTrail } from '../../audit/verify.js';
import { GENESIS } from '../../audit/files.js';
import { homesUnder } from '../../audit/homes.js';
import { boolFlag, listFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, type Command } from '../command.js';

const RUN_KINDS = ['interactive', 'cron', 'subagent', 'unknown'];

/** The filter of the command line, or UsageError. */
function filterOf(parsed: ReturnType<typeof parseArgs>): AuditFilter {
  const filter: AuditFilter = {};
  for (const key of ['since', 'until'] as const) {
    const text = stringFlag(parsed, key);
    if (text === undefined) continue;
    const iso = isoOf(text);
    if (iso === null)
      throw new UsageError(`--${key} must be an ISO 8601 time such as 2026-12-01 or 2026-12-01T22:00:00Z`);
    filter[key] = iso;
  }
  const id = stringFlag(parsed, 'id');
  if (id !== undefined) filter.id = id;
  const client = stringFlag(parsed, 'client');
  if (client !== undefined) filter.client = client;
  const runKind = stringFlag(parsed, 'run-kind');
  if (runKind !== undefined) {
    if (!RUN_KINDS.includes(runKind)) throw new UsageError(`--run-kind must be one of ${RUN_KINDS.join(', ')}`);
    filter.runKind = runKind;
  }
  return filter;
}

/** The homes to read: each `--home`, then each home under each `--all-homes DIR` (those found there are `found`). */
interface Homes {
  list: string[];
  found: Set<string>;
}

function homesOf(parsed: ReturnType<typeof parseArgs>): Homes {
  const list = listFlag(parsed, 'home').map((h) => path.resolve(h));
  const seen = new Set(list);
  const found = new Set<string>();
  for (const dir of listFlag(parsed, 'all-homes')) {
    let under: string[];
    try {
      under = homesUnder(path.resolve(dir));
    } catch (err) {
      throw new UsageError(`--all-homes ${dir} cannot be listed (${(err as { code?: string }).code ?? 'error'})`);
    }
    for (const home of under) {
      if (seen.has(home)) continue;
      seen.add(home);
      found.add(home);
      list.push(home);
    }
  }
  if (list.length === 0 && listFlag(parsed, 'all-homes').length === 0)
    throw new UsageError('missing --home DIR or --all-homes DIR');
  return { list, found };
}

/** True when a home found by `--all-homes` has no audit directory (its trail is off, or it made no call yet). */
function noTrail(homes: Homes, home: string, err: unknown): boolean {
  return homes.found.has(home) && (err as { reason?: unknown })?.reason === 'missing';
}

/** The closing stderr line of an `--all-homes` run about homes without a trail, or nothing. */
function sayWithout(without: number): void {
  if (without > 0)
    process.stderr.write(
      `memory-bridge audit: ${without} home${without === 1 ? '' : 's'} found by --all-homes ${without === 1 ? 'has' : 'have'} no audit trail (audit is off in the policy, or no call yet)\n`,
    );
}

/** The operator line for an audit directory that cannot be read. */
function unreadable(home: string, err: unknown): string {
  const reason = typeof err === 'object' && err !== null ? (err as { reason?: unknown }).reason : undefined;
  const dir = `${home}/plugin-data/memory-bridge/audit`;
  if (reason === 'missing')
    return `memory-bridge audit: ${dir} does not exist (no record yet, or audit is off in the policy)`;
  if (typeof reason === 'string')
    return `memory-bridge audit: ${dir} is refused (${reason}): it and every directory above it must be owned by you or root and not writable by others (chmod 700)`;
  return `memory-bridge audit: ${dir} could not be read (${err instanceof Error ? err.name : 'error'})`;
}

/**
 * Run `read` on each home in order and give the command's exit code: 1 when `read` said a trail failed its check
 * (it wrote the line) or a home could not be read (its operator line on stderr, `unreadable`), else 0. A home found
 * by `--all-homes` without a trail is skipped and counted (`sayWithout`).
 */
async function eachHome(homes: Homes, read: (home: string) => Promise<boolean> | boolean): Promise<number> {
  let code: number = EXIT.OK;
  let without = 0;
  for (const home of homes.list) {
    try {
      if (!(await read(home))) code = EXIT.FAILURE;
    } catch (err) {
      if (noTrail(homes, home, err)) without++;
      else {
        process.stderr.write(`${unreadable(home, err)}\n`);
        code = EXIT.FAILURE;
      }
    }
  }
  sayWithout(without);
  return code;
}

/** `audit verify`: each home's chain intact (one line) or where it breaks (exit 1). */
function verify(homes: Homes): Promise<number> {
  return eachHome(homes, async (home) => {
    const r = await verifyTrail(home);
    const start = r.start === null || r.start === GENESIS ? 'the start of the trail' : `a removed record ${r.start}`;
    if (r.broken === undefined) {
      process.stdout.write(`${r.dir}: ${r.records} records in ${r.files} files, chain intact (from ${start})\n`);
      return true;
    }
    const why = r.broken.why === 'chain' ? 'its prev is not the SHA-256 of the record before it' : 'not a record';
    process.stdout.write(`${r.dir}: chain broken at ${r.broken.file} line ${r.broken.line}: ${why}\n`);
    return false;
  });
}

export const command: Command = {
  name: 'audit',
  summary: "ask a profile's audit trail what was released (audit verify: check its hash chain)",
  usage: `usage: memory-bridge audit (--home DIR | --all-homes DIR)... [--since T] [--until T] [--id NOTE]
                          [--client NAME] [--run-kind KIND] [--json]
       memory-bridge audit verify (--home DIR | --all-homes DIR)...

Print the audit records of each home (docs/AUDIT.md), oldest first, one line each: time, tool, outcome (and
reason), run kind, HTTP client, the note ids released; with several homes each line starts with its home. The
trail is read as a stream; it is never changed.
Exit 0 when every home's trail was read, 1 when one could not be.
"verify" checks every record's hash chain and names the first broken record; exit 1 when one is broken.

  --home DIR        a profile home (repeat for several)
  --all-homes DIR   every profile home directly under DIR (a fleet hub's homes); one without a trail is skipped
  --since T         records at or after T (ISO 8601: 2026-12-01 or 2026-12-01T22:00:00Z)
  --until T         records before T
  --id NOTE         records that released this note id ("who saw this note")
  --client NAME     records of this HTTP client (serve's clients file)
  --run-kind KIND   interactive, cron, subagent or unknown
  --json            print the records themselves, one JSON object a line`,
  async run(argv) {
    const parsed = parseArgs(argv, {
      home: { type: 'string', repeatable: true },
      'all-homes': { type: 'string', repeatable: true },
      since: { type: 'string' },
      until: { type: 'string' },
      id: { type: 'string' },
      client: { type: 'string' },
      'run-kind': { type: 'string' },
      json: { type: 'boolean' },
    });
    const homes = homesOf(parsed);
    const [sub, ...rest] = parsed.positionals;
    if (rest.length > 0 || (sub !== undefined && sub !== 'verify'))
      throw new UsageError(`unexpected argument ${JSON.stringify(rest[0] ?? sub)}`);
    if (sub === 'verify') return verify(homes);
    const filter = filterOf(parsed);
    const json = boolFlag(parsed, 'json');
    const prefix = homes.list.length > 1;
    return eachHome(homes, (home) => {
      let out: string[] = [];
      const flush = (): void => {
        if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
        out = [];
      };
      queryTrail(home, filter, (record, line) => {
        out.push(json ? line.toString('utf8') : prefix ? `${home}: ${formatRecord(record)}` : formatRecord(record));
        if (out.length >= 1024) flush();
      });
      flush();
      return true;
    });
  },
};
