/**
 * One table holds every bound and default of `serve` (HTTP_SETTING_TABLE, docs/HTTP.md "Timeouts, limits and
 * stopping"): the docs show exactly its rows, the server's exported defaults are its values, a flag's range is the
 * table's, and `serve --help` and its usage errors say the table's numbers.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_MAX_CONNECTIONS_PER_PEER,
  DEFAULT_RATE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_BODY_BYTES,
  MAX_CONNECTIONS,
  SHUTDOWN_GRACE_MS,
} from '../../src/server/http.js';
import {
  formatHttpSetting,
  HTTP_SETTING_TABLE,
  type HttpSetting,
  httpSettingOf,
} from '../../src/server/http-settings.js';
import { cli, REPO_ROOT } from '../cli/tree.js';

/** A row of the docs' table as the table renders it. */
function row(spec: HttpSetting): string {
  const setWith = spec.flag === null ? 'fixed' : `\`${spec.flag}\` (${spec.min} to ${spec.max})`;
  return `| ${spec.meaning} | ${formatHttpSetting(spec)} | ${setWith} |`;
}

/** The table rows of docs/HTTP.md "Timeouts, limits and stopping", header excluded. */
function docRows(): string[] {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'HTTP.md'), 'utf8');
  const start = text.indexOf('\n## Timeouts, limits and stopping');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| what |'))
    .map((l) => l.trimEnd());
}

test('http settings › docs/HTTP.md shows exactly the rows of the table, in its order', (t) => {
  t.deepEqual(docRows(), Object.values(HTTP_SETTING_TABLE).map(row));
});

test('http settings › the server defaults are the values of the table', (t) => {
  const T = HTTP_SETTING_TABLE;
  t.deepEqual(
    [
      MAX_BODY_BYTES,
      DEFAULT_MAX_CONCURRENCY,
      DEFAULT_RATE.perSecond,
      DEFAULT_RATE.burst,
      DEFAULT_HEADERS_TIMEOUT_MS,
      DEFAULT_REQUEST_TIMEOUT_MS,
      DEFAULT_BODY_TIMEOUT_MS,
      KEEP_ALIVE_TIMEOUT_MS,
      SHUTDOWN_GRACE_MS,
      MAX_CONNECTIONS,
      DEFAULT_MAX_CONNECTIONS_PER_PEER,
    ],
    [
      T.maxBodyBytes.default,
      T.maxConcurrency.default,
      T.ratePerSecond.default,
      T.rateBurst.default,
      T.headersTimeoutMs.default,
      T.requestTimeoutMs.default,
      T.bodyTimeoutMs.default,
      T.keepAliveTimeoutMs.default,
      T.shutdownGraceMs.default,
      T.maxConnections.default,
      T.maxConnectionsPerPeer.default,
    ],
  );
  for (const spec of Object.values(T) as HttpSetting[]) {
    t.true(spec.min <= spec.default && spec.default <= spec.max, spec.meaning);
    if (spec.flag === null) t.is(spec.min, spec.max, `a fixed bound has one value: ${spec.meaning}`);
  }
  t.true(T.bodyTimeoutMs.default <= T.requestTimeoutMs.default);
  t.is(T.maxConnectionsPerPeer.max, T.maxConnections.default);
});

test('http settings › a flag is its value within the range, else the default; out of range names the flag', (t) => {
  const spec = HTTP_SETTING_TABLE.maxConcurrency;
  t.is(httpSettingOf(spec, undefined), spec.default);
  t.is(httpSettingOf(spec, spec.min), spec.min);
  t.is(httpSettingOf(spec, spec.max), spec.max);
  for (const bad of [spec.min - 1, spec.max + 1, 2.5])
    t.throws(() => httpSettingOf(spec, bad), {
      instanceOf: RangeError,
      message: /^--max-concurrency must be an integer from 1 to 65536$/,
    });
});

test('http settings › serve --help and its usage errors say the numbers of the table', (t) => {
  const help = cli(['serve', '--help']).stdout;
  const T = HTTP_SETTING_TABLE;
  t.true(help.includes(`(default ${T.maxConcurrency.default})`));
  t.true(help.includes(`${T.maxConnectionsPerPeer.default}; with --behind-proxy ${T.maxConnections.default}`));
  t.true(help.includes(`make ${T.ratePerSecond.default} requests per second (burst ${T.rateBurst.default})`));
  t.true(help.includes(`A body over ${formatHttpSetting(T.maxBodyBytes)} gets 413`));
  const over = cli([
    'serve',
    '--clients',
    '/nonexistent',
    '--max-connections-per-peer',
    String(T.maxConnectionsPerPeer.max + 1),
  ]);
  t.regex(
    over.stderr,
    new RegExp(`--max-connections-per-peer must be an integer from 1 to ${T.maxConnectionsPerPeer.max}`),
  );
  t.is(over.code, 2);
});
