/**
 * A real MCP client over stdio to `memory-bridge mcp` (the built CLI), for end-to-end adversarial checks.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI } from './support.js';

export interface McpSession {
  /** Call a tool with `args` sent exactly as given; returns the one text content item and isError. */
  call(name: string, args: unknown): Promise<{ text: string; isError: boolean }>;
  stderr(): string;
  close(): Promise<void>;
}

/**
 * Spawn `memory-bridge mcp --home HOME --run-kind interactive` and connect a real SDK client. `cli` is the entry
 * point to run (default: this checkout's built CLI; the package test passes an installed copy's).
 */
export async function connectMcp(
  home: string,
  extraEnv: Record<string, string> = {},
  cwd?: string,
  cli = CLI,
): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--home', home, '--run-kind', 'interactive'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extraEnv },
    stderr: 'pipe',
    ...(cwd === undefined ? {} : { cwd }),
  });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const client = new Client({ name: 'memory-bridge-adversary', version: '0.0.0' });
  await client.connect(transport);
  return {
    async call(name, args) {
      const res = await client.request(
        { method: 'tools/call', params: { name, arguments: args } as never },
        CallToolResultSchema,
        {
          timeout: 120_000,
        },
      );
      if (res.content.length !== 1 || res.content[0]!.type !== 'text')
        throw new Error('expected one text content item');
      return { text: (res.content[0] as { text: string }).text, isError: res.isError === true };
    },
    stderr: () => err,
    close: () => client.close(),
  };
}
