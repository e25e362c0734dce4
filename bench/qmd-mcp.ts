/**
 * tobi/qmd as a peer of the sized corpora, measured through its own MCP server (`qmd mcp` over stdio) with the same
 * SDK client that talks to memory-bridge. qmd runs under the Node 22 of bench/peers/setup.sh with its config and
 * index in a scratch folder of the run (XDG_CONFIG_HOME and XDG_CACHE_HOME point there, the working directory too,
 * so no index or config of the user's is read or written). Never a dependency of the product, its tests or CI:
 * without the install the sizes table says `absent`.
 *
 * Index: `qmd collection add <root> --name vault` (spawn to exit; qmd indexes the folder's Markdown files as it adds
 * the collection). Search: the `query` tool with one BM25 sub-query, `searches: [{type: "lex", query}]`,
 * `rerank: false` and the same `limit` as memory-bridge's default answer, so no model is loaded or needed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect, type McpSession, timeCall } from './processes.js';
import { PEERS_DIR, qmdInstalled } from './relevance.js';

const PEER_NODE = path.join(PEERS_DIR, 'node_modules', 'node', 'bin', 'node');
const QMD_CLI = path.join(PEERS_DIR, 'node_modules', '@tobilu', 'qmd', 'dist', 'cli', 'qmd.js');

/** A qmd state folder (config, index, working directory) for one tree. */
export interface QmdTree {
  scratch: string;
  /** Milliseconds of `qmd collection add` (spawn to exit), which indexes the tree. */
  indexMs: number;
  /** Documents qmd reports indexed ("Indexed: N new"), or null when its output did not say. */
  indexed: number | null;
}

/** Null when qmd and its Node are installed; otherwise what to run to install them. */
export function qmdAbsence(): string | null {
  if (!qmdInstalled() || !fs.existsSync(QMD_CLI))
    return `tobi/qmd is not installed in ${PEERS_DIR} (bash bench/peers/setup.sh): the qmd columns say absent`;
  return null;
}

function qmdEnv(scratch: string): Record<string, string> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    XDG_CACHE_HOME: scratch,
    XDG_CONFIG_HOME: scratch,
    NODE_LLAMA_CPP_SKIP_DOWNLOAD: 'true',
  };
  delete env.QMD_CONFIG_DIR;
  return env;
}

/**
 * Index `root` as qmd collection `vault` in a fresh owner-only folder `scratch` (removed first if it exists). Throws with qmd's stderr
 * when the command fails, so a broken peer never passes as a fast one.
 */
export function qmdIndex(root: string, scratch: string): QmdTree {
  fs.rmSync(scratch, { recursive: true, force: true }); // a kept folder of an earlier run: index afresh
  fs.mkdirSync(scratch, { recursive: true, mode: 0o700 });
  const t0 = performance.now();
  const r = spawnSync(PEER_NODE, [QMD_CLI, 'collection', 'add', root, '--name', 'vault'], {
    cwd: scratch,
    env: qmdEnv(scratch),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const indexMs = performance.now() - t0;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`qmd collection add exited with ${r.status}: ${r.stderr.slice(-500)}`);
  const m = /Indexed:\s*(\d+)\s+new/.exec(`${r.stdout}\n${r.stderr}`);
  return { scratch, indexMs, indexed: m ? Number(m[1]) : null };
}

/** Spawn `qmd mcp` on an indexed tree and complete the MCP handshake. */
export function qmdConnect(tree: QmdTree): Promise<McpSession> {
  return connect(PEER_NODE, [QMD_CLI, 'mcp'], qmdEnv(tree.scratch), tree.scratch);
}

/**
 * One BM25 search through qmd's MCP `query` tool: latency and the number of results. Throws when the tool answers
 * an error or no result list.
 */
export async function qmdSearch(s: McpSession, query: string, limit: number): Promise<{ ms: number; hits: number }> {
  const { ms, result } = await timeCall(s, 'query', { searches: [{ type: 'lex', query }], rerank: false, limit });
  const r = result as { isError?: boolean; structuredContent?: { results?: unknown[] } };
  const list = r.structuredContent?.results;
  if (r.isError || !Array.isArray(list))
    throw new Error(`qmd query failed: ${JSON.stringify(result).slice(0, 300)}\n${s.stderr().slice(-1000)}`);
  return { ms, hits: list.length };
}
