/**
 * `memory-bridge clients add|list|remove`: edit the clients file of `serve` (docs/HTTP.md, "The clients file").
 * `add` prints a new token once on stdout and stores only its SHA-256; the file is rewritten atomically, mode 0600.
 */
import path from 'node:path';
import { BridgeError } from '../../errors.js';
import { loadPolicy, policyPath } from '../../policy/load.js';
import {
  CLIENT_NAME_RE,
  CLIENT_RUN_KINDS,
  ClientsFileError,
  loadClients,
  newToken,
  readForEdit,
  tokenHash,
  writeClients,
  type ClientRunKind,
} from '../../server/clients.js';
import { boolFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, type Command } from '../command.js';

const PROG = 'memory-bridge clients';

function clientsPath(value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError('--clients FILE is required');
  return path.resolve(value);
}

function add(argv: string[]): number {
  const parsed = parseArgs(argv, {
    clients: { type: 'string' },
    name: { type: 'string' },
    home: { type: 'string' },
    'run-kind': { type: 'string' },
  });
  if (parsed.positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const file = clientsPath(stringFlag(parsed, 'clients'));
  const name = stringFlag(parsed, 'name');
  if (name === undefined || !CLIENT_NAME_RE.test(name))
    throw new UsageError('--name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  const homeFlag = stringFlag(parsed, 'home');
  if (homeFlag === undefined || homeFlag === '') throw new UsageError('--home DIR is required');
  // A relative home would be resolved against whatever directory this command runs in, silently binding the
  // token to the wrong profile; every other mode refuses a relative home too (home_relative, docs/HERMES.md).
  if (!path.isAbsolute(homeFlag))
    throw new UsageError(
      `--home must be an absolute path (got ${JSON.stringify(homeFlag)}): give the full path of the profile home`,
    );
  const home = path.resolve(homeFlag);
  if (home === '/') throw new UsageError('--home may not be /');
  const kind = stringFlag(parsed, 'run-kind') ?? 'interactive';
  if (!(CLIENT_RUN_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--run-kind must be one of ${CLIENT_RUN_KINDS.join(', ')}`);

  const { current, bytes } = readForEdit(file);
  if (current.clients.some((c) => c.name === name)) {
    process.stderr.write(
      `${PROG}: a client named ${JSON.stringify(name)} already exists in ${file}; remove it first ` +
        `(memory-bridge clients remove --clients ${file} --name ${name}) to issue a new token\n`,
    );
    return EXIT.FAILURE;
  }
  const token = newToken();
  const entry = { name, tokenSha256: tokenHash(token), home, runKind: kind as ClientRunKind };
  writeClients(file, { clients: [...current.clients, entry] }, bytes);
  process.stdout.write(`${token}\n`);
  process.stderr.write(
    `${PROG}: added ${name} (home ${home}, run kind ${kind}) to ${file}.\n` +
      'The token above is shown once and stored nowhere: give it to that client now ' +
      '("Authorization: Bearer <token>"). Lost tokens are replaced by remove + add.\n',
  );
  try {
    loadPolicy(home);
  } catch (err) {
    if (!(err instanceof BridgeError)) throw err;
    process.stderr.write(
      `${PROG}: warning: ${policyPath(home)} does not load (${err.reason}): this client's calls will be ` +
        'unavailable until it does (memory-bridge doctor --home ' +
        `${home} says why)\n`,
    );
  }
  return EXIT.OK;
}

function list(argv: string[]): number {
  const parsed = parseArgs(argv, { clients: { type: 'string' }, json: { type: 'boolean' } });
  if (parsed.positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const file = clientsPath(stringFlag(parsed, 'clients'));
  const { clients } = loadClients(file);
  if (boolFlag(parsed, 'json')) {
    const rows = clients.map((c) => ({ name: c.name, home: c.home, run_kind: c.runKind }));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return EXIT.OK;
  }
  if (clients.length === 0) {
    process.stdout.write(`no clients in ${file}\n`);
    return EXIT.OK;
  }
  const width = Math.max(4, ...clients.map((c) => c.name.length));
  const kindWidth = Math.max(8, ...clients.map((c) => c.runKind.length));
  process.stdout.write(`${'NAME'.padEnd(width)}  ${'RUN KIND'.padEnd(kindWidth)}  HOME\n`);
  for (const c of clients) process.stdout.write(`${c.name.padEnd(width)}  ${c.runKind.padEnd(kindWidth)}  ${c.home}\n`);
  return EXIT.OK;
}

function remove(argv: string[]): number {
  const parsed = parseArgs(argv, { clients: { type: 'string' }, name: { type: 'string' } });
  if (parsed.positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const file = clientsPath(stringFlag(parsed, 'clients'));
  const name = stringFlag(parsed, 'name');
  if (name === undefined || name === '') throw new UsageError('--name is required');
  const { current, bytes } = readForEdit(file);
  if (bytes === null) {
    process.stderr.write(`${PROG}: ${file} does not exist\n`);
    return EXIT.FAILURE;
  }
  const kept = current.clients.filter((c) => c.name !== name);
  if (kept.length === current.clients.length) {
    process.stderr.write(`${PROG}: no client named ${JSON.stringify(name)} in ${file}\n`);
    return EXIT.FAILURE;
  }
  writeClients(file, { clients: kept }, bytes);
  process.stderr.write(`${PROG}: removed ${name}; its token is refused from the next request on\n`);
  return EXIT.OK;
}

export const command: Command = {
  name: 'clients',
  summary: 'add, list or remove the clients (bearer tokens bound to a home) of memory-bridge serve',
  usage: `usage: memory-bridge clients add --clients FILE --name NAME --home DIR [--run-kind KIND]
       memory-bridge clients list --clients FILE [--json]
       memory-bridge clients remove --clients FILE --name NAME

Edit the clients file that memory-bridge serve reads on every request. Each client is one bearer token bound to
one profile home (its policy is <home>/plugin-data/memory-bridge/policy.json) and one run kind.

  add     make a new 256-bit token, print it once on stdout, store only its SHA-256 (creates FILE if needed)
  list    print name, run kind and home of every client (never a token)
  remove  delete a client; its token is refused from the next request on

Options:
  --clients FILE    the clients file; it and every directory above it must be owned by root or by you and not
                    writable by others (the file is rewritten atomically with mode 0600)
  --name NAME       1 to 64 letters, digits, ".", "_" or "-" (shown in serve's log lines)
  --home DIR        the profile home whose policy this client gets
  --run-kind KIND   interactive (default), cron or subagent: cron and subagent need the policy's opt-in
  --json            list as JSON`,
  async run(argv) {
    const [sub, ...rest] = argv;
    try {
      if (sub === 'add') return add(rest);
      if (sub === 'list') return list(rest);
      if (sub === 'remove') return remove(rest);
    } catch (err) {
      if (err instanceof ClientsFileError) {
        process.stderr.write(`${PROG}: ${err.message}\n`);
        return EXIT.FAILURE;
      }
      throw err;
    }
    throw new UsageError(sub === undefined ? 'add, list or remove?' : `unknown action ${JSON.stringify(sub)}`);
  },
};
