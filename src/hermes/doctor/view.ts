/**
 * Doctor's `view` check, after the policy step: whether the profile's view is warm (src/hermes/view-state.ts,
 * docs/HERMES.md "Warm first call"). A view that is not warm is a warning, never a failure: the first call then
 * builds it.
 */
import type { Policy } from '../../policy/types.js';
import type { PluginStatus } from '../status.js';
import { readViewState, viewWarmth } from '../view-state.js';
import type { DoctorCheck } from './report.js';
import { remedyOf } from './remedy.js';

/**
 * @param policy the loaded policy, to tell a view built under another root or names rule (undefined: not loaded)
 * @returns the check (and its detail line in `details`), or undefined when the plugin directory is not ours
 */
export function viewCheck(
  home: string,
  plugin: PluginStatus,
  policy: Policy | undefined,
  details: Map<string, string[]>,
): DoctorCheck | undefined {
  if (plugin.state !== 'ours') return undefined;
  const warmth = viewWarmth(home, readViewState(plugin.dir), policy);
  details.set('view', [warmth.line]);
  return warmth.warm
    ? { name: 'view', ok: true }
    : { name: 'view', ok: true, reason: 'view_cold', remedy: remedyOf('view_cold') };
}
