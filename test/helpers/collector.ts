import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { builtCli } from './cli.js';

export { builtCli } from './cli.js';

/** A `batched-analytics serve` child process that printed its URL. */
export interface Collector {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr: () => string;
  /** Sends a signal and resolves with how the process ended. */
  stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/** Ends every collector a test left running (afterEach/afterAll). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => ended(child, 'SIGKILL')));
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'collector-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Writes a config file into `dir` and returns its path. A config object with sources and without
 * `server.drainDelay` gets 0: a stopping collector then stops at once, as tests expect, unless the
 * test is about the delay.
 */
export function writeConfig(dir: string, config: unknown, name = 'collector.json'): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(withoutDrain(config)));
  return file;
}

function withoutDrain(config: unknown): unknown {
  if (typeof config !== 'object' || config === null || !('sources' in config)) return config;
  const server = (config as { server?: unknown }).server;
  if (server !== undefined && (typeof server !== 'object' || server === null || 'drainDelay' in server)) return config;
  return { ...config, server: { drainDelay: 0, ...(server as object | undefined) } };
}

/**
 * Starts `batched-analytics serve ...args` (or `executable ...args`, e.g. the collector package's
 * own `batched-analytics-collector`) and resolves once it printed its URL on stdout.
 */
export function startCollector(args: string[], options: { cwd?: string; env?: Record<string, string>; executable?: string } = {}): Promise<Collector> {
  const env = options.env ? { ...process.env, ...options.env } : undefined;
  const cli = builtCli();
  const argv = options.executable === undefined ? [cli, 'serve', ...args] : [options.executable, ...args];
  const child = spawn(process.execPath, argv, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`serve exited with ${code} before printing its URL:\n${stderr}`));
    child.once('exit', onExit);
    createInterface({ input: child.stdout! }).once('line', (url) => {
      child.off('exit', onExit);
      resolve({ url, child, stderr: () => stderr, stop: (signal = 'SIGTERM') => ended(child, signal) });
    });
  });
}

/** Runs the CLI to completion (for --help and errors). */
export function runCli(args: string[], options: { cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [builtCli(), ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
}

function ended(child: ChildProcess, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => {
    child.once('exit', (code, signalCode) => resolve({ code, signal: signalCode }));
    child.kill(signal);
  });
}

/** Polls `check` every 10 ms until it returns true; rejects after `timeout` ms with `what`. */
export async function waitFor(check: () => boolean, what: string, timeout = 5_000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A process's resident memory in bytes, as the kernel counts it (Linux). */
export function rss(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!) * 1024;
}

/** `Authorization` for a write key, as the client sends it. */
export function basic(writeKey: string): string {
  return `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
}

/** POSTs JSON (or a raw string) and returns the status and parsed body; `signal` gives up, as a client's timeout. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ status: number; body: Record<string, any>; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {}, headers: res.headers };
}

/** A view of one event as the live debugger streams it. */
export interface StreamedEvent {
  id: string;
  source: string;
  origin: string;
  message: Record<string, any>;
  routes: { destination: string; forwarded: boolean; reason?: string }[];
  /** The message's own status. */
  status: string;
  replayOf?: string;
  webhooks: { url: string; status: string; attempts: number; httpStatus?: number; note?: string; nextAttemptAt?: string }[];
}

/**
 * Follows `GET /events`: `latest` holds the newest view of every event, by id; `all` every view
 * streamed, and `arrivals` when each of them came (ms since the epoch).
 */
export async function watchEvents(baseUrl: string): Promise<{ latest: Map<string, StreamedEvent>; all: StreamedEvent[]; arrivals: number[]; close: () => void }> {
  const latest = new Map<string, StreamedEvent>();
  const all: StreamedEvent[] = [];
  const arrivals: number[] = [];
  const req = http.get(`${baseUrl}/events`);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject));
  let buffer = '';
  res.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!frame.startsWith('data: ')) continue;
      const view = JSON.parse(frame.slice('data: '.length)) as StreamedEvent;
      latest.set(view.id, view);
      all.push(view);
      arrivals.push(Date.now());
    }
  });
  res.on('error', () => undefined);
  return { latest, all, arrivals, close: () => req.destroy() };
}

/** A config of one source, `web` (write key `wk_web`), forwarding to `url`, retrying within tens of ms. */
export function oneWebhookConfig(url: string, extra: Record<string, unknown> = {}) {
  return {
    sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url }] } } }],
    delivery: { minRetryDelay: 20, maxRetryDelay: 50 },
    ...extra,
  };
}
