/**
 * A card as Markdown: YAML front matter, a `# ` title, then the card text (docs/EXPORT.md §Note format). Every string in the
 * front matter is written as a YAML double-quoted scalar with control, format and line-separator characters
 * escaped, so no card value can end the block, start a new key or hide text. The body is the card text with the
 * two things the reader refuses (NUL bytes, invalid UTF-16 that would turn into invalid UTF-8) replaced by U+FFFD.
 */
import { newMeter, runOf, whiteSpaceRun } from '../text/line-scan.js';
import type { Card } from './card.js';

/** Longest title in code points; longer first lines are cut. */
export const MAX_TITLE_CHARS = 200;

// Characters escaped inside a double-quoted YAML scalar: C0/C1 controls, DEL, `"`, `\`, and Unicode format or
// separator characters (bidi controls, zero-width, BOM, U+2028/9) that would make a value read differently.
const YAML_ESCAPE = /[\p{Cc}"\\\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/gu;

/** Replace lone surrogates with U+FFFD (what String.prototype.toWellFormed does; not in this TS lib target). */
export function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\ufffd');
}

/** A YAML 1.2 double-quoted scalar for any string. */
export function yamlString(value: string): string {
  const body = wellFormed(value).replace(YAML_ESCAPE, (ch) => {
    switch (ch) {
      case '"':
        return '\\"';
      case '\\':
        return '\\\\';
      case '\n':
        return '\\n';
      case '\t':
        return '\\t';
      case '\r':
        return '\\r';
      default:
        return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  });
  return `"${body}"`;
}

/** ISO-8601 UTC for epoch seconds, whole seconds: `2026-11-30T02:51:03Z`. */
export function isoUtc(epochSeconds: number): string {
  return new Date(Math.floor(epochSeconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** One line of plain text fit for a heading: controls and format characters dropped, whitespace collapsed. */
function headingText(raw: string): string {
  const line = wellFormed(raw)
    .replace(/[\p{Cc}\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const cps = Array.from(line);
  return cps.length > MAX_TITLE_CHARS ? cps.slice(0, MAX_TITLE_CHARS).join('').trimEnd() : line;
}

/**
 * The heading of a card: the slot name for slot cards, the first non-empty line of the text (without leading `#`
 * marks) for episodic cards; `Episodic memory` when that leaves nothing.
 */
export function cardTitle(card: Pick<Card, 'memory_type' | 'slot_name' | 'text'>): string {
  if (card.memory_type === 'slot') {
    const t = headingText(card.slot_name);
    if (t !== '') return t;
  } else {
    for (const line of card.text.split(/\r?\n/)) {
      const t = headingText(withoutHeadingMarks(line));
      if (t !== '') return t;
    }
  }
  return card.memory_type === 'slot' ? 'Slot' : 'Episodic memory';
}

/**
 * `line` without leading white space, `#` marks and the white space after them (what the pattern `^\s*#+\s*`
 * removes), or `line` itself when no `#` follows the leading white space. One forward pass, no backtracking: the
 * line is card text, which anyone holding the fleet key writes.
 */
export function withoutHeadingMarks(line: string): string {
  const m = newMeter();
  const hashes = whiteSpaceRun(line, 0, line.length, m);
  const after = runOf(line, hashes, line.length, 0x23, m);
  return after === hashes ? line : line.slice(whiteSpaceRun(line, after, line.length, m));
}

/** The card text as written below the heading: NUL and lone surrogates replaced by U+FFFD. */
export function bodyText(text: string): string {
  return wellFormed(text).replaceAll('\u0000', '\ufffd');
}

/**
 * Render a card to the exact bytes of its file. Deterministic: the same card (and `state`) gives the same bytes,
 * which is what makes incremental runs leave unchanged files untouched.
 *
 * @param state  given when the export also writes cards that are not live (`--include-expired`): the front matter
 *   then carries the card's `status` and `live` (whether the live rule held at export time), so an archived or
 *   expired card never reads as a current one
 */
export function renderCard(card: Card, state?: { live: boolean }): Buffer {
  const q = yamlString;
  const lines = [
    '---',
    `id: ${q(card.id)}`,
    `domain: ${q(card.domain)}`,
    `client_id: ${q(card.client_id)}`,
    `slot_name: ${q(card.slot_name)}`,
    `memory_type: ${q(card.memory_type)}`,
    ...(state === undefined ? [] : [`status: ${q(card.status)}`, `live: ${state.live}`]),
    `revision: ${card.revision}`,
    `pinned: ${card.pinned}`,
    `author_node: ${card.author_node === null ? 'null' : q(card.author_node)}`,
    `author_profile: ${card.author_profile === null ? 'null' : q(card.author_profile)}`,
    `created_at: ${q(isoUtc(card.created_at))}`,
    `updated_at: ${q(isoUtc(card.updated_at))}`,
    `expires_at: ${card.expires_at === 0 ? 'null' : q(isoUtc(card.expires_at))}`,
    `entities: [${card.entities.map(q).join(', ')}]`,
  ];
  if (card.relations.length === 0) lines.push('relations: []');
  else {
    lines.push('relations:');
    for (const r of card.relations) {
      lines.push(`  - {source: ${q(r.source)}, relation: ${q(r.relation)}, target: ${q(r.target)}}`);
    }
  }
  lines.push('---', '', `# ${cardTitle(card)}`, '');
  let body = bodyText(card.text);
  if (!body.endsWith('\n')) body += '\n';
  return Buffer.from(`${lines.join('\n')}\n${body}`, 'utf8');
}

/** What the writer needs back from a file it wrote earlier. */
export interface RenderedFacts {
  revision: number;
  /** Epoch seconds (whole). */
  updatedAt: number;
  /** Everything after the heading line and its blank line: the card text as rendered. */
  body: string;
}

/**
 * Read back the revision, update time and body of a file {@link renderCard} produced. Returns null when the bytes
 * are not in that shape (then the caller treats the old file as changed and keeps it as history by its manifest
 * facts). Only ever applied to files the exporter's manifest says it wrote.
 */
export function parseRendered(bytes: Buffer): RenderedFacts | null {
  const text = bytes.toString('utf8');
  if (!text.startsWith('---\n')) return null;
  const end = text.indexOf('\n---\n', 3);
  if (end < 0) return null;
  const front = text.slice(4, end);
  const rev = /^revision: ([0-9]+)$/m.exec(front);
  const upd = /^updated_at: "([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)"$/m.exec(front);
  if (!rev || !upd) return null;
  const rest = text.slice(end + 5);
  const m = /^\n# [^\n]*\n\n/.exec(rest);
  if (!m) return null;
  return { revision: Number(rev[1]), updatedAt: Date.parse(upd[1]!) / 1000, body: rest.slice(m[0].length) };
}
