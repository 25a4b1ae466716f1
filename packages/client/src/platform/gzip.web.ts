// The twin of gzip.ts for runtimes without `node:zlib`: the web's `CompressionStream`, which some
// lack (the `edge-runtime` package that emulates Vercel's Edge Runtime).

export const CAN_GZIP = typeof CompressionStream === 'function';

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const compressed = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(compressed).arrayBuffer());
}
