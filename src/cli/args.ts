/**
 * A small, strict argv parser for the `memory-bridge` commands.
 *
 * Accepted forms: `--flag value`, `--flag=value`, boolean `--flag`, repeatable flags (collected in order), and `--`
 * (everything after it is positional). A flag value given as a separate word may not start with `-` (so a
 * forgotten value never swallows the next flag); write `--limit=-1` to pass such a value deliberately.
 * Anything unknown, repeated without being repeatable, or missing its value throws `UsageError`.
 */

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
 * Parse `argv` (the words after the command name) against `specs`.
 *
 * @throws UsageError on an unknown flag, a missing value, a value given to a boolean, or a repeated single flag
 */
export function parseArgs(argv: readonly string[], specs: FlagSpecs): ParsedArgs {
  const flags: ParsedArgs['flags'] = {};
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short !== undefined) byShort.set(spec.short, name);

  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      name = eq === -1 ? word.slice(2) : word.slice(2, eq);
      inline = eq === -1 ? undefined : word.slice(eq + 1);
    } else if (word.length === 2 && word[0] === '-' && word[1] !== '-') {
      const long = byShort.get(word[1]!);
      if (long === undefined) throw new UsageError(`unknown option ${word}`);
      name = long;
    } else {
      // A lone "-" or any other word is positional.
      positionals.push(word);
      continue;
    }
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (spec === undefined || name === '') throw new UsageError(`unknown option --${name}`);

    if (spec.type === 'boolean') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }

    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next !== '-')) {
        throw new UsageError(`--${name} needs a value (write --${name}=VALUE for a value starting with "-")`);
      }
      value = next;
      i++;
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
