import test from 'ava';
import { BridgeError } from '../../src/errors.js';
import { checkRunKind, parseCaller } from '../../src/tools/caller.js';

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof BridgeError && err.code === 'unavailable') return err.reason;
    throw err;
  }
  return undefined;
}

const policy = (allowCron: boolean, allowSubagents: boolean) => ({ allowCron, allowSubagents });

test('run kind › interactive calls always pass', (t) => {
  t.is(
    reasonOf(() => checkRunKind({ cron: false, subagent: false }, policy(false, false))),
    undefined,
  );
});

test('run kind › cron needs allow_cron', (t) => {
  t.is(
    reasonOf(() => checkRunKind({ cron: true, subagent: false }, policy(false, true))),
    'cron_refused',
  );
  t.is(
    reasonOf(() => checkRunKind({ cron: true, subagent: false }, policy(true, false))),
    undefined,
  );
});

test('run kind › subagent needs allow_subagents', (t) => {
  t.is(
    reasonOf(() => checkRunKind({ cron: false, subagent: true }, policy(true, false))),
    'subagent_refused',
  );
  t.is(
    reasonOf(() => checkRunKind({ cron: false, subagent: true }, policy(false, true))),
    undefined,
  );
});

test('run kind › a call that is both (or unknown) needs both opt-ins', (t) => {
  const both = { cron: true, subagent: true };
  t.is(
    reasonOf(() => checkRunKind(both, policy(false, false))),
    'run_kind_refused',
  );
  t.is(
    reasonOf(() => checkRunKind(both, policy(true, false))),
    'run_kind_refused',
  );
  t.is(
    reasonOf(() => checkRunKind(both, policy(false, true))),
    'run_kind_refused',
  );
  t.is(
    reasonOf(() => checkRunKind(both, policy(true, true))),
    undefined,
  );
});

test('caller › a missing home is unavailable with no_home', (t) => {
  t.is(
    reasonOf(() => parseCaller({ home: null, cron: false, subagent: false }).home),
    'no_home',
  );
});

test('caller › a relative, empty or NUL-holding home is unavailable with bad_home', (t) => {
  for (const home of ['relative/home', '', './home', '/ok\0no']) {
    t.is(
      reasonOf(() => parseCaller({ home, cron: false, subagent: false }).home),
      'bad_home',
      JSON.stringify(home),
    );
  }
});

test('caller › a malformed caller record is unavailable with bad_caller', (t) => {
  for (const caller of [
    null,
    'x',
    { home: '/h' },
    { home: '/h', cron: 'no', subagent: false },
    { home: 5, cron: false, subagent: false },
  ]) {
    t.is(
      reasonOf(() => parseCaller(caller).home),
      'bad_caller',
      JSON.stringify(caller),
    );
  }
});

test('caller › an absolute home is returned as given', (t) => {
  t.is(
    parseCaller({ home: '/srv/hermes/alice', cron: false, subagent: false, profile: 'alice' }).home,
    '/srv/hermes/alice',
  );
});
