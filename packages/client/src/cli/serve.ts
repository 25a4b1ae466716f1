import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Command, EXIT } from './command.js';

/** The package that holds the collector, and the module of it that exports its command. */
export const COLLECTOR_PACKAGE = 'batched-analytics-collector';
const COLLECTOR_CLI = `${COLLECTOR_PACKAGE}/cli`;

/**
 * `batched-analytics serve`: the collector is a package of its own (it brings a server's
 * dependencies, which client users should not install), loaded here when it is installed: beside
 * this package, or in the current project.
 */
export const serveCommand: Command = {
  summary: `run the local collector (from the ${COLLECTOR_PACKAGE} package)`,
  async run(args, context) {
    const collector = await loadCollector();
    if (collector === undefined) {
      context.stderr.write(`batched-analytics serve: the collector is in its own package: npm install ${COLLECTOR_PACKAGE}\n`);
      return EXIT.usage;
    }
    return collector.serveCommand.run(args, context);
  },
};

async function loadCollector(): Promise<{ serveCommand: Command } | undefined> {
  // A variable, so the bundler leaves the import to run time.
  const specifier: string = COLLECTOR_CLI;
  try {
    return (await import(specifier)) as { serveCommand: Command };
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  try {
    const resolved = createRequire(path.join(process.cwd(), 'package.json')).resolve(COLLECTOR_CLI);
    return (await import(pathToFileURL(resolved).href)) as { serveCommand: Command };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(COLLECTOR_PACKAGE);
}
