import type { Reporter, TestCase, TestModule } from 'vitest/node';

/** What a skip without a reason of its own is put down to. */
const UNEXPLAINED = 'no reason given (a -t filter, .only elsewhere, it.skip or it.todo)';

/**
 * After the run, says on the console why tests were skipped: one line per reason, with how many
 * tests and which files. The reason is the test's `ctx.skip(note)`, or a title's ` skipped: …`
 * (a `describe.skipIf` suite names its reason there); the skips with neither share one line, so
 * that none passes unexplained. Without it, the default reporter shows only a count per file.
 */
export default class SkipReasons implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const reasons = new Map<string, { tests: number; files: Set<string> }>();
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const reason = reasonOf(test) ?? UNEXPLAINED;
        const entry = reasons.get(reason) ?? { tests: 0, files: new Set<string>() };
        entry.tests += 1;
        entry.files.add(module.relativeModuleId);
        reasons.set(reason, entry);
      }
    }
    for (const [reason, { tests, files }] of reasons) {
      process.stdout.write(`skipped ${tests} test${tests === 1 ? '' : 's'}: ${reason} (${[...files].join(', ')})\n`);
    }
  }
}

function reasonOf(test: TestCase): string | undefined {
  const result = test.result();
  if (result.state === 'skipped' && result.note) return result.note;
  for (let node: TestCase | TestCase['parent'] = test; node.type !== 'module'; node = node.parent) {
    const said = / skipped: (.+)$/.exec(node.name);
    if (said) return said[1]!;
  }
  return undefined;
}
