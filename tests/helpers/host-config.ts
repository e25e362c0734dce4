/**
 * Reading host configurations the way hosts read them (for the init and docs tests): Hermes's `mcp_servers` YAML
 * (the subset the snippets use: nested maps by indentation, plain or double-quoted scalars, flow sequences written
 * as JSON), a POSIX shell command line (plain words and single quotes), and a launch of the configured command
 * with a real MCP client over stdio.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ParsedJson } from './fixtures.js';

/** One value of the YAML subset: a string or a list of strings, or a nested map. */
export type YamlValue = string | string[] | { [key: string]: YamlValue };

function scalar(text: string): string | string[] {
  if (text.startsWith('[')) {
    const list = JSON.parse(text) as unknown;
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) throw new Error(`not a list: ${text}`);
    return list as string[];
  }
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (/["'[\]{}#&*!|>%@`]/.test(text[0] ?? '')) throw new Error(`unsupported scalar: ${text}`);
  return text;
}

/**
 * Parse `text` (YAML subset above). Each line is `key:` (a map follows, indented more) or `key: value`; blank lines
 * and `#` comments are skipped.
 *
 * @throws Error on anything outside the subset (tabs, bad indentation, a list item, an anchor)
 */
export function parseYamlSubset(text: string): { [key: string]: YamlValue } {
  const top: { [key: string]: YamlValue } = {};
  const stack: Array<{ indent: number; map: { [key: string]: YamlValue } }> = [{ indent: -1, map: top }];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    if (raw.includes('\t')) throw new Error('tab in YAML');
    const indent = raw.length - raw.trimStart().length;
    const m = /^([A-Za-z0-9_-]+):(?: (.*))?$/.exec(raw.trim());
    if (m === null) throw new Error(`not a key line: ${raw}`);
    while (stack[stack.length - 1]!.indent >= indent) stack.pop();
    const parent = stack[stack.length - 1]!.map;
    if (m[2] === undefined || m[2] === '') {
      const map: { [key: string]: YamlValue } = {};
      parent[m[1]!] = map;
      stack.push({ indent, map });
    } else parent[m[1]!] = scalar(m[2].trim());
  }
  return top;
}

/** Split a POSIX shell command line made of plain words and single-quoted parts (what init prints). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unclosed quote');
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (ch === '\\') {
      word = (word ?? '') + (line[i + 1] ?? '');
      i++;
    } else if (/["$`;&|<>(){}*?]/.test(ch)) throw new Error(`unsupported shell character ${ch}`);
    else word = (word ?? '') + ch;
  }
  if (word !== null) words.push(word);
  return words;
}

/**
 * Start `command args` as an MCP host would (minimal environment: PATH plus `env`), connect a real SDK client over
 * stdio, make one tool call, and close.
 *
 * @returns the tool's JSON answer and what the server wrote on stderr
 */
export async function callConfigured(
  command: string,
  args: readonly string[],
  tool: string,
  toolArgs: unknown,
  env: Record<string, string> = {},
): Promise<{ json: ParsedJson; stderr: string }> {
  const transport = new StdioClientTransport({
    command,
    args: [...args],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'memory-bridge-host-config', version: '0.0.0' });
  await client.connect(transport);
  try {
    const res = await client.request(
      { method: 'tools/call', params: { name: tool, arguments: toolArgs } as never },
      CallToolResultSchema,
      { timeout: 120_000 },
    );
    const text = (res.content[0] as { type: 'text'; text: string }).text;
    return { json: JSON.parse(text) as ParsedJson, stderr };
  } finally {
    await client.close();
  }
}
