/**
 * What a thrown value stands for as a refusal. Lives above the bindings (it knows `ResourceExhaustedError` from
 * `native/`) so that src/errors.ts stays a leaf.
 */
import { ResourceExhaustedError } from '../../native/types.js';
import { BridgeError } from '../errors.js';

/**
 * The refusal a thrown value stands for: a `BridgeError` as it is; a `ResourceExhaustedError` from the bindings
 * (EMFILE, ENFILE, ENOMEM on any call) as `unavailable` with reason `resource_exhausted`, since the call could not
 * look at everything it had to and a partial answer would look complete (docs/DESIGN.md "Running out of
 * descriptors"); anything else undefined (a bug: the caller answers `unavailable`/`internal`).
 */
export function bridgeErrorOf(err: unknown): BridgeError | undefined {
  if (err instanceof BridgeError) return err;
  if (err instanceof ResourceExhaustedError) return new BridgeError('unavailable', 'resource_exhausted');
  return undefined;
}
