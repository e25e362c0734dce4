/**
 * Strict JSON for the policy file (docs/POLICY.md): RFC 8259 text, UTF-8 only, with the ambiguities that
 * `JSON.parse` silently resolves turned into refusals.
 *
 * Refused on top of what RFC 8259 forbids: a UTF-8 byte order mark, invalid UTF-8, a duplicate object key at any
 * depth (compared after escape decoding, so `"a"` and `"\u0061"` collide), nesting deeper than
 * `MAX_JSON_DEPTH`, and a `\u` escape that leaves a lone surrogate (no file name can hold one).
 *
 * The walk is a single recursive descent over the decoded text: every character is visited a bounded number of
 * times, so time is linear in the input and recursion depth is capped. String and number tokens are located and
 * checked here, then decoded by `JSON.parse` on the token slice alone.
 */

/** Deepest container nesting accepted: the outermost object or array is depth 1. */
export const MAX_JSON_DEPTH = 32;

/** Why a byte sequence is not strict JSON. Short, stable, and never echoes the input. */
export type StrictJsonReason =
  | 'bom'
  | 'invalid_utf8'
  | 'empty'
  | 'unexpected_end'
  | 'unexpected_char'
  | 'control_char'
  | 'bad_escape'
  | 'lone_surrogate'
  | 'bad_number'
  | 'duplicate_key'
  | 'too_deep'
  | 'trailing_data';

/** A refusal from `parseStrictJson`: `reason` says what, `offset` is the UTF-16 index in the decoded text. */
export class StrictJsonError extends Error {
  override readonly name = 'StrictJsonError';
  constructor(
    readonly reason: StrictJsonReason,
    readonly offset: number,
  ) {
    super(`strict JSON: ${reason} at ${offset}`);
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parse `bytes` as strict UTF-8 JSON.
 *
 * @param bytes the whole document
 * @returns the value: objects have a null prototype (so a `"__proto__"` key is an ordinary own key), arrays are
 *          plain arrays, numbers are JS numbers (1e400 becomes Infinity; the schema rejects it)
 * @throws StrictJsonError for every refusal listed in the module docstring and every RFC 8259 violation
 */
export function parseStrictJson(bytes: Uint8Array): unknown {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new StrictJsonError('bom', 0);
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new StrictJsonError('invalid_utf8', 0);
  }
  return new Parser(text).document();
}

enum Ch {
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Zero = 0x30,
  Nine = 0x39,
  Colon = 0x3a,
  UpperE = 0x45,
  LeftBracket = 0x5b,
  Backslash = 0x5c,
  RightBracket = 0x5d,
  LowerE = 0x65,
  LeftBrace = 0x7b,
  RightBrace = 0x7d,
}

function isDigit(c: number): boolean {
  return c >= Ch.Zero && c <= Ch.Nine;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  document(): unknown {
    this.skipWhitespace();
    if (this.pos >= this.text.length) throw new StrictJsonError('empty', this.pos);
    const value = this.value(0);
    this.skipWhitespace();
    if (this.pos < this.text.length) throw new StrictJsonError('trailing_data', this.pos);
    return value;
  }

  private fail(reason: StrictJsonReason): never {
    throw new StrictJsonError(reason, this.pos);
  }

  private peek(): number {
    // NaN past the end: compares unequal to every character code.
    return this.text.charCodeAt(this.pos);
  }

  private skipWhitespace(): void {
    for (;;) {
      const c = this.peek();
      if (c === Ch.Space || c === Ch.Tab || c === Ch.Lf || c === Ch.Cr) this.pos++;
      else return;
    }
  }

  private expect(c: number): void {
    if (this.pos >= this.text.length) this.fail('unexpected_end');
    if (this.peek() !== c) this.fail('unexpected_char');
    this.pos++;
  }

  /** `depth` is the number of containers already open around this value. */
  private value(depth: number): unknown {
    const c = this.peek();
    if (c === Ch.LeftBrace) return this.object(depth + 1);
    if (c === Ch.LeftBracket) return this.array(depth + 1);
    if (c === Ch.Quote) return this.string();
    if (c === Ch.Minus || isDigit(c)) return this.number();
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    if (this.literal('null')) return null;
    if (this.pos >= this.text.length) this.fail('unexpected_end');
    return this.fail('unexpected_char');
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.pos)) {
      // A proper prefix at end of input is a truncation, not a stray character.
      const rest = this.text.slice(this.pos, this.pos + word.length);
      if (rest.length > 0 && rest.length < word.length && word.startsWith(rest)) this.fail('unexpected_end');
      return false;
    }
    this.pos += word.length;
    return true;
  }

  private object(depth: number): Record<string, unknown> {
    if (depth > MAX_JSON_DEPTH) this.fail('too_deep');
    this.pos++; // '{'
    const out = Object.create(null) as Record<string, unknown>;
    const seen = new Set<string>();
    this.skipWhitespace();
    if (this.peek() === Ch.RightBrace) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= this.text.length) this.fail('unexpected_end');
      if (this.peek() !== Ch.Quote) this.fail('unexpected_char');
      const keyStart = this.pos;
      const key = this.string();
      if (seen.has(key)) {
        this.pos = keyStart;
        this.fail('duplicate_key');
      }
      seen.add(key);
      this.skipWhitespace();
      this.expect(Ch.Colon);
      this.skipWhitespace();
      out[key] = this.value(depth);
      this.skipWhitespace();
      if (this.pos >= this.text.length) this.fail('unexpected_end');
      const c = this.peek();
      this.pos++;
      if (c === Ch.RightBrace) return out;
      if (c !== Ch.Comma) {
        this.pos--;
        this.fail('unexpected_char');
      }
    }
  }

  private array(depth: number): unknown[] {
    if (depth > MAX_JSON_DEPTH) this.fail('too_deep');
    this.pos++; // '['
    const out: unknown[] = [];
    this.skipWhitespace();
    if (this.peek() === Ch.RightBracket) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= this.text.length) this.fail('unexpected_end');
      out.push(this.value(depth));
      this.skipWhitespace();
      if (this.pos >= this.text.length) this.fail('unexpected_end');
      const c = this.peek();
      this.pos++;
      if (c === Ch.RightBracket) return out;
      if (c !== Ch.Comma) {
        this.pos--;
        this.fail('unexpected_char');
      }
    }
  }

  /**
   * Scan one string token (RFC 8259 §7): no raw control characters, only the eight short escapes and `\uXXXX`,
   * and `\u` surrogates must pair up. Raw (unescaped) lone surrogates cannot occur: the fatal UTF-8 decoder
   * never produces them.
   */
  private string(): string {
    const start = this.pos;
    this.pos++; // opening quote
    let pendingHigh = false; // the previous token was a \u escape for a high surrogate
    for (;;) {
      if (this.pos >= this.text.length) this.fail('unexpected_end');
      const c = this.peek();
      if (c === Ch.Quote) {
        if (pendingHigh) this.fail('lone_surrogate');
        this.pos++;
        break;
      }
      if (c < 0x20) this.fail('control_char');
      if (c !== Ch.Backslash) {
        if (pendingHigh) this.fail('lone_surrogate');
        this.pos++;
        continue;
      }
      const e = this.text.charCodeAt(this.pos + 1);
      if (Number.isNaN(e)) {
        this.pos++;
        this.fail('unexpected_end');
      }
      if (e !== 0x75 /* u */) {
        if (pendingHigh) this.fail('lone_surrogate');
        // " \ / b f n r t
        if (
          e !== Ch.Quote &&
          e !== Ch.Backslash &&
          e !== 0x2f &&
          e !== 0x62 &&
          e !== 0x66 &&
          e !== 0x6e &&
          e !== 0x72 &&
          e !== 0x74
        ) {
          this.fail('bad_escape');
        }
        this.pos += 2;
        continue;
      }
      let unit = 0;
      for (let i = 2; i < 6; i++) {
        const h = this.text.charCodeAt(this.pos + i);
        if (Number.isNaN(h)) {
          this.pos = this.text.length;
          this.fail('unexpected_end');
        }
        if (!isHex(h)) this.fail('bad_escape');
        unit = unit * 16 + parseInt(String.fromCharCode(h), 16);
      }
      const isHigh = unit >= 0xd800 && unit <= 0xdbff;
      const isLow = unit >= 0xdc00 && unit <= 0xdfff;
      if (pendingHigh && !isLow) this.fail('lone_surrogate');
      if (!pendingHigh && isLow) this.fail('lone_surrogate');
      pendingHigh = isHigh;
      this.pos += 6;
    }
    // The token is well-formed JSON by construction; JSON.parse only decodes it.
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  /** Scan one number token (RFC 8259 §6): -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number(): number {
    const start = this.pos;
    if (this.peek() === Ch.Minus) this.pos++;
    if (this.peek() === Ch.Zero) {
      this.pos++;
    } else if (isDigit(this.peek())) {
      while (isDigit(this.peek())) this.pos++;
    } else {
      this.numberFail();
    }
    if (this.peek() === Ch.Dot) {
      this.pos++;
      if (!isDigit(this.peek())) this.numberFail();
      while (isDigit(this.peek())) this.pos++;
    }
    const e = this.peek();
    if (e === Ch.LowerE || e === Ch.UpperE) {
      this.pos++;
      const s = this.peek();
      if (s === Ch.Plus || s === Ch.Minus) this.pos++;
      if (!isDigit(this.peek())) this.numberFail();
      while (isDigit(this.peek())) this.pos++;
    }
    // A digit right after a complete token (e.g. "01") is a malformed number, not trailing data.
    if (isDigit(this.peek())) this.numberFail();
    return Number(this.text.slice(start, this.pos));
  }

  private numberFail(): never {
    if (this.pos >= this.text.length) this.fail('unexpected_end');
    return this.fail('bad_number');
  }
}
