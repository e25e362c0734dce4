import test from 'ava';
import * as publicSurface from '../../src/index.js';
import { createBridge, stderrLogger } from '../../src/tools/bridge.js';
import { REASON_REMEDIES } from '../../src/remedies.js';
import type { LogEvent, ReadResult } from '../../src/tools/types.js';
import { removeTree, writeNote } from '../helpers/fixtures.js';
import { makeWorld } from './world.js';

const w = makeWorld();
writeNote(w.root, 'a.md', '# A\nalpha text\n');
test.after.always(() => removeTree(w.tmp));

test('bridge › the public entry exports only the library surface', (t) => {
  t.deepEqual(Object.keys(publicSurface).sort(), ['BridgeError', 'createBridge', 'loadPolicy']);
});

test('bridge › call dispatches by tool name', (t) => {
  const bridge = createBridge({ log: () => undefined });
  t.deepEqual(
    bridge.call('memory_bridge_search', { query: 'alpha' }, w.caller),
    bridge.search({ query: 'alpha' }, w.caller),
  );
  const { version, ...read } = bridge.call('memory_bridge_read', { id: 'a.md' }, w.caller) as ReadResult;
  t.deepEqual(read, { ok: true, id: 'a.md', title: 'A', content: '# A\nalpha text\n', truncated: false, offset: 0 });
  t.is(version, (bridge.read({ id: 'a.md' }, w.caller) as ReadResult).version);
});

test('bridge › an unexpected exception is unavailable, logged as internal with the class name only', (t) => {
  const logs: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e) });
  const hostile = new Proxy(
    {},
    {
      ownKeys() {
        throw new TypeError('/secret/path/in/message');
      },
      get() {
        throw new TypeError('/secret/path/in/message');
      },
    },
  );
  t.deepEqual(bridge.search(hostile, w.caller), {
    ok: false,
    error: { code: 'unavailable', message: 'Memory is unavailable.' },
  });
  t.deepEqual(logs, [{ tool: 'memory_bridge_search', reason: 'internal', detail: 'TypeError', profile: 'test' }]);
});

test('bridge › a throwing logger never makes a method throw', (t) => {
  const bridge = createBridge({
    log: () => {
      throw new Error('logger down');
    },
  });
  t.deepEqual(bridge.search({ query: 'x', nope: 1 }, w.caller), {
    ok: false,
    error: {
      code: 'invalid_request',
      message: 'The request is invalid.',
      hint: 'arguments: only query, limit, within, tags, modified_after, modified_before and sort are accepted',
    },
  });
});

test('bridge › refusals are logged with tool, reason and profile', (t) => {
  const logs: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e) });
  bridge.search({ query: 'alpha' }, { home: 'relative', cron: false, subagent: false, profile: 'p1' });
  bridge.read({ id: 'a.md' }, { home: null, cron: false, subagent: false });
  t.deepEqual(logs, [
    { tool: 'memory_bridge_search', reason: 'bad_home', profile: 'p1' },
    { tool: 'memory_bridge_read', reason: 'no_home' },
  ]);
});

test('bridge › the default log line is the tool and the reason code, with the remedy the first time a reason appears', (t) => {
  const written: string[] = [];
  const original = process.stderr.write;
  process.stderr.write = ((chunk: string) => {
    written.push(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    const log = stderrLogger();
    log({ tool: 'memory_bridge_read', reason: 'denied', profile: 'p' });
    log({ tool: 'memory_bridge_read', reason: 'denied', profile: 'p' });
    log({ tool: 'memory_bridge_search', reason: 'internal', detail: 'RangeError' });
    stderrLogger('memory-bridge read')({ tool: 'memory_bridge_read', reason: 'denied' });
  } finally {
    process.stderr.write = original;
  }
  t.deepEqual(written, [
    `memory-bridge: memory_bridge_read denied → ${REASON_REMEDIES.denied}\n`,
    'memory-bridge: memory_bridge_read denied\n',
    `memory-bridge: memory_bridge_search internal (RangeError) → ${REASON_REMEDIES.internal}\n`,
    `memory-bridge read: memory_bridge_read denied → ${REASON_REMEDIES.denied}\n`,
  ]);
});

test('bridge › maxIndexes must be a positive integer', (t) => {
  t.throws(() => createBridge({ maxIndexes: 0 }), { instanceOf: RangeError });
});

test('bridge › a hostile caller record gets unavailable, never an exception', (t) => {
  const logs: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e) });
  const hostile = new Proxy(
    {},
    {
      get() {
        throw new RangeError('boom');
      },
    },
  );
  const unavailable = { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } };
  t.deepEqual(bridge.search({ query: 'alpha' }, hostile as never), unavailable);
  t.deepEqual(bridge.read({ id: 'a.md' }, hostile as never), unavailable);
  t.deepEqual(
    logs.map((e) => [e.reason, e.detail]),
    [
      ['internal', 'RangeError'],
      ['internal', 'RangeError'],
    ],
  );
});
