/**
 * The Qdrant connection settings resolve by one chain each (QDRANT_SETTING_TABLE, docs/EXPORT.md §Connection): the
 * flag wins, then the environment variable (empty counts as unset), then the default; a malformed value is a usage
 * error naming the flag or the variable it came from.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { ExportError } from '../../src/fleet/errors.js';
import { QDRANT_SETTING_TABLE, resolveQdrantSettings } from '../../src/fleet/source-qdrant.js';
import { cli, REPO_ROOT } from '../cli/tree.js';

test('defaults when neither flag nor variable is given', (t) => {
  const s = resolveQdrantSettings({}, {});
  t.deepEqual([s.host, s.port, s.https, s.timeoutSeconds], ['127.0.0.1', 6333, false, 10]);
  for (const spec of Object.values(QDRANT_SETTING_TABLE)) t.regex(spec.env, /^FLEET_QDRANT_[A-Z]+$/);
});

test('the variable beats the default, the flag beats the variable, an empty variable is unset', (t) => {
  const env = {
    FLEET_QDRANT_HOST: 'qdrant.internal',
    FLEET_QDRANT_PORT: '7000',
    FLEET_QDRANT_HTTPS: 'yes',
    FLEET_QDRANT_TIMEOUT: '2.5',
  };
  const fromEnv = resolveQdrantSettings(env, {});
  t.deepEqual(
    [fromEnv.host, fromEnv.port, fromEnv.https, fromEnv.timeoutSeconds],
    ['qdrant.internal', 7000, true, 2.5],
  );
  const fromFlags = resolveQdrantSettings(env, { host: 'db', port: '7100', https: false, timeout: '4' });
  t.deepEqual([fromFlags.host, fromFlags.port, fromFlags.https, fromFlags.timeoutSeconds], ['db', 7100, false, 4]);
  const empty = resolveQdrantSettings({ FLEET_QDRANT_HOST: '', FLEET_QDRANT_PORT: '', FLEET_QDRANT_TIMEOUT: '' }, {});
  t.deepEqual([empty.host, empty.port, empty.timeoutSeconds], ['127.0.0.1', 6333, 10]);
});

test('a malformed value names where it came from', (t) => {
  const fromEnv = t.throws(() => resolveQdrantSettings({ FLEET_QDRANT_PORT: '70000' }, {}), {
    instanceOf: ExportError,
  });
  t.regex(fromEnv.message, /^FLEET_QDRANT_PORT: /);
  const fromFlag = t.throws(() => resolveQdrantSettings({ FLEET_QDRANT_PORT: '7000' }, { port: 'x' }), {
    instanceOf: ExportError,
  });
  t.regex(fromFlag.message, /^--port: /);
  const https = t.throws(() => resolveQdrantSettings({ FLEET_QDRANT_HTTPS: 'maybe' }, {}), { instanceOf: ExportError });
  t.regex(https.message, /^FLEET_QDRANT_HTTPS: /);
});

test('export-fleet --help and docs/EXPORT.md §Connection give every chain of the table: variable and default', (t) => {
  const help = cli(['export-fleet', '--help']).stdout;
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'EXPORT.md'), 'utf8');
  const start = doc.indexOf('\n## Connection');
  const connection = doc.slice(start, doc.indexOf('\n## ', start + 1));
  for (const spec of Object.values(QDRANT_SETTING_TABLE)) {
    t.true(help.includes(`${spec.flag} `), spec.flag);
    t.true(help.includes(`$${spec.env} or ${spec.fallback}`), `${spec.flag}: $${spec.env} or ${spec.fallback}`);
    t.true(connection.includes(`\`${spec.env}\``), spec.env);
    t.regex(connection, new RegExp(`\`${spec.env}\`( seconds per request)? \\(${spec.fallback}\\)`), spec.env);
  }
});
