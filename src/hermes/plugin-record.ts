/**
 * The small JSON records left in the plugin directory for `status` and `doctor` (the shim's `hermes-api.json`,
 * src/hermes/api-report.ts; the worker's `view.json`, src/hermes/view-state.ts), read the one way: opened without
 * following a link and without blocking, a regular file of bounded size, parsed; the caller checks the shape.
 */
import fs from 'node:fs';
import path from 'node:path';

/** `absent`: no such file; `unreadable`: not a regular file, too large, or not a JSON object; else its fields. */
export type PluginRecordRead =
  | { state: 'absent' }
  | { state: 'unreadable' }
  | { state: 'found'; fields: Record<string, unknown> };

/**
 * Read `<pluginDir>/<name>` (O_NOFOLLOW | O_NONBLOCK, a regular file of at most `maxBytes`) as a JSON object.
 *
 * @returns the object's fields, or why there are none; never throws
 */
export function readPluginRecord(pluginDir: string, name: string, maxBytes: number): PluginRecordRead {
  let fd: number;
  try {
    fd = fs.openSync(
      path.join(pluginDir, name),
      fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK,
    );
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? { state: 'absent' } : { state: 'unreadable' };
  }
  let raw: unknown;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return { state: 'unreadable' };
    raw = JSON.parse(fs.readFileSync(fd, 'utf8'));
  } catch {
    return { state: 'unreadable' };
  } finally {
    fs.closeSync(fd);
  }
  if (typeof raw !== 'object' || raw === null) return { state: 'unreadable' };
  return { state: 'found', fields: raw as Record<string, unknown> };
}
