/**
 * The synthetic demo behind `memory-bridge demo` (`npm run demo`).
 *
 * It builds a fresh owner-only tree in a new temporary directory (the bundled `examples/memory` notes copied with
 * directories 0700 and files 0600, and two profile homes with different policies), then calls the real tool
 * handlers in-process through `createBridge()` and narrates each step with the JSON a model would see. Every step
 * states what should happen and checks it, so the demo doubles as a smoke test: any surprise makes it exit 1.
 * The tree is removed on exit, on error and on SIGINT/SIGTERM. It reads nothing but the bundled examples and never
 * touches a real Hermes profile.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { replaceFile } from '../atomic-write.js';
import { createBridge } from '../tools/bridge.js';
import { policyPath } from '../policy/load.js';
import type { Bridge, Caller, LogEvent, ToolName, ToolResult } from '../tools/types.js';
import { packageRoot } from './command.js';

/** Where the demo writes its narration and reads typed queries. */
export interface DemoIo {
  out: NodeJS.WritableStream;
  input: NodeJS.ReadableStream;
}

export interface DemoOptions {
  /** After setup, read queries from `io.input` instead of running the scripted tour. */
  interactive: boolean;
  io?: DemoIo;
}

/** The two synthetic profiles: same notes, different policies. */
const PROFILES = {
  gardener: {
    allow: ['projects/**', 'decisions/**', 'workflows/**'],
    deny: ['**/private/**'],
    blurb: 'may read projects, decisions and workflows, but never anything in a private/ folder',
  },
  visitor: {
    allow: ['workflows/**'],
    deny: [] as string[],
    blurb: 'may read only workflows',
  },
} as const;
type ProfileName = keyof typeof PROFILES;

interface PolicyOverrides {
  allow?: readonly string[];
  deny?: readonly string[];
  allow_cron?: boolean;
  allow_subagents?: boolean;
}

/** The demo's temporary world: the notes root, one home per profile, and how to (re)write their policies. */
class DemoWorld {
  readonly base: string;
  readonly root: string;
  readonly homes: Record<ProfileName, string>;
  private removed = false;

  constructor() {
    // mkdtemp creates the directory 0700 already; chmod anyway so a strange umask or platform cannot widen it.
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-bridge-demo-'));
    fs.chmodSync(made, 0o700);
    // The policy root must be canonical (docs/POLICY.md); on macOS the temp dir sits behind the /var symlink.
    this.base = fs.realpathSync(made);
    this.root = path.join(this.base, 'memory');
    this.homes = {
      gardener: path.join(this.base, 'homes', 'gardener'),
      visitor: path.join(this.base, 'homes', 'visitor'),
    };
    try {
      copyOwnerOnly(path.join(packageRoot(), 'examples', 'memory'), this.root);
      for (const name of Object.keys(PROFILES) as ProfileName[]) this.writePolicy(name);
    } catch (err) {
      this.remove();
      throw err;
    }
  }

  /** Write a profile's policy: the profile's defaults with `overrides` applied (0600, parent dirs 0700). */
  writePolicy(name: ProfileName, overrides: PolicyOverrides = {}): void {
    const file = policyPath(this.homes[name]);
    mkdirOwnerOnly(this.base, path.relative(this.base, path.dirname(file)));
    const policy = {
      version: 1,
      root: this.root,
      allow: overrides.allow ?? PROFILES[name].allow,
      deny: overrides.deny ?? PROFILES[name].deny,
      allow_cron: overrides.allow_cron ?? false,
      allow_subagents: overrides.allow_subagents ?? false,
      names: 'portable',
      limits: { max_results: 5, snippet_chars: 160 },
    };
    // The one atomic write (src/atomic-write.ts), so no call can ever see half a file.
    replaceFile(file, `${JSON.stringify(policy, null, 2)}\n`, 0o600);
  }

  removePolicy(name: ProfileName): void {
    fs.rmSync(policyPath(this.homes[name]), { force: true });
  }

  /** Delete the whole temporary tree (idempotent; safe from signal handlers and `exit`). */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    fs.rmSync(this.base, { recursive: true, force: true });
  }
}

/** Create `rel` below `base` one segment at a time, each new directory 0700. */
function mkdirOwnerOnly(base: string, rel: string): void {
  let cur = base;
  for (const seg of rel.split(path.sep).filter((s) => s !== '')) {
    cur = path.join(cur, seg);
    if (!fs.existsSync(cur)) fs.mkdirSync(cur);
    fs.chmodSync(cur, 0o700);
  }
}

/**
 * Copy a tree of directories and regular files only, directories 0700 and files 0600 (explicit chmod, so the umask
 * cannot matter); symlinks and special files are skipped. `to` must not exist yet.
 */
export function copyOwnerOnly(from: string, to: string): void {
  fs.mkdirSync(to);
  fs.chmodSync(to, 0o700);
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) copyOwnerOnly(src, dst);
    else if (entry.isFile()) {
      fs.copyFileSync(src, dst);
      fs.chmodSync(dst, 0o600);
    }
  }
}

const INTERACTIVE: Omit<Caller, 'home'> = { cron: false, subagent: false };

/** The scripted tour and the interactive prompt share this: call a tool, show the JSON and the operator log. */
class Narrator {
  readonly surprises: string[] = [];
  private readonly logged: string[] = [];
  readonly bridge: Bridge;
  private step = 0;

  constructor(
    private readonly world: DemoWorld,
    private readonly out: NodeJS.WritableStream,
  ) {
    this.bridge = createBridge({ log: (event: LogEvent) => this.logged.push(event.reason) });
  }

  say(text = ''): void {
    this.out.write(`${text}\n`);
  }

  heading(title: string): void {
    this.step += 1;
    this.say();
    this.say(`── Step ${this.step}: ${title}`);
  }

  /** Call `tool` as `profile` with the given run-kind signals, print the JSON, and return the result. */
  call(profile: ProfileName, tool: ToolName, args: unknown, kind: Omit<Caller, 'home'> = INTERACTIVE): ToolResult {
    const caller: Caller = { home: this.world.homes[profile], profile, ...kind };
    this.logged.length = 0;
    const result = this.bridge.call(tool, args, caller);
    const shownKind =
      kind.cron && kind.subagent ? 'unknown' : kind.cron ? 'cron' : kind.subagent ? 'subagent' : 'interactive';
    this.say(`  ${profile} (${shownKind}) → ${tool}(${JSON.stringify(args)})`);
    for (const line of JSON.stringify(result, null, 2).split('\n')) this.say(`    ${line}`);
    if (this.logged.length > 0)
      this.say(`  operator log (stderr, never shown to the model): ${this.logged.join(', ')}`);
    return result;
  }

  /** Record whether the step did what the narration promised. */
  expect(ok: boolean, what: string): void {
    this.say(ok ? `  ✓ ${what}` : `  ✗ UNEXPECTED: ${what}`);
    if (!ok) this.surprises.push(`step ${this.step}: ${what}`);
  }
}

function ids(result: ToolResult): string[] {
  return result.ok && 'results' in result ? result.results.map((r) => r.id) : [];
}

function code(result: ToolResult): string | undefined {
  return result.ok ? undefined : result.error.code;
}

/** The scripted tour: every claim the narration makes is checked. */
function tour(world: DemoWorld, n: Narrator): void {
  n.say('memory-bridge demo: synthetic notes, two synthetic profiles, the real tool handlers (no host, no network).');
  n.say(`Temporary tree (removed at the end): ${world.base}`);
  n.say(`  notes root:  ${world.root}  (directories 0700, files 0600, owned by you)`);
  for (const name of Object.keys(PROFILES) as ProfileName[]) {
    n.say(`  profile "${name}": home ${world.homes[name]} — ${PROFILES[name].blurb}`);
  }

  n.heading('the gardener searches for "garden"');
  n.say('  Only notes the policy allows are indexed for this call; the private gate code note is never opened.');
  const found = n.call('gardener', 'memory_bridge_search', { query: 'garden' });
  n.expect(found.ok && ids(found).includes('projects/garden.md'), 'the project note is found');
  n.expect(!ids(found).some((id) => id.includes('private/')), 'nothing from a private/ folder appears');

  n.heading('the gardener reads a note by the id the search returned');
  const read = n.call('gardener', 'memory_bridge_read', { id: 'projects/garden.md' });
  n.expect(read.ok && 'content' in read && read.content.startsWith('# Lantern Garden'), 'the whole note comes back');

  n.heading('a denied note and a missing note look exactly the same');
  n.say('  projects/private/gate-code.md exists but the policy denies it; projects/greenhouse.md does not exist.');
  const denied = n.call('gardener', 'memory_bridge_read', { id: 'projects/private/gate-code.md' });
  const missing = n.call('gardener', 'memory_bridge_read', { id: 'projects/greenhouse.md' });
  n.expect(code(denied) === 'not_found_or_denied', 'the denied read is refused as not_found_or_denied');
  n.expect(JSON.stringify(denied) === JSON.stringify(missing), 'the two answers are byte-for-byte identical');

  n.heading('the visitor has a narrower view of the same notes');
  const visitorFound = n.call('visitor', 'memory_bridge_search', { query: 'garden' });
  n.expect(
    visitorFound.ok && ids(visitorFound).length > 0 && ids(visitorFound).every((id) => id.startsWith('workflows/')),
    'only workflows are found',
  );
  const visitorRead = n.call('visitor', 'memory_bridge_read', { id: 'projects/garden.md' });
  n.expect(code(visitorRead) === 'not_found_or_denied', 'the project note is refused to the visitor');

  n.heading('a Japanese query finds a Japanese note');
  n.say('  Words in text without spaces are segmented, for the notes and for the query alike.');
  const ja = n.call('gardener', 'memory_bridge_search', { query: '月見' });
  n.expect(ids(ja).includes('projects/moon-viewing.md'), 'the moon-viewing note is found');

  n.heading('titles: front matter title, else the first level-1 heading, else the file name');
  n.say('  decisions/compost.md starts with a YAML block (title, tags, aliases, owner), then "# Compost decision".');
  n.say('  workflows/visit.md has no level-1 heading and no front matter: its title is its file name.');
  const compost = n.call('gardener', 'memory_bridge_search', { query: 'compost' });
  const hit =
    compost.ok && 'results' in compost ? compost.results.find((r) => r.id === 'decisions/compost.md') : undefined;
  n.expect(hit !== undefined && hit.title === 'Compost rules', 'the title is the front matter title');
  n.expect(
    hit !== undefined && !hit.snippet.includes('owner:') && !hit.snippet.includes('---'),
    'the snippet skips the front matter',
  );
  const compostRead = n.call('gardener', 'memory_bridge_read', { id: 'decisions/compost.md' });
  n.expect(
    compostRead.ok && 'title' in compostRead && compostRead.title === 'Compost rules',
    'read shows the same title',
  );
  const visit = n.call('gardener', 'memory_bridge_search', { query: 'rain barrels' });
  const visitHit =
    visit.ok && 'results' in visit ? visit.results.find((r) => r.id === 'workflows/visit.md') : undefined;
  n.expect(
    visitHit !== undefined && visitHit.title === 'visit',
    'a note without a level-1 heading is titled by its file name',
  );

  n.heading('bad arguments get a fixed error with a hint, never a stack trace');
  const bad = n.call('gardener', 'memory_bridge_search', { query: 'garden', limit: 0 });
  n.expect(
    code(bad) === 'invalid_request' && !bad.ok && typeof bad.error.hint === 'string',
    'invalid_request names the argument',
  );
  const extra = n.call('gardener', 'memory_bridge_read', { id: 'projects/garden.md', path: '/etc/passwd' });
  n.expect(code(extra) === 'invalid_request', 'an unknown argument is refused too');

  n.heading('a cron job is refused unless the policy opts in');
  const CRON = { cron: true, subagent: false };
  const cronRefused = n.call('gardener', 'memory_bridge_search', { query: 'watering' }, CRON);
  n.expect(code(cronRefused) === 'unavailable', 'the cron call is unavailable');
  n.say('  The operator sets "allow_cron": true in the gardener policy…');
  world.writePolicy('gardener', { allow_cron: true });
  const cronAllowed = n.call('gardener', 'memory_bridge_search', { query: 'watering' }, CRON);
  n.expect(cronAllowed.ok && ids(cronAllowed).includes('decisions/watering.md'), 'the same cron call now succeeds');
  n.say('  An MCP server cannot tell cron from a subagent, so its run kind is "unknown" and needs both opt-ins:');
  const unknown = n.call('gardener', 'memory_bridge_search', { query: 'watering' }, { cron: true, subagent: true });
  n.expect(code(unknown) === 'unavailable', 'unknown is still refused with allow_cron alone');
  world.writePolicy('gardener');

  n.heading('the operator edits the policy mid-session: the very next call obeys it');
  const before = n.call('gardener', 'memory_bridge_read', { id: 'decisions/watering.md' });
  n.expect(before.ok, 'the watering decision is readable now');
  n.say('  The operator adds "decisions/**" to the gardener\'s deny list…');
  world.writePolicy('gardener', { deny: [...PROFILES.gardener.deny, 'decisions/**'] });
  const after = n.call('gardener', 'memory_bridge_read', { id: 'decisions/watering.md' });
  n.expect(code(after) === 'not_found_or_denied', 'the very next read is refused, with no restart');
  const afterSearch = n.call('gardener', 'memory_bridge_search', { query: 'rainwater dawn' });
  n.expect(
    afterSearch.ok && !ids(afterSearch).some((id) => id.startsWith('decisions/')),
    'search no longer shows decisions',
  );
  n.say("  …and removes the visitor's policy file altogether:");
  world.removePolicy('visitor');
  const gone = n.call('visitor', 'memory_bridge_search', { query: 'garden' });
  n.expect(code(gone) === 'unavailable', 'without a policy there is no memory at all');
}

const INTERACTIVE_HELP = `Type words to search, "read <id>" to read a note, "as gardener" or "as visitor" to switch profile.
An empty line, "quit" or end of input ends the demo.`;

/** Read commands from `input` until an empty line, "quit" or end of input. Calls run as interactive callers. */
async function prompt(world: DemoWorld, n: Narrator, io: DemoIo): Promise<void> {
  n.say('memory-bridge demo (interactive): synthetic notes, real tool handlers.');
  n.say(`Temporary tree (removed at the end): ${world.base}`);
  for (const name of Object.keys(PROFILES) as ProfileName[]) n.say(`  profile "${name}" ${PROFILES[name].blurb}`);
  n.say(INTERACTIVE_HELP);
  let profile: ProfileName = 'gardener';
  const rl = readline.createInterface({
    input: io.input,
    output: io.out,
    terminal: (io.input as { isTTY?: boolean }).isTTY === true,
  });
  // On a terminal, Ctrl+C reaches readline rather than the process: treat it as "quit" so the tree is removed.
  rl.on('SIGINT', () => rl.close());
  const ask = (): void => {
    rl.setPrompt(`${profile}> `);
    rl.prompt();
  };
  ask();
  for await (const raw of rl) {
    const line = raw.trim();
    if (line === '' || line === 'quit' || line === 'exit') break;
    const as = /^as\s+(\S+)$/.exec(line);
    if (as !== null) {
      if (as[1] === 'gardener' || as[1] === 'visitor') profile = as[1];
      else n.say('  profiles: gardener, visitor');
    } else if (line === 'help') {
      n.say(INTERACTIVE_HELP);
    } else {
      const read = /^read\s+(.+)$/.exec(line);
      if (read !== null) n.call(profile, 'memory_bridge_read', { id: read[1] });
      else n.call(profile, 'memory_bridge_search', { query: line.replace(/^search\s+/, '') });
    }
    ask();
  }
  rl.close();
}

/**
 * Run the demo. Resolves to an exit code: 0 when every scripted step behaved as narrated (or the interactive session
 * ended), 1 when a step surprised us. The temporary tree is removed before this resolves and on SIGINT/SIGTERM.
 */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const io: DemoIo = opts.io ?? { out: process.stdout, input: process.stdin };
  const world = new DemoWorld();
  const onSignal = (signal: NodeJS.Signals): void => {
    world.remove();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const onExit = (): void => world.remove();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', onExit);
  try {
    const n = new Narrator(world, io.out);
    if (opts.interactive) {
      await prompt(world, n, io);
      return 0;
    }
    tour(world, n);
    n.say();
    if (n.surprises.length === 0) {
      n.say('Every step behaved as described. The temporary tree is being removed now.');
      return 0;
    }
    n.say(`${n.surprises.length} step(s) did not behave as described:`);
    for (const s of n.surprises) n.say(`  - ${s}`);
    return 1;
  } finally {
    world.remove();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', onExit);
  }
}
