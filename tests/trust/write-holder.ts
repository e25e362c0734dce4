/**
 * A process that holds a note open for writing, for the open-for-writing tests (docs/DESIGN.md "Descriptors opened
 * for writing before a chmod"): a real descriptor in a second process, as another user when asked.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * A second process that opens `file` for appending (as user `uid` when given), says `ready`, then appends each line
 * it is sent through that same descriptor and answers `wrote`.
 */
export function holder(
  file: string,
  uid?: number,
): {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  write(text: string): Promise<void>;
  stop(): Promise<void>;
} {
  const script =
    'exec 3>>"$1" || exit 1; echo ready; while IFS= read -r line; do printf "%s\\n" "$line" >&3; echo wrote; done';
  const args = ['bash', '-c', script, 'holder', file];
  const child =
    uid === undefined
      ? spawn(args[0]!, args.slice(1))
      : spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...args]);
  let out = '';
  const waiters: Array<[string, () => void]> = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (c: string) => {
    out += c;
    for (let i = 0; i < waiters.length; i++) {
      const [word, resolve] = waiters[i]!;
      const at = out.indexOf(`${word}\n`);
      if (at !== -1) {
        out = out.slice(0, at) + out.slice(at + word.length + 1);
        waiters.splice(i--, 1);
        resolve();
      }
    }
  });
  const waitFor = (word: string) => new Promise<void>((resolve) => waiters.push([word, resolve]));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    child,
    ready: waitFor('ready'),
    write(text) {
      const done = waitFor('wrote');
      child.stdin.write(`${text}\n`);
      return done;
    },
    stop() {
      child.stdin.end();
      return exited;
    },
  };
}
