/**
 * The export's second hardening round, end to end through JSONL sources and the Qdrant stand-in: the export's own
 * file names never trip the credential gate, per-client and per-domain caps keep one flood from burying other
 * clients, a source name ties dated dump files together, invalid cards are named with a reason, and expired cards
 * written with --include-expired say so in their front matter.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import type { ExportOptions } from '../../src/fleet/export.js';
import { findSecrets } from '../../src/fleet/secrets.js';
import { exportWith, fleetScratch, mdFiles, payload, qdrantOptions, uuid } from './helpers.js';

const { tempOut, cleanup } = fleetScratch('mb-fleet-hardening-');
test.after.always(cleanup);

function jsonlOptions(out: string, file: string, over: Partial<ExportOptions> = {}): ExportOptions {
  const o = qdrantOptions({ url: 'http://127.0.0.1:9' } as never, out, over);
  return { ...o, source: { kind: 'jsonl', file } };
}

/** Write `{id, payload}` lines next to `out` and return the file's path. */
function writeJsonl(out: string, name: string, points: Array<{ id: unknown; payload: unknown }>): string {
  const file = path.join(path.dirname(out), name);
  fs.writeFileSync(file, points.map((p) => `${JSON.stringify(p)}\n`).join(''));
  return file;
}

// ---------------------------------------------------------------- the export's own names

test('names › slot or client names like sk, xoxb, sk-x or a_xoxb are exported, with and without --redact, history too', async (t) => {
  const names = ['sk', 'xoxb', 'sk-x', 'xapp', 'ghp', 'a xoxb', 'AIza', 'ASIA'];
  const points = names.flatMap((n, i) => [
    { id: uuid(2 * i + 1), payload: payload({ memory_type: 'slot', slot_name: n, text: `slot ${i}` }) },
    { id: uuid(2 * i + 2), payload: payload({ client_id: n, text: `client ${i}` }) },
  ]);
  for (const redact of [false, true]) {
    const out = tempOut();
    const file = writeJsonl(out, 'cards.jsonl', points);
    const r = await exportWith(jsonlOptions(out, file, { redact }));
    t.like(r.summary, { ok: true, written: points.length, skipped_secret: 0 }, `redact ${redact}`);
    t.deepEqual(r.secretIds, []);
    const files = mdFiles(out);
    t.is(files.length, points.length);
    t.true(files.includes(`work/hermes/sk--${uuid(1)}.md`));
    t.true(files.includes(`work/xoxb/episodic--${uuid(4)}.md`));
    // A new revision keeps the old one as history under a name that joins the slot, the id and a stamp.
    const next = points.map((p) => ({ ...p, payload: { ...p.payload, revision: 2, text: 'changed' } }));
    writeJsonl(out, 'cards.jsonl', next);
    const r2 = await exportWith(jsonlOptions(out, file, { redact }));
    t.like(r2.summary, { ok: true, written: points.length, history: points.length, skipped_secret: 0 });
    t.true(mdFiles(out).some((f) => f.startsWith(`work/hermes/history/sk--${uuid(1)}--r1-`)));
  }
});

test('names › a name that only sanitising turns into a credential is still refused, with or without --redact', async (t) => {
  // `flk ` + 16 characters becomes `flk_…` once the space is replaced: the path gate must still see it.
  const raw = 'flk Ab3dEf6hIj9kLmNo';
  t.deepEqual(findSecrets(raw), []);
  for (const redact of [false, true]) {
    const out = tempOut();
    const file = writeJsonl(out, 'cards.jsonl', [{ id: uuid(1), payload: payload({ client_id: raw }) }]);
    const r = await exportWith(jsonlOptions(out, file, { redact }));
    t.like(r.summary, { written: 0, skipped_secret: 1 });
    t.deepEqual(r.secretIds, [uuid(1)]);
    t.deepEqual(mdFiles(out), []);
  }
});
