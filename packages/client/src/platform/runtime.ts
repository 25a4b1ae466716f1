/**
 * What runs this code. Node itself gets the fast path (undici's `request` over a keep-alive
 * agent); Bun, Deno, Workers and other fetch runtimes send with their own `fetch`: Bun's undici is
 * a partial shim (no `body.dump()`, no `Agent#close()`), and Workers refuse undici's WebAssembly.
 */
interface Host {
  process?: { versions?: Record<string, string | undefined>; version?: string };
  navigator?: { userAgent?: string };
  /** Set by Vercel's Edge Runtime (and its `edge-runtime` package), its documented test. */
  EdgeRuntime?: string;
}

const host = globalThis as Host;
const versions = host.process?.versions ?? {};
const userAgent = host.navigator?.userAgent;

/** Whether this is Node.js itself, not a runtime that only imitates its `process`. */
export const IS_NODE =
  typeof versions.node === 'string' && versions.bun === undefined && versions.deno === undefined && userAgent !== 'Cloudflare-Workers';

/**
 * The runtime as the `User-Agent` names it, e.g. `node v20.20.2`, `bun 1.4.5`, `Cloudflare-Workers`,
 * `vercel-edge`.
 */
export const RUNTIME = IS_NODE
  ? `node ${host.process?.version ?? `v${versions.node}`}`
  : versions.bun !== undefined
    ? `bun ${versions.bun}`
    : versions.deno !== undefined
      ? `deno ${versions.deno}`
      : typeof host.EdgeRuntime === 'string'
        ? 'vercel-edge'
        : (userAgent ?? 'unknown runtime');
