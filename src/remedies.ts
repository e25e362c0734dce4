/**
 * What the operator should do about each reason code, as data: one table read by `doctor` (checks, skip counts,
 * `--explain`), the one-shot commands (`search`, `read`), the MCP server's start-up check and log, the worker's log
 * and `serve`'s request log (docs/CLI.md §Refusals and remedies).
 *
 * A remedy is one line of fixed text: it may name commands, policy keys and the operator's own files by role ("the
 * policy", "the root"), never a path, a note name or system error text, so it is safe in a log line that the model
 * never sees and that may be shared. The model only ever gets the three public codes (src/errors.ts).
 *
 * `REASON_REMEDIES` covers every `Reason` of src/errors.ts (the compiler checks it), so no refusal inside the
 * bridge lacks a remedy; `OPERATOR_REMEDIES` covers the codes only `doctor`, the servers and the worker produce.
 */
import type { Reason } from './errors.js';

/** The remedy of every internal refusal reason (src/errors.ts `Reason`), in the order `Reason` lists them. */
export const REASON_REMEDIES = Object.freeze({
  // caller and run kind (docs/POLICY.md)
  no_home:
    'no profile home: pass --home DIR (or set HERMES_HOME to an absolute path) naming a directory that exists and holds plugin-data/memory-bridge/policy.json',
  bad_home: 'the home must be an absolute path without ".", ".." or a trailing "/"',
  cron_refused:
    'a cron job called and the policy does not allow cron: set "allow_cron": true in the policy if cron jobs may read these notes',
  subagent_refused:
    'a subagent called and the policy does not allow subagents: set "allow_subagents": true in the policy if subagents may read these notes',
  run_kind_refused:
    'the call counts as both cron and subagent (memory-bridge mcp without --run-kind is run kind "unknown"): set "allow_cron": true and "allow_subagents": true in the policy if cron jobs and subagents may read these notes, or, when only a person calls through this host, add --run-kind interactive',
  bad_caller:
    'the host sent a malformed caller record: run memory-bridge install --home <home> again so the plugin matches this memory-bridge, then restart Hermes',
  // policy (docs/POLICY.md)
  policy_missing:
    'create the policy: memory-bridge init --home <home> --root <notes folder> (or copy policy.example.json; directory chmod 700, file chmod 600)',
  policy_invalid: 'fix the policy file: memory-bridge doctor --home <home> names the key and the problem',
  policy_too_large: 'the policy is over 64 KiB: shorten it',
  policy_untrusted:
    'the policy file or a directory above it can be written by someone else (owner, group/world write, ACL, symlink, hard link): fix it; memory-bridge doctor --home <home> names the first failing directory',
  // trust (docs/TRUST.md)
  symlink: 'symbolic links are never followed: replace the link with the real file or directory',
  hard_link: 'the file has more than one hard link: replace it with a plain copy (cp, not ln)',
  untrusted_owner: 'chown it to the user that runs memory-bridge (or to root)',
  group_writable:
    'remove group write permission: chmod g-w; if `ls -l` shows a "+" after the mode, an ACL is the cause (its mask shows in the group bits): inspect it with getfacl and clear it with setfacl -b',
  world_writable: 'remove world write permission: chmod o-w',
  acl_write: 'an ACL lets someone else write it: remove that entry (setfacl -x …) or all extended entries (setfacl -b)',
  acl_unreadable:
    'its ACL could not be read or validated (filesystem without ACL support?): keep notes on ext4, tmpfs, btrfs, xfs or APFS',
  open_for_write:
    'a process holds the file open for writing, perhaps one opened while the file was writable by others (a chmod does not revoke it): if the file was ever writable by someone else, replace it (write a reviewed copy and mv it over the name) instead of chmodding it; otherwise close the editor or script that holds it',
  other_device: "it is on a different filesystem than the root (a mount point): move it onto the root's filesystem",
  not_directory: 'expected a directory: use a real directory',
  not_regular: 'only regular files are notes: remove the FIFO, socket or device file',
  too_large: 'bigger than limits.max_file_bytes: split the note, or raise max_file_bytes (ceiling 1048576)',
  binary: 'contains NUL bytes: it is not a text note',
  invalid_utf8: 'not valid UTF-8: re-save the note as UTF-8',
  bad_name:
    'the name fails the names rule: under "unicode" (the default) rename it so it holds no control, line separator, bidi or invisible format character; under "portable" rename it to letters, digits, ".", "_" and "-", or set "names": "unicode"',
  hidden: 'hidden names (leading dot) are always skipped: rename it if it should be visible',
  not_markdown: 'only names ending in lowercase ".md" are notes',
  denied:
    'the policy does not allow it (no allow pattern matches, or a deny pattern does): edit allow/deny if it should be visible',
  too_deep: 'deeper than limits.max_depth: raise max_depth (ceiling 16) or move the note up',
  missing: 'it does not exist (check the path and its spelling, byte for byte)',
  sticky_tmp: 'a shared sticky temp directory cannot be the root or hold the policy: use a private directory',
  root_untrusted:
    "the policy's root or a directory above it fails the trust rule for the reason after root= in the same line (someone else could write it): fix its owner, mode or ACL; memory-bridge doctor --home <home> shows the root check",
  entry_ceiling:
    'more than 1,000,000 directory entries would be listed: narrow "allow" so unrelated directories are skipped, or choose a smaller root',
  io_error: 'an I/O error: check the filesystem (dmesg) and permissions',
  resource_exhausted:
    'the process ran out of file descriptors or memory: raise the open-files limit (ulimit -n, LimitNOFILE= for a service) or find what holds descriptors open',
  unsupported_platform: 'memory-bridge runs on Linux and macOS only; every call is unavailable here',
  // requests
  bad_arguments:
    "the model sent arguments the tool does not accept; it was told which one in the answer's hint, so nothing needs fixing here unless it keeps happening (then check the host passes the tool schema through)",
  bad_id:
    'the model asked for an id that is not a note path as search returns it; nothing needs fixing here unless it keeps happening',
  // audit trail (docs/AUDIT.md)
  audit_unwritable:
    'the policy turns the audit trail on and a record could not be written, so the call released nothing: memory-bridge audit verify --home <home> names the audit directory; free disk space or fix its owner and mode (chmod 700, files 600)',
  // worker / plugin transport
  worker_protocol:
    'the plugin and the worker disagree about their protocol: run memory-bridge install --home <home> again, then restart Hermes',
  internal: 'unexpected failure: run again; if it persists, report it with the line above',
} satisfies Record<Reason, string>);

/**
 * Remedies of the codes that only operator commands, the servers' own transport and the worker's line protocol
 * report (they are not `Reason`s: no tool call is refused for them).
 */
export const OPERATOR_REMEDIES: Readonly<Record<string, string>> = Object.freeze({
  // doctor's own checks (docs/HERMES.md §Status and doctor)
  home_relative:
    'HERMES_HOME is a relative path, which Hermes and this command read against different working directories, and the plugin refuses it: set HERMES_HOME to an absolute path (or pass --home) and restart Hermes',
  home_symlink:
    'the home is reached through a symbolic link, which the plugin and worker never follow: set HERMES_HOME (and --home) to the real path shown above and restart Hermes',
  hermes_api_missing:
    'this Hermes lacks part of the plugin API the shim needs, so it registered no tools: upgrade Hermes (docs/HERMES.md §Hermes API probe), then restart it',
  hermes_api_unknown:
    'Hermes has not loaded the plugin since it was installed: enable it (hermes plugins enable memory-bridge) and start Hermes, then run doctor again to see the Hermes API it found',
  view_cold:
    "the profile's view is not built yet, so the next tool call builds it (the first call on a large tree takes longest): start Hermes, which builds it in the background when it loads the plugin (unless MEMORY_BRIDGE_WARM_UP=0), then look again with memory-bridge status",
  not_installed: 'only needed for Hermes plugin mode: memory-bridge install --home <home>',
  foreign_plugin: 'another plugin occupies plugins/memory-bridge: move it away, then run memory-bridge install',
  modified_plugin: 'the installed shim has local changes: memory-bridge install --force restores it',
  worker_paths_missing:
    'the node binary or CLI recorded at install time is gone (node upgraded or package moved): run memory-bridge install again',
  worker_program_untrusted:
    'someone other than you or root could change the program Hermes starts (the path named above): fix its owner, mode or ACL (chown, chmod go-w, setfacl -b), or install memory-bridge in a directory only you or root can write and run memory-bridge install again',
  install_record_untrusted:
    'install.json must be owned by you (or root) and not group/world-writable: chmod 600, or reinstall',
  version_mismatch: 'the installed shim comes from another memory-bridge version: run memory-bridge install again',
  unverified_platform:
    "this platform's bindings were written from documentation and never run here; test with doctor --explain before relying on it",
  incomplete:
    'a budget stopped the scan or notes lie below max_depth: searches answer "incomplete" and miss notes; raise the limit named above or narrow "allow"',
  no_visible_notes:
    'no note passes the policy and the trust rule, so searches find nothing: check "allow" and the counts above, or try doctor --explain ID',
  // the persisted index (docs/DESIGN.md §The persisted index): refused and ignored, the call answers without it
  index_missing:
    'no persisted index: first calls read and index every note; build one with memory-bridge index --home <home> (from a timer to keep it fresh)',
  index_untrusted:
    'the persisted index or a directory above it fails the trust rule (owner, group/world write, ACL, symlink, hard link): remove it and run memory-bridge index --home <home> as the user that runs memory-bridge',
  index_readable:
    'the persisted index may be read by group or others: remove it and run memory-bridge index --home <home>, which writes it with mode 0600',
  index_too_large:
    'the persisted index is over 1 GiB: narrow "allow" or lower max_total_bytes, then run memory-bridge index --home <home>',
  index_truncated: 'the persisted index is cut short: run memory-bridge index --home <home> again',
  index_corrupt: 'the persisted index fails its checksum or structure: run memory-bridge index --home <home> again',
  index_version:
    'the persisted index comes from another memory-bridge version: run memory-bridge index --home <home> again',
  index_foreign:
    'the persisted index was built for another home, root or names rule: run memory-bridge index --home <home> again',
  index_stale:
    'the persisted index is older than some notes, which first calls index again from their text: run memory-bridge index --home <home> (from a timer to keep it fresh)',
  // serve's clients file (docs/HTTP.md §The clients file), read again on every request
  clients_missing:
    'the clients file is gone, so every request is refused: make it again with memory-bridge clients add --clients FILE --name NAME --home DIR',
  clients_untrusted:
    'the clients file or a directory above it can be written by someone else: chmod 600 the file, keep it in a directory only you or root can write',
  clients_too_large: 'the clients file is over its size limit: remove clients that are no longer used',
  clients_invalid:
    'the clients file is not valid: edit it only with memory-bridge clients add|remove (memory-bridge clients list names the first problem)',
  // the MCP server's own protocol checks (stdio and HTTP; docs/TOOLS.md §MCP)
  bad_call_params: 'the MCP client sent tools/call without a tool name: update the host; nothing to fix here',
  unknown_tool:
    'the MCP client called a tool this server does not offer (only memory_bridge_search and memory_bridge_read): update the host',
  not_initialized: 'the MCP client called a tool before initialize: update the host; nothing to fix here',
  oversized_line: 'a message line was over 1 MiB and was refused: nothing to fix here unless it keeps happening',
  parse_error: "a line was not JSON: check that nothing else writes to the server's stdin",
  invalid_message: "a line was JSON but not a JSON-RPC message: check that nothing else writes to the server's stdin",
  transport_error: 'the connection to the MCP client failed: the host may have exited; restart it',
  // the shim's own refusals (plugin/__init__.py; tests/hermes/shim-reasons.test.ts), logged in Hermes's log
  home_mismatch: 'the profile home changed since the plugin was registered; restart Hermes',
  context_module_missing:
    'a Hermes module the plugin reads the caller from could not be imported: upgrade Hermes and restart it (memory-bridge doctor shows the Hermes API the plugin found)',
  context_helper_missing:
    'a Hermes helper the plugin reads the caller from is missing or not callable: upgrade Hermes and restart it (memory-bridge doctor shows the Hermes API the plugin found)',
  context_signal_conflict:
    'Hermes gave a run-kind signal the plugin cannot read without doubt (an unexpected value or type): upgrade memory-bridge or Hermes so that they match',
  multiplex_unbound:
    'this multiplexed gateway call has no profile home bound to it, so no caller can be named: bind the session to a profile, or update Hermes',
  plugin_host_process:
    'Hermes runs plugins in a separate host process, where the caller cannot be told: turn plugin-host isolation off for memory-bridge, or use memory-bridge mcp (docs/HOSTS.md)',
  install_record_missing: 'install.json is missing: run memory-bridge install --home <home>, then restart Hermes',
  install_record_invalid:
    'install.json is damaged: run memory-bridge install --force --home <home>, then restart Hermes',
  worker_start_failed:
    'the worker could not be started (the node binary or CLI recorded at install time gone?): run memory-bridge doctor --home <home>, then memory-bridge install again',
  worker_crashed:
    "the worker exited; it is started again on the next call. If it keeps happening, read the lines starting with worker: in Hermes's log",
  worker_timeout:
    'the worker did not answer in time (a first search of a large tree takes longest): raise the timeout (memory-bridge install --timeout SECONDS, or MEMORY_BRIDGE_TIMEOUT) or narrow allow',
  worker_busy:
    'earlier calls kept the worker busy for the whole timeout: raise the timeout (memory-bridge install --timeout SECONDS, or MEMORY_BRIDGE_TIMEOUT)',
  request_too_large: 'the tool arguments were over 1 MiB: nothing to fix here unless it keeps happening',
  // the worker's line protocol (docs/HERMES.md §Worker protocol): only a shim that does not match this worker sends these
  not_json: REASON_REMEDIES.worker_protocol,
  duplicate_key: REASON_REMEDIES.worker_protocol,
  not_object: REASON_REMEDIES.worker_protocol,
  no_id: REASON_REMEDIES.worker_protocol,
  bad_version: REASON_REMEDIES.worker_protocol,
  bad_tool: REASON_REMEDIES.worker_protocol,
  missing_args: REASON_REMEDIES.worker_protocol,
  unknown_field: REASON_REMEDIES.worker_protocol,
  bad_request: REASON_REMEDIES.worker_protocol,
  input_error: 'the worker could not read its input: the plugin stopped it; it is restarted on the next call',
});

/**
 * Remedies of the refusals `serve` answers before any tool runs (the `result=` of its request log; docs/HTTP.md
 * §What a request must pass). A table of its own: a few of these results share a word with a `Reason` of another
 * meaning (an HTTP body `too_large` is not a note over max_file_bytes).
 */
export const HTTP_RESULT_REMEDIES: Readonly<Record<string, string>> = Object.freeze({
  unauthorized:
    'the request had no bearer token, or one no client of the clients file holds: give the node its own token (memory-bridge clients add --name NAME prints it once) in its Authorization: Bearer header; memory-bridge clients list shows who is known',
  forbidden_host:
    'the Host header names an address this server does not answer to (the DNS-rebinding guard): connect by the listen address, or accept the name with --allowed-host NAME[:PORT]',
  forbidden_origin:
    'a web page (an Origin header) sent the request and its origin is not allowed: add --allowed-origin ORIGIN only if that page should call the tools',
  method_not_allowed:
    'the client used a method this path does not serve (an MCP client probing for an event stream gets this routinely): nothing to fix unless a client keeps failing',
  not_found: 'the client asked for a path other than /mcp, /healthz or /metrics: check the URL the client is given',
  stopping: 'the server is stopping (SIGTERM or SIGINT); clients retry after it is started again',
  clients_unusable:
    'the clients file cannot be used (missing, untrusted or invalid), so every request is refused: fix the file (chmod 600, owned by you or root, in directories only you or root can write) or make it anew with memory-bridge clients add',
  rate_limited:
    'one client sent more than its rate (20 requests per second, burst 40): the client retries after Retry-After; if it is a real load, spread it over more clients',
  busy: 'more requests were in flight than --max-concurrency allows: raise it if the machine has room, or spread the load',
  too_large: 'the request body was over 1 MiB: nothing to fix unless a client keeps sending such requests',
  timeout: 'the client sent its request too slowly or the answer could not be written in time: check the network path',
  bad_json: 'the body was not JSON: the client is not an MCP client or is broken; update it',
  batch: 'the client sent a JSON-RPC batch, which MCP no longer allows: update the client',
  bad_http: 'the bytes received were not valid HTTP: something other than an MCP client connected',
  tls_error: 'a TLS handshake failed: check that the client trusts the certificate and connects with https',
  internal: REASON_REMEDIES.internal,
});

/** Every internal refusal reason, in table order: what `doctor --list` accepts (the tree scan counts only these). */
export const REASON_CODES: readonly Reason[] = Object.freeze(Object.keys(REASON_REMEDIES) as Reason[]);

/** What `remedyOf` says for a code in neither table. */
export const FALLBACK_REMEDY = 'run memory-bridge doctor --home <home> for what to do';

/**
 * The one-line remedy for a reason code: `REASON_REMEDIES`, then `OPERATOR_REMEDIES`, else `FALLBACK_REMEDY`.
 * Never throws; the text holds no path.
 */
export function remedyOf(reason: string): string {
  if (Object.hasOwn(REASON_REMEDIES, reason)) return REASON_REMEDIES[reason as Reason];
  if (Object.hasOwn(OPERATOR_REMEDIES, reason)) return OPERATOR_REMEDIES[reason]!;
  return FALLBACK_REMEDY;
}

/** What a refusal is about when it is not the requested note (src/errors.ts `BridgeError.subject`). */
export type RefusalSubject = 'root';

/**
 * The words of a refusal in an operator log line: the reason code, or, for the policy's root, `root_untrusted
 * root=<reason>` (e.g. `root_untrusted root=group_writable`), so a refused root does not read as a refused note.
 * Never a path (docs/CLI.md §Refusals and remedies).
 */
export function refusalWords(reason: string, subject?: RefusalSubject): string {
  return subject === 'root' ? `root_untrusted root=${reason}` : reason;
}

/**
 * The one-line remedy of a refusal: `remedyOf(reason)`, or, for the policy's root, that remedy said of the root
 * and a pointer to `doctor`, which names the root and the directory that fails. Never a path.
 */
export function refusalRemedy(reason: string, subject?: RefusalSubject): string {
  if (subject !== 'root') return remedyOf(reason);
  return `the policy's root (the notes folder) or a directory above it fails the trust rule (${reason}), so every call is refused until it is fixed: ${remedyOf(reason)}; memory-bridge doctor --home <home> shows the root check`;
}

/**
 * Remedies for a long-running process's log: each reason's remedy is given the first time that reason is logged,
 * and afterwards the line is the short code alone, so a busy server's log stays one short line per refusal while
 * every kind of refusal still says once what to do (docs/CLI.md §Refusals and remedies). A one-shot command logs at
 * most a few lines, so every one of its refusals carries the remedy.
 */
export class RemedyNotes {
  private readonly told = new Set<string>();

  /**
   * ` → <remedy>` (`refusalRemedy`) the first time this instance sees `reason` with this `subject`, else the empty
   * string: a refused root and a refused note with the same reason are told apart.
   */
  suffix(reason: string, subject?: RefusalSubject): string {
    const key = refusalWords(reason, subject);
    if (this.told.has(key)) return '';
    this.told.add(key);
    return ` → ${refusalRemedy(reason, subject)}`;
  }

  /**
   * ` → <remedy>` for an HTTP refusal result (`HTTP_RESULT_REMEDIES`) the first time it is seen by this instance,
   * else the empty string (also for a result the table does not hold, such as `ok`).
   */
  httpSuffix(result: string): string {
    if (!Object.hasOwn(HTTP_RESULT_REMEDIES, result)) return '';
    const key = `http:${result}`;
    if (this.told.has(key)) return '';
    this.told.add(key);
    return ` → ${HTTP_RESULT_REMEDIES[result]}`;
  }
}
