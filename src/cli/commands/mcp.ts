/**
 * `memory-bridge mcp`: serve the two tools over MCP stdio (docs/TOOLS.md, docs/POLICY.md, docs/CLI.md).
 */
import { createBridge } from '../../tools/bridge.js';
import { runMcpServer } from '../../server/mcp.js';
import { parseArgs, stringFlag, UsageError } from '../args.js';
import { callerFromFlags, EXIT, packageVersion, type Command } from '../command.js';
import { CALLER_FLAGS, CALLER_FLAGS_HELP } from './search.js';

export const command: Command = {
  name: 'mcp',
  summary: 'serve memory_bridge_search and memory_bridge_read over MCP stdio',
  usage: `usage: memory-bridge mcp [--home DIR] [--run-kind interactive|cron|subagent]

Serve the two read-only tools to an MCP host over stdin/stdout. Every call is made as the profile home named
at launch; nothing a tool call sends can change it.

${CALLER_FLAGS_HELP}

stdout carries only MCP messages; operator logs (short reason codes) go to stderr.`,
  async run(argv) {
    const parsed = parseArgs(argv, CALLER_FLAGS);
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const { caller, warning } = callerFromFlags(stringFlag(parsed, 'home'), stringFlag(parsed, 'run-kind'));
    if (warning !== undefined) process.stderr.write(`memory-bridge mcp: ${warning}\n`);
    if (caller.home === null)
      process.stderr.write(
        'memory-bridge mcp: no profile home (--home or HERMES_HOME): every call will be unavailable\n',
      );
    await runMcpServer({ caller, bridge: createBridge(), version: packageVersion() });
    return EXIT.OK;
  },
};
