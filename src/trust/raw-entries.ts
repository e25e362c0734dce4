/** The raw entry budget of one call (docs/TRUST.md §Budgets): what the scan's listings have counted so far. */
import { BridgeError } from '../errors.js';

/** The raw directory entries one call has listed, against its raw entry ceiling (docs/TRUST.md §Budgets). */
export class RawEntryBudget {
  used = 0;

  /** @param ceiling raw entries this call may list (`rawCeilingOf(limits)`: at most RAW_ENTRY_CEILING) */
  constructor(readonly ceiling: number) {}

  /** Entries the next listing may still return. */
  get left(): number {
    return this.ceiling - this.used;
  }

  /**
   * Counts `n` more raw entries.
   *
   * @throws BridgeError('unavailable', 'entry_ceiling') past the ceiling
   */
  charge(n: number): void {
    if (n > this.ceiling - this.used) throw new BridgeError('unavailable', 'entry_ceiling');
    this.used += n;
  }
}
