/**
 * The credential kinds the export refuses to write (docs/EXPORT.md §Credentials): the ten the fleet's
 * own scanner recognises, plus five common ones it misses (PGP private key blocks, AWS secret access keys after
 * their label, AWS session key ids, Google API keys, Slack app tokens), as a pure finder and a redactor. The fleet
 * refuses credentials only in `shared`; the export treats every domain alike, because once a card is a file its
 * domain no longer protects it from anyone the policy lets read it.
 *
 * Patterns err toward flagging: a false positive costs one skipped (or redacted) card, a miss costs a credential on
 * disk. Two look-alikes are deliberately not flagged: a 40-hex git commit id (too short for the 64-hex rule) and a
 * `sha256:<64 hex>` content digest.
 *
 * Cost: card text is written by anyone holding the fleet key, so the finder is linear by construction, with no
 * backtracking regular expression over card text. Every rule is a forward pass that finds a fixed literal with
 * `indexOf` and then looks at a bounded window around it, or extends a run of token characters that the pass then
 * skips; the only regular expressions are sticky, quantifier-bounded checks of such a window. A {@link ScanMeter}
 * counts the characters looked at, so tests can prove the bound on crafted input without timing anything.
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
  'pgp_private_key',
  'aws_secret_key',
  'aws_session_key',
  'google_api_key',
  'slack_app_token',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

/** One finding: the kind and the UTF-16 span [start, end) inside the scanned string. */
export interface Finding {
  kind: SecretKind;
  start: number;
  end: number;
}

/**
 * Work counter for {@link findSecrets}: `steps` grows by one for every character a rule compares or skips over
 * (literal searches included). For any input of n UTF-16 units it stays below {@link STEPS_PER_CHAR} × n + a
 * constant, whatever the text holds.
 */
export interface ScanMeter {
  steps: number;
}

/**
 * Upper bound on {@link ScanMeter} steps per UTF-16 unit of input, over all rules together (each rule passes over
 * the text a bounded number of times; see each rule's comment).
 */
export const STEPS_PER_CHAR = 32;

type Push = (kind: SecretKind, start: number, end: number) => void;

const c0 = (s: string): number => s.charCodeAt(0);
const A = c0('A');
const Z = c0('Z');
const a = c0('a');
const z = c0('z');
const D0 = c0('0');
const D9 = c0('9');
const isDigit = (c: number): boolean => c >= D0 && c <= D9;
const isUpper = (c: number): boolean => c >= A && c <= Z;
const isAlnum = (c: number): boolean => isDigit(c) || isUpper(c) || (c >= a && c <= z);
const isHex = (c: number): boolean => isDigit(c) || (c >= A && c <= c0('F')) || (c >= a && c <= c0('f'));
/** `[A-Za-z0-9_-]`: the characters of most token formats. */
const isToken = (c: number): boolean => isAlnum(c) || c === 95 || c === 45;
/** `[A-Za-z0-9-]` (Slack). */
const isAlnumDash = (c: number): boolean => isAlnum(c) || c === 45;
/** `[A-Za-z0-9_]` (fine-grained GitHub tokens). */
const isWord = (c: number): boolean => isAlnum(c) || c === 95;
/** `[A-Z0-9]` (AWS key ids). */
const isUpperDigit = (c: number): boolean => isDigit(c) || isUpper(c);
/** `[A-Za-z0-9/+]` (base64 body). */
const isBase64 = (c: number): boolean => isAlnum(c) || c === 47 || c === 43;
/** `[ A-Z0-9]` (the words between BEGIN and PRIVATE KEY in a PEM header). */
const isPemLabel = (c: number): boolean => c === 32 || isUpperDigit(c);

/**
 * Length of the run of `pred` characters starting at `from`, looking at no more than `max` of them (one meter step
 * each, plus one for the character that ends the run).
 */
function runLength(text: string, from: number, pred: (c: number) => boolean, max: number, m: ScanMeter): number {
  let j = from;
  const stop = Math.min(text.length, from + max);
  while (j < stop && pred(text.charCodeAt(j))) j++;
  m.steps += j - from + 1;
  return j - from;
}

/**
 * Every occurrence of `literal` from `from` on, in order, as a generator driven by the caller: the caller returns
 * (through `next(resume)`) where the search continues, never earlier than one past the occurrence. The meter is
 * charged for the distance searched, so a search over the whole text costs about `text.length` steps however the
 * caller resumes.
 */
function eachIndex(text: string, literal: string, m: ScanMeter, visit: (i: number) => number): void {
  let pos = 0;
  while (pos <= text.length - literal.length) {
    const i = text.indexOf(literal, pos);
    if (i < 0) {
      m.steps += text.length - pos;
      return;
    }
    m.steps += i - pos + literal.length;
    pos = Math.max(i + 1, visit(i));
  }
}

/**
 * A token rule: `literal`, then `more` (the rest of a prefix: a bounded check at the literal's end, returning the
 * prefix length, or -1), then a run of `tail` characters of at least `min` (and, when `max` is given, exactly up to
 * `max`: longer runs still match, taking `max`). Not inside a longer word: the character before the literal must
 * not be `[A-Za-z0-9]`. Greedy like a regex `prefix[tail]{min,}` and non-overlapping: after a match the search
 * resumes at its end, so each character is extended over at most once per rule.
 */
function tokenRule(
  kind: SecretKind,
  literal: string,
  tail: (c: number) => boolean,
  min: number,
  opts: { max?: number; more?: (text: string, at: number) => number } = {},
): (text: string, m: ScanMeter, push: Push) => void {
  return (text, m, push) => {
    eachIndex(text, literal, m, (i) => {
      m.steps += 1;
      if (i > 0 && isAlnum(text.charCodeAt(i - 1))) return i + 1;
      let p = i + literal.length;
      if (opts.more !== undefined) {
        m.steps += 2;
        const extra = opts.more(text, p);
        if (extra < 0) return i + 1;
        p += extra;
      }
      const n = runLength(text, p, tail, opts.max ?? Number.POSITIVE_INFINITY, m);
      if (n < min) return i + 1;
      push(kind, i, p + n);
      return p + n;
    });
  };
}

/**
 * 64 hex digits with no hex neighbour on either side (so exactly a maximal run of 64), not directly after a
 * `sha256:` label (any case). One pass over maximal hex runs.
 */
function hexKeys(text: string, m: ScanMeter, push: Push): void {
  let i = 0;
  while (i < text.length) {
    if (!isHex(text.charCodeAt(i))) {
      m.steps += 1;
      i++;
      continue;
    }
    const n = runLength(text, i, isHex, Number.POSITIVE_INFINITY, m);
    m.steps += 7;
    if (n === 64 && text.slice(Math.max(0, i - 7), i).toLowerCase() !== 'sha256:') push('hex_key', i, i + n);
    i += n;
  }
}

/**
 * Telegram bot tokens: 8–10 digits (not preceded by a digit), `:`, then 35+ of `[A-Za-z0-9_-]`. Anchored on each
 * `:`, looking back at most 11 characters.
 */
function telegramTokens(text: string, m: ScanMeter, push: Push): void {
  eachIndex(text, ':', m, (i) => {
    let d = 0;
    while (d <= 10 && i - d - 1 >= 0 && isDigit(text.charCodeAt(i - d - 1))) d++;
    m.steps += d + 1;
    if (d < 8 || d > 10) return i + 1;
    const n = runLength(text, i + 1, isToken, Number.POSITIVE_INFINITY, m);
    if (n < 35) return i + 1;
    push('telegram_bot_token', i - d, i + 1 + n);
    return i + 1 + n;
  });
}

/**
 * True when a PEM armour line of the given word (`BEGIN` or `END`) at `i` (the first dash) reads
 * `-----<word>[ A-Z0-9]*PRIVATE KEY-----`; returns the index after it, or -1. The label run stops at the first
 * character outside `[ A-Z0-9]`, so runs of different armour lines never overlap.
 */
function pemArmour(text: string, i: number, word: string, m: ScanMeter): number {
  const from = i + 5 + word.length;
  const n = runLength(text, from, isPemLabel, Number.POSITIVE_INFINITY, m);
  const end = from + n;
  m.steps += 16;
  if (n < 11 || text.slice(end - 11, end) !== 'PRIVATE KEY' || !text.startsWith('-----', end)) return -1;
  return end + 5;
}

/**
 * PEM private-key blocks: from a `-----BEGIN … PRIVATE KEY-----` line to the matching END line, or to the end of
 * the text when the END line is missing (a truncated key is still a key).
 */
function pemKeys(text: string, m: ScanMeter, push: Push): void {
  eachIndex(text, '-----BEGIN', m, (i) => {
    const head = pemArmour(text, i, 'BEGIN', m);
    if (head < 0) return i + 1;
    let end = text.length;
    let p = head;
    for (;;) {
      const j = text.indexOf('-----END', p);
      m.steps += (j < 0 ? text.length : j + 8) - p;
      if (j < 0) break;
      const after = pemArmour(text, j, 'END', m);
      if (after >= 0) {
        end = after;
        break;
      }
      p = j + 1;
    }
    push('private_key', i, end);
    return end;
  });
}

const PGP_BEGIN = '-----BEGIN PGP PRIVATE KEY BLOCK-----';
const PGP_END = '-----END PGP PRIVATE KEY BLOCK-----';

/** ASCII-armoured PGP private keys: BEGIN line to END line, or to the end of the text when END is missing. */
function pgpKeys(text: string, m: ScanMeter, push: Push): void {
  eachIndex(text, PGP_BEGIN, m, (i) => {
    const j = text.indexOf(PGP_END, i + PGP_BEGIN.length);
    m.steps += (j < 0 ? text.length : j + PGP_END.length) - i;
    const end = j < 0 ? text.length : j + PGP_END.length;
    push('pgp_private_key', i, end);
    return end;
  });
}

/**
 * The label an AWS secret access key follows, checked at an occurrence of `secret` (ASCII case ignored), then the
 * separator: `aws_secret_access_key = …`, `AWS_SECRET_ACCESS_KEY=…`, `"SecretAccessKey": "…"`,
 * `secret-access-key: '…'`, `secret_access_key => …`. Every quantifier is bounded, so one test looks at no more than
 * {@link AWS_LABEL_WINDOW} characters; the match ends where the key's characters begin.
 */
const AWS_LABEL = /secret[_. -]?access[_. -]?key["']?[ \t]{0,4}(?:=>|:=|[:=])[ \t]{0,4}["']?/iy;
const AWS_LABEL_WINDOW = 40;

/**
 * AWS secret access keys: 40 or more base64 characters (`[A-Za-z0-9/+]`) right after an AWS_LABEL, not inside a
 * longer word. Only the key is the finding; the label stays readable after redaction.
 */
function awsSecretKeys(text: string, m: ScanMeter, push: Push): void {
  // An ASCII-only lower-case copy has the same length (String.toLowerCase may not: "İ" becomes two units).
  const lower = text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
  m.steps += text.length;
  eachIndex(lower, 'secret', m, (i) => {
    m.steps += AWS_LABEL_WINDOW;
    AWS_LABEL.lastIndex = i;
    if (!AWS_LABEL.test(text)) return i + 1;
    const from = AWS_LABEL.lastIndex;
    if (from > 0 && isBase64(text.charCodeAt(from - 1))) return i + 1;
    const n = runLength(text, from, isBase64, Number.POSITIVE_INFINITY, m);
    if (n < 40) return i + 1;
    push('aws_secret_key', from, from + n);
    return from + n;
  });
}

const RULES: ReadonlyArray<(text: string, m: ScanMeter, push: Push) => void> = [
  hexKeys,
  tokenRule('flk_token', 'flk_', isToken, 16),
  tokenRule('tok_token', 'tok_', isToken, 16),
  tokenRule('cfut_token', 'cfut_', isToken, 16),
  tokenRule('openai_key', 'sk-', isToken, 20),
  tokenRule('github_token', 'gh', isAlnum, 36, {
    more: (text, at) => (at + 1 < text.length && 'pousr'.includes(text[at]!) && text[at + 1] === '_' ? 2 : -1),
  }),
  tokenRule('github_token', 'github_pat_', isWord, 40),
  tokenRule('aws_access_key', 'AKIA', isUpperDigit, 16, { max: 16 }),
  tokenRule('aws_session_key', 'ASIA', isUpperDigit, 16, { max: 16 }),
  tokenRule('slack_token', 'xox', isAlnumDash, 10, {
    more: (text, at) => (text[at + 1] === '-' && 'abprs'.includes(text[at]!) ? 2 : -1),
  }),
  tokenRule('slack_app_token', 'xapp-', isAlnumDash, 10),
  tokenRule('google_api_key', 'AIza', isToken, 35),
  telegramTokens,
  pemKeys,
  pgpKeys,
  awsSecretKeys,
];

/**
 * Every credential found in `text`, sorted by start offset. Overlapping findings are all reported (a PEM block
 * may also contain a 64-hex run); {@link redact} merges them. Linear in `text.length`: pass a `meter` to count the
 * work (see {@link ScanMeter}).
 */
export function findSecrets(text: string, meter: ScanMeter = { steps: 0 }): Finding[] {
  const found: Finding[] = [];
  const push: Push = (kind, start, end) => found.push({ kind, start, end });
  for (const rule of RULES) rule(text, meter, push);
  return found.sort((x, y) => x.start - y.start || y.end - x.end);
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
