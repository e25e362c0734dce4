/**
 * README.md is the newcomer's page (issue 21 point 7): at most ~300 lines with a table of contents, the two
 * commands of the quick start, the five steps for one's own notes, the tools' contract and errors, the threat
 * model's hardening classes (issue 22 point 10), and links into docs/ for every detail. The facts it hands over
 * are checked where they now live (tests/cli/docs.test.ts checks that every link resolves).
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { LIMIT_TABLE } from '../../src/policy/schema.js';
import { PUBLIC_MESSAGES } from '../../src/errors.js';
import { REPO_ROOT } from './tree.js';
import { anchorsOf, sectionOf } from './markdown.js';

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const doc = (name: string): string => fs.readFileSync(path.join(REPO_ROOT, 'docs', name), 'utf8');

test('readme › quick start shows exactly the two commands, each on its own line in a code block', (t) => {
  const block = /## Quick start\n\n```\n([^`]*)```/.exec(readme);
  t.truthy(block);
  t.deepEqual(block![1]!.trimEnd().split('\n'), ['npm ci && npm run demo', 'npm ci && npm test']);
});

test('readme › stays a short page: at most 300 lines', (t) => {
  t.true(readme.split('\n').length <= 300, `${readme.split('\n').length} lines`);
});

test('readme › the table of contents links every section of the page, and only sections that exist', (t) => {
  const contents = sectionOf(readme, '## Contents');
  const linked = [...contents.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
  const anchors = anchorsOf(readme);
  for (const a of linked) t.true(anchors.has(a), `#${a}`);
  const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]!).filter((h) => h !== 'Contents');
  for (const h of sections)
    t.true(
      linked.some((a) => anchorsOf(`## ${h}`).has(a)),
      `## ${h} is not in the contents`,
    );
});

test('readme › "use it on your own notes" has five steps: build, init, doctor, host config, try it', (t) => {
  const steps = [...sectionOf(readme, '## Use it on your own notes').matchAll(/^(\d)\. \*\*/gm)].map((m) => m[1]);
  t.deepEqual(steps, ['1', '2', '3', '4', '5']);
  const own = sectionOf(readme, '## Use it on your own notes');
  t.regex(own, /memory-bridge init --home \S+ --root \S+ --host /);
  t.regex(own, /memory-bridge doctor --home /);
});

test('readme › the Hermes mcp_servers snippet is the one docs/HOSTS.md explains', (t) => {
  const yaml = (text: string): string => {
    const m = /```yaml\n((?:[ \t]*)mcp_servers:\n[^`]*?)[ \t]*```/.exec(text);
    const lines = (m?.[1] ?? '').trimEnd().split('\n');
    const indent = Math.min(...lines.map((l) => /^ */.exec(l)![0].length));
    return lines.map((l) => l.slice(indent)).join('\n');
  };
  const inReadme = yaml(sectionOf(readme, '## Use it on your own notes'));
  t.true(inReadme.startsWith('mcp_servers:'));
  t.is(inReadme, yaml(doc('HOSTS.md')));
});

test('readme › every public error code appears with its fixed message, in the README and in docs/TOOLS.md', (t) => {
  for (const [code, message] of Object.entries(PUBLIC_MESSAGES)) {
    t.true(readme.includes(`| \`${code}\` | \`${message}\` |`), `README ${code}`);
    t.true(doc('TOOLS.md').includes(`| \`${code}\` | \`${message}\` |`), `TOOLS.md ${code}`);
  }
});

test('docs/POLICY.md › the limits table gives every limit with its real default, ceiling and unit', (t) => {
  const policy = doc('POLICY.md');
  for (const row of LIMIT_TABLE) {
    const line = new RegExp(`^\\| \`${row.key}\` \\| ${row.default} \\| ${row.ceiling} \\| ${row.unit} \\|`, 'm');
    t.regex(policy, line, row.key);
  }
});

test('readme › the sections other parts of the project fill in are present', (t) => {
  for (const heading of [
    '## Use it on your own notes',
    '## The two tools',
    '## Hermes plugin',
    '## Fleet export',
    '## Benchmarks',
    '## Threat model and limits',
    '## Platform status',
  ]) {
    t.regex(readme, new RegExp(`^${heading}$`, 'm'), heading);
  }
});

test('readme › the threat model names each hardening class of issue 22, each with a link into docs/', (t) => {
  const threat = sectionOf(readme, '## Threat model and limits');
  const classes = [
    /super-linear Markdown/,
    /`within` cannot churn views/,
    /Slow HTTP bodies/,
    /open-for-writing check/,
    /inotify watches/,
    /hidden silently/,
    /name oracle/,
    /raise no event/,
  ];
  const bullets = threat.split('\n- ').slice(1);
  for (const c of classes) {
    const bullet = bullets.find((b) => c.test(b));
    t.truthy(bullet, String(c));
    t.regex(bullet ?? '', /\]\(docs\/[A-Z-]+\.md(#[a-z0-9-]+)?\)/, String(c));
  }
});

test('bench › README has the summary markers and docs/BENCHMARKS.md the table markers the bench writes between', (t) => {
  const between = (text: string, a: string, b: string): boolean =>
    text.indexOf(a) >= 0 && text.indexOf(b) > text.indexOf(a);
  t.true(between(readme, '<!-- bench:summary:begin -->', '<!-- bench:summary:end -->'));
  t.true(between(doc('BENCHMARKS.md'), '<!-- bench:begin -->', '<!-- bench:end -->'));
  t.false(readme.includes('<!-- bench:begin -->'), 'the tables live in docs/BENCHMARKS.md, not in the README');
});
