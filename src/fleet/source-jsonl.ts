/**
 * Cards from a JSONL file: one `{id, payload}` object a line. The fleet cleaner's archive
 * (`expired_episodic_memories.jsonl`, lines `{id, payload, archived_at, archived_iso}`) reads the same way; extra
 * keys are ignored.
 *
 * Completeness (docs/EXPORT.md §Writing safely: removal only after a complete read): a line that is not JSON at all means the file
 * is cut short (a copy stopped mid-line) or is not a card file, so the whole read fails and nothing is removed. A
 * last line without a newline is complete when it parses. A line that is JSON but not an `{id, payload}` object
 * is counted as invalid; since it names no card, the export then removes nothing that run.
 */
import fs from 'node:fs';
import type { RawPoint } from './card.js';
import { ExportError } from './errors.js';
import type { SourceRead } from './source.js';

/** Largest JSONL file read, in bytes (the whole collection of a large fleet is a few MiB). */
export const MAX_JSONL_BYTES = 1024 * 1024 * 1024;

/**
 * Read every point of a JSONL file. Throws ExportError (exit 1) when the file cannot be opened, is not a regular
 * file, is too large, or is not valid UTF-8. The source key is `jsonl:<canonical path>` so a later run from the
 * same file mirrors the same scope.
 */
export function readJsonl(file: string): SourceRead {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO named by mistake must not hang the export; it is refused below as not regular.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw new ExportError(`cannot open ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let bytes: Buffer;
  let key: string;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new ExportError(`${file} is not a regular file`);
    if (st.size > MAX_JSONL_BYTES) throw new ExportError(`${file} is larger than ${MAX_JSONL_BYTES} bytes`);
    bytes = fs.readFileSync(fd);
    key = `jsonl:${fs.realpathSync(file)}`;
  } finally {
    fs.closeSync(fd);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ExportError(`${file} is not valid UTF-8`);
  }
  const points: RawPoint[] = [];
  let invalid = 0;
  const rejected: NonNullable<SourceRead['rejected']> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // Never echo the line: it may hold a credential.
      const where = i === lines.length - 1 ? ' (the last line, without a newline: the file looks cut short)' : '';
      throw new ExportError(`${file}: line ${i + 1} is not JSON${where}; nothing was changed`);
    }
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      !('id' in value) ||
      !('payload' in value)
    ) {
      invalid += 1;
      rejected.push({ where: `line ${i + 1}`, reason: 'not an {id, payload} object' });
      continue;
    }
    const v = value as { id: unknown; payload: unknown };
    points.push({ id: v.id, payload: v.payload, where: `line ${i + 1}` });
  }
  return { key, points, invalid, rejected };
}
