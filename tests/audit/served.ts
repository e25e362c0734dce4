/**
 * The HTTP world of the audit tests: the memory tree and homes of tests/server/http-world.ts with the trail
 * turned on in the work home's policy, its client `laptop`, and a real `serve` server in process, closed with
 * the test.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { startHttpServer, type HttpServerHandle } from '../../src/server/http.js';
import { removeTree } from '../helpers/fixtures.js';
import { client, makeWorld, setClients, type TestClient, type World } from '../server/http-world.js';

export interface Served {
  w: World;
  laptop: TestClient;
  server: HttpServerHandle;
}

/** The world (removed after `t`), the trail on for its work home, and a server answering `laptop`. */
export async function auditedServer(t: ExecutionContext, prefix: string): Promise<Served> {
  const w = makeWorld(prefix);
  t.teardown(() => removeTree(w.base));
  const policyFile = path.join(w.workHome, 'plugin-data', 'memory-bridge', 'policy.json');
  const policy = JSON.parse(fs.readFileSync(policyFile, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(policyFile, JSON.stringify({ ...policy, audit: { enabled: true } }));
  const laptop = client('laptop', w.workHome);
  setClients(w.clientsFile, [laptop]);
  const server = await startHttpServer({
    listen: { host: '127.0.0.1', port: 0 },
    clientsFile: w.clientsFile,
    version: '0.0.0-test',
    log: () => undefined,
  });
  t.teardown(() => server.close(1000));
  return { w, laptop, server };
}
