import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FALLBACK_REMEDY, remedyOf } from '../../src/remedies.js';

// The shim logs reason codes only; what the operator should do about each lives in src/remedies.ts, where doctor,
// status and the worker's log find it. Every code the shim can refuse for must have a remedy there.
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const shim = fs.readFileSync(path.join(repo, 'plugin', '__init__.py'), 'utf8');

test('every reason the shim refuses for has a remedy in src/remedies.ts', (t) => {
  const reasons = new Set<string>();
  for (const m of shim.matchAll(/_Refused\("([a-z_]+)"/g)) reasons.add(m[1]!);
  for (const m of shim.matchAll(/_Refused\("([a-z_]+)" if [^)]* else "([a-z_]+)"\)/g)) {
    reasons.add(m[1]!);
    reasons.add(m[2]!);
  }
  t.true(reasons.size >= 12, [...reasons].join(', '));
  for (const reason of reasons) t.not(remedyOf(reason), FALLBACK_REMEDY, reason);
});

test("every reason the worker refuses the shim's signals for has a remedy too", (t) => {
  const decider = fs.readFileSync(path.join(repo, 'src', 'hermes', 'caller.ts'), 'utf8');
  const reasons = new Set([...decider.matchAll(/Refused\('([a-z_]+)'\)/g)].map((m) => m[1]!));
  for (const m of decider.matchAll(/return '([a-z_]+)';/g)) reasons.add(m[1]!);
  t.true(reasons.size >= 8, [...reasons].join(', '));
  for (const reason of reasons) t.not(remedyOf(reason), FALLBACK_REMEDY, reason);
});

test('the shim never names the memory provider base class (a plugin mentioning it is taken for a provider)', (t) => {
  t.false(/MemoryProvider|memory_provider/.test(shim));
});
