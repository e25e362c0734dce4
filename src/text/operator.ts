/**
 * Text for operator output (doctor, init): names shown so a terminal cannot be fooled by them, and words quoted for
 * a POSIX shell so a printed command pastes as it is. Never used for what the model sees.
 */

/**
 * True for a character that prints as itself in a terminal and cannot reorder or hide what follows: a letter, mark,
 * number, punctuation or symbol (Unicode general categories L, M, N, P, S) or a plain space.
 */
const PLAIN = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * A path as doctor prints it: unchanged when every character is plain and it has no `"` or `\`; otherwise in double
 * quotes with `\` and `"` escaped and every other character as `\u{hex}` (controls, line separators, bidi and
 * invisible format characters, U+FFFD from a name that was not UTF-8), so a skipped name can never forge output.
 * Linear in the path's length.
 */
export function displayPath(p: string): string {
  let plain = true;
  let out = '';
  for (const ch of p) {
    if (ch === '"' || ch === '\\') {
      plain = false;
      out += `\\${ch}`;
    } else if (PLAIN.test(ch) && ch !== '\uFFFD') out += ch;
    else {
      plain = false;
      out += `\\u{${ch.codePointAt(0)!.toString(16)}}`;
    }
  }
  return plain ? p : `"${out}"`;
}

/** A word for a POSIX shell: unchanged when it holds only safe characters, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * A duration in words for operator output, to the nearest unit that matters: "42 s", "7 min", "3 h 12 min",
 * "2 days 5 h". Negative durations count as 0.
 *
 * @param ms milliseconds
 */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ${min % 60} min`;
  const days = Math.floor(h / 24);
  return `${days} day${days === 1 ? '' : 's'} ${h % 24} h`;
}
