/**
 * The hosts `memory-bridge init --host` knows, as data (docs/CLI.md §init, docs/HOSTS.md): for each, the run-kind
 * opt-ins its policy gets and the configuration to paste, built from the node binary and CLI that run now and the
 * profile home. Every value is quoted for where it goes (a JSON string in YAML flow style or in JSON, a POSIX shell
 * word), so a path with spaces or quotes pastes as it is.
 */
import { shellWord } from '../text/operator.js';

/** What the host config starts: this node binary and this package's CLI (absolute paths). */
export interface Launch {
  node: string;
  cli: string;
  /** The profile home (absolute, canonical). */
  home: string;
}

/** One host `init` can configure. */
export interface HostSpec {
  /** The `--host` value. */
  readonly name: string;
  /** One line for `init --help`. */
  readonly summary: string;
  /**
   * The policy's `allow_cron` and `allow_subagents`. True only for a host whose one connection serves cron jobs and
   * subagents too and cannot tell them apart (the server sees run kind `unknown`, docs/POLICY.md §Run kind).
   */
  readonly optIns: { readonly allowCron: boolean; readonly allowSubagents: boolean };
  /** The lines to print: where to paste, then what. */
  config(launch: Launch): string[];
}

/** Node flags the host starts the server with (docs/HOSTS.md: a smaller young generation, same latency). */
const NODE_FLAGS = ['--max-semi-space-size=2'] as const;

/** The node arguments of `memory-bridge mcp` for `launch`, with `extra` flags after the home. */
function mcpArgs(launch: Launch, extra: readonly string[]): string[] {
  return [...NODE_FLAGS, launch.cli, 'mcp', '--home', launch.home, ...extra];
}

/** The hosts, in the order `init --help` lists them. */
export const HOSTS: readonly HostSpec[] = Object.freeze([
  {
    name: 'hermes',
    summary: 'the Hermes Agent plugin (sees the run kind of every call; docs/HERMES.md)',
    optIns: { allowCron: false, allowSubagents: false },
    config: (l: Launch) => [
      'Install the Hermes plugin into this profile and enable it:',
      `  memory-bridge install --home ${shellWord(l.home)}`,
      `  HERMES_HOME=${shellWord(l.home)} hermes plugins enable memory-bridge`,
      'then restart Hermes (or its gateway) and check:',
      `  memory-bridge doctor --home ${shellWord(l.home)}`,
      'Cron jobs and subagents are refused until you set "allow_cron" / "allow_subagents" to true in the policy.',
    ],
  },
  {
    name: 'hermes-mcp',
    summary: "Hermes Agent's mcp_servers (one connection serves sessions, cron jobs, subagents alike)",
    optIns: { allowCron: true, allowSubagents: true },
    config: (l: Launch) => [
      `Add to ${l.home}/config.yaml:`,
      'mcp_servers:',
      '  memory:',
      `    command: ${JSON.stringify(l.node)}`,
      `    args: ${JSON.stringify(mcpArgs(l, []))}`,
      'Hermes shares this one connection between every session, cron job and subagent, so the server cannot tell',
      'them apart: the policy allows cron jobs and subagents ("allow_cron" and "allow_subagents" are true). To keep',
      'them out, set both to false and use the Hermes plugin instead (--host hermes), which sees each call.',
    ],
  },
  {
    name: 'claude-code',
    summary: 'Claude Code (claude mcp add, run kind interactive)',
    optIns: { allowCron: false, allowSubagents: false },
    config: (l: Launch) => [
      'Run:',
      `  claude mcp add --transport stdio --scope user memory -- ${[l.node, ...mcpArgs(l, ['--run-kind', 'interactive'])].map(shellWord).join(' ')}`,
    ],
  },
  {
    name: 'claude-desktop',
    summary: 'Claude Desktop (claude_desktop_config.json, run kind interactive)',
    optIns: { allowCron: false, allowSubagents: false },
    config: (l: Launch) => [
      'Merge into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Linux: ~/.config/Claude/):',
      ...JSON.stringify(
        { mcpServers: { memory: { command: l.node, args: mcpArgs(l, ['--run-kind', 'interactive']) } } },
        null,
        2,
      ).split('\n'),
    ],
  },
] satisfies HostSpec[]);

/** The host named `name`, or undefined. */
export function hostNamed(name: string): HostSpec | undefined {
  return HOSTS.find((h) => h.name === name);
}

/** What `init` prints without `--host`: the command line any MCP host runs, for a person at the keyboard. */
export function genericConfig(l: Launch): string[] {
  return [
    'Any MCP host (stdio) starts, for a person at the keyboard:',
    `  ${[l.node, ...mcpArgs(l, ['--run-kind', 'interactive'])].map(shellWord).join(' ')}`,
    `Host-specific configuration: ${HOSTS.map((h) => `--host ${h.name}`).join(', ')} (docs/HOSTS.md).`,
  ];
}
