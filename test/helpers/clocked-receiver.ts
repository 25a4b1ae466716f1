import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * The receiver's process: stamps when each request's headers arrived, on its own clock; answers 503
 * to the first attempt of every `refuseEvery`-th message (by the number ending its `messageId`),
 * 200 otherwise; `GET /arrivals` returns the stamps.
 */
const SCRIPT = `
import { createServer } from 'node:http';
const refuseEvery = Number(process.env.REFUSE_EVERY) || 0;
const arrivals = [];
const refused = new Set();
const server = createServer((req, res) => {
  if (req.method === 'GET') return void res.end(JSON.stringify(arrivals));
  arrivals.push(performance.timeOrigin + performance.now());
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const id = JSON.parse(Buffer.concat(chunks).toString()).messageId;
    const refuse = refuseEvery > 0 && Number(id.split('-').at(-1)) % refuseEvery === 0 && !refused.has(id);
    if (refuse) refused.add(id);
    res.writeHead(refuse ? 503 : 200).end();
  });
});
server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port + '/hook'));
`;

/**
 * A loopback receiver in a process of its own, for timing measurements: in the test's process, the
 * sender's busy moments would delay its stamps and make requests look bunched.
 */
export interface ClockedReceiver {
  url: string;
  /** When each request arrived, in ms since the epoch, in order of arrival. */
  arrivals(): Promise<number[]>;
  close(): Promise<void>;
}

export function startClockedReceiver(options: { refuseEvery?: number } = {}): Promise<ClockedReceiver> {
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], {
    env: { ...process.env, REFUSE_EVERY: String(options.refuseEvery ?? 0) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).once('line', (url) => {
      child.removeAllListeners('exit');
      resolve({
        url,
        arrivals: async () => (await fetch(url)).json() as Promise<number[]>,
        close: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill();
          }),
      });
    });
  });
}
