/**
 * memory_bridge_search's filters `tags`, `modified_after` and `modified_before` (docs/TOOLS.md §Filters): the dates
 * they take, and the one `NoteScope` a call's `within` and filters select together. Like `within`
 * (src/tools/within.ts), a filter only narrows the ranking of the profile's view: the index keeps each note's
 * modification time (from the statx the trust check made) and tags (src/search/tags.ts) when it indexes the note,
 * and `NoteIndex.rank` counts its statistics over the selected notes alone. No filter makes a view, a scan or a
 * read of its own.
 */
import type { NoteFacts, NoteScope } from '../search/types.js';

/** The filters of one search, already checked (args.ts). */
export interface SearchFilters {
  /** Normalized tag names (`normalizeTag`), distinct; a note must carry every one. */
  tags?: string[];
  /** A note is kept only when modified at or after this instant (ms since the epoch). */
  after?: number;
  /** A note is kept only when modified before this instant (ms since the epoch). */
  before?: number;
}

/**
 * ISO 8601 as the date arguments accept it: a calendar date `YYYY-MM-DD` (its midnight, UTC), or a date and time
 * `YYYY-MM-DDThh:mm`, with optional `:ss` and fraction, in UTC unless it ends with `Z` or an offset `±hh:mm`.
 * Matched against the argument only (at most 35 characters), never against note text.
 */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/u;

/**
 * The instant an ISO 8601 date or date-time names, in ms since the epoch, or undefined when it is not one of the
 * accepted forms or names no real date and time (month 13, February 30, hour 24, offset beyond ±23:59).
 */
export function parseInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((v) =>
    v === undefined ? 0 : Number(v),
  ) as [number, number, number, number, number, number];
  const millis = m[7] === undefined ? 0 : Number(`0.${m[7]}`) * 1000;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const at = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(at);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day)
    return undefined;
  let offset = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z') {
    const h = Number(zone.slice(1, 3));
    const min = Number(zone.slice(4, 6));
    if (h > 23 || min > 59) return undefined;
    offset = (zone[0] === '-' ? -1 : 1) * (h * 60 + min) * 60_000;
  }
  return at + millis - offset;
}

/** True when `filters` sets any filter. */
export function hasFilters(filters: SearchFilters): boolean {
  return filters.tags !== undefined || filters.after !== undefined || filters.before !== undefined;
}

/**
 * The notes `within` (when given) and `filters` select together, as one scope for the index's ranking; `within`
 * itself when no filter is set. Its key names the combination (the same arguments give the same key, so the
 * index's kept selection serves a repeated call). The matcher needs each note's facts (the index gives them).
 */
export function filterScope(within: NoteScope | undefined, filters: SearchFilters): NoteScope | undefined {
  if (!hasFilters(filters)) return within;
  const { tags, after, before } = filters;
  const key = `filters:${JSON.stringify([within?.key ?? null, tags ?? null, after ?? null, before ?? null])}`;
  return Object.freeze({
    key,
    matcher(): (id: string, facts?: NoteFacts) => boolean {
      const inWithin = within?.matcher();
      return (id: string, facts?: NoteFacts): boolean => {
        if (facts === undefined) throw new Error('filterScope: a filter needs the note facts');
        if (after !== undefined && facts.mtimeMs < after) return false;
        if (before !== undefined && facts.mtimeMs >= before) return false;
        if (tags !== undefined) {
          const held = facts.tags;
          if (held === undefined) return false;
          for (const tag of tags) if (!held.includes(tag)) return false;
        }
        return inWithin === undefined || inWithin(id);
      };
    },
  });
}

/**
 * The notes both `a` and `b` select (either may be undefined: then the other alone). The key names both, so a kept
 * selection of the index serves only the same pair.
 */
export function narrowScope(a: NoteScope | undefined, b: NoteScope | undefined): NoteScope | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const key = `both:${JSON.stringify([a.key, b.key])}`;
  return Object.freeze({
    key,
    matcher(): (id: string, facts?: NoteFacts) => boolean {
      const first = a.matcher();
      const second = b.matcher();
      return (id: string, facts?: NoteFacts): boolean => first(id, facts) && second(id, facts);
    },
  });
}

/**
 * The notes whose id contains `typed`, compared in lower case (the `@memory:` autocomplete, src/hermes/references.ts).
 * Linear in each id's length times `typed`'s at worst (`String.prototype.includes`, no pattern).
 */
export function idContainsScope(typed: string): NoteScope {
  const needle = typed.toLowerCase();
  return Object.freeze({
    key: `id-contains:${JSON.stringify(needle)}`,
    matcher: () => (id: string) => id.toLowerCase().includes(needle),
  });
}
