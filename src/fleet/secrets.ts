/**
 * The ten credential kinds the fleet's own scanner recognises (shared/spec/fleet.md, "Credentials inside cards"),
 * as a pure finder and a redactor. The fleet refuses them only in `shared`; the export treats every domain alike,
 * because once a card is a file its domain no longer protects it from anyone the policy lets read it.
 *
 * Patterns err toward flagging: a false positive costs one skipped (or redacted) card, a miss costs a credential on
 * disk. Two look-alikes are deliberately not flagged: a 40-hex git commit id (too short for the 64-hex rule) and a
 * `sha256:<64 hex>` content digest.
 */

/** Kind names as they appear in `[redacted:<kind>]` and in reports. */
export const SECRET_KINDS = [
  'hex_key',
  'flk_token',
  'tok_token',
  'cfut_token',
  'openai_key',
  'github_token',
  'aws_access_key',
  'slack_token',
  'telegram_bot_token',
  'private_key',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

/** One finding: the kind and the UTF-16 span [start, end) inside the scanned string. */
export interface Finding {
  kind: SecretKind;
  start: number;
  end: number;
}

// Each pattern is global and sticky-free; lookbehinds keep a prefix from matching inside a longer word
// ("task-…" is not "sk-…", "stok_" still is "tok_" after an underscore, which real variable names use).
const PATTERNS: ReadonlyArray<readonly [SecretKind, RegExp]> = [
  // 64 hex digits with no hex neighbour on either side, not directly after a `sha256:` label (any case).
  ['hex_key', /(?<![0-9A-Fa-f])(?<![Ss][Hh][Aa]256:)[0-9A-Fa-f]{64}(?![0-9A-Fa-f])/g],
  ['flk_token', /(?<![A-Za-z0-9])flk_[A-Za-z0-9_-]{16,}/g],
  ['tok_token', /(?<![A-Za-z0-9])tok_[A-Za-z0-9_-]{16,}/g],
  ['cfut_token', /(?<![A-Za-z0-9])cfut_[A-Za-z0-9_-]{16,}/g],
  ['openai_key', /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}/g],
  ['github_token', /(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})/g],
  ['aws_access_key', /(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}/g],
  ['slack_token', /(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}/g],
  ['telegram_bot_token', /(?<![0-9])[0-9]{8,10}:[A-Za-z0-9_-]{35,}/g],
  // A PEM private-key block: from BEGIN to its END line, or to the end of the text when the END line is missing.
  ['private_key', /-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY-----|[\s\S]*$)/g],
];

/**
 * Every credential found in `text`, sorted by start offset. Overlapping findings are all reported (a PEM block
 * may also contain a 64-hex run); {@link redact} merges them.
 */
export function findSecrets(text: string): Finding[] {
  const found: Finding[] = [];
  for (const [kind, re] of PATTERNS) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) {
      const start = m.index ?? 0;
      found.push({ kind, start, end: start + m[0].length });
    }
  }
  return found.sort((a, b) => a.start - b.start || b.end - a.end);
}

/**
 * Replace each finding with `[redacted:<kind>]`. Overlapping findings collapse into one replacement named after
 * the finding that starts first (the longest, when two start together). Returns the text unchanged when nothing
 * was found. The result is scanned again by callers that must prove it clean.
 */
export function redact(text: string): string {
  return replaceFindings(text, (kind) => `[redacted:${kind}]`);
}

/**
 * The placeholder {@link redactForName} puts in a folder or file name: `redacted-<kind>` with every `_` turned into
 * `-`, so the name is portable and can never match a credential pattern itself (`redacted-flk-token` has no `flk_`).
 */
export function namePlaceholder(kind: SecretKind): string {
  return `redacted-${kind.replace(/_/g, '-')}`;
}

/**
 * Like {@link redact}, but with {@link namePlaceholder} placeholders: for values that become path segments
 * (domain, client id, slot name). `[redacted:flk_token]` sanitised into a name would read `_redacted_flk_token_…`,
 * which the `flk_` rule matches again.
 */
export function redactForName(text: string): string {
  return replaceFindings(text, namePlaceholder);
}

function replaceFindings(text: string, placeholder: (kind: SecretKind) => string): string {
  const found = findSecrets(text);
  if (found.length === 0) return text;
  let out = '';
  let pos = 0;
  let i = 0;
  while (i < found.length) {
    const first = found[i]!;
    let end = first.end;
    i += 1;
    while (i < found.length && found[i]!.start < end) {
      end = Math.max(end, found[i]!.end);
      i += 1;
    }
    out += text.slice(pos, first.start) + placeholder(first.kind);
    pos = end;
  }
  return out + text.slice(pos);
}

/** The kinds present in `text`, each once, in {@link SECRET_KINDS} order. */
export function secretKinds(text: string): SecretKind[] {
  const kinds = new Set(findSecrets(text).map((f) => f.kind));
  return SECRET_KINDS.filter((k) => kinds.has(k));
}
