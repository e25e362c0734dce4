/**
 * `serve --metrics` (docs/HTTP.md §Metrics): a real server and SDK client; `GET /metrics` answers the Prometheus
 * text only to its own token, with only the labels `tool` and `outcome` (and the histogram's `le`), the
 * convention's duration buckets, the refusal counts and the gauges, and never a client name, token, query, id or
 * path. Without the flag there is no endpoint; an untrusted token file refuses the start and then each scrape.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startHttpServer } from '../../src/server/http.js';
import { ServeConfigError } from '../../src/server/http-hosts.js';
import { DURATION_BUCKETS_S } from '../../src/server/metrics.js';
import { removeTree } from '../helpers/fixtures.js';
import { callJson, client, connectHttp, makeWorld, setClients } from '../server/http-world.js';

const TOKEN = 'metrics-token-0123456789abcdef0123456789';

async function get(url: string, token?: string): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(url, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/** The value of the sample line `name{labels}` (labels as written), or undefined. */
function sample(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('metrics › /metrics behind its own token: counts, histogram, refusals and gauges with only tool and outcome', async (t) => {
  const w = makeWorld('mb-metrics-');
  t.teardown(() => removeTree(w.base));
  const laptop = client('laptop', w.workHome);
  setClients(w.clientsFile, [laptop]);
  const tokenFile = path.join(w.cfg, 'metrics.token');
  fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const base = { listen: { host: '127.0.0.1', port: 0 }, clientsFile: w.clientsFile, version: '0', log: () => {} };

  const plain = await startHttpServer(base);
  t.is((await get(`${plain.origin}/metrics`, TOKEN)).status, 404, 'no --metrics: no endpoint');
  await plain.close(1000);

  const server = await startHttpServer({ ...base, metricsTokenFile: tokenFile });
  t.teardown(() => server.close(1000));
  const url = `${server.origin}/metrics`;
  t.is((await get(url)).status, 401);
  t.is((await get(url, laptop.token)).status, 401, "a client's token is not the metrics token");
  t.is((await get(`${server.origin}/mcp`, 'not-a-client-token')).status, 401);
  const c = await connectHttp(`${server.origin}/mcp`, laptop.token);
  t.teardown(() => c.close());
  t.true((await callJson(c, 'memory_bridge_search', { query: 'heron' })).ok);
  t.false((await callJson(c, 'memory_bridge_read', { id: 'personal/diary.md' })).ok);
  // A method name of the client's choosing becomes `other`, never a label value of its own.
  await fetch(`${server.origin}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${laptop.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'custom/laptop_heron', params: {} }),
  });

  const scrape = await get(url, TOKEN);
  t.is(scrape.status, 200);
  t.is(scrape.type, 'text/plain; version=0.0.4; charset=utf-8');
  const body = scrape.body;
  const search = 'tool="memory_bridge_search",outcome="ok"';
  t.is(sample(body, `memory_bridge_requests_total{${search}}`), 1);
  t.is(sample(body, `mcp_server_operation_duration_seconds_count{${search}}`), 1);
  t.is(sample(body, `mcp_server_operation_duration_seconds_bucket{${search},le="+Inf"}`), 1);
  for (const le of DURATION_BUCKETS_S)
    t.not(sample(body, `mcp_server_operation_duration_seconds_bucket{${search},le="${le}"}`), undefined);
  t.true(sample(body, `mcp_server_operation_duration_seconds_sum{${search}}`)! > 0);
  t.is(sample(body, 'memory_bridge_requests_total{tool="memory_bridge_read",outcome="not_found_or_denied"}'), 1);
  t.true(body.split('\n').some((l) => l.startsWith('memory_bridge_requests_total{tool="other",')));
  // Three 401s so far: two scrapes and one /mcp request.
  t.is(sample(body, 'memory_bridge_http_refusals_total{outcome="401"}'), 3);
  for (const status of [403, 413, 429, 503])
    t.is(sample(body, `memory_bridge_http_refusals_total{outcome="${status}"}`), 0);
  t.is(sample(body, 'memory_bridge_views_cached'), 1);
  t.is(sample(body, 'memory_bridge_notes_visible'), 2, "the work home's view: work/ and shared/");
  t.true(sample(body, 'memory_bridge_watches_held')! >= 0);
  // Only the labels tool, outcome and le; never a client name, token, query, id or path.
  for (const line of body.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) {
    const labels = /\{(.*)\}/.exec(line)?.[1] ?? '';
    for (const pair of labels.split(',').filter((p) => p !== '')) t.regex(pair, /^(tool|outcome|le)="[^"]*"$/);
  }
  for (const secret of ['laptop', laptop.token, TOKEN, 'heron', 'diary', 'roadmap', w.base])
    t.false(body.includes(secret));

  // A token file that turns untrusted refuses every scrape; one that is untrusted at start refuses the start.
  fs.chmodSync(tokenFile, 0o666);
  t.is((await get(url, TOKEN)).status, 503);
  await t.throwsAsync(startHttpServer({ ...base, metricsTokenFile: tokenFile }), { instanceOf: ServeConfigError });
  fs.chmodSync(tokenFile, 0o600);
  fs.writeFileSync(tokenFile, 'short\n');
  await t.throwsAsync(startHttpServer({ ...base, metricsTokenFile: tokenFile }), {
    instanceOf: ServeConfigError,
    message: /bad_token/,
  });
});
