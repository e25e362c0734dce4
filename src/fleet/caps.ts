/**
 * Per-client and per-domain caps of the export (docs/EXPORT.md §Caps). Anyone holding the fleet key can
 * write thousands of cards into one client folder, or spread them over many client names; a search then spends its
 * `max_entries` budget on them and the real cards drop out of its view. The caps bound what one folder and one
 * domain folder can hold, and share a domain's room fairly between its clients, so a flood in one or a few clients
 * cannot push the others' cards out.
 *
 * Selection, for the cards of one run that would be written (valid, in scope, live or `--include-expired`):
 * 1. per client folder, the newest `perClient` cards by `updated_at` (then higher revision, then point id);
 * 2. per domain folder, max-min fair shares: a client whose count fits under the equal share keeps all of its cards,
 *    the room it leaves is shared by the others, and the clients over the final share each keep the same number of
 *    their newest cards (the few seats that do not divide evenly go to the clients whose next card is newest).
 * Cost: one sort of each folder's cards and one sort of each domain's folder counts, O(n log n) overall.
 */

/** What the selection needs of a card. */
export interface CapItem {
  /** Normalised point id (the last tie-break, so the choice is deterministic). */
  id: string;
  /** Domain folder name. */
  domain: string;
  /** Client folder name inside the domain folder. */
  client: string;
  /** Epoch seconds. */
  updatedAt: number;
  revision: number;
}

/** Default `--max-cards-per-client`. */
export const DEFAULT_MAX_PER_CLIENT = 1000;
/**
 * Default `--max-cards-per-domain`. The three fleet domains at this cap hold 30,000 current files, under a sixth of
 * a policy's default `max_entries` (200,000), so a profile reading all of them is never cut short by current cards
 * and keeps room for history (docs/EXPORT.md §Caps).
 */
export const DEFAULT_MAX_PER_DOMAIN = 10_000;

/** One folder where cards were left out, for the report. */
export interface CapShortfall {
  /** `<domain folder>/<client folder>`. */
  folder: string;
  kept: number;
  skipped: number;
}

/** The outcome: ids kept, and the folders that lost cards. */
export interface CapResult {
  kept: Set<string>;
  shortfalls: CapShortfall[];
}

/** Work counter: `comparisons` grows by one per comparison the selection's sorts make. */
export interface CapMeter {
  comparisons: number;
}

/**
 * Choose which items to keep under the caps. `perClient` and `perDomain` are at least 1. Items must have distinct
 * ids. `meter` counts the comparisons (O(n log n) for n items, whatever their spread over folders). Returns the kept ids and, per folder that lost any, how many it kept and how many it lost (sorted by folder).
 */
export function selectUnderCaps(
  items: readonly CapItem[],
  perClient: number,
  perDomain: number,
  meter: CapMeter = { comparisons: 0 },
): CapResult {
  // Newest first: updated_at, then revision, then id (ascending) for a stable order.
  const newestFirst = (x: CapItem, y: CapItem): number => {
    meter.comparisons += 1;
    return y.updatedAt - x.updatedAt || y.revision - x.revision || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
  };
  const domains = new Map<string, Map<string, CapItem[]>>();
  for (const it of items) {
    let clients = domains.get(it.domain);
    if (clients === undefined) {
      clients = new Map();
      domains.set(it.domain, clients);
    }
    const list = clients.get(it.client);
    if (list === undefined) clients.set(it.client, [it]);
    else list.push(it);
  }
  const kept = new Set<string>();
  const shortfalls: CapShortfall[] = [];
  for (const [domain, clients] of domains) {
    const folders = [...clients].map(([client, list]) => {
      list.sort(newestFirst);
      return { client, list, quota: Math.min(list.length, perClient) };
    });
    // Max-min fair shares of the domain's room, smallest demand first.
    folders.sort((x, y) => {
      meter.comparisons += 1;
      return x.quota - y.quota || (x.client < y.client ? -1 : 1);
    });
    let room = perDomain;
    let left = folders.length;
    let i = 0;
    for (; i < folders.length; i++) {
      const share = Math.floor(room / left);
      if (folders[i]!.quota > share) break;
      room -= folders[i]!.quota;
      left -= 1;
    }
    if (i < folders.length) {
      const rest = folders.slice(i);
      const share = Math.floor(room / rest.length);
      let extra = room - share * rest.length;
      // The seats that do not divide evenly: to the folders whose next card (the one after `share`) is newest.
      rest.sort((x, y) => newestFirst(x.list[share]!, y.list[share]!));
      for (const f of rest) {
        f.quota = share + (extra > 0 ? 1 : 0);
        if (extra > 0) extra -= 1;
      }
    }
    for (const f of folders) {
      for (let k = 0; k < f.quota; k++) kept.add(f.list[k]!.id);
      if (f.quota < f.list.length) {
        shortfalls.push({ folder: `${domain}/${f.client}`, kept: f.quota, skipped: f.list.length - f.quota });
      }
    }
  }
  shortfalls.sort((x, y) => (x.folder < y.folder ? -1 : x.folder > y.folder ? 1 : 0));
  return { kept, shortfalls };
}
