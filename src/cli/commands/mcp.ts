/**
 * `memory-bridge mcp`: serve the two tools over MCP stdio (docs/TOOLS.md, docs/POLICY.md, docs/CLI.md).
 */
import { DeferredBridge } from '../../server/deferred-bridge.js';
import { runMcpServer } from '../../server/mcp.js';
import type { Bridge, Caller } from '../../tools/types.js';
import { parseArgs, stringFlag, UsageError } from '../args.js';
import { callerFromFlags, EXIT, packageVersion, type Command } from '../command.js';
import { CALLER_FLAGS, CALLER_FLAGS_HELP } from './caller-flags.js';

/**
 * The bridge of this server, loaded once the server has answered the host's `tools/list` or at the first tool
 * call (`DeferredBridge`: its modules are about as much to load as the SDK's). The start check runs with the
 * load, before any tool call is answered: when a call as this home and run kind would be refused, one line on
 * stderr names the reason and what to do.
 */
async function loadBridge(caller: Caller): Promise<Bridge> {
  const [{ createBridge }, { refusalAtStart, startRefusalText }] = await Promise.all([
    import('../../tools/bridge.js'),
    import('../../tools/start.js'),
  ]);
  // Said once at start, so a host configuration (or a root) that can only be refused is seen before the first
  // call; every call still reads the policy and judges the root again, and a fix made while the server runs applies
  // at the next call.
  const refusal = refusalAtStart(caller);
  if (refusal !== null)
    process.stderr.write(
      `memory-bridge mcp: every call will be unavailable until this is fixed: ${startRefusalText(refusal)}\n`,
    );
  return createBridge({ transport: 'stdio' });
}

export const command: Command = {
  name: 'mcp',
  summary: 'serve memory_bridge_search and memory_bridge_read over MCP stdio',
  usage: `usage: memory-bridge mcp [--home DIR] [--run-kind interactive|cron|subagent]

Serve the two read-only tools to an MCP host over stdin/stdout. Every call is made as the profile home named
at launch; nothing a tool call sends can change it.

${CALLER_FLAGS_HELP}

At start (once the host has listed the tools, or at its first tool call), when a call as this home and run kind
would be refused (no home, a policy that does not load, a run kind the policy does not serve, a root that fails
the trust rule), one line on stderr names the reason and what to do. stdout carries only MCP
messages; operator logs (short reason codes, each with its remedy the first time it appears) go to stderr.`,
  async run(argv) {
    const parsed = parseArgs(argv, CALLER_FLAGS);
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const { caller, warning } = callerFromFlags(stringFlag(parsed, 'home'), stringFlag(parsed, 'run-kind'));
    if (warning !== undefined) process.stderr.write(`memory-bridge mcp: ${warning}\n`);
    const bridge = new DeferredBridge(
      () => loadBridge(caller),
      () => process.stderr.write('memory-bridge: server internal\n'),
    );
    await runMcpServer({ caller, bridge, version: packageVersion() });
    return EXIT.OK;
  },
};
