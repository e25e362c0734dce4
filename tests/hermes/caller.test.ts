import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { callerFromSignals, homeProblemOf } from '../../src/hermes/caller.js';
import { readApiReport } from '../../src/hermes/api-report.js';
import { parseRequestLine } from '../../src/hermes/protocol.js';
import { makeTempDir, mkdirs, removeTree } from '../helpers/fixtures.js';

// The caller decision the shim used to make in Python (docs/HERMES.md §Who is calling, §Cron and subagents), from
// the raw signals the shim reads in Hermes's process: real directories and links, no stand-ins.
const tmp = fs.realpathSync(makeTempDir('mb-caller-'));
test.after.always(() => removeTree(tmp));
const home = mkdirs(tmp, 'home');
const other = mkdirs(tmp, 'other');
const link = path.join(tmp, 'linked-home');
fs.symlinkSync(home, link);

/** What the shim sends for an interactive call in a single-profile process, with `extra` over it. */
function signals(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    plugin_host: '',
    home,
    registered_home: home,
    override: null,
    multiplex: false,
    subagent: false,
    cron_flag: '',
    platform: '',
    cron_execution: false,
    profile_name: 'default',
    ...extra,
  };
}

const refused = (extra: Record<string, unknown>) => {
  const d = callerFromSignals(signals(extra));
  return d.ok ? 'served' : d.reason;
};
const kind = (extra: Record<string, unknown>) => {
  const d = callerFromSignals(signals(extra));
  return d.ok ? [d.caller.cron, d.caller.subagent] : d.reason;
};

test('caller › an interactive call in a single-profile process', (t) => {
  t.deepEqual(callerFromSignals(signals()), {
    ok: true,
    caller: { home, cron: false, subagent: false, profile: 'default' },
  });
  // The home is normalised as Python's normpath would (and a leading // collapsed).
  const d = callerFromSignals(signals({ home: `/${home}/./`, registered_home: `${home}/x/..` }));
  t.true(d.ok && d.caller.home === home);
});

test('caller › home rules: relative, not text, a symbolic link, a change since registration', (t) => {
  t.is(refused({ home: 'relative/home' }), 'home_relative');
  t.is(refused({ registered_home: 'relative/home' }), 'home_relative');
  for (const bad of ['', null, 7, { type: 'bytes' }, `${home}\0x`, `/${'a'.repeat(5000)}`])
    t.is(refused({ home: bad }), 'bad_home', JSON.stringify(bad).slice(0, 40));
  t.is(refused({ home: link, registered_home: link }), 'home_symlink');
  t.is(refused({ home: path.join(link, 'below') }), 'home_symlink'); // a link above a home that does not exist
  t.is(refused({ home: other }), 'home_mismatch');
  t.is(refused({ override: other, home: other }), 'home_mismatch'); // an override moves get_hermes_home with it
  t.is(refused({ override: 'relative' }), 'home_relative'); // a malformed override is refused even when unused
  const { registered_home: _, ...unread } = signals();
  t.deepEqual(callerFromSignals(unread), { ok: false, reason: 'context_module_missing' });
  // The current home is judged first: a relative home is named, not reported as a mismatch.
  t.is(refused({ home: 'relative', registered_home: 'relative' }), 'home_relative');
});

test('caller › a multiplexed gateway: the bound home, which must agree with the secret-scope home', (t) => {
  t.is(refused({ multiplex: true }), 'multiplex_unbound');
  t.is(refused({ multiplex: true, override: '' }), 'multiplex_unbound');
  const d = callerFromSignals(signals({ multiplex: true, override: other, home: other, home_profile: 'work' }));
  t.deepEqual(d, { ok: true, caller: { home: other, cron: false, subagent: false, profile: 'work' } });
  t.is(refused({ multiplex: true, override: other, scope_home: home }), 'context_signal_conflict');
  t.is(refused({ multiplex: true, override: other, scope_home: other }), 'served');
  t.is(refused({ multiplex: true, override: link }), 'home_symlink');
  // The registration home is not the rule there: one gateway serves several profiles.
  t.is(refused({ multiplex: true, override: other, registered_home: home }), 'served');
});

test('caller › the plugin-host isolation process is refused', (t) => {
  t.is(refused({ plugin_host: '1' }), 'plugin_host_process');
  t.is(refused({ plugin_host: 'yes' }), 'plugin_host_process');
  t.is(refused({ plugin_host: '0' }), 'served');
  t.is(refused({ plugin_host: '' }), 'served');
});

test('caller › the cron flag is read the way Hermes reads it; other values refuse', (t) => {
  for (const v of ['1', 'true', ' Yes ', 'ON', true]) t.deepEqual(kind({ cron_flag: v }), [true, false], String(v));
  for (const v of ['', '0', 'false', 'No', ' off ', false, null])
    t.deepEqual(kind({ cron_flag: v }), [false, false], String(v));
  for (const v of ['maybe', '2', 1, ['1'], { type: 'object' }])
    t.is(refused({ cron_flag: v }), 'context_signal_conflict', JSON.stringify(v));
});

test('caller › each cron signal alone marks the call as cron', (t) => {
  t.deepEqual(kind({ cron_flag: '1' }), [true, false]);
  t.deepEqual(kind({ cron_execution: true }), [true, false]);
  t.deepEqual(kind({ platform: 'cron' }), [true, false]);
  t.deepEqual(kind({ platform: ' CRON ' }), [true, false]);
  t.deepEqual(kind({ platform: 'telegram', cron_flag: '0' }), [false, false]);
  // Without ctx.current_cron_execution (older Hermes) the key is absent: the session values still count.
  const { cron_execution: _, ...older } = signals({ cron_flag: '1' });
  const d = callerFromSignals(older);
  t.true(d.ok && d.caller.cron);
  t.is(refused({ platform: 3 }), 'context_signal_conflict');
});

test("caller › a subagent: Hermes's flag, and cron by its parent's execution alone", (t) => {
  t.deepEqual(kind({ subagent: true }), [false, true]);
  t.deepEqual(kind({ subagent: true, parent_cron_execution: true }), [true, true]);
  t.deepEqual(kind({ subagent: true, parent_cron_execution: false }), [false, true]);
  t.deepEqual(kind({ subagent: true, cron_flag: '1' }), [true, true]);
  t.deepEqual(kind({ subagent: true, platform: 'cron' }), [true, true]);
  // The parent's view speaks for a delegated child only.
  t.deepEqual(kind({ parent_cron_execution: true }), [false, false]);
  t.is(refused({ subagent: '1' }), 'context_signal_conflict');
  t.is(refused({ multiplex: 'yes' }), 'context_signal_conflict');
  t.is(refused({ cron_execution: 'yes' }), 'context_signal_conflict');
});

test('caller › the profile name is for logs: ctx.profile_name, else the one for the home, else none', (t) => {
  const profile = (extra: Record<string, unknown>) => {
    const d = callerFromSignals(signals(extra));
    return d.ok ? d.caller.profile : d.reason;
  };
  t.is(profile({}), 'default');
  t.is(profile({ profile_name: null, home_profile: 'work' }), 'work');
  t.is(profile({ profile_name: '', home_profile: null }), undefined);
  t.is(profile({ profile_name: 'x'.repeat(129) }), undefined);
  t.is(profile({ profile_name: { type: 'Mock' } }), undefined);
});

test('caller › the worker refuses a request whose signals it cannot serve, naming the tool', (t) => {
  const line = (hermes: unknown) =>
    parseRequestLine(Buffer.from(JSON.stringify({ v: 1, id: 'r', tool: 'memory_bridge_search', args: {}, hermes })));
  t.deepEqual(line(signals({ home: 'relative' })), {
    kind: 'reject',
    id: 'r',
    reason: 'home_relative',
    tool: 'memory_bridge_search',
  });
  const served = line(signals());
  t.true(served.kind === 'call' && served.request.caller.home === home);
  t.deepEqual(line([1]), { kind: 'reject', id: 'r', reason: 'bad_caller' });
  // Exactly one of caller and hermes.
  const both = JSON.stringify({
    v: 1,
    id: 'b',
    tool: 'memory_bridge_search',
    args: {},
    hermes: signals(),
    caller: { home, profile: '', cron: false, subagent: false },
  });
  t.is(parseRequestLine(Buffer.from(both)).kind, 'reject');
});

test("caller › hermes-api.json records the registration home; status and doctor judge it by the worker's rule", (t) => {
  t.is(homeProblemOf(home), null);
  t.is(homeProblemOf('relative/home'), 'home_relative');
  t.is(homeProblemOf(link), 'home_symlink');
  t.is(homeProblemOf(undefined), 'context_module_missing');
  const dir = mkdirs(tmp, 'plugin-dir');
  const report = {
    v: 2,
    checked_at: '2026-12-03T00:00:00Z',
    python: '3.11.7',
    hermes_version: '0.21.3',
    register_tool: true,
    helpers: {},
    optional: {},
    missing: [],
    registered: true,
  };
  const judged = (extra: Record<string, unknown>) => {
    fs.writeFileSync(path.join(dir, 'hermes-api.json'), JSON.stringify({ ...report, ...extra }));
    const read = readApiReport(dir);
    return read.state === 'found' ? read.report.homeProblem : read.state;
  };
  t.is(judged({ home }), null);
  t.is(judged({ home: link }), 'home_symlink');
  t.is(judged({}), 'context_module_missing');
  // A report of the older shim carries the verdict itself.
  t.is(judged({ v: 1, home_problem: 'home_relative' }), 'home_relative');
  t.is(judged({ v: 1, home_problem: null }), null);
});
