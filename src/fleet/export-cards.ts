/**
 * The per-card rules of an export run's decide step (src/fleet/export-run.ts): every string a card puts on disk and
 * its `--redact` form, the folder the caps count a card in, and the room the caps leave for the earlier files of
 * cards that failed validation (docs/EXPORT.md §Caps, §Credentials).
 */
import type { Card } from './card.js';
import { cardLocation } from './layout.js';
import { redact, redactForName } from './secrets.js';
import type { Manifest, ManifestEntry } from './writer.js';

/** Every string of a card that ends up on disk (front matter, title, body, path). */
export function cardStrings(c: Card): string[] {
  const out = [c.text, c.domain, c.client_id, c.slot_name, c.status];
  if (c.author_node !== null) out.push(c.author_node);
  if (c.author_profile !== null) out.push(c.author_profile);
  out.push(...c.entities);
  for (const r of c.relations) out.push(r.source, r.relation, r.target);
  return out;
}

/** The card with every string that reaches the disk redacted (`--redact`; src/fleet/secrets.ts). */
export function redactCard(c: Card): Card {
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

/**
 * The folder a card is counted in by the caps: where it is written, with names that hold a credential in their
 * `--redact` form (a card skipped for a credential counts where its redacted copy would go).
 */
export function capFolder(c: Card): [string, string] {
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
export function capInvalidKeeps(
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
