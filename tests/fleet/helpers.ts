/**
 * Shared pieces of the fleet export tests: card payloads, one sample of each secret kind, temporary output trees
 * and stand-in servers cleaned up after a file's tests, a tree snapshot (inode, mtime, size, mode per entry), and
 * a one-call in-process export against the Qdrant stand-in or a JSONL file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runExport, type ExportOptions, type ExportReport } from '../../src/fleet/export.js';
import { resolveQdrantSettings } from '../../src/fleet/source-qdrant.js';
import type { SECRET_KINDS } from '../../src/fleet/secrets.js';
import { makeTempDir, mkdirs, removeTree } from '../helpers/fixtures.js';
import { QdrantStandin, type StandinPoint } from '../helpers/qdrant-standin.js';

/** A UUID whose last group is `n`. */
export function uuid(n: number): string {
  return `6f1c2b7e-1111-4a5b-9c3d-${n.toString(16).padStart(12, '0')}`;
}

/** A complete, live card payload; `over` replaces keys (undefined deletes one). */
export function payload(over: Record<string, unknown> = {}): Record<string, unknown> {
  const p: Record<string, unknown> = {
    text: 'The lantern garden is watered at dawn.',
    domain: 'work',
    client_id: 'hermes',
    slot_name: 'episodic',
    memory_type: 'episodic',
    status: 'active',
    pinned: false,
    revision: 1,
    entities: ['lantern'],
    relations: [],
    author_node: 'node-a',
    author_profile: 'default',
    created_at: 1_760_000_000,
    updated_at: 1_760_000_000.25,
    expires_at: 0,
  };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) delete p[k];
    else p[k] = v;
  }
  return p;
}

/** One card per domain plus one expired, one with a credential and one malformed. */
export function standardCards(): StandinPoint[] {
  return [
    {
      id: uuid(1),
      payload: payload({
        domain: 'work',
        slot_name: 'gpu_profile',
        memory_type: 'slot',
        text: 'Work lantern: GPU is an RTX 4090.',
        pinned: true,
        revision: 2,
      }),
    },
    { id: uuid(2), payload: payload({ domain: 'personal', text: 'Personal lantern: dinner with Sam on Friday.' }) },
    {
      id: uuid(3),
      payload: payload({
        domain: 'shared',
        client_id: 'fleet',
        text: 'Shared lantern: the hub restarts at 04:00 UTC.',
      }),
    },
    { id: uuid(4), payload: payload({ domain: 'work', text: 'Expired lantern note.', expires_at: 1_000 }) },
    { id: uuid(5), payload: payload({ domain: 'work', text: 'deploy key AKIAIOSFODNN7EXAMPLE lantern' }) },
    { id: uuid(6), payload: payload({ domain: 'work', text: 42 }) },
  ];
}

/** Every entry below `dir` (hidden ones too): relative path → "type:ino:mtime:size:mode:uid:gid". */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = fs.lstatSync(path.join(dir, r));
      const type = st.isSymbolicLink() ? 'l' : st.isDirectory() ? 'd' : st.isFile() ? 'f' : 'o';
      out.set(r, `${type}:${st.ino}:${st.mtimeMs}:${st.size}:${(st.mode & 0o7777).toString(8)}:${st.uid}:${st.gid}`);
      if (type === 'd') walk(r);
    }
  };
  walk('');
  return out;
}

/** Visible Markdown files below `dir`, relative, sorted. */
export function mdFiles(dir: string): string[] {
  return [...snapshot(dir).keys()]
    .filter((k) => k.endsWith('.md') && !k.split('/').some((s) => s.startsWith('.')))
    .sort();
}

/** Every byte of every file below `dir` (hidden ones too), as one string (for "no secret anywhere" checks). */
export function allText(dir: string): string {
  let s = '';
  for (const [rel, info] of snapshot(dir))
    if (info.startsWith('f:')) s += `${fs.readFileSync(path.join(dir, rel), 'utf8')}\n${rel}\n`;
  return s;
}

/**
 * Options for an in-process export from the stand-in's `hermes_fleet_memory`. The request timeout is long: tests in
 * one file share an event loop, and a neighbour's synchronous file work must not look like a slow server.
 */
export function qdrantOptions(
  s: QdrantStandin,
  out: string,
  over: Partial<ExportOptions> = {},
  key?: string,
): ExportOptions {
  const env: NodeJS.ProcessEnv = key === undefined ? {} : { FLEET_QDRANT_KEY: key };
  return {
    out,
    source: {
      kind: 'qdrant',
      settings: resolveQdrantSettings({ FLEET_QDRANT_URL: s.url, FLEET_QDRANT_TIMEOUT: '120' }, {}),
    },
    domains: [],
    includeExpired: false,
    redact: false,
    group: null,
    keepHistory: null,
    dryRun: false,
    noWait: true,
    env,
    log: () => {},
    ...over,
  };
}

/** Run an in-process export and collect its log lines. */
export async function exportWith(opts: ExportOptions): Promise<ExportReport & { log: string[] }> {
  const log: string[] = [];
  const report = await runExport({ ...opts, log: (l) => log.push(l) });
  return { ...report, log };
}

/** One made-up value of each secret kind the exporter recognises (none is a real credential). */
export const SECRET_SAMPLES: Record<(typeof SECRET_KINDS)[number], string> = {
  hex_key: 'a3f1'.repeat(16),
  flk_token: 'flk_' + 'Ab3dEf6hIj9kLmNo',
  tok_token: 'tok_' + 'live_0123456789abcdef',
  cfut_token: 'cfut_' + 'ZZZZ1111yyyy2222',
  openai_key: 'sk-proj-' + 'AbCdEfGhIjKlMnOpQrSt12',
  github_token: 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8',
  aws_access_key: 'AKIA' + 'IOSFODNN7EXAMPLE',
  slack_token: 'xoxb-' + '1234567890-abcdef',
  telegram_bot_token: '123456789:' + 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1',
  private_key: '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----',
  pgp_private_key: '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGV0ZXN0\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----',
  aws_secret_key: 'aws_secret_access_key = ' + 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYEXAMPLEKEY',
  aws_session_key: 'ASIA' + 'Y34FZKBOKMUTVV7A',
  google_api_key: 'AIza' + 'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY',
  slack_app_token: 'xapp-' + '1-A0123456789-1234567890123-abcdef',
};

/**
 * Scratch for one test file: `tempOut()` makes an empty `out` directory in a new temporary tree (prefix
 * `prefix`), `standin(points)` starts a Qdrant stand-in serving `hermes_fleet_memory`, and `cleanup` (for
 * `test.after.always`) removes every tree and stops every stand-in.
 */
export function fleetScratch(prefix: string): {
  tempOut(): string;
  standin(points?: StandinPoint[], apiKeys?: string[]): Promise<QdrantStandin>;
  cleanup(): Promise<void>;
} {
  const dirs: string[] = [];
  const servers: QdrantStandin[] = [];
  return {
    tempOut() {
      const base = makeTempDir(prefix);
      dirs.push(base);
      return mkdirs(base, 'out');
    },
    async standin(points = standardCards(), apiKeys) {
      const s = await QdrantStandin.start({ collections: { hermes_fleet_memory: points }, apiKeys });
      servers.push(s);
      return s;
    },
    async cleanup() {
      for (const d of dirs) removeTree(d);
      for (const s of servers) await s.stop();
    },
  };
}
