/**
 * Child process of exhaustion.test.ts: loads the bridge, lowers its own descriptor limit to argv[2], then runs
 * each call given as JSON in argv[3] on a fresh bridge and prints one JSON line per call: the result and the
 * operator reasons logged.
 */
import { createBridge } from '../../src/tools/bridge.js';
import type { Caller, ToolName } from '../../src/tools/types.js';
import { setOpenFileLimit } from '../helpers/rlimit.js';

const limit = Number(process.argv[2]);
const calls = JSON.parse(process.argv[3]!) as Array<{ tool: ToolName; args: unknown; caller: Caller }>;
const lines: string[] = [];
setOpenFileLimit(0, limit);
for (const c of calls) {
  const reasons: string[] = [];
  const result = createBridge({ log: (e) => reasons.push(e.reason) }).call(c.tool, c.args, c.caller);
  lines.push(JSON.stringify({ result, reasons }));
}
process.stdout.write(`${lines.join('\n')}\n`);
