/**
 * Hermes Fleet Memory cards: the payload schema (validated with zod at the edge), the defaults for keys that older
 * cards lack, point-id normalisation and the live rule. Facts in docs/EXPORT.md §Cards ("A card = one Qdrant
 * point"); nothing here touches the network or the filesystem.
 */
import { z } from 'zod';

/** Largest epoch-seconds value accepted (9999-12-31T23:59:59Z), so every timestamp formats as ISO-8601. */
const MAX_EPOCH_SECONDS = 253_402_300_799;

const epochSeconds = z.number().finite().min(0).max(MAX_EPOCH_SECONDS);

const relationSchema = z.looseObject({
  source: z.string(),
  relation: z.string(),
  target: z.string(),
});

/**
 * The card payload. Unknown keys (for example the fleet's `secret_warning`) are accepted and ignored.
 * Required: `text`, `domain`, `status`, `created_at`. Defaults for keys missing on older cards:
 * `client_id` "generic", `slot_name` "episodic", `pinned` false, `revision` 1, `entities` [], `relations` [],
 * `expires_at` 0 (never), `updated_at` = `created_at` (applied in {@link parseCard}).
 */
export const payloadSchema = z.looseObject({
  text: z.string().describe('Markdown body of the card'),
  domain: z.string().describe('work, personal or shared; any string on an `all` node'),
  client_id: z.string().default('generic'),
  slot_name: z.string().default('episodic'),
  memory_type: z.enum(['slot', 'episodic']).optional().describe('missing on older cards: inferred from slot_name'),
  status: z.string().describe('"active" for every live card'),
  pinned: z.boolean().default(false),
  revision: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(1),
  entities: z.array(z.string()).max(15).default([]),
  relations: z.array(relationSchema).max(15).default([]),
  author_node: z.string().nullable().optional(),
  author_profile: z.string().nullable().optional(),
  created_at: epochSeconds.describe('epoch seconds, reset on every write'),
  updated_at: epochSeconds.optional().describe('epoch seconds; missing on older cards → created_at'),
  expires_at: epochSeconds.default(0).describe('epoch seconds; 0 = never'),
});

/** One relation triple as written to front matter. */
export interface Relation {
  source: string;
  relation: string;
  target: string;
}

/** A validated card with every default applied. Timestamps are epoch seconds. */
export interface Card {
  /** Normalised point id: lower-case hyphenated UUID, or a decimal unsigned integer. */
  id: string;
  text: string;
  domain: string;
  client_id: string;
  slot_name: string;
  memory_type: 'slot' | 'episodic';
  status: string;
  pinned: boolean;
  revision: number;
  entities: string[];
  relations: Relation[];
  author_node: string | null;
  author_profile: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

/** A raw point as a source delivers it: whatever `id` and `payload` the JSON held. */
export interface RawPoint {
  id: unknown;
  payload: unknown;
  /** Where the source holds it, for reports (`line 12` of a JSONL file); absent for Qdrant points. */
  where?: string;
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * Normalise a Qdrant point id. Qdrant ids are UUIDs or unsigned 64-bit integers; it returns UUIDs lower-case and
 * hyphenated, so that form is used here too (with or without hyphens, any case, is accepted on input).
 * Returns null for anything else, so a hostile id never reaches a file name.
 */
export function normalisePointId(id: unknown): string | null {
  if (typeof id === 'string') {
    if (!UUID_RE.test(id)) return null;
    const hex = id.replace(/-/g, '').toLowerCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return String(id);
  if (typeof id === 'bigint' && id >= 0n && id < 2n ** 64n) return id.toString();
  return null;
}

/**
 * Outcome of validating one raw point. `id` is null when the point id itself was unusable. `reason` names the field
 * and the rule it broke (`created_at: required, missing`, `memory_type: one of "slot", "episodic"`), built only from
 * the schema — never from the card's values, which may hold a credential.
 */
export type ParsedCard = { ok: true; card: Card } | { ok: false; id: string | null; reason: string };

/** Most schema issues named in one reason; the rest are counted. */
const MAX_ISSUES_NAMED = 3;

/** The value at `path` inside `root`, or undefined (to tell a missing key from a wrong one). */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** One zod issue as `field: rule`, from the issue's code and the schema's bounds only. */
function describeIssue(issue: z.core.$ZodIssue, payload: unknown): string {
  const field = issue.path.length === 0 ? 'payload' : issue.path.map(String).join('.');
  let rule: string;
  switch (issue.code) {
    case 'invalid_type':
      rule =
        issue.path.length > 0 && valueAt(payload, issue.path) === undefined
          ? 'required, missing'
          : `expected ${issue.expected === 'int' ? 'an integer' : issue.expected}`;
      break;
    case 'too_big':
      rule = issue.origin === 'array' ? `at most ${issue.maximum} items` : `at most ${issue.maximum}`;
      break;
    case 'too_small':
      rule = issue.origin === 'array' ? `at least ${issue.minimum} items` : `at least ${issue.minimum}`;
      break;
    case 'invalid_value':
      rule = `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    default:
      rule = issue.code.replace(/_/g, ' ');
  }
  return `${field}: ${rule}`;
}

/**
 * Validate one raw point with {@link payloadSchema} and apply the defaults of docs/EXPORT.md §Cards. Never throws:
 * a malformed point gives `{ok: false}` so the export can count it and go on.
 * `memory_type` missing: a card whose slot_name is "episodic" is episodic, any other slot name is a slot.
 */
export function parseCard(point: RawPoint): ParsedCard {
  const id = normalisePointId(point.id);
  if (id === null) return { ok: false, id: null, reason: 'id: not a UUID or an unsigned integer' };
  const parsed = payloadSchema.safeParse(point.payload);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const named = issues.slice(0, MAX_ISSUES_NAMED).map((i) => describeIssue(i, point.payload));
    if (issues.length > MAX_ISSUES_NAMED) named.push(`${issues.length - MAX_ISSUES_NAMED} more`);
    return { ok: false, id, reason: named.join('; ') };
  }
  const p = parsed.data;
  const card: Card = {
    id,
    text: p.text,
    domain: p.domain,
    client_id: p.client_id,
    slot_name: p.slot_name,
    memory_type: p.memory_type ?? (p.slot_name === 'episodic' ? 'episodic' : 'slot'),
    status: p.status,
    pinned: p.pinned,
    revision: p.revision,
    entities: [...p.entities],
    relations: p.relations.map((r) => ({ source: r.source, relation: r.relation, target: r.target })),
    author_node: p.author_node ?? null,
    author_profile: p.author_profile ?? null,
    created_at: p.created_at,
    updated_at: p.updated_at ?? p.created_at,
    expires_at: p.expires_at,
  };
  return { ok: true, card };
}

/**
 * The live rule of docs/EXPORT.md §Cards: status "active" and (pinned, or expires_at 0, or expires_at later than
 * `nowSeconds`). Expired cards stay in Qdrant until the fleet's cleaner runs, so the export has to apply this itself.
 */
export function isLive(card: Card, nowSeconds: number): boolean {
  if (card.status !== 'active') return false;
  return card.pinned || card.expires_at === 0 || card.expires_at > nowSeconds;
}
