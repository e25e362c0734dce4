import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { LIMIT_TABLE } from '../../src/policy/schema.js';
import { PUBLIC_MESSAGES } from '../../src/errors.js';
import { REPO_ROOT } from './tree.js';

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

test('readme › quick start shows exactly the two commands, each on its own line in a code block', (t) => {
  const block = /## Quick start\n\n```\n([^`]*)```/.exec(readme);
  t.truthy(block);
  t.deepEqual(block![1]!.trimEnd().split('\n'), ['npm ci && npm run demo', 'npm ci && npm test']);
});

test('readme › the limits table gives every limit with its real default and ceiling', (t) => {
  for (const row of LIMIT_TABLE) {
    const line = new RegExp(`^\\| \`${row.key}\` \\| ${row.default} \\| ${row.ceiling} \\| ${row.unit} \\|`, 'm');
    t.regex(readme, line, row.key);
  }
});

test('readme › every public error code appears with its fixed message', (t) => {
  for (const [code, message] of Object.entries(PUBLIC_MESSAGES))
    t.true(readme.includes(`| \`${code}\` | \`${message}\` |`), code);
});

test('readme › the sections other parts of the project fill in are present', (t) => {
  for (const heading of ['## Hermes plugin', '## Fleet export', '## Threat model and limits', '## Platform status']) {
    t.regex(readme, new RegExp(`^${heading}$`, 'm'), heading);
  }
});
