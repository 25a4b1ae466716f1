// Reading the collector's /metrics as Prometheus would: promtool judges the text, and a parser of
// the text format gives the samples' values for tests to assert.
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import { IN_CI } from './ci.js';

const PROMTOOL_MISSING = spawnSync('promtool', ['--version']).error === undefined ? undefined : 'promtool is not installed';

/**
 * Why promtool tests skip here (a one-line reason for their titles), or undefined when they run:
 * under CI=true they always run, and fail if promtool is missing.
 */
export const PROMTOOL_SKIP = PROMTOOL_MISSING !== undefined && !IN_CI ? PROMTOOL_MISSING : undefined;

/** Runs `promtool args…` with `input` on stdin. */
export function promtool(args: string[], input?: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { input, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** `promtool check metrics` on an exposition: it parses and lints clean, exit code 0, as an operator's lint step wants. */
export function expectValidExposition(text: string): void {
  const { status, output } = promtool(['check', 'metrics'], text);
  expect(output.trim()).toBe('');
  expect(status).toBe(0);
}

/** One sample: its metric name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!match) throw new Error(`Not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = value!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** A scrape of `GET /metrics`: its text and samples. */
export interface Scrape {
  text: string;
  samples: Sample[];
  /** The sum of the samples of `name` whose labels include `labels`; 0 when none. */
  value(name: string, labels?: Record<string, string>): number;
}

/** Scrapes `baseUrl/metrics`, checking the answer's status and content type. */
export async function scrape(baseUrl: string): Promise<Scrape> {
  const res = await fetch(`${baseUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples = parseExposition(text);
  return {
    text,
    samples,
    value: (name, labels = {}) =>
      samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)).reduce((sum, sample) => sum + sample.value, 0),
  };
}

/**
 * Waits until the collector at `baseUrl` has settled `count` deliveries and holds nothing pending;
 * resolves with its metrics then.
 */
export async function drained(baseUrl: string, count: number): Promise<Scrape> {
  await expect
    .poll(async () => {
      const now = await scrape(baseUrl);
      return [now.value('batched_analytics_deliveries_total'), now.value('batched_analytics_backlog_deliveries')];
    }, { timeout: 10_000, interval: 50 })
    .toEqual([count, 0]);
  return scrape(baseUrl);
}
