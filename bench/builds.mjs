// Where a checkout keeps its built client: packages/client/dist since the workspaces, dist/ in a
// checkout from before them (a baseline for --baseline / --against / DIR arguments).
import { existsSync } from 'node:fs';
import path from 'node:path';

/** `file` (e.g. `dist/index.js`) of the client package built in the checkout at `root`. */
export function builtFile(root, file) {
  const inWorkspace = path.join(root, 'packages/client', file);
  return existsSync(inWorkspace) ? inWorkspace : path.join(root, file);
}

/** The CLI (`batched-analytics`) built in the checkout at `root`. */
export function builtCli(root) {
  return builtFile(root, 'dist/cli.js');
}
