/** What a card source hands to the export: every raw point of one complete, successful read. */
import type { RawPoint } from './card.js';

export interface SourceRead {
  /**
   * Identity of the source for mirror scope: `qdrant:<scheme>://<host>:<port><prefix>#<collection>` or
   * `jsonl:<canonical path>`. Never holds a key or URL credentials.
   */
  key: string;
  points: RawPoint[];
  /**
   * Records the source could not even split into `{id, payload}` (JSON lines that are not such objects). They name
   * no card, so a run with any of them removes nothing.
   */
  invalid: number;
  /** Each of those records: where it is (`line 7`) and why it was refused. */
  rejected?: Array<{ where: string; reason: string }>;
}
