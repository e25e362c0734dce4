/**
 * The strict argv rules of the `memory-bridge` commands, on top of `node:util` `parseArgs` (which tokenizes).
 *
 * Accepted forms: `--flag value`, `--flag=value`, boolean `--flag`, repeatable flags (collected in order), and `--`
 * (everything after it is positional). A flag value given as a separate word may not start with `-` (so a
 * forgotten value never swallows the next flag); write `--limit=-1` to pass such a value deliberately.
 * Anything unknown, repeated without being repeatable, or missing its value throws `UsageError`.
 */
import { parseArgs as tokenize } from 'node:util';

/** A command-line mistake: main.ts prints the message and the command's usage on stderr and exits with 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** How one flag is spelled and what it takes. */
export interface FlagSpec {
  /** `string` takes a value; `boolean` takes none. */
  type: 'string' | 'boolean';
  /** May be given more than once (values are collected in order). Only for `string`. */
  repeatable?: boolean;
  /** One-letter alias, e.g. `h` for `-h`. */
  short?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** The parsed command line: flags by long name, and positionals in order. */
export interface ParsedArgs {
  /** `string` flags → string, repeatable → string[], booleans → true. Absent flags have no key. */
  flags: Record<string, string | string[] | true>;
  positionals: string[];
}

/**
 * Parse `argv` (the words after the command name) against `specs`: `node:util` `parseArgs` tokenizes it
 * (non-strict, so every token comes back), and each option token is then held to the rules above.
 *
 * @throws UsageError on an unknown flag, a missing value, a value given to a boolean, or a repeated single flag
 */
export function parseArgs(argv: readonly string[], specs: FlagSpecs): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = { type: spec.type, multiple: spec.repeatable === true };
    if (spec.short !== undefined) options[name].short = spec.short;
  }
  let tokens: ReturnType<typeof tokenize>['tokens'];
  try {
    tokens = tokenize({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true }).tokens;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const flags: ParsedArgs['flags'] = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') continue;
    const name = token.name;
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (spec === undefined || name === '') throw new UsageError(`unknown option ${token.rawName}`);
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = token.value;
    if (value === undefined || (!token.inlineValue && value.startsWith('-') && value !== '-')) {
      throw new UsageError(`--${name} needs a value (write --${name}=VALUE for a value starting with "-")`);
    }
    if (spec.repeatable === true) {
      const prev = flags[name];
      flags[name] = Array.isArray(prev) ? [...prev, value] : [value];
    } else {
      if (Object.hasOwn(flags, name)) throw new UsageError(`--${name} given more than once`);
      flags[name] = value;
    }
  }
  return { flags, positionals };
}

/** The value of a single-valued string flag, or undefined when absent. */
export function stringFlag(parsed: ParsedArgs, name: string): string | undefined {
  const v = parsed.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** The values of a repeatable flag (empty when absent). */
export function listFlag(parsed: ParsedArgs, name: string): string[] {
  const v = parsed.flags[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** True when a boolean flag was given. */
export function boolFlag(parsed: ParsedArgs, name: string): boolean {
  return parsed.flags[name] === true;
}

/**
 * Parse a flag value as a base-10 integer (optional leading `-`, digits only, safe range).
 *
 * @throws UsageError naming the flag when the value is not such an integer
 */
export function integerFlag(parsed: ParsedArgs, name: string): number | undefined {
  const v = stringFlag(parsed, name);
  if (v === undefined) return undefined;
  if (!/^-?[0-9]+$/.test(v)) throw new UsageError(`--${name} must be an integer`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} must be an integer`);
  return n;
}
