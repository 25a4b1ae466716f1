// The twin of listeners.ts for runtimes without `node:events`, which warn of no listener leak.

export function allowListeners(_count: number, _signal: AbortSignal): void {}
