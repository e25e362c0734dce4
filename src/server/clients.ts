/**
 * The clients file of `memory-bridge serve` (docs/HTTP.md, "The clients file"): which bearer tokens may call the
 * HTTP endpoint, and as whom.
 *
 * ```json
 * {"version": 1, "clients": [{"name": "work-laptop", "token_sha256": "<64 hex>", "home": "/abs/home",
 *   "run_kind": "interactive"}]}
 * ```
 *
 * The file is read like the policy: a descriptor walk from `/` with the trust rule on every directory above it and
 * on the file (src/trust/path.ts `readTrustedFile`), then strict JSON (src/policy/json.ts), then a strict shape check
 * (unknown keys, duplicate names and duplicate hashes are refused). `serve` rereads it on every request, so an edit
 * or a `clients remove` applies to the next request. Only the SHA-256 of a token is stored; the token itself is
 * printed once by `clients add` and never written anywhere.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { replaceFile } from '../atomic-write.js';
import { BridgeError, type Reason } from '../errors.js';
import { parseStrictJson, StrictJsonError } from '../policy/json.js';
import { isNormalAbsolute, openTrustedDir, readTrustedFile } from '../trust/path.js';
import { requireNative } from '../trust/rule.js';
import type { Caller } from '../tools/types.js';

/** Largest clients file accepted, in bytes (about 4,000 entries of typical length). */
export const MAX_CLIENTS_BYTES = 1_048_576;
/** Most entries in one clients file: authentication compares the presented token with every one. */
export const MAX_CLIENTS = 4096;
/** Client names: what the operator log prints, so a plain, short word. */
export const CLIENT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The run kinds a client may be bound to (docs/HTTP.md; the rule of each is that of the other modes). */
export const CLIENT_RUN_KINDS = ['interactive', 'cron', 'subagent'] as const;
export type ClientRunKind = (typeof CLIENT_RUN_KINDS)[number];
/** Prefix of every token `clients add` makes (lets secret scanners recognise a leaked one). */
export const TOKEN_PREFIX = 'mbt_';
/** Longest `Authorization` credential looked at; anything longer is refused like any other bad token. */
export const MAX_TOKEN_CHARS = 512;

/** One entry of the clients file, checked. */
export interface ClientEntry {
  name: string;
  /** Lower-case hex SHA-256 of the token. */
  tokenSha256: string;
  /** Absolute, normal profile home; its `plugin-data/memory-bridge/policy.json` is this client's policy. */
  home: string;
  runKind: ClientRunKind;
}

/** The whole clients file, checked: entries in file order. */
export interface ClientsFile {
  clients: readonly ClientEntry[];
}

/** A clients file that cannot be used: `reason` is a short operator code, `message` says what is wrong. */
export class ClientsFileError extends Error {
  override readonly name = 'ClientsFileError';
  constructor(
    readonly reason: 'clients_missing' | 'clients_untrusted' | 'clients_too_large' | 'clients_invalid',
    message: string,
  ) {
    super(message);
  }
}

/** A checked file plus the 32-byte hashes, decoded once for the constant-time comparison. */
interface Compiled {
  file: ClientsFile;
  hashes: Buffer[];
}

function invalid(message: string): never {
  throw new ClientsFileError('clients_invalid', message);
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) invalid(`${where}: unknown key ${JSON.stringify(key.slice(0, 40))}`);
  }
  for (const key of allowed) if (!Object.hasOwn(obj, key)) invalid(`${where}: missing key "${key}"`);
}

/**
 * Check a parsed clients document.
 *
 * @returns the entries in file order
 * @throws ClientsFileError('clients_invalid') naming the first problem (never a token; the hash is never echoed)
 */
export function checkClientsDocument(doc: unknown): ClientsFile {
  if (!isPlainRecord(doc)) invalid('the file must hold one JSON object');
  checkKeys(doc, ['version', 'clients'], 'top level');
  if (doc.version !== 1) invalid('"version" must be 1');
  if (!Array.isArray(doc.clients)) invalid('"clients" must be an array');
  if (doc.clients.length > MAX_CLIENTS) invalid(`"clients" holds more than ${MAX_CLIENTS} entries`);
  const names = new Set<string>();
  const hashes = new Set<string>();
  const clients: ClientEntry[] = [];
  doc.clients.forEach((raw: unknown, i: number) => {
    const where = `clients[${i}]`;
    if (!isPlainRecord(raw)) invalid(`${where} must be an object`);
    checkKeys(raw, ['name', 'token_sha256', 'home', 'run_kind'], where);
    const { name, token_sha256: hash, home, run_kind: runKind } = raw;
    if (typeof name !== 'string' || !CLIENT_NAME_RE.test(name))
      invalid(`${where}.name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
    if (names.has(name)) invalid(`${where}.name ${JSON.stringify(name)} is given twice`);
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash))
      invalid(`${where}.token_sha256 must be 64 lower-case hex digits`);
    if (hashes.has(hash)) invalid(`${where}.token_sha256 repeats an earlier entry's`);
    if (typeof home !== 'string' || !isNormalAbsolute(home) || home === '/')
      invalid(`${where}.home must be an absolute path without ".", ".." or a trailing "/"`);
    if (typeof runKind !== 'string' || !(CLIENT_RUN_KINDS as readonly string[]).includes(runKind))
      invalid(`${where}.run_kind must be one of ${CLIENT_RUN_KINDS.join(', ')}`);
    names.add(name);
    hashes.add(hash);
    clients.push({ name, tokenSha256: hash, home, runKind: runKind as ClientRunKind });
  });
  return { clients };
}

/**
 * Parse clients file bytes (strict JSON, then `checkClientsDocument`).
 *
 * @throws ClientsFileError('clients_invalid')
 */
export function parseClientsBytes(bytes: Uint8Array): ClientsFile {
  let doc: unknown;
  try {
    doc = parseStrictJson(bytes);
  } catch (err) {
    if (err instanceof StrictJsonError) invalid(`not strict JSON (${err.reason} at character ${err.offset})`);
    throw err;
  }
  return checkClientsDocument(doc);
}

/** Most recently parsed files by content (a serve process usually sees one file, rewritten now and then). */
const compiledCache = new Map<string, Compiled>();
const COMPILED_CACHE_SIZE = 4;

function compile(bytes: Buffer): Compiled {
  const key = bytes.toString('latin1');
  const hit = compiledCache.get(key);
  if (hit !== undefined) return hit;
  const file = parseClientsBytes(bytes);
  const compiled: Compiled = { file, hashes: file.clients.map((c) => Buffer.from(c.tokenSha256, 'hex')) };
  compiledCache.set(key, compiled);
  if (compiledCache.size > COMPILED_CACHE_SIZE) compiledCache.delete(compiledCache.keys().next().value!);
  return compiled;
}

/** Trust reasons of `readTrustedFile` as clients file reasons. */
function fileReasonOf(reason: Reason): ClientsFileError['reason'] {
  if (reason === 'missing') return 'clients_missing';
  if (reason === 'too_large') return 'clients_too_large';
  return 'clients_untrusted';
}

/** What the operator should do about a clients file trust reason (for `serve` and `clients`, which may name paths). */
function trustAdvice(file: string, reason: Reason): string {
  if (reason === 'missing')
    return `${file} does not exist (create it with: memory-bridge clients add --clients ${file} ...)`;
  if (reason === 'too_large') return `${file} is larger than ${MAX_CLIENTS_BYTES} bytes`;
  return (
    `${file} is not trusted (${reason}): the file and every directory above it must be owned by root or by the ` +
    'user running memory-bridge, without group or world write and without ACL write grants, and the file must be ' +
    'a regular file with one link; its directory may not be a shared temp directory such as /tmp'
  );
}

function readClientsBytes(file: string): Buffer {
  try {
    return readTrustedFile(file, MAX_CLIENTS_BYTES);
  } catch (err) {
    if (err instanceof BridgeError) throw new ClientsFileError(fileReasonOf(err.reason), trustAdvice(file, err.reason));
    throw err;
  }
}

/**
 * Read and check the clients file at the absolute path `file`.
 *
 * @throws ClientsFileError: `clients_missing`, `clients_untrusted` (any trust refusal on the file or a directory
 *   above it), `clients_too_large` (over `MAX_CLIENTS_BYTES`), `clients_invalid` (strict JSON or shape)
 */
export function loadClients(file: string): ClientsFile {
  return compile(readClientsBytes(file)).file;
}

/** SHA-256 of a token as lower-case hex (what the clients file stores). */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new token: `mbt_` and 256 random bits in base64url (43 characters). */
export function newToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** RFC 6750 b64token. */
const B64TOKEN_RE = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The token of an `Authorization: Bearer <token>` header, or null when the header is missing or malformed
 * (scheme other than Bearer, not exactly one space-free credential, not a b64token, longer than `MAX_TOKEN_CHARS`).
 * The scheme is matched case-insensitively (RFC 9110 §11.1).
 */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (m === null) return null;
  const token = m[1]!;
  if (token.length > MAX_TOKEN_CHARS || !B64TOKEN_RE.test(token)) return null;
  return token;
}

const NO_MATCH = Buffer.alloc(32);

/**
 * The entry of the clients file at `file` whose token hash equals SHA-256 of `token`.
 *
 * The file is read fresh on every call (a removed client fails on its next request). The presented token's hash is
 * compared with every entry's hash by `timingSafeEqual`, with no early exit, so the time does not depend on which
 * entry (if any) matched or on how many leading bytes agreed. A null token (missing or malformed header) is hashed
 * and compared the same way.
 *
 * @returns the matched entry, or null when nothing matches
 * @throws ClientsFileError when the file cannot be used (see `loadClients`)
 */
export function authenticate(file: string, token: string | null): ClientEntry | null {
  const compiled = compile(readClientsBytes(file));
  const presented = token === null ? NO_MATCH : createHash('sha256').update(token, 'utf8').digest();
  let found = -1;
  for (let i = 0; i < compiled.hashes.length; i++) {
    // No early exit: every entry is compared, whichever one matches.
    const equal = timingSafeEqual(presented, compiled.hashes[i]!);
    found = equal && token !== null ? i : found;
  }
  return found < 0 ? null : compiled.file.clients[found]!;
}

/**
 * The caller record for a client (docs/HTTP.md): its home and the signals of its run kind, as `mcp --run-kind`
 * would give them; the profile name is the client name (logs only).
 */
export function callerOf(entry: ClientEntry): Caller {
  return {
    home: entry.home,
    cron: entry.runKind === 'cron',
    subagent: entry.runKind === 'subagent',
    profile: entry.name,
  };
}

/** The file's JSON text for `clients` (two-space indent, a final newline, keys in the documented order). */
export function renderClients(file: ClientsFile): string {
  const doc = {
    version: 1,
    clients: file.clients.map((c) => ({
      name: c.name,
      token_sha256: c.tokenSha256,
      home: c.home,
      run_kind: c.runKind,
    })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * Read the clients file for an edit: the checked entries and the exact bytes (to detect a concurrent edit), or an
 * empty file when it does not exist yet. The directory must exist and be trusted either way.
 *
 * @throws ClientsFileError for an untrusted directory or file, or a file that does not parse
 */
export function readForEdit(file: string): { current: ClientsFile; bytes: Buffer | null } {
  checkDirectory(file);
  try {
    const bytes = readClientsBytes(file);
    return { current: compile(bytes).file, bytes };
  } catch (err) {
    if (err instanceof ClientsFileError && err.reason === 'clients_missing')
      return { current: { clients: [] }, bytes: null };
    throw err;
  }
}

function checkDirectory(file: string): void {
  const dir = path.posix.dirname(file);
  try {
    const native = requireNative();
    native.close(openTrustedDir(dir, 'policy_dir', native));
  } catch (err) {
    if (err instanceof BridgeError) {
      const what = err.reason === 'missing' ? 'does not exist' : `is not trusted (${err.reason})`;
      throw new ClientsFileError(
        'clients_untrusted',
        `the directory ${dir} ${what}: it and every directory above it must be owned by root or by the user ` +
          'running memory-bridge, without group or world write, and it may not be a shared temp directory such as /tmp',
      );
    }
    throw err;
  }
}

/**
 * Replace the clients file atomically (`replaceFile` of src/atomic-write.ts: a new file, mode 0600, created
 * exclusively under a random hidden name in the same directory, fsynced, renamed over the old name, the directory
 * fsynced), checking right before the rename that the file still holds `expected` (null: still absent). The directory was judged trusted, so no one else can create, swap or remove
 * names in it while this runs; the `expected` check only catches a second `clients` command of the operator's own.
 *
 * @throws ClientsFileError('clients_invalid') when the file changed since it was read (run the command again)
 */
export function writeClients(file: string, next: ClientsFile, expected: Buffer | null): void {
  checkDirectory(file);
  replaceFile(file, renderClients(next), 0o600, () => {
    let now: Buffer | null;
    try {
      now = readClientsBytes(file);
    } catch (err) {
      if (!(err instanceof ClientsFileError && err.reason === 'clients_missing')) throw err;
      now = null;
    }
    const same = now === null || expected === null ? now === expected : now.equals(expected);
    if (!same) invalid(`${file} changed while this command ran; nothing was written: run the command again`);
  });
}
