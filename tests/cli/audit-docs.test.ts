/** docs/AUDIT.md's table of the policy's `audit` keys agrees with `AUDIT_TABLE` (src/policy/schema.ts). */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { AUDIT_TABLE } from '../../src/policy/schema.js';

test('docs › AUDIT.md lists every audit key with its default and range as AUDIT_TABLE has them', (t) => {
  const doc = fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'docs', 'AUDIT.md'), 'utf8');
  for (const row of AUDIT_TABLE) {
    const line = doc.split('\n').find((l) => l.startsWith(`| \`${row.key}\` |`));
    t.truthy(line, row.key);
    const cells = line!.split(' | ');
    t.is(cells[1], `\`${JSON.stringify(row.default)}\``, row.key);
    if (row.range !== null) t.is(cells[2], `${row.range[0]} to ${row.range[1]}`, row.key);
  }
});
