/**
 * One export run over a complete source read, inside a locked and trusted `--out` (`ExportRun`'s named steps, in
 * order; docs/EXPORT.md):
 *  1. `validate`: parse each record, keep one card per id (the newest by `updated_at`, then `revision`; a later
 *     record wins ties), remember the ids of invalid cards; `refuseEmpty` stops a read with no valid card in scope
 *     from emptying a scope that has files (unless `--allow-empty`);
 *  2. `decide`: the live rule, then the caps, then credentials (redacted or skipped) per card: the cards ready to
 *     write, in path order, and the ids whose earlier files stay;
 *  3. `planCards` and `planRemovals`: inspect the tree (read only) and plan the writes, history copies and mode
 *     fixes, and which current files mirror removal deletes (a moved card's old text kept as history);
 *  4. `savePlan`: the phase-1 manifest, listing everything this run may create and its temp names;
 *  5. `write`: history copies first, then the new current files, each an atomic rename, re-checked just before;
 *  6. `removeMirrored`: delete the files planned in 3 (a failed read threw long before this point);
 *  7. `pruneHistory`: with `--keep-history N`, the newest N history files per card in scope;
 *  8. `finish`: make the changes durable, save the final manifest, log and report.
 * A place the export may not touch (`BlockedError`) is left alone and listed; every other error ends the run.
 */
import { isLive, parseCard, type Card } from './card.js';
import { DEFAULT_MAX_PER_CLIENT, DEFAULT_MAX_PER_DOMAIN, selectUnderCaps, type CapShortfall } from './caps.js';
import { ExportError } from './errors.js';
import { capFolder, capInvalidKeeps, cardStrings, redactCard } from './export-cards.js';
import type { ExportOptions, ExportReport, ExportSummary, InvalidRecord } from './export-types.js';
import {
  cardLocation,
  historyFile,
  HISTORY_DIR,
  parseHistoryFile,
  type CardLocation,
  type ChangedNames,
} from './layout.js';
import { bodyText, parseRendered, renderCard } from './render.js';
import { findSecrets, redactForName } from './secrets.js';
import type { SourceRead } from './source.js';
import { hasHiddenControls } from '../text/visible.js';
import { BlockedError, tempName, type Manifest, type ManifestEntry, type OutTree, type TreeModes } from './writer.js';

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

/** The steps of one export run (module comment); `run()` is the whole run. */
export class ExportRun {
  private readonly summary: ExportSummary;
  private readonly secretIds: string[] = [];
  private readonly invalid: InvalidRecord[];
  /** Ids still matching a credential pattern after --redact (possible only when sanitising a name creates one). */
  private readonly unredactable: string[] = [];
  private readonly blocked: string[] = [];
  /**
   * Ids whose existing files must survive this run's mirror removal: cards skipped for a secret or for failing
   * validation keep their last good export (the card still exists; only this copy of it is unusable).
   */
  private readonly keep = new Set<string>();
  /** Records that name no card (no usable point id): any current file could be theirs, so nothing is removed. */
  private unidentified: number;
  /** Step 1: one valid card per id, in scope. */
  private readonly byId = new Map<string, Card>();
  /** Ids of cards that failed validation: their earlier files are kept, within the caps (see capInvalidKeeps). */
  private readonly invalidIds = new Set<string>();
  private readonly perClient: number;
  private readonly perDomain: number;
  private readonly scopeHasFiles: boolean;
  /** Step 2: the folders that lost cards to the caps, and the cards ready to write in path order. */
  private overCap: CapShortfall[] = [];
  private ready: Ready[] = [];
  private hiddenControlIds: string[] = [];
  /** Steps 3 and 4: the plan, the manifest entries it adds and the current files mirror removal deletes. */
  private readonly steps: Step[] = [];
  private readonly newEntries = new Map<string, ManifestEntry>();
  private readonly currentPaths = new Set<string>();
  private readonly historyNamesPlanned = new Set<string>();
  private readonly removals: string[] = [];
  private planned: Manifest | undefined;
  /** Steps 6 to 8: the files in the tree after this run, for the final manifest. */
  private finalFiles: Record<string, ManifestEntry> = {};

  /**
   * @param tree    `--out`, locked, with the manifest `manifest` loaded and the temps of a killed run removed
   * @param read    the complete source read
   * @param now     "now" in epoch seconds for the live rule
   */
  constructor(
    private readonly opts: ExportOptions,
    private readonly tree: OutTree,
    private readonly modes: TreeModes,
    private readonly manifest: Manifest,
    private readonly read: SourceRead,
    private readonly now: number,
    private readonly log: (line: string) => void,
  ) {
    this.summary = {
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
    this.invalid = (read.rejected ?? []).map((r) => ({ id: null, where: r.where, reason: r.reason }));
    this.unidentified = read.invalid;
    this.perClient = opts.maxPerClient ?? DEFAULT_MAX_PER_CLIENT;
    this.perDomain = opts.maxPerDomain ?? DEFAULT_MAX_PER_DOMAIN;
    this.scopeHasFiles = Object.values(manifest.files).some((e) => e.kind === 'current' && this.inScope(e));
  }

  /** Every step in order; resolves with the report, throws ExportError when the read would empty the scope. */
  async run(): Promise<ExportReport> {
    this.validate();
    this.refuseEmpty();
    this.decide();
    this.planCards();
    this.planRemovals();
    this.savePlan();
    await this.write();
    this.removeMirrored();
    this.pruneHistory();
    return this.finish();
  }

  /** A manifest entry this run's mirror removal and history pruning may act on: its source, in its domains. */
  private inScope(e: ManifestEntry): boolean {
    return e.source === this.read.key && (this.opts.domains.length === 0 || this.opts.domains.includes(e.domain));
  }

  /** Lists a place the export may not touch and goes on; any other error ends the run. */
  private leaveAlone(e: unknown): void {
    if (!(e instanceof BlockedError)) throw e;
    this.blocked.push(`${e.relPath}: ${e.why}`);
  }

  /** Step 1: parse every record, count and keep the invalid ones' ids, one card per id in scope. */
  private validate(): void {
    const { byId, opts } = this;
    for (const p of this.read.points) {
      const parsed = parseCard(p);
      if (!parsed.ok) {
        this.summary.skipped_invalid += 1;
        this.invalid.push(
          p.where === undefined
            ? { id: parsed.id, reason: parsed.reason }
            : { id: parsed.id, where: p.where, reason: parsed.reason },
        );
        if (parsed.id === null) this.unidentified += 1;
        else {
          this.keep.add(parsed.id);
          this.invalidIds.add(parsed.id);
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
  }

  /** A read with no valid card in scope would empty the scope: refuse unless the operator says it is really empty. */
  private refuseEmpty(): void {
    if (this.byId.size === 0 && this.scopeHasFiles && this.opts.allowEmpty !== true) {
      throw new ExportError(
        'the source yielded no valid card in scope, but earlier exports wrote files there; nothing was changed (pass --allow-empty if the source really is empty)',
      );
    }
  }

  /**
   * Step 2: decide per card: the live rule, then the caps (docs/EXPORT.md §Caps), then credentials. A card over the
   * caps is neither written nor kept, so an earlier file of it is removed: the caps hold on disk.
   */
  private decide(): void {
    const { opts, summary, now } = this;
    const live: Card[] = [];
    for (const c0 of this.byId.values()) {
      if (!opts.includeExpired && !isLive(c0, now)) summary.skipped_expired += 1;
      else live.push(c0);
    }
    const caps = selectUnderCaps(
      live.map((c) => {
        const [domain, client] = capFolder(c);
        return { id: c.id, domain, client, updatedAt: c.updated_at, revision: c.revision };
      }),
      this.perClient,
      this.perDomain,
    );
    this.overCap = caps.shortfalls.map((f) => ({ ...f, folder: redactForName(f.folder) }));
    for (const c0 of live) {
      if (!caps.kept.has(c0.id)) {
        summary.skipped_over_cap += 1;
        continue;
      }
      const r = this.readyOf(c0);
      if (r !== null) this.ready.push(r);
    }
    this.hiddenControlIds = this.ready
      .filter((r) => cardStrings(r.card).some(hasHiddenControls))
      .map((r) => r.card.id)
      .sort();
    this.ready.sort((a, b) => (a.loc.relPath < b.loc.relPath ? -1 : a.loc.relPath > b.loc.relPath ? 1 : 0));
    for (const id of this.byId.keys()) this.invalidIds.delete(id);
    const { manifest, invalidIds, keep } = this;
    const inScope = (e: ManifestEntry): boolean => this.inScope(e);
    const overflow = capInvalidKeeps(
      manifest,
      inScope,
      invalidIds,
      keep,
      caps.kept,
      live,
      this.perClient,
      this.perDomain,
    );
    if (overflow > 0) {
      this.log(
        `export-fleet: ${overflow} file(s) of cards that failed validation this run were removed instead of kept: their folders are full under the caps`,
      );
    }
  }

  /**
   * Step 2 for one live card under the caps: its bytes and place, redacted with `--redact`; null (counted, its
   * earlier file kept) when a credential would reach the disk.
   */
  private readyOf(c0: Card): Ready | null {
    const { opts, summary } = this;
    let c = c0;
    // Path segments are built from the raw values with name placeholders (`redacted-flk-token`), never from the
    // front matter's `[redacted:flk_token]`, which sanitises into a name the `flk_` rule matches again.
    let named = c0;
    let changed: ChangedNames = {};
    if (cardStrings(c).some((s) => findSecrets(s).length > 0)) {
      if (!opts.redact) {
        summary.skipped_secret += 1;
        this.secretIds.push(c.id);
        this.keep.add(c.id);
        return null;
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
    const bytes = renderCard(c, opts.includeExpired ? { live: isLive(c0, this.now) } : undefined);
    // Last gate on exactly what would reach the disk: the bytes, and each piece of the path made from the card
    // (sanitising can create a credential: `flk Ab3…` becomes `flk_Ab3…`). The path's own joins are not scanned:
    // `sk--<id>` is the slot `sk`, not a key.
    if (findSecrets(bytes.toString('utf8')).length > 0 || loc.fromCard.some((p) => findSecrets(p).length > 0)) {
      summary.skipped_secret += 1;
      (opts.redact ? this.unredactable : this.secretIds).push(c.id);
      this.keep.add(c.id);
      return null;
    }
    this.keep.add(c.id);
    return { card: c, loc, bytes };
  }

  /** Step 3: inspect the tree (read only) and plan the steps of each ready card. */
  private planCards(): void {
    for (const r of this.ready) {
      const rel = r.loc.relPath;
      this.currentPaths.add(rel);
      try {
        this.planCard(r);
      } catch (e) {
        this.leaveAlone(e);
        this.newEntries.delete(rel);
      }
    }
  }

  /**
   * Step 3 for one card: a new file; an unchanged one (a mode fix at most); or a changed one, its old text kept as
   * history first unless `--keep-history 0`. Throws BlockedError where the name is not the export's to replace.
   */
  private planCard(r: Ready): void {
    const { tree, manifest, steps, newEntries } = this;
    const rel = r.loc.relPath;
    const dirFd = tree.openDir(r.loc.dir, false);
    const p = dirFd === null ? ({ kind: 'absent' } as const) : tree.presence(dirFd, r.loc.file);
    const entry: ManifestEntry = { source: this.read.key, domain: r.card.domain, point: r.card.id, kind: 'current' };
    if (p.kind === 'absent') {
      steps.push({ op: 'write', ready: r, temp: tempName(), replace: false });
      newEntries.set(rel, entry);
      return;
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
      const { modes } = this;
      if ((p.stat.mode & 0o7777) !== modes.file || (modes.gid !== null && p.stat.gid !== modes.gid)) {
        steps.push({ op: 'fixmode', ready: r });
      }
      this.summary.unchanged += 1;
      return;
    }
    const facts = parseRendered(old);
    const changed = facts === null || facts.revision !== r.card.revision || facts.body !== renderedBody(r.card);
    if (changed && this.opts.keepHistory !== 0) {
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
      } else if (!this.historyNamesPlanned.has(hrel)) {
        this.historyNamesPlanned.add(hrel);
        steps.push({ op: 'history', ready: r, dir: r.loc.dir, file: hfile, bytes: old, temp: tempName() });
        newEntries.set(hrel, { ...entry, domain: manifest.files[rel]!.domain, kind: 'history' });
      }
    }
    steps.push({ op: 'write', ready: r, temp: tempName(), replace: true });
  }

  /**
   * Step 3, mirror removal candidates: current files of this source and scope whose card is gone, expired, or moved
   * to another path (an episodic overwrite can move a card to another client). A moved card's old text is kept as
   * history in its old folder when it differs, so the overwrite the fleet store did is not silent here.
   */
  private planRemovals(): void {
    const readyById = new Map(this.ready.map((r) => [r.card.id, r] as const));
    if (this.unidentified > 0 && this.scopeHasFiles) {
      this.log(
        `export-fleet: ${this.unidentified} record(s) carry no point id, so any card could be among them; no file is removed this run`,
      );
    }
    for (const [rel, e] of Object.entries(this.unidentified > 0 ? {} : this.manifest.files)) {
      if (e.kind !== 'current' || !this.inScope(e) || this.currentPaths.has(rel)) continue;
      const moved = readyById.get(e.point);
      if (this.keep.has(e.point) && moved === undefined) continue; // skipped for a secret or invalid: its last export stays
      this.removals.push(rel);
      if (moved === undefined || this.opts.keepHistory === 0) continue;
      try {
        this.planMovedHistory(rel, e, moved);
      } catch (err) {
        this.leaveAlone(err);
      }
    }
  }

  /** Step 3 for a moved card: its old file at `rel` kept as history when its text differs from the moved card's. */
  private planMovedHistory(rel: string, e: ManifestEntry, moved: Ready): void {
    const { tree } = this;
    const { dir, name } = splitRel(rel);
    const dirFd = tree.openDir(dir, false);
    const p = dirFd === null ? ({ kind: 'absent' } as const) : tree.presence(dirFd, name);
    if (p.kind === 'absent' || !tree.isOwnFile(p.stat)) return;
    const old = tree.readOwn(dirFd!, name, p.stat, rel);
    const facts = parseRendered(old);
    if (facts !== null && facts.revision === moved.card.revision && facts.body === renderedBody(moved.card)) return;
    const stem = name.slice(0, -'.md'.length);
    const hfile = historyFile(stem, facts?.revision ?? 0, facts?.updatedAt ?? Number(p.stat.mtimeNs / 1_000_000_000n));
    const hrel = `${dir.join('/')}/${HISTORY_DIR}/${hfile}`;
    if (this.historyNamesPlanned.has(hrel)) return;
    const hdir = tree.openDir([...dir, HISTORY_DIR], false);
    if (hdir !== null && tree.presence(hdir, hfile).kind === 'present') return;
    this.historyNamesPlanned.add(hrel);
    this.steps.unshift({
      op: 'history',
      ready: moved,
      dir: [dir[0]!, dir[1]!],
      file: hfile,
      bytes: old,
      temp: tempName(),
    });
    this.newEntries.set(hrel, { source: e.source, domain: e.domain, point: e.point, kind: 'history' });
  }

  /** Step 4: the phase-1 manifest: everything this run may create, and its temp names. */
  private savePlan(): void {
    const { tree, steps } = this;
    for (const s of steps) {
      if (s.op === 'write') tree.planDirs(s.ready.loc.dir);
      if (s.op === 'history') tree.planDirs([...s.dir, HISTORY_DIR]);
    }
    const planned: Manifest = { version: 1, files: { ...this.manifest.files }, dirs: tree.dirRecord(false), temps: [] };
    for (const [rel, e] of this.newEntries) planned.files[rel] = e;
    for (const s of steps) {
      if (s.op === 'write') planned.temps.push(`${s.ready.loc.dir.join('/')}/${s.temp}`);
      if (s.op === 'history') planned.temps.push(`${s.dir.join('/')}/${HISTORY_DIR}/${s.temp}`);
    }
    tree.saveManifest(planned);
    this.planned = planned;
  }

  /** Step 5: history copies first, then the new current files (each an atomic rename); nothing with --dry-run. */
  private async write(): Promise<void> {
    const { tree, steps, summary } = this;
    const planned = this.planned!;
    const total = steps.length;
    let done = 0;
    for (const s of steps) {
      done += 1;
      if (done % 50 === 0 || done === total) this.opts.progress?.('write', done, total);
      // Let timers and I/O run now and then (progress redraws; an embedding process stays responsive).
      if (done % 200 === 0) await new Promise((r) => setImmediate(r));
      if (tree.dryRun) {
        if (s.op === 'history') summary.history += 1;
        if (s.op === 'write') summary.written += 1;
        continue;
      }
      try {
        this.writeStep(s);
      } catch (e) {
        this.leaveAlone(e);
        if (s.op === 'write' && !s.replace) delete planned.files[s.ready.loc.relPath];
      }
    }
  }

  /** Step 5 for one planned step. Throws BlockedError where the name is no longer the export's to replace. */
  private writeStep(s: Step): void {
    const { tree, summary } = this;
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
  }

  /** Step 6: mirror removal (complete read only — a failed read threw long before this point). */
  private removeMirrored(): void {
    const { tree } = this;
    this.finalFiles = { ...this.planned!.files };
    for (const rel of this.removals) {
      const { dir, name } = splitRel(rel);
      try {
        const dirFd = tree.openDir(dir, false);
        const r = dirFd === null ? 'absent' : tree.removeOwn(dirFd, name, rel);
        if (r === 'removed') this.summary.removed += 1;
      } catch (e) {
        this.leaveAlone(e);
      }
      delete this.finalFiles[rel];
    }
  }

  /** Step 7: `--keep-history N`: the newest N history files per card, among this run's scope. */
  private pruneHistory(): void {
    const keepHistory = this.opts.keepHistory;
    if (keepHistory === null) return;
    const { tree, finalFiles } = this;
    const groups = new Map<string, Array<{ rel: string; revision: number; stamp: string }>>();
    for (const [rel, e] of Object.entries(finalFiles)) {
      if (e.kind !== 'history' || !this.inScope(e)) continue;
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
          if (dirFd !== null && tree.removeOwn(dirFd, name, h.rel) === 'removed') this.summary.removed += 1;
        } catch (e) {
          this.leaveAlone(e);
        }
        delete finalFiles[h.rel];
      }
    }
  }

  /** Step 8: make this run's changes durable, record the final state, log what the operator must know, report. */
  private async finish(): Promise<ExportReport> {
    const { tree, summary, finalFiles, blocked, secretIds, unredactable, log } = this;
    await tree.syncAll();
    tree.saveManifest({ version: 1, files: finalFiles, dirs: tree.dirRecord(true), temps: [] });

    if (blocked.length > 0) summary.ok = false;
    // Counted over the cards whose files are in the tree now (a blocked write leaves the card out).
    const blockedIds = new Set(
      this.ready.filter((r) => finalFiles[r.loc.relPath]?.point !== r.card.id).map((r) => r.card.id),
    );
    const hidden = this.hiddenControlIds.filter((id) => !blockedIds.has(id));
    summary.hidden_controls = hidden.length;
    if (hidden.length > 0) {
      log(
        `export-fleet: ${hidden.length} card(s) carry hidden Unicode controls (tag characters or bidi embedding, override or isolate controls); the tools show each as <U+XXXX>: ${hidden.join(', ')}`,
      );
    }
    for (const b of blocked) log(`export-fleet: left alone: ${b}`);
    for (const r of this.invalid) {
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
        `export-fleet: ${summary.skipped_over_cap} card(s) over the caps (--max-cards-per-client ${this.perClient}, --max-cards-per-domain ${this.perDomain}) were not written; the newest were kept:`,
      );
      for (const f of this.overCap) log(`export-fleet:   ${f.folder}: kept ${f.kept}, skipped ${f.skipped}`);
    }
    if (unredactable.length > 0) {
      log(
        `export-fleet: ${unredactable.length} card(s) still matched a credential pattern after redaction (in the file name sanitising made) and were not written: ${unredactable.join(', ')}`,
      );
    }
    return {
      summary,
      secretIds: [...secretIds, ...unredactable],
      blocked,
      overCap: this.overCap,
      invalid: this.invalid,
      hiddenControlIds: hidden,
    };
  }
}
