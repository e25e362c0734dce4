/**
 * `memory-bridge export-fleet --out DIR`: write Hermes Fleet Memory cards as Markdown into a trusted directory
 * (docs/EXPORT.md). Argument handling and output only; the work is in src/fleet/export.ts.
 */
import { runExport, type ExportOptions, type ExportReport } from '../../fleet/export.js';
import { DEFAULT_MAX_PER_CLIENT, DEFAULT_MAX_PER_DOMAIN } from '../../fleet/caps.js';
import { ExportError } from '../../fleet/errors.js';
import { QDRANT_SETTING_TABLE as Q, resolveQdrantSettings, type QdrantFlags } from '../../fleet/source-qdrant.js';
import { boolFlag, listFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, type Command } from '../command.js';

const PROG = 'memory-bridge export-fleet';

const USAGE = `usage: memory-bridge export-fleet --out DIR [source] [options]

Export Hermes Fleet Memory cards as Markdown, one file per live card, laid out
<domain>/<client_id>/<slot_name>--<id>.md, so a profile's policy decides which domains it reads.
Earlier revisions are kept under <domain>/<client_id>/history/. Only files this command wrote are
ever replaced or removed; the source is read completely before anything changes.

Source (default: Qdrant, configured like the fleet itself):
  --from-jsonl FILE    read {id, payload} lines instead (also the fleet cleaner's archive)
  --url URL            Qdrant URL (default $FLEET_QDRANT_URL; it wins over host/port/https)
  --host HOST          default $${Q.host.env} or ${Q.host.fallback}
  --port PORT          default $${Q.port.env} or ${Q.port.fallback}
  --https              use https (default $${Q.https.env} or ${Q.https.fallback})
  --timeout SECONDS    per request (default $${Q.timeoutSeconds.env} or ${Q.timeoutSeconds.fallback})
  --collection NAME    default hermes_fleet_memory
  --api-key-env NAME   environment variable holding the key (default FLEET_QDRANT_KEY);
                       the key itself is never taken from the command line
  --source-name NAME   name this source across runs (default: the Qdrant endpoint and collection,
                       or the JSONL file's path); removal of vanished cards and history pruning act
                       only on files from the same source, so give dated dump files one name

Options:
  --out DIR            output directory: must exist and pass the same trust rule as a memory root
  --domain D           export only this domain (repeatable); also limits what is removed
  --include-expired    also write cards that are not live (past expires_at, or not active); every
                       file then carries status and live in its front matter
  --redact             write cards holding credentials with each one replaced by [redacted:<kind>]
                       (default: such cards are skipped and their ids reported)
  --group NAME         directories 0750 and files 0640 owned by this group (default 0700/0600); only
                       directories the export created are changed, never DIR or folders you made
  --keep-history N     keep the newest N earlier revisions per card (default: all; 0 keeps none)
  --max-cards-per-client N
                       most cards written into one <domain>/<client_id> folder (default 1000);
                       the newest by updated_at are kept, the rest count as skipped_over_cap
  --max-cards-per-domain N
                       most cards written into one domain folder (default 10000), shared fairly:
                       a client with few cards keeps them all, large clients split the rest
  --dry-run            read and compare, report what would change, change nothing
  --json               print the summary as one JSON object on stdout
  --no-wait            exit 1 at once when another export into DIR is running (default: wait)
  --allow-empty        let a source with no valid card in scope remove every earlier file of that
                       scope (default: such a run exits 1 and changes nothing)

Reading: a JSONL line that is not JSON (a file cut short, or not a card file) fails the run (exit 1)
and changes nothing; a last line without a newline is fine when it parses. A card that fails
validation is counted in skipped_invalid, named on stderr and in --json (id and the field and rule
it broke, never its text) and keeps its earlier file; a record with no point id stops all removal
for that run.

Summary counts: written, unchanged, removed (files of cards gone from the source or out of the
live set, plus history files pruned by --keep-history), history (earlier revisions kept this run),
skipped_secret, skipped_invalid, skipped_expired (cards not live: past expires_at, or a status
other than active such as archived), skipped_over_cap (left out by the caps; their earlier files are
removed). Keep each profile's max_entries at least the caps of the domains it reads, or a search
stops early (truncated). hidden_controls counts the cards in DIR whose text or names carry Unicode
tag characters or bidi embedding/override/isolate controls (the tools show each as <U+XXXX>).

Exit codes: 0 done, 1 operational failure (source unreadable, untrusted DIR, a path left alone), 2 usage error.`;

const SPECS = {
  out: { type: 'string' },
  'from-jsonl': { type: 'string' },
  url: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  https: { type: 'boolean' },
  timeout: { type: 'string' },
  collection: { type: 'string' },
  'api-key-env': { type: 'string' },
  domain: { type: 'string', repeatable: true },
  'include-expired': { type: 'boolean' },
  redact: { type: 'boolean' },
  group: { type: 'string' },
  'keep-history': { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  'no-wait': { type: 'boolean' },
  'allow-empty': { type: 'boolean' },
  'max-cards-per-client': { type: 'string' },
  'max-cards-per-domain': { type: 'string' },
  'source-name': { type: 'string' },
} as const;

/** A whole number from 1 to 1,000,000 for a cap flag, or the default when the flag is absent. */
function capFlag(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,7}$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000) {
    throw new UsageError(`${flag}: expected a whole number from 1 to 1000000`);
  }
  return Number(value);
}

/** Build export options from argv and the environment. @throws UsageError for command-line mistakes */
export function optionsFromArgv(argv: readonly string[], env: NodeJS.ProcessEnv): ExportOptions & { json: boolean } {
  const parsed = parseArgs(argv, SPECS);
  if (parsed.positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const out = stringFlag(parsed, 'out');
  if (out === undefined || out === '') throw new UsageError('--out DIR is required');
  const jsonl = stringFlag(parsed, 'from-jsonl');
  const qFlags: QdrantFlags = {};
  for (const [flag, key] of [
    ['url', 'url'],
    ['host', 'host'],
    ['port', 'port'],
    ['timeout', 'timeout'],
    ['collection', 'collection'],
    ['api-key-env', 'apiKeyEnv'],
  ] as const) {
    const v = stringFlag(parsed, flag);
    if (v !== undefined) qFlags[key] = v;
  }
  if (boolFlag(parsed, 'https')) qFlags.https = true;
  if (jsonl !== undefined && Object.keys(qFlags).length > 0) {
    throw new UsageError('--from-jsonl cannot be combined with Qdrant connection flags');
  }
  let source: ExportOptions['source'];
  try {
    source =
      jsonl !== undefined
        ? { kind: 'jsonl', file: jsonl }
        : { kind: 'qdrant', settings: resolveQdrantSettings(env, qFlags) };
  } catch (e) {
    if (e instanceof ExportError && e.exitCode === 2) throw new UsageError(e.message);
    throw e;
  }
  const kh = stringFlag(parsed, 'keep-history');
  if (kh !== undefined && !/^[0-9]{1,6}$/.test(kh))
    throw new UsageError('--keep-history: expected a whole number from 0');
  const domains = listFlag(parsed, 'domain');
  if (domains.some((d) => d === '')) throw new UsageError('--domain: expected a domain name');
  const sourceName = stringFlag(parsed, 'source-name');
  if (sourceName !== undefined && !/^[\x21-\x7e]{1,128}$/.test(sourceName)) {
    throw new UsageError('--source-name: expected 1 to 128 printable ASCII characters without spaces');
  }
  const group = stringFlag(parsed, 'group');
  if (group === '') throw new UsageError('--group: expected a group name or id');
  return {
    out,
    source,
    domains: [...new Set(domains)],
    includeExpired: boolFlag(parsed, 'include-expired'),
    redact: boolFlag(parsed, 'redact'),
    group: group ?? null,
    keepHistory: kh === undefined ? null : Number(kh),
    dryRun: boolFlag(parsed, 'dry-run'),
    noWait: boolFlag(parsed, 'no-wait'),
    allowEmpty: boolFlag(parsed, 'allow-empty'),
    sourceName: sourceName ?? null,
    maxPerClient: capFlag(stringFlag(parsed, 'max-cards-per-client'), '--max-cards-per-client', DEFAULT_MAX_PER_CLIENT),
    maxPerDomain: capFlag(stringFlag(parsed, 'max-cards-per-domain'), '--max-cards-per-domain', DEFAULT_MAX_PER_DOMAIN),
    json: boolFlag(parsed, 'json'),
    env,
  };
}

/** A one-line progress bar on stderr, redrawn at most every 100 ms; only used when stderr is a TTY. */
function makeProgress(): { update: NonNullable<ExportOptions['progress']>; end: () => void } {
  let last = 0;
  let shown = false;
  return {
    update(phase, done, total) {
      const t = Date.now();
      if (t - last < 100 && done !== total) return;
      last = t;
      shown = true;
      let line: string;
      if (total > 0) {
        const width = 30;
        const fill = Math.round((done / total) * width);
        line = `${phase} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${done}/${total}`;
      } else line = `${phase} ${done} cards`;
      process.stderr.write(`\r${line}\u001b[K`);
    },
    end() {
      if (shown) process.stderr.write('\r\u001b[K');
    },
  };
}

/**
 * The `--json` object: the summary counts, then the details an operator acts on: `secret_ids` (cards not written
 * for a credential), `over_cap` (folders that lost cards to the caps: folder, kept, skipped) and `invalid` (records
 * skipped as invalid: id, where for JSONL, reason) and `hidden_control_ids` (cards counted in hidden_controls).
 */
function jsonReport(r: ExportReport): Record<string, unknown> {
  return {
    ...r.summary,
    secret_ids: r.secretIds,
    over_cap: r.overCap,
    invalid: r.invalid,
    hidden_control_ids: r.hiddenControlIds,
  };
}

function summaryLine(r: ExportReport, dryRun: boolean): string {
  const s = r.summary;
  const head = dryRun ? 'export-fleet (dry run, nothing changed):' : 'export-fleet:';
  return (
    `${head} written ${s.written}, unchanged ${s.unchanged}, removed ${s.removed}, history ${s.history}, ` +
    `skipped_secret ${s.skipped_secret}, skipped_invalid ${s.skipped_invalid}, skipped_expired ${s.skipped_expired}, ` +
    `skipped_over_cap ${s.skipped_over_cap}, hidden_controls ${s.hidden_controls}`
  );
}

export const command: Command = {
  name: 'export-fleet',
  summary: 'export Hermes Fleet Memory cards (Qdrant or JSONL) as Markdown into a trusted directory',
  usage: USAGE,
  async run(argv) {
    const opts = optionsFromArgv(argv, process.env);
    const bar = process.stderr.isTTY && !opts.json ? makeProgress() : null;
    if (bar !== null) opts.progress = bar.update;
    let report: ExportReport;
    try {
      report = await runExport(opts);
    } catch (e) {
      bar?.end();
      if (e instanceof ExportError) {
        if (e.exitCode === 2) throw new UsageError(e.message);
        process.stderr.write(`${PROG}: ${e.message}\n`);
        if (opts.json) {
          const zero = {
            written: 0,
            unchanged: 0,
            removed: 0,
            history: 0,
            skipped_secret: 0,
            skipped_invalid: 0,
            skipped_expired: 0,
            skipped_over_cap: 0,
            hidden_controls: 0,
          };
          process.stdout.write(`${JSON.stringify({ ok: false, ...zero, error: e.message })}\n`);
        }
        return EXIT.FAILURE;
      }
      throw e;
    }
    bar?.end();
    if (opts.json) process.stdout.write(`${JSON.stringify(jsonReport(report))}\n`);
    else process.stdout.write(`${summaryLine(report, opts.dryRun)}\n`);
    return report.summary.ok ? EXIT.OK : EXIT.FAILURE;
  },
};
