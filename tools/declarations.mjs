// Run after tsup by each package's build: makes its published declarations compile in a project
// with TypeScript's defaults (`tsc app.ts`, no tsconfig: an ES5 target). TypeScript declares a class
// with `#` fields by a `#private;` member, which such a project refuses (TS18028); a private member
// with a string name, `private "#private";`, keeps the class nominal just the same and needs no
// target. Usage: node ../../tools/declarations.mjs dist
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const dir = path.resolve(process.argv[2] ?? 'dist');
const declarations = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => /\.d\.c?ts$/.test(file));
for (const file of declarations) {
  const full = path.join(dir, file);
  const text = readFileSync(full, 'utf8');
  const changed = text.replace(/^(\s+)#private;$/gm, '$1private "#private";');
  if (changed !== text) writeFileSync(full, changed);
}
