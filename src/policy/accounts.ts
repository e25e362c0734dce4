/**
 * Resolving the policy's named writers (`"writers": {"users": [...], "groups": [...]}`) to ids, on every call, from
 * the system's local user and group databases (docs/TRUST.md §Named writers).
 *
 * A name is looked up in /etc/passwd (users) or /etc/group (groups), each read through the trusted file read
 * (owner root, not writable by others, no ACL write grant, at most MAX_DATABASE_BYTES) and parsed here: one entry
 * per line, fields separated by ":", the name first and the numeric id third (passwd(5), group(5)). The first
 * entry with a name wins, as in the C library's files backend. Lines that are not entries (empty, comments,
 * the "+"/"-" compatibility lines of NIS) are ignored. Names served only by another source (LDAP, sssd) are not
 * seen: such writers are named by numeric id. A numeric id is taken as it is and needs no entry.
 *
 * Nothing is cached between calls except the parse of unchanged bytes, so removing a writer from the policy or
 * from the database takes effect on the next call.
 */
import { BridgeError } from '../errors.js';
import { readTrustedFile } from '../trust/path.js';
import { MAX_ID, NO_WRITERS, writersOf, type Writers } from '../trust/writers.js';

/** A writer as the policy names it: a user or group name, or a numeric id. */
export type WriterEntry = string | number;

/** The policy's `writers` key with its defaults filled in. */
export interface WritersSpec {
  readonly users: readonly WriterEntry[];
  readonly groups: readonly WriterEntry[];
}

/** One resolved writer, for `status` and `doctor`: what the policy says and the id it means now. */
export interface ResolvedWriter {
  kind: 'user' | 'group';
  /** The entry as written in the policy. */
  entry: WriterEntry;
  /** The uid or gid. */
  id: number;
  /** The name in the database for this id, when the entry is a name or the id has one. */
  name?: string;
}

/** The writers of one call: the ids the trust rule uses, and the list `status` shows. */
export interface ResolvedWriters {
  writers: Writers;
  list: ResolvedWriter[];
}

/** Where the databases are read from. */
export const PASSWD_PATH = '/etc/passwd';
export const GROUP_PATH = '/etc/group';
/** Largest database file read, in bytes. */
export const MAX_DATABASE_BYTES = 16 * 1024 * 1024;

/** Names and ids of one database, both ways (first entry wins). */
interface Database {
  byName: Map<string, number>;
  byId: Map<number, string>;
}

/** Parses passwd(5) or group(5) text: name in field 1, id in field 3. */
export function parseDatabase(text: string): Database {
  const byName = new Map<string, number>();
  const byId = new Map<number, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('+') || line.startsWith('-')) continue;
    const fields = line.split(':');
    if (fields.length < 3) continue;
    const name = fields[0]!;
    const idText = fields[2]!;
    if (name === '' || !/^[0-9]{1,10}$/.test(idText)) continue;
    const id = Number(idText);
    if (id > MAX_ID) continue;
    if (!byName.has(name)) byName.set(name, id);
    if (!byId.has(id)) byId.set(id, name);
  }
  return { byName, byId };
}

/** The last parse of each database file, by its exact bytes. */
const parsedDatabases = new Map<string, { bytes: Buffer; db: Database }>();

/**
 * The database at `file`, read through the trusted file read on this call.
 *
 * @throws BridgeError('unavailable', 'policy_invalid') with `detail` when it cannot be read or trusted
 */
function databaseOf(file: string): Database {
  let bytes: Buffer;
  try {
    bytes = readTrustedFile(file, MAX_DATABASE_BYTES);
  } catch (err) {
    if (!(err instanceof BridgeError)) throw err;
    throw new WritersError(`${file} could not be read as a trusted file (${err.reason})`);
  }
  const last = parsedDatabases.get(file);
  if (last?.bytes.equals(bytes)) return last.db;
  const db = parseDatabase(bytes.toString('utf8'));
  parsedDatabases.set(file, { bytes, db });
  return db;
}

/** A writer that cannot be resolved: the policy is invalid for this call. `detail` is operator text. */
export class WritersError extends BridgeError {
  constructor(readonly detail: string) {
    super('unavailable', 'policy_invalid');
  }
}

/**
 * Resolves the policy's writers now.
 *
 * @param spec the policy's `writers` (at most 64 entries each; names and ids already checked by the schema)
 * @param files where the databases are (tests may point at their own copies)
 * @returns NO_WRITERS and an empty list when both lists are empty (no file is read); otherwise the ids and the list
 * @throws WritersError (a BridgeError('unavailable', 'policy_invalid')) naming the first unknown name, e.g.
 *   `writers.users[1]: no user named "bob" in /etc/passwd`, or a database that cannot be read
 */
export function resolveWriters(
  spec: WritersSpec,
  files: { passwd: string; group: string } = { passwd: PASSWD_PATH, group: GROUP_PATH },
): ResolvedWriters {
  if (spec.users.length === 0 && spec.groups.length === 0) return { writers: NO_WRITERS, list: [] };
  const list: ResolvedWriter[] = [];
  const side = (kind: 'user' | 'group', entries: readonly WriterEntry[], file: string): number[] => {
    const ids: number[] = [];
    let db: Database | undefined;
    entries.forEach((entry, i) => {
      db ??= databaseOf(file);
      let id: number;
      if (typeof entry === 'number') id = entry;
      else {
        const found = db.byName.get(entry);
        if (found === undefined)
          throw new WritersError(`writers.${kind}s[${i}]: no ${kind} named ${JSON.stringify(entry)} in ${file}`);
        id = found;
      }
      ids.push(id);
      const name = typeof entry === 'string' ? entry : db.byId.get(id);
      list.push(name === undefined ? { kind, entry, id } : { kind, entry, id, name });
    });
    return ids;
  };
  const uids = side('user', spec.users, files.passwd);
  const gids = side('group', spec.groups, files.group);
  return { writers: writersOf(uids, gids), list };
}
