/**
 * The policy `memory-bridge init` writes (docs/CLI.md §init, docs/POLICY.md): every key spelled out with the
 * schema's own defaults (so a default changed in `src/policy/schema.ts` is what the next init writes), written
 * once, owner-only, never over an existing file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeNewFile } from '../atomic-write.js';
import { getNative } from '../../native/index.js';
import { parsePolicyBytes, policyPath } from '../policy/load.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import { PolicySchema, rootProblem } from '../policy/schema.js';
import { openTrustedDir } from '../trust/path.js';
import { scanTree } from '../trust/scan.js';
import { closeQuietly } from '../trust/walk.js';
import { shellWord } from '../text/operator.js';

/** Every pattern of the written policy's `allow`: the whole folder (hidden names are skipped by the names rule). */
export const INIT_ALLOW = Object.freeze(['**']);

/** Why init cannot go on; `remedy` is one line for the operator (it may name paths). */
export class InitError extends Error {
  override readonly name = 'InitError';
  constructor(
    message: string,
    readonly remedy: string,
  ) {
    super(message);
  }
}

/**
 * The notes folder as the policy must name it: absolute, every symbolic link resolved (realpath(3)), and a
 * directory. The trust walk never follows a link, so a root written through one would be refused on every call.
 *
 * @param given the `--root` value, resolved against the working directory
 * @throws InitError when it does not exist, is not a directory, or is a root the schema refuses (`rootProblem`)
 */
export function canonicalRoot(given: string): string {
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(given));
  } catch (err) {
    throw new InitError(
      `--root ${given} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      'name the existing folder that holds the notes',
    );
  }
  if (!fs.statSync(real).isDirectory())
    throw new InitError(`--root ${real} is not a directory`, 'name the folder that holds the notes, not a file');
  const problem = rootProblem(real);
  if (problem !== null) throw new InitError(`--root ${real} ${problem}`, 'name the folder that holds the notes');
  return real;
}

/**
 * The policy document for `root`: `version`, `root`, `allow` (`INIT_ALLOW`), `deny` and `names` and every limit as
 * the schema fills them in, and the two run-kind opt-ins as given. No `writers` key: only root and the running
 * user are trusted until the operator names others (docs/POLICY.md §Writers).
 *
 * @returns the document as it will be written (the schema has accepted it)
 */
export function initialPolicy(
  root: string,
  optIns: { allowCron: boolean; allowSubagents: boolean },
): Record<string, unknown> {
  const doc = PolicySchema.parse({
    version: 1,
    root,
    allow: [...INIT_ALLOW],
    allow_cron: optIns.allowCron,
    allow_subagents: optIns.allowSubagents,
  });
  return {
    version: doc.version,
    root: doc.root,
    allow: doc.allow,
    deny: doc.deny,
    allow_cron: doc.allow_cron,
    allow_subagents: doc.allow_subagents,
    names: doc.names,
    limits: doc.limits,
  };
}

/** The names rules the schema accepts, its default first (read from the schema, so a new rule is tried too). */
function nameRules(): string[] {
  const field = PolicySchema.shape.names;
  const fallback = String(field.def.defaultValue);
  return [fallback, ...field.unwrap().options.filter((r: string) => r !== fallback)];
}

/** The names rule init writes, and how many notes each rule it tried would let the policy see. */
export interface NamesChoice {
  names: string;
  /** Visible notes under each rule tried, in the order tried (the default first); empty when nothing was scanned. */
  visible: ReadonlyArray<{ names: string; notes: number }>;
}

/**
 * The names rule the notes need: the schema's default unless another rule it accepts lets more of the folder's notes
 * be seen, measured by the scan tool calls run (trust rule, the policy's allow and deny, budgets), texts dropped as
 * they pass. Every rule the schema accepts refuses names that can forge output (docs/POLICY.md §Names), so the
 * choice only decides how much of an ordinary vault is served. When the root cannot be opened as a trusted directory
 * (or there are no bindings) the default is kept: doctor then says why.
 *
 * @param doc a policy document from `initialPolicy` (its `names` is replaced for each trial)
 */
export function chooseNamesRule(doc: Record<string, unknown>): NamesChoice {
  const rules = nameRules();
  const native = getNative();
  if (native === null) return { names: rules[0]!, visible: [] };
  let rootFd: number;
  try {
    rootFd = openTrustedDir(String(doc.root), 'root', native);
  } catch {
    return { names: rules[0]!, visible: [] };
  }
  try {
    const visible: Array<{ names: string; notes: number }> = [];
    for (const names of rules) {
      const policy = parsePolicyBytes(Buffer.from(JSON.stringify({ ...doc, names })));
      const scan = scanTree(rootFd, policy, { ...scanLimitsOf(policy), keepText: false }, { has: () => false }, native);
      visible.push({ names, notes: scan.notes.length });
    }
    // Strictly more notes to switch: on a tie the default stays.
    let best = visible[0]!;
    for (const v of visible) if (v.notes > best.notes) best = v;
    return { names: best.names, visible };
  } catch {
    return { names: rules[0]!, visible: [] };
  } finally {
    closeQuietly(native, rootFd);
  }
}

/**
 * Create `dir` and any missing parents with mode 0700 (set explicitly: the umask must not matter); directories
 * that already exist keep their owner and mode (the policy's trusted read judges them).
 *
 * @returns the directories it created, outermost first
 */
function makeOwnerOnlyDirs(dir: string): string[] {
  const missing: string[] = [];
  for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) missing.unshift(d);
  for (const d of missing) {
    fs.mkdirSync(d, { mode: 0o700 });
    fs.chmodSync(d, 0o700);
  }
  return missing;
}

/**
 * Write `doc` as `<home>/plugin-data/memory-bridge/policy.json`: directories created 0700, the file created with
 * O_EXCL and O_NOFOLLOW (so an existing file, or a link planted in its place, is never written through) and mode
 * 0600, then fsynced (`writeNewFile` of src/atomic-write.ts), the JSON indented for reading.
 *
 * @param home absolute profile home (created when missing)
 * @returns the policy path and the directories created
 * @throws InitError when a policy (or anything else) already exists at that path
 */
export function writeNewPolicy(home: string, doc: Record<string, unknown>): { file: string; created: string[] } {
  const file = policyPath(home);
  if (exists(file)) throw existingPolicy(home, file);
  const created = makeOwnerOnlyDirs(path.dirname(file));
  try {
    writeNewFile(file, `${JSON.stringify(doc, null, 2)}\n`, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw existingPolicy(home, file);
    throw err;
  }
  return { file, created };
}

/** True when anything (a file, a directory, a dangling link) is at `p`. */
function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function existingPolicy(home: string, file: string): InitError {
  return new InitError(
    `a policy already exists at ${file}; init never overwrites one`,
    `check it with memory-bridge doctor --home ${shellWord(home)} and edit it by hand, or move it away (mv ${shellWord(file)} ${shellWord(`${file}.old`)}) and run init again`,
  );
}
