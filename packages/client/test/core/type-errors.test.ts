import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What TypeScript tells a user who leaves out a required field: the compiler's own message.

const INDEX = fileURLToPath(new URL('../../src/index.js', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(fileURLToPath(new URL('.', import.meta.url)), '.type-errors-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The compiler's messages for `call`, made on a client, flattened to one string each. */
async function diagnose(call: string): Promise<string[]> {
  const file = join(dir, 'call.ts');
  await writeFile(file, `import { Analytics } from ${JSON.stringify(INDEX)};\nnew Analytics('wk').${call};\n`);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: ['node'],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file?.fileName === file)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

describe('the type error of a call missing a required field', () => {
  it.each([
    ["track({ userId: 'u' })", 'event'],
    ["track({ anonymousId: 'a' })", 'event'],
    ["group({ userId: 'u' })", 'groupId'],
  ])('%s names %s', async (call, field) => {
    const messages = await diagnose(call);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`Property '${field}' is missing`);
    expect(messages[0]).not.toContain("Property 'anonymousId' is missing");
  }, 30_000);
});
