// A live page that stops reading `/events`, against a real `batched-analytics serve` process: it is
// cut once it falls too far behind, the collector's memory does not follow the events it missed,
// and a page that reads keeps getting every one.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { basic, postJson, rss, startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';

let temp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await stopAll();
  temp?.remove();
  temp = undefined;
});

const MB = 1024 * 1024;
/** How every event's frame in the stream starts. */
const FRAME_START = 'data: {';

/** Opens `/events` on a raw socket and stops reading at once: its bytes pile up in the collector. */
async function stalledPage(url: string) {
  const { hostname, port, host } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(`GET /events HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  /** Reads what the collector sent, until it closes the connection (`closed`) or `timeout` ms pass. */
  const drain = (timeout: number) =>
    new Promise<{ bytes: number; frames: number; closed: boolean }>((resolve) => {
      let bytes = 0;
      let frames = 0;
      // The end of the text read so far, in case a frame's start is split between two reads.
      let tail = '';
      const done = (closed: boolean) => {
        clearTimeout(timer);
        socket.destroy();
        resolve({ bytes, frames, closed });
      };
      const timer = setTimeout(() => done(false), timeout);
      socket.setEncoding('latin1').on('data', (chunk: string) => {
        bytes += chunk.length;
        const text = tail + chunk;
        frames += text.split(FRAME_START).length - 1;
        tail = text.slice(1 - FRAME_START.length);
      });
      socket.once('end', () => done(true));
      socket.resume();
    });
  return { drain };
}

/** A track call whose stream frame is about 30 kB. */
const big = (n: number) => ({ type: 'track', userId: 'u', event: `Big ${n}`, properties: { pad: 'x'.repeat(30_000) } });

/** The frames of the 6,000 events sent after the stalled page was cut: about 30 KB each. */
const SENT_AFTER_THE_CUT = 180 * MB;

/** A collector with one source and no destination, a page that reads and one that stopped. */
async function start() {
  temp = tempDir();
  const config = writeConfig(temp.dir, { sources: [{ name: 'web', writeKey: 'wk_web' }], historyEvents: 200 });
  const collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
  return { collector, reader: await watchEvents(collector.url), stalled: await stalledPage(collector.url) };
}

/** Sends `count` big messages, 15 a batch. */
async function send(url: string, count: number): Promise<void> {
  for (let sent = 0; sent < count; ) {
    const batch = Array.from({ length: Math.min(15, count - sent) }, () => big(sent++));
    expect((await postJson(`${url}/v1/batch`, { batch }, { authorization: basic('wk_web') })).status).toBe(200);
  }
}

describe('a live page that stops reading', () => {
  it('is disconnected once too far behind; the collector stays small and a reading page gets every event', async () => {
    const { collector, reader, stalled } = await start();
    const pid = collector.child.pid!;
    // 30 MB of frames: past the limit on unsent bytes and the kernel's socket buffers.
    await send(collector.url, 1_000);
    const before = rss(pid);
    // 180 MB more, which the stalled page would hold had it not been cut (it grew by 341 MB then).
    // Ingesting them alone moves the collector's memory by up to about 100 MB, as garbage comes and
    // goes at the pace of each Node version's collector: the bound is what was sent, not a margin.
    await send(collector.url, 6_000);
    const after = rss(pid);
    await waitFor(() => reader.all.length === 7_000, 'the reading page to get all 7,000 events', 10_000);
    expect(after - before, `${before / MB} MB -> ${after / MB} MB`).toBeLessThan(SENT_AFTER_THE_CUT);

    const { bytes, closed } = await stalled.drain(5_000);
    expect(closed).toBe(true);
    expect(bytes).toBeLessThan(30 * MB);
    reader.close();
    // Sending 210 MB takes 5 to 6 s here, past vitest's default 5 s; the waits above have their own limits.
  }, 30_000);

  it('is not disconnected while what it has not read is under the limit', async () => {
    const { collector, reader, stalled } = await start();
    // 3 MB of frames: under the limit, whatever the kernel's buffers took.
    await send(collector.url, 100);
    const { frames, closed } = await stalled.drain(1_000);
    expect(closed).toBe(false);
    expect(frames).toBe(100);
    reader.close();
  });
});
