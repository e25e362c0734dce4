/** The one error of the audit writer (docs/AUDIT.md §Failing closed). */

/** A record could not be written; `step` is a short code for tests and the operator command, never shown to the model. */
export class AuditUnwritable extends Error {
  override readonly name = 'AuditUnwritable';
  constructor(readonly step: string) {
    super(`audit record not written (${step})`);
  }
}
