/**
 * A bridge loaded when it is first needed (`memory-bridge mcp`, docs/MCP.md §Speed). Its modules cost about as
 * much to load as the SDK's, so a stdio server that loads it only after answering the host's `tools/list` (or at
 * the first tool call, or when the input ends, whichever comes first) answers `initialize` and `tools/list` with
 * none of that work in the way; a tool call that comes before the load is done waits for it.
 */
import type { Bridge } from '../tools/types.js';

export class DeferredBridge {
  private loading: Promise<Bridge> | null = null;

  /**
   * @param load   imports and creates the bridge (called once, on first need)
   * @param onFail called once when `load` rejects (an operator log line); every waiting call is told too
   */
  constructor(
    private readonly load: () => Promise<Bridge>,
    private readonly onFail: () => void,
  ) {}

  /** The bridge, loading it now if nothing has yet. Rejects when it cannot be loaded. */
  get(): Promise<Bridge> {
    if (this.loading === null) {
      this.loading = this.load();
      this.loading.catch(this.onFail);
    }
    return this.loading;
  }

  /**
   * Start loading a turn of the event loop from now, once the answer being sent is written (`tools/list`: the
   * host is told the tools first).
   */
  loadSoon(): void {
    if (this.loading !== null) return;
    setImmediate(() => {
      this.get().catch(() => undefined);
    });
  }

  /** Resolves once a load has been started and has settled, either way (nothing to wait for before a start). */
  async settled(): Promise<void> {
    await this.loading?.catch(() => undefined);
  }
}
