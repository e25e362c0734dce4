/**
 * `export-fleet` end to end: trust `--out`, take the lock, read the whole source, decide per card (invalid,
 * expired, secret, unchanged, changed, new), record the plan in the manifest, write, keep history, mirror
 * removals within scope, and report (docs/EXPORT.md).
 *
 * Order matters for safety: the source is read completely before anything in `--out` changes, so a failed or
 * partial read (401, 404, 5xx, timeout) changes and deletes nothing. The manifest is saved twice: before the
 * writes (listing every path and temp file this run may create, so a run killed half-way leaves nothing the next
 * run does not recognise as its own) and after them (the final state).
 */
import path from 'node:path';
import { getNative } from '../../native/index.js';
import { getWriteNative } from '../../native/write-linux.js';
import { BridgeError } from '../errors.js';
import { openTrustedDir } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { NO_WRITERS, writersOf } from '../trust/writers.js';
import { isLive, parseCard, type Card } from './card.js';
import { DEFAULT_MAX_PER_CLIENT, DEFAULT_MAX_PER_DOMAIN, selectUnderCaps, type CapShortfall } from './caps.js';
import { ExportError } from './errors.js';
import {
  cardLocation,
  historyFile,
  HISTORY_DIR,
  parseHistoryFile,
  type CardLocation,
  type ChangedNames,
} from './layout.js';
import { bodyText, parseRendered, renderCard } from './render.js';
import { findSecrets, redact, redactForName } from './secrets.js';
import { readJsonl } from './source-jsonl.js';
import { hasHiddenControls } from '../text/visible.js';
import { readQdrant, type QdrantSettings } from './source-qdrant.js';
import type { SourceRead } from './source.js';
import {
  acquireLock,
  BlockedError,
  tempName,
  OutTree,
  type Manifest,
  type ManifestEntry,
  type TreeModes,
} from './writer.js';

/** Where the cards come from. */
export type ExportSource = { kind: 'qdrant'; settings: QdrantSettings } | { kind: 'jsonl'; file: string };

/** Everything one run needs; the CLI builds it from flags and the environment. */
export interface ExportOptions {
  /** The output directory (absolute, or resolved against the working directory). */
  out: string;
  source: ExportSource;
  /** Domains to export (raw values); empty = all. Also the scope of mirror removal. */
  domains: string[];
  includeExpired: boolean;
  redact: boolean;
  /** Group name or numeric gid for `--group`, or null. */
  group: string | null;
  /** Newest history files kept per card; null = keep all. */
  keepHistory: number | null;
  dryRun: boolean;
  noWait: boolean;
  /**
   * Let a read that yields no valid card in scope remove every file of that scope (`--allow-empty`). Without it such
   * a run exits 1 and changes nothing: an empty answer is far more often a wrong file or collection than a fleet
   * that forgot everything.
   */
  allowEmpty?: boolean;
  /**
   * Most cards written into one client folder (`--max-cards-per-client`, default 1,000): the newest by `updated_at`
   * are kept. See src/fleet/caps.ts for the selection.
   */
  maxPerClient?: number;
  /**
   * Most cards written into one domain folder (`--max-cards-per-domain`, default 2,000), shared fairly between its
   * client folders.
   */
  maxPerDomain?: number;
  /**
   * Name of the source across runs (`--source-name`): mirror removal and history pruning act on files written from
   * the same source, and by default that is the Qdrant endpoint and collection, or the JSONL file's path, so a dated
   * dump file per run would be a new source each time. Null or absent: that default.
   */
  sourceName?: string | null;
  /** Environment for the key variable (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** "Now" in epoch seconds for the live rule (default: the clock at start). */
  nowSeconds?: number;
  /** Operator messages (stderr lines). */
  log?: (line: string) => void;
  /** Progress updates for a TTY bar: phase, done, total (total 0 = unknown). */
  progress?: (phase: 'read' | 'write', done: number, total: number) => void;
}

/** The closing summary; `--json` prints exactly these keys. */
export interface ExportSummary {
  ok: boolean;
  written: number;
  unchanged: number;
  /**
   * Files deleted: current files of cards gone from the source, no longer live or moved, and history files pruned by
   * `--keep-history`.
   */
  removed: number;
  history: number;
  skipped_secret: number;
  skipped_invalid: number;
  /** Cards not live (past `expires_at` and not pinned, or a status other than `active`), when not `--include-expired`. */
  skipped_expired: number;
  /** Cards left out by `--max-cards-per-client` or `--max-cards-per-domain` (their earlier files are removed). */
  skipped_over_cap: number;
  /**
   * Cards in the tree after this run (written or unchanged) whose text, names, entities or relations carry Unicode
   * tag characters (U+E0000–U+E007F) or bidi embedding, override or isolate controls (U+202A–U+202E,
   * U+2066–U+2069). They are written as they are; the tools show each as `<U+XXXX>` (docs/DESIGN.md §Returned
   * text).
   */
  hidden_controls: number;
}

/** The summary plus what the operator needs to act on. */
export interface ExportReport {
  summary: ExportSummary;
  /** Ids of cards not written because they hold a credential (never the credential). */
  secretIds: string[];
  /** Places in `--out` the export refused to touch, with the reason. */
  blocked: string[];
  /** Folders that lost cards to the caps (folder names with any credential-like piece redacted). */
  overCap: CapShortfall[];
  /** Each record counted in `skipped_invalid`: its point id (null when unusable), where it is, and why. */
  invalid: InvalidRecord[];
  /** Ids of the cards counted in `hidden_controls`, sorted. */
  hiddenControlIds: string[];
}

/** A record skipped as invalid. Never carries a card value: the id is normalised, the reason comes from the schema. */
export interface InvalidRecord {
  id: string | null;
  /** `line 12` for a JSONL source; absent for Qdrant points. */
  where?: string;
  /** `field: rule`, e.g. `created_at: required, missing`. */
  reason: string;
}

/** Every string of a card that ends up on disk (front matter, title, body, path). */
function cardStrings(c: Card): string[] {
  const out = [c.text, c.domain, c.client_id, c.slot_name, c.status];
  if (c.author_node !== null) out.push(c.author_node);
  if (c.author_profile !== null) out.push(c.author_profile);
  out.push(...c.entities);
  for (const r of c.relations) out.push(r.source, r.relation, r.target);
  return out;
}

function redactCard(c: Card): Card {
  return {
    ...c,
    text: redact(c.text),
    domain: redact(c.domain),
    client_id: redact(c.client_id),
    slot_name: redact(c.slot_name),
    status: redact(c.status),
    author_node: c.author_node === null ? null : redact(c.author_node),
    author_profile: c.author_profile === null ? null : redact(c.author_profile),
    entities: c.entities.map(redact),
    relations: c.relations.map((r) => ({
      source: redact(r.source),
      relation: redact(r.relation),
      target: redact(r.target),
    })),
  };
}

/** A card ready to write. */
interface Ready {
  card: Card;
  loc: CardLocation;
  bytes: Buffer;
}

/** One step of the write phase, decided before anything changes. */
type Step =
  | { op: 'write'; ready: Ready; temp: string; replace: boolean }
  | { op: 'history'; ready: Ready; dir: [string, string]; file: string; bytes: Buffer; temp: string }
  | { op: 'fixmode'; ready: Ready };

function resolveGroup(group: string, wn: NonNullable<ReturnType<typeof getWriteNative>>): number {
  if (/^[0-9]+$/.test(group)) return Number(group);
  const gid = wn.groupId(group);
  if (gid === null) throw new ExportError(`--group: no group named ${group}`, 2);
  return gid;
}

/** The body as renderCard writes it (what parseRendered gives back). */
function renderedBody(c: Card): string {
  const b = bodyText(c.text);
  return b.endsWith('\n') ? b : `${b}\n`;
}

function splitRel(rel: string): { dir: string[]; name: string } {
  const segs = rel.split('/');
  const name = segs.pop()!;
  return { dir: segs, name };
}

/**
 * The folder a card is counted in by the caps: where it is written, with names that hold a credential in their
 * `--redact` form (a card skipped for a credential counts where its redacted copy would go).
 */
function capFolder(c: Card): [string, string] {
  const domain = redactForName(c.domain);
  const client = redactForName(c.client_id);
  return cardLocation({ ...c, domain, client_id: client }, { client: client !== c.client_id }).dir;
}

/**
 * Cards that failed validation keep the file of their last good export, but only while their folder has room under
 * the caps after this run's valid cards: otherwise a node could make yesterday's cards invalid and write a new
 * batch each run, and the folder would grow past its cap. Drops from `keep` the ids that do not fit (their files
 * are then removed) and returns how many. Linear in the manifest.
 */
function capInvalidKeeps(
  manifest: Manifest,
  inScope: (e: ManifestEntry) => boolean,
  invalidIds: ReadonlySet<string>,
  keep: Set<string>,
  kept: ReadonlySet<string>,
  live: readonly Card[],
  perClient: number,
  perDomain: number,
): number {
  if (invalidIds.size === 0) return 0;
  const inFolder = new Map<string, number>();
  const inDomain = new Map<string, number>();
  for (const c of live) {
    if (!kept.has(c.id)) continue;
    const [d, cl] = capFolder(c);
    inFolder.set(`${d}/${cl}`, (inFolder.get(`${d}/${cl}`) ?? 0) + 1);
    inDomain.set(d, (inDomain.get(d) ?? 0) + 1);
  }
  let dropped = 0;
  for (const rel of Object.keys(manifest.files).sort()) {
    const e = manifest.files[rel]!;
    if (e.kind !== 'current' || !inScope(e) || !invalidIds.has(e.point)) continue;
    const [d, cl] = rel.split('/') as [string, string];
    const f = inFolder.get(`${d}/${cl}`) ?? 0;
    const n = inDomain.get(d) ?? 0;
    if (f < perClient && n < perDomain) {
      inFolder.set(`${d}/${cl}`, f + 1);
      inDomain.set(d, n + 1);
    } else if (keep.delete(e.point)) dropped += 1;
  }
  return dropped;
}

/**
 * Run one export. Resolves with the report; operational failures (untrusted `--out`, lock held with `noWait`,
 * failed read, unusable manifest) throw ExportError with the exit code to use.
 */
export async function runExport(opts: ExportOptions): Promise<ExportReport> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const env = opts.env ?? process.env;
  const now = opts.nowSeconds ?? Date.now() / 1000;
  const native = getNative();
  const wn = getWriteNative();
  if (native === null || wn === null) throw new ExportError('export-fleet is not supported on this platform');
  const gid = opts.group === null ? null : resolveGroup(opts.group, wn);
  // With --group, that group counts as a named writer group for --out and below (a team folder it may write).
  const writers = gid === null ? NO_WRITERS : writersOf([], [gid]);
  const modes: TreeModes =
    gid === null ? { dir: 0o700, file: 0o600, gid: null } : { dir: 0o750, file: 0o640, gid, writers };

  const out = path.resolve(opts.out);
  let outFd: number;
  try {
    outFd = openTrustedDir(out, 'out', native, undefined, writers);
  } catch (e) {
    if (e instanceof BridgeError) {
      throw new ExportError(
        `--out ${out} does not pass the trust rule (${e.reason}); it must be an existing directory owned by you or root, not writable by anyone else (with --group: except that group, as in a team folder), reached without symlinks`,
      );
    }
    throw e;
  }
  if (gid !== null) {
    // The export never changes --out itself; say so when the group could not reach the files through it.
    const st = native.fstat(outFd);
    const traversable = (st.mode & 0o001) !== 0 || (st.gid === gid && (st.mode & 0o010) !== 0);
    if (!traversable) {
      log(
        `export-fleet: warning: ${out} is not traversable by group ${opts.group} (mode ${(st.mode & 0o7777).toString(8)}, group ${st.gid}); members of that group cannot reach the files until you give it g+x and that group`,
      );
    }
  }
  let lockFd: number | null = null;
  const tree = new OutTree(native, wn, outFd, modes, opts.dryRun);
  try {
    try {
      lockFd = await acquireLock(native, wn, outFd, {
        noWait: opts.noWait,
        dryRun: opts.dryRun,
        onWait: () => log(`export-fleet: another export into ${out} is running; waiting for it to finish`),
      });
    } catch (e) {
      if (e instanceof Error && e.message === 'locked')
        throw new ExportError(`another export into ${out} is running (--no-wait given)`);
      if (e instanceof BlockedError) throw new ExportError(`${path.join(out, e.relPath)}: ${e.why}`);
      throw e;
    }
    let manifest: Manifest;
    try {
      manifest = tree.loadManifest();
    } catch (e) {
      throw new ExportError(
        `cannot use the manifest in ${out} (${e instanceof Error ? e.message : 'error'}); move it aside to start over`,
      );
    }
    // A run that was killed left these; the manifest says they are ours.
    for (const t of manifest.temps) tree.removeTemp(t);

    const read = await readSource(opts, env);
    if (opts.sourceName != null) read.key = `name:${opts.sourceName}`;
    return await applyRead(opts, tree, modes, manifest, read, now, log);
  } finally {
    tree.close();
    if (lockFd !== null) closeQuietly(native, lockFd);
    closeQuietly(native, outFd);
  }
}

async function readSource(opts: ExportOptions, env: NodeJS.ProcessEnv): Promise<SourceRead> {
  if (opts.source.kind === 'jsonl') return readJsonl(opts.source.file);
  return readQdrant(opts.source.settings, env, opts.domains, (_pages, points) => opts.progress?.('read', points, 0));
}

async function applyRead(
  opts: ExportOptions,
  tree: OutTree,
  modes: TreeModes,
  manifest: Manifest,
  read: SourceRead,
  now: number,
  log: (line: string) => void,
): Promise<ExportReport> {
  const summary: ExportSummary = {
    ok: true,
    written: 0,
    unchanged: 0,
    removed: 0,
    history: 0,
    skipped_secret: 0,
    skipped_invalid: read.invalid,
    skipped_expired: 0,
    skipped_over_cap: 0,
    hidden_controls: 0,
  };
  const secretIds: string[] = [];
  const invalid: InvalidRecord[] = (read.rejected ?? []).map((r) => ({ id: null, where: r.where, reason: r.reason }));
  // Ids still matching a credential pattern after --redact (possible only when sanitising a name creates one).
  const unredactable: string[] = [];
  const blocked: string[] = [];
  const inScope = (e: ManifestEntry): boolean =>
    e.source === read.key && (opts.domains.length === 0 || opts.domains.includes(e.domain));

  // `keep` holds ids whose existing files must survive this run's mirror removal: cards skipped for a secret or
  // for failing validation keep their last good export (the card still exists; only this copy of it is unusable).
  const keep = new Set<string>();
  // Records that name no card (no usable point id): any current file could be theirs, so nothing is removed.
  let unidentified = read.invalid;

  // 1. Validate, and keep one card per id (the newest by updated_at, then revision; a later record wins ties).
  const byId = new Map<string, Card>();
  // Ids of cards that failed validation: their earlier files are kept, within the caps (see capInvalidKeeps).
  const invalidIds = new Set<string>();
  for (const p of read.points) {
    const parsed = parseCard(p);
    if (!parsed.ok) {
      summary.skipped_invalid += 1;
      invalid.push(
        p.where === undefined
          ? { id: parsed.id, reason: parsed.reason }
          : { id: parsed.id, where: p.where, reason: parsed.reason },
      );
      if (parsed.id === null) unidentified += 1;
      else {
        keep.add(parsed.id);
        invalidIds.add(parsed.id);
      }
      continue;
    }
    const c = parsed.card;
    if (opts.domains.length > 0 && !opts.domains.includes(c.domain)) continue;
    const prev = byId.get(c.id);
    if (
      prev === undefined ||
      c.updated_at > prev.updated_at ||
      (c.updated_at === prev.updated_at && c.revision >= prev.revision)
    ) {
      byId.set(c.id, c);
    }
  }

  // A read with no valid card in scope would empty the scope: refuse unless the operator says it is really empty.
  const scopeHasFiles = Object.values(manifest.files).some((e) => e.kind === 'current' && inScope(e));
  if (byId.size === 0 && scopeHasFiles && opts.allowEmpty !== true) {
    throw new ExportError(
      'the source yielded no valid card in scope, but earlier exports wrote files there; nothing was changed (pass --allow-empty if the source really is empty)',
    );
  }

  // 2. Decide per card: the live rule, then the caps (docs/EXPORT.md §Caps), then credentials. A card
  // over the caps is neither written nor kept, so an earlier file of it is removed: the caps hold on disk.
  const live: Card[] = [];
  for (const c0 of byId.values()) {
    if (!opts.includeExpired && !isLive(c0, now)) summary.skipped_expired += 1;
    else live.push(c0);
  }
  const perClient = opts.maxPerClient ?? DEFAULT_MAX_PER_CLIENT;
  const perDomain = opts.maxPerDomain ?? DEFAULT_MAX_PER_DOMAIN;
  const caps = selectUnderCaps(
    live.map((c) => {
      const [domain, client] = capFolder(c);
      return { id: c.id, domain, client, updatedAt: c.updated_at, revision: c.revision };
    }),
    perClient,
    perDomain,
  );
  const overCap = caps.shortfalls.map((f) => ({ ...f, folder: redactForName(f.folder) }));
  const ready: Ready[] = [];
  for (const c0 of live) {
    if (!caps.kept.has(c0.id)) {
      summary.skipped_over_cap += 1;
      continue;
    }
    let c = c0;
    // Path segments are built from the raw values with name placeholders (`redacted-flk-token`), never from the
    // front matter's `[redacted:flk_token]`, which sanitises into a name the `flk_` rule matches again.
    let named = c0;
    let changed: ChangedNames = {};
    if (cardStrings(c).some((s) => findSecrets(s).length > 0)) {
      if (!opts.redact) {
        summary.skipped_secret += 1;
        secretIds.push(c.id);
        keep.add(c.id);
        continue;
      }
      c = redactCard(c);
      named = {
        ...c,
        domain: redactForName(c0.domain),
        client_id: redactForName(c0.client_id),
        slot_name: redactForName(c0.slot_name),
      };
      changed = { client: named.client_id !== c0.client_id, slot: named.slot_name !== c0.slot_name };
    }
    const loc = cardLocation(named, changed);
    const bytes = renderCard(c, opts.includeExpired ? { live: isLive(c0, now) } : undefined);
    // Last gate on exactly what would reach the disk: the bytes, and each piece of the path made from the card
    // (sanitising can create a credential: `flk Ab3…` becomes `flk_Ab3…`). The path's own joins are not scanned:
    // `sk--<id>` is the slot `sk`, not a key.
    if (findSecrets(bytes.toString('utf8')).length > 0 || loc.fromCard.some((p) => findSecrets(p).length > 0)) {
      summary.skipped_secret += 1;
      (opts.redact ? unredactable : secretIds).push(c.id);
      keep.add(c.id);
      continue;
    }
    keep.add(c.id);
    ready.push({ card: c, loc, bytes });
  }
  const hiddenControlIds = ready
    .filter((r) => cardStrings(r.card).some(hasHiddenControls))
    .map((r) => r.card.id)
    .sort();
  ready.sort((a, b) => (a.loc.relPath < b.loc.relPath ? -1 : a.loc.relPath > b.loc.relPath ? 1 : 0));
  for (const id of byId.keys()) invalidIds.delete(id);
  const overflow = capInvalidKeeps(manifest, inScope, invalidIds, keep, caps.kept, live, perClient, perDomain);
  if (overflow > 0) {
    log(
      `export-fleet: ${overflow} file(s) of cards that failed validation this run were removed instead of kept: their folders are full under the caps`,
    );
  }

  // 3. Inspect the tree (read only) and plan the steps.
  const steps: Step[] = [];
  const newEntries = new Map<string, ManifestEntry>();
  const currentPaths = new Set<string>();
  const historyNamesPlanned = new Set<string>();
  const keepHistory = opts.keepHistory;
  for (const r of ready) {
    const rel = r.loc.relPath;
    currentPaths.add(rel);
    try {
      const dirFd = tree.openDir(r.loc.dir, false);
      const p = dirFd === null ? ({ kind: 'absent' } as const) : tree.presence(dirFd, r.loc.file);
      const entry: ManifestEntry = { source: read.key, domain: r.card.domain, point: r.card.id, kind: 'current' };
      if (p.kind === 'absent') {
        steps.push({ op: 'write', ready: r, temp: tempName(), replace: false });
        newEntries.set(rel, entry);
        continue;
      }
      if (manifest.files[rel] === undefined || !tree.isOwnFile(p.stat)) {
        throw new BlockedError(
          rel,
          manifest.files[rel] === undefined ? 'exists but the export did not write it' : 'not a file the export wrote',
        );
      }
      const old = tree.readOwn(dirFd!, r.loc.file, p.stat, rel);
      newEntries.set(rel, entry);
      if (old.equals(r.bytes)) {
        if ((p.stat.mode & 0o7777) !== modes.file || (modes.gid !== null && p.stat.gid !== modes.gid)) {
          steps.push({ op: 'fixmode', ready: r });
        }
        summary.unchanged += 1;
        continue;
      }
      const facts = parseRendered(old);
      const changed = facts === null || facts.revision !== r.card.revision || facts.body !== renderedBody(r.card);
      if (changed && keepHistory !== 0) {
        const rev = facts?.revision ?? 0;
        const when = facts?.updatedAt ?? Number(p.stat.mtimeNs / 1_000_000_000n);
        const hfile = historyFile(r.loc.stem, rev, when);
        const hrel = `${r.loc.dir.join('/')}/${HISTORY_DIR}/${hfile}`;
        const hdir = tree.openDir([...r.loc.dir, HISTORY_DIR], false);
        const hp = hdir === null ? ({ kind: 'absent' } as const) : tree.presence(hdir, hfile);
        if (hp.kind === 'present') {
          // Already kept (a run killed after writing it) — or something that is not ours: then keep the old
          // current file rather than lose the only copy of that revision.
          if (manifest.files[hrel] === undefined || !tree.isOwnFile(hp.stat))
            throw new BlockedError(hrel, 'history name taken by a file the export did not write');
        } else if (!historyNamesPlanned.has(hrel)) {
          historyNamesPlanned.add(hrel);
          steps.push({ op: 'history', ready: r, dir: r.loc.dir, file: hfile, bytes: old, temp: tempName() });
          newEntries.set(hrel, { ...entry, domain: manifest.files[rel]!.domain, kind: 'history' });
        }
      }
      steps.push({ op: 'write', ready: r, temp: tempName(), replace: true });
    } catch (e) {
      if (!(e instanceof BlockedError)) throw e;
      blocked.push(`${e.relPath}: ${e.why}`);
      newEntries.delete(rel);
    }
  }

  // Mirror removal candidates: current files of this source and scope whose card is gone, expired, or moved to
  // another path (an episodic overwrite can move a card to another client). A moved card's old text is kept as
  // history in its old folder when it differs, so the overwrite the fleet store did is not silent here.
  const readyById = new Map(ready.map((r) => [r.card.id, r] as const));
  const removals: string[] = [];
  if (unidentified > 0 && scopeHasFiles) {
    log(
      `export-fleet: ${unidentified} record(s) carry no point id, so any card could be among them; no file is removed this run`,
    );
  }
  for (const [rel, e] of Object.entries(unidentified > 0 ? {} : manifest.files)) {
    if (e.kind !== 'current' || !inScope(e) || currentPaths.has(rel)) continue;
    const moved = readyById.get(e.point);
    if (keep.has(e.point) && moved === undefined) continue; // skipped for a secret or invalid: its last export stays
    removals.push(rel);
    if (moved === undefined || keepHistory === 0) continue;
    try {
      const { dir, name } = splitRel(rel);
      const dirFd = tree.openDir(dir, false);
      const p = dirFd === null ? ({ kind: 'absent' } as const) : tree.presence(dirFd, name);
      if (p.kind === 'absent' || !tree.isOwnFile(p.stat)) continue;
      const old = tree.readOwn(dirFd!, name, p.stat, rel);
      const facts = parseRendered(old);
      if (facts !== null && facts.revision === moved.card.revision && facts.body === renderedBody(moved.card)) continue;
      const stem = name.slice(0, -'.md'.length);
      const hfile = historyFile(
        stem,
        facts?.revision ?? 0,
        facts?.updatedAt ?? Number(p.stat.mtimeNs / 1_000_000_000n),
      );
      const hrel = `${dir.join('/')}/${HISTORY_DIR}/${hfile}`;
      if (historyNamesPlanned.has(hrel)) continue;
      const hdir = tree.openDir([...dir, HISTORY_DIR], false);
      if (hdir !== null && tree.presence(hdir, hfile).kind === 'present') continue;
      historyNamesPlanned.add(hrel);
      steps.unshift({
        op: 'history',
        ready: moved,
        dir: [dir[0]!, dir[1]!],
        file: hfile,
        bytes: old,
        temp: tempName(),
      });
      newEntries.set(hrel, { source: e.source, domain: e.domain, point: e.point, kind: 'history' });
    } catch (err) {
      if (!(err instanceof BlockedError)) throw err;
      blocked.push(`${err.relPath}: ${err.why}`);
    }
  }

  // 4. Phase-1 manifest: everything this run may create, and its temp names.
  for (const s of steps) {
    if (s.op === 'write') tree.planDirs(s.ready.loc.dir);
    if (s.op === 'history') tree.planDirs([...s.dir, HISTORY_DIR]);
  }
  const planned: Manifest = { version: 1, files: { ...manifest.files }, dirs: tree.dirRecord(false), temps: [] };
  for (const [rel, e] of newEntries) planned.files[rel] = e;
  for (const s of steps) {
    if (s.op === 'write') planned.temps.push(`${s.ready.loc.dir.join('/')}/${s.temp}`);
    if (s.op === 'history') planned.temps.push(`${s.dir.join('/')}/${HISTORY_DIR}/${s.temp}`);
  }
  tree.saveManifest(planned);

  // 5. Write: history copies first, then the new current files (each an atomic rename).
  const total = steps.length;
  let done = 0;
  for (const s of steps) {
    done += 1;
    if (done % 50 === 0 || done === total) opts.progress?.('write', done, total);
    // Let timers and I/O run now and then (progress redraws; an embedding process stays responsive).
    if (done % 200 === 0) await new Promise((r) => setImmediate(r));
    if (tree.dryRun) {
      if (s.op === 'history') summary.history += 1;
      if (s.op === 'write') summary.written += 1;
      continue;
    }
    try {
      if (s.op === 'history') {
        const hdir = tree.openDir([...s.dir, HISTORY_DIR], true)!;
        tree.writeAtomic(hdir, s.file, s.temp, s.bytes);
        summary.history += 1;
      } else if (s.op === 'write') {
        const dirFd = tree.openDir(s.ready.loc.dir, true)!;
        // Re-check right before the rename: only an absent name or a file of ours may be replaced.
        const p = tree.presence(dirFd, s.ready.loc.file);
        if (p.kind === 'present' && (!s.replace || !tree.isOwnFile(p.stat))) {
          throw new BlockedError(s.ready.loc.relPath, 'appeared during the export and is not ours');
        }
        tree.writeAtomic(dirFd, s.ready.loc.file, s.temp, s.ready.bytes);
        summary.written += 1;
      } else {
        const dirFd = tree.openDir(s.ready.loc.dir, false);
        if (dirFd !== null) tree.fixFileMode(dirFd, s.ready.loc.file);
      }
    } catch (e) {
      if (!(e instanceof BlockedError)) throw e;
      blocked.push(`${e.relPath}: ${e.why}`);
      if (s.op === 'write' && !s.replace) delete planned.files[s.ready.loc.relPath];
    }
  }

  // 6. Mirror removal (complete read only — a failed read threw long before this point).
  const finalFiles: Record<string, ManifestEntry> = { ...planned.files };
  for (const rel of removals) {
    const { dir, name } = splitRel(rel);
    try {
      const dirFd = tree.openDir(dir, false);
      const r = dirFd === null ? 'absent' : tree.removeOwn(dirFd, name, rel);
      if (r === 'removed') summary.removed += 1;
      delete finalFiles[rel];
    } catch (e) {
      if (!(e instanceof BlockedError)) throw e;
      blocked.push(`${e.relPath}: ${e.why}`);
      delete finalFiles[rel];
    }
  }

  // 7. --keep-history N: the newest N history files per card, among this run's scope.
  if (keepHistory !== null) {
    const groups = new Map<string, Array<{ rel: string; revision: number; stamp: string }>>();
    for (const [rel, e] of Object.entries(finalFiles)) {
      if (e.kind !== 'history' || !inScope(e)) continue;
      const { dir, name } = splitRel(rel);
      const stem = name.replace(/--r[0-9]+-[0-9]{8}T[0-9]{6}Z\.md$/, '');
      const parsed = parseHistoryFile(stem, name);
      if (parsed === null) continue;
      const key = `${dir.slice(0, 2).join('/')}\u0000${e.point}`;
      const list = groups.get(key) ?? [];
      list.push({ rel, ...parsed });
      groups.set(key, list);
    }
    for (const list of groups.values()) {
      list.sort((a, b) => b.revision - a.revision || (a.stamp < b.stamp ? 1 : a.stamp > b.stamp ? -1 : 0));
      for (const h of list.slice(keepHistory)) {
        const { dir, name } = splitRel(h.rel);
        try {
          const dirFd = tree.openDir(dir, false);
          // Counted in `removed` with the current files of vanished cards: both are files this run deleted.
          if (dirFd !== null && tree.removeOwn(dirFd, name, h.rel) === 'removed') summary.removed += 1;
          delete finalFiles[h.rel];
        } catch (e) {
          if (!(e instanceof BlockedError)) throw e;
          blocked.push(`${e.relPath}: ${e.why}`);
          delete finalFiles[h.rel];
        }
      }
    }
  }

  // 8. Make this run's changes durable, then record the final state.
  await tree.syncAll();
  tree.saveManifest({ version: 1, files: finalFiles, dirs: tree.dirRecord(true), temps: [] });

  if (blocked.length > 0) summary.ok = false;
  // Counted over the cards whose files are in the tree now (a blocked write leaves the card out).
  const blockedIds = new Set(ready.filter((r) => finalFiles[r.loc.relPath]?.point !== r.card.id).map((r) => r.card.id));
  const hidden = hiddenControlIds.filter((id) => !blockedIds.has(id));
  summary.hidden_controls = hidden.length;
  if (hidden.length > 0) {
    log(
      `export-fleet: ${hidden.length} card(s) carry hidden Unicode controls (tag characters or bidi embedding, override or isolate controls); the tools show each as <U+XXXX>: ${hidden.join(', ')}`,
    );
  }
  for (const b of blocked) log(`export-fleet: left alone: ${b}`);
  for (const r of invalid) {
    const who = r.id ?? 'a record without a usable id';
    log(`export-fleet: skipped invalid card ${who}${r.where === undefined ? '' : ` (${r.where})`}: ${r.reason}`);
  }
  if (secretIds.length > 0) {
    log(
      `export-fleet: ${secretIds.length} card(s) hold a credential and were not written (use --redact to write them redacted): ${secretIds.join(', ')}`,
    );
  }
  if (summary.skipped_over_cap > 0) {
    log(
      `export-fleet: ${summary.skipped_over_cap} card(s) over the caps (--max-cards-per-client ${perClient}, --max-cards-per-domain ${perDomain}) were not written; the newest were kept:`,
    );
    for (const f of overCap) log(`export-fleet:   ${f.folder}: kept ${f.kept}, skipped ${f.skipped}`);
  }
  if (unredactable.length > 0) {
    log(
      `export-fleet: ${unredactable.length} card(s) still matched a credential pattern after redaction (in the file name sanitising made) and were not written: ${unredactable.join(', ')}`,
    );
  }
  return { summary, secretIds: [...secretIds, ...unredactable], blocked, overCap, invalid, hiddenControlIds: hidden };
}
