/**
 * `memory-bridge worker`: serve the Hermes shim's JSON-lines protocol on stdin/stdout (docs/HERMES.md).
 * Started by the plugin shim, not by hand. Exits 0 when stdin ends.
 */
import { runWorker, formatLogEvent } from '../../hermes/worker.js';
import { RemedyNotes } from '../../remedies.js';
import { createBridge } from '../../tools/bridge.js';
import { parseArgs, UsageError } from '../args.js';
import { EXIT, type Command } from '../command.js';

const log = (line: string): void => {
  process.stderr.write(`memory-bridge worker: ${line}\n`);
};

export const command: Command = {
  name: 'worker',
  summary: 'serve the Hermes plugin shim over JSON lines on stdin/stdout (started by the shim)',
  usage: [
    'usage: memory-bridge worker',
    '',
    'Reads one request per line on stdin and writes one reply per line on stdout:',
    '  request {"v":1,"id":"…","tool":"memory_bridge_search"|"memory_bridge_read","args":{…},',
    '           "caller":{"home":"/abs/home","profile":"name","cron":false,"subagent":false}}',
    '  reply   {"v":1,"id":"…","result":{…}}',
    'Lines are at most 1 MiB. The caller record is the only source of identity. Reason codes go to stderr,',
    'each with its remedy the first time it appears.',
    'Exits 0 at the end of stdin. The Hermes plugin starts it; there is no need to run it by hand.',
  ].join('\n'),
  async run(argv: string[]): Promise<number> {
    if (parseArgs(argv, {}).positionals.length > 0) throw new UsageError('worker takes no arguments');
    const notes = new RemedyNotes();
    const bridge = createBridge({ transport: 'worker', log: (event) => log(formatLogEvent(event, notes)) });
    await runWorker({ input: process.stdin, output: process.stdout, bridge, log });
    return EXIT.OK;
  },
};
