/**
 * docs/ agree with the CLI: every flag and every reason code a command's `--help` names is documented in docs/, and
 * docs/CLI.md's table of remedies is the table the code uses (src/remedies.ts), code for code and word for word.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { LISTABLE_REASONS } from '../../src/hermes/doctor.js';
import { HTTP_RESULT_REMEDIES, OPERATOR_REMEDIES, REASON_REMEDIES } from '../../src/remedies.js';
import { cli, REPO_ROOT } from './tree.js';

const docsDir = path.join(REPO_ROOT, 'docs');
const docs = fs
  .readdirSync(docsDir)
  .filter((f) => f.endsWith('.md'))
  .map((f) => fs.readFileSync(path.join(docsDir, f), 'utf8'))
  .join('\n');
const ALL_REMEDIES: Readonly<Record<string, string>> = { ...REASON_REMEDIES, ...OPERATOR_REMEDIES };

/** The command names the top-level help lists. */
function commands(): string[] {
  const help = cli(['--help']).stdout.split('\n');
  const from = help.indexOf('Commands:');
  const names: string[] = [];
  for (const line of help.slice(from + 1)) {
    const m = /^ {2}([a-z][a-z-]*) /.exec(line);
    if (m === null) break;
    names.push(m[1]!);
  }
  return names;
}

const names = commands();

test('docs › the top-level help lists the commands, init among them', (t) => {
  t.true(names.length >= 12, names.join(' '));
  t.true(names.includes('init'));
});

for (const name of names) {
  test(`docs › every flag and reason code in ${name} --help appears in docs/`, (t) => {
    const help = cli([name, '--help']).stdout;
    t.regex(help, new RegExp(`^usage: memory-bridge ${name}\\b`));
    for (const flag of new Set(help.match(/--[a-z][a-z0-9-]*/g) ?? [])) {
      // As a whole flag: `--list` must not be satisfied by `--listen`.
      t.regex(docs, new RegExp(`${flag}(?![a-z0-9-])`), `${name}: ${flag}`);
    }
    for (const word of new Set(help.match(/\b[a-z0-9]+(?:_[a-z0-9]+)+\b/g) ?? [])) {
      if (!Object.hasOwn(ALL_REMEDIES, word)) continue;
      t.true(docs.includes(`\`${word}\``), `${name}: reason ${word}`);
    }
  });
}

/** The rows of a remedies table (docs/CLI.md §Refusals and remedies by default): each code of a row's first cell → the row's remedy cell. */
function remedyRows(file = 'CLI.md', heading = '## Refusals and remedies'): Map<string, string> {
  const text = fs.readFileSync(path.join(docsDir, file), 'utf8');
  const from = text.indexOf(heading);
  const next = text.indexOf('\n## ', from + heading.length);
  const section = file === 'CLI.md' ? text.slice(from) : text.slice(from, next === -1 ? undefined : next);
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\| (`[a-z0-9_]+`(?:, `[a-z0-9_]+`)*) \| (.*) \|$/.exec(line);
    if (m === null) continue;
    for (const code of m[1]!.split(', ')) rows.set(code.slice(1, -1), m[2]!);
  }
  return rows;
}

/** A remedy as a Markdown table cell shows it. */
function cell(remedy: string): string {
  return remedy.replaceAll('|', '\\|').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

test('docs › the remedies table of docs/CLI.md is the one the code uses, for every reason code', (t) => {
  const rows = remedyRows();
  for (const [code, remedy] of Object.entries(ALL_REMEDIES)) t.is(rows.get(code), cell(remedy), code);
  for (const code of rows.keys()) t.true(Object.hasOwn(ALL_REMEDIES, code), `documented but unknown: ${code}`);
});

test('docs › the HTTP refusals table of docs/HTTP.md §Operator log is the one serve logs', (t) => {
  const rows = remedyRows('HTTP.md', '## Operator log');
  t.deepEqual([...rows.keys()], Object.keys(HTTP_RESULT_REMEDIES));
  for (const [code, remedy] of Object.entries(HTTP_RESULT_REMEDIES)) t.is(rows.get(code), cell(remedy), code);
});

test('docs › doctor --list accepts every reason code of the table', (t) => {
  for (const code of Object.keys(REASON_REMEDIES)) t.true(LISTABLE_REASONS.includes(code), code);
  t.is(cli(['doctor', '--list', 'no_such_reason', '--home', '/nonexistent']).code, 2);
});
