// Runs README.md's Quick start in a fresh clone, exactly as written there, as a newcomer would:
// the first `sh` block's commands one after the other (`npm ci`, `npm start`), the second block's
// each as a server left running (the collector, the receiver; each must print a line on stdout),
// then the `js` block saved as send.mjs and run with `node send.mjs`. Fails when a command fails,
// a server does not start, or send.mjs does not print what the README says it prints.
// Usage: node .ci/quick-start.mjs CLONE_DIR
import { execSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const clone = path.resolve(process.argv[2] ?? '.');
const readme = readFileSync(path.join(clone, 'README.md'), 'utf8');
const section = readme.split(/^## /m).find((part) => part.startsWith('Quick start\n'));
if (section === undefined) throw new Error('README.md has no "## Quick start" section');
const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, lang, text]) => ({ lang, text }));
const commands = (block) =>
  block.text
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
const [steps, servers] = blocks.filter(({ lang }) => lang === 'sh').map(commands);
const send = blocks.find(({ lang }) => lang === 'js');
const expected = section.match(/It prints `([^`]+)`/)?.[1];
if (!steps || !servers || !send || !expected) throw new Error('README.md\'s Quick start no longer has two sh blocks, a js block and "It prints `...`"');

for (const command of steps) {
  console.log(`$ ${command}`);
  execSync(command, { cwd: clone, stdio: 'inherit' });
}

const running = [];
const stop = () =>
  Promise.all(
    running
      .filter((child) => child.exitCode === null)
      .map((child) => new Promise((resolve) => {
        child.once('exit', resolve);
        process.kill(-child.pid, 'SIGTERM');
      })),
  );
try {
  for (const command of servers) {
    console.log(`$ ${command} &`);
    const child = spawn(command, { cwd: clone, shell: true, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    running.push(child);
    child.output = '';
    child.stdout.setEncoding('utf8').on('data', (text) => (child.output += text));
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`\`${command}\` printed nothing on stdout within 30 s`)), 30_000);
      child.stdout.once('data', () => resolve(clearTimeout(timer)));
      child.once('exit', (code) => reject(new Error(`\`${command}\` exited with ${code} before printing its address`)));
    });
    console.log(`  started: ${child.output.trim()}`);
  }
  writeFileSync(path.join(clone, 'send.mjs'), send.text);
  console.log('$ node send.mjs');
  const printed = execSync('node send.mjs', { cwd: clone, encoding: 'utf8', timeout: 60_000 });
  process.stdout.write(printed);
  if (!printed.includes(expected)) throw new Error(`send.mjs printed ${JSON.stringify(printed)}, the README says ${expected}`);
} finally {
  await stop();
}
console.log('Quick start OK: every command ran as written');
