/**
 * The one failure type of the export: an operator-facing message (paths and hosts allowed — the operator owns them;
 * never a key, a card value or a server's reply body) and the exit code it maps to (docs/CLI.md: 1 operational
 * failure, 2 usage error).
 */
export class ExportError extends Error {
  override readonly name = 'ExportError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}
