/**
 * Reading the project's Markdown the way a renderer links it, for the README and docs tests: section text and
 * heading anchors (GitHub's rule: lower case, punctuation but `-` and `_` dropped, spaces become `-`, a repeated
 * anchor gets `-1`, `-2`, …).
 */

/** The text of the section that starts at `heading` (a whole line such as `## Contents`) up to the next heading of
 * the same or a higher level; '' when there is no such heading. */
export function sectionOf(text: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const lines = text.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) return '';
  let inCode = false;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trimStart().startsWith('```')) inCode = !inCode;
    const m = /^(#+) /.exec(line);
    if (!inCode && m !== null && m[1]!.length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start + 1, end).join('\n');
}

/** Every heading anchor of a Markdown text (headings inside code blocks are not headings). */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let inCode = false;
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith('```')) inCode = !inCode;
    const m = /^#{1,6} (.+)$/.exec(line);
    if (inCode || m === null) continue;
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}
