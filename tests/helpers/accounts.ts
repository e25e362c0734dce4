/**
 * Real system users and groups for tests (root only): created with groupadd/useradd under names unique to this
 * process, removed with userdel/groupdel when the test file ends. Every name starts with "mbw" so a leftover from a
 * killed run is easy to spot; a re-run never reuses a name.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Exit status of useradd/groupadd/userdel/groupdel when /etc/passwd or /etc/group is locked by another process. */
const LOCKED = 10;

function run(cmd: string, args: string[]): void {
  for (let attempt = 0; ; attempt++) {
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status === 0) return;
    // Several test processes may add accounts at once; the tools refuse while another one holds the lock.
    if (r.status === LOCKED && attempt < 50) {
      spawnSync('sleep', ['0.1']);
      continue;
    }
    throw new Error(`${cmd} ${args.join(' ')}: status ${r.status}: ${r.stderr}`);
  }
}

function idOf(database: 'passwd' | 'group', name: string): number {
  const r = spawnSync('getent', [database, name], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`getent ${database} ${name}: status ${r.status}`);
  return Number(r.stdout.split(':')[2]);
}

export interface Account {
  name: string;
  id: number;
}

/** Creates and later removes users and groups. */
export class Accounts {
  private readonly users: string[] = [];
  private readonly groups: string[] = [];
  private counter = 0;
  private readonly stem = `mbw${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;

  /** A new group. */
  group(): Account {
    const name = `${this.stem}g${this.counter++}`;
    run('groupadd', [name]);
    this.groups.push(name);
    return { name, id: idOf('group', name) };
  }

  /** A new user without a home directory, whose primary group is `primary` and who is also in `others`. */
  user(primary: Account, others: Account[] = []): Account {
    const name = `${this.stem}u${this.counter++}`;
    const args = ['--no-create-home', '--no-user-group', '--gid', primary.name, '--shell', '/usr/sbin/nologin'];
    if (others.length > 0) args.push('--groups', others.map((g) => g.name).join(','));
    run('useradd', [...args, name]);
    this.users.push(name);
    return { name, id: idOf('passwd', name) };
  }

  /** Removes every account made here (users first: a group that is some user's primary group cannot go). */
  cleanup(): void {
    for (const name of this.users.splice(0)) spawnSync('userdel', [name]);
    for (const name of this.groups.splice(0)) spawnSync('groupdel', [name]);
  }
}

/**
 * A path of the CLI (dist/src/cli/main.js) that `who` can run: the repository's own when that user can already
 * run it (`--version` through setpriv), else a world-readable copy of dist/, node_modules and package.json made
 * once under the system temp dir (a checkout under a private home is not readable by other users). `cleanup`
 * removes the copy.
 */
export function cliFor(repo: string, who: Account, group: Account): { cli: string; cleanup(): void } {
  const own = path.join(repo, 'dist', 'src', 'cli', 'main.js');
  const probe = spawnSync(
    'setpriv',
    [`--reuid=${who.id}`, `--regid=${group.id}`, '--init-groups', process.execPath, own, '--version'],
    { encoding: 'utf8' },
  );
  if (probe.status === 0) return { cli: own, cleanup: () => undefined };
  const made = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-cli-copy-'));
  fs.chmodSync(made, 0o755);
  for (const part of ['dist', 'node_modules', 'package.json']) {
    fs.cpSync(path.join(repo, part), path.join(made, part), { recursive: true, verbatimSymlinks: true });
  }
  const walk = (p: string): void => {
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) return;
    fs.chmodSync(p, (st.mode & 0o7777) | (st.isDirectory() || (st.mode & 0o111) !== 0 ? 0o555 : 0o444));
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(made);
  return {
    cli: path.join(made, 'dist', 'src', 'cli', 'main.js'),
    cleanup: () => fs.rmSync(made, { recursive: true, force: true }),
  };
}
