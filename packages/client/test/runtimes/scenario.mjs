// One scenario for every runtime in the matrix: plain JavaScript, no Node built-ins, so the same file
// runs on Node, Bun, Deno, in a Worker and in the Edge Runtime. It drives the built package against
// the loopback sink of test/runtimes/matrix.test.ts and returns what a user would see; the test
// checks it against what the sink received.

/**
 * @param {{ Analytics?: Function, verify: Function, verifyStandard: Function, webhooks?: object }} library
 *   what the runtime loaded of the package: the client, the X-Signature and Standard Webhooks
 *   checks, and `batched-analytics/webhooks`.
 * @param {{ sink: string, body: string, secret: string, signature: string, standard: { secret: string, other: string, headers: object, replayed: object } }} setup
 *   from the test: the sink's URL, and a body with its signature computed by Node's `signBody`, and
 *   its Standard Webhooks headers made by the `standardwebhooks` library.
 */
export async function runScenario({ Analytics, verify, verifyStandard, webhooks }, { sink, standard, ...signed }) {
  const result = { signature: await checkSignatures(verify, signed), standard: await checkStandard(verifyStandard, signed.body, standard) };
  if (webhooks) result.webhooks = await forward(webhooks, sink, signed.secret, standard.secret);
  if (!Analytics) return result;
  const fast = { minRetryDelay: 10, maxRetryDelay: 50 };

  const ok = new Analytics('wk_runtime', { endpoint: `${sink}/ok`, ...fast });
  ok.identify({ userId: 'u1', traits: { plan: 'pro' } });
  ok.track({ userId: 'u1', event: 'Runtime Tested', properties: { n: 1 } });
  result.flush = await ok.flush();
  await ok.close();

  const flaky = new Analytics('wk_runtime', { endpoint: `${sink}/flaky`, ...fast });
  let retries = 0;
  flaky.on('retry', () => {
    retries += 1;
  });
  flaky.track({ userId: 'u1', event: 'Retried' });
  result.retried = { ...(await flaky.close()), retries };

  const bad = new Analytics('wk_runtime', { endpoint: `${sink}/bad`, ...fast });
  const failures = [];
  bad.on('failed', ({ messages, error }) => failures.push({ count: messages.length, status: error.status }));
  bad.track({ userId: 'u1', event: 'Refused' });
  result.refused = { ...(await bad.close()), failures };

  try {
    const zipped = new Analytics('wk_runtime', { endpoint: `${sink}/gzip`, gzip: true, ...fast });
    zipped.track({ userId: 'u1', event: 'Compressed', properties: { text: 'ünïcödé ☕' } });
    result.gzip = await zipped.close();
  } catch (error) {
    result.gzip = { error: { name: error.name, option: error.option, message: error.message } };
  }

  const hung = new Analytics('wk_runtime', { endpoint: `${sink}/hang`, ...fast });
  hung.track({ userId: 'u1', event: 'Never Answered' });
  const started = Date.now();
  // A timer of the same 300 ms beside it: how late this runtime's timers fire on this run.
  const baseline = new Promise((resolve) => setTimeout(() => resolve(Math.max(0, Date.now() - started - 300)), 300));
  const summary = await hung.close({ timeout: 300 });
  result.deadline = { ...summary, ms: Date.now() - started, lateness: await baseline };
  return result;
}

/** The Webhooks destination and the receiver helpers: a signed delivery to the sink, and the body it sends. */
async function forward({ WebhookDestination, toWebhookBody, signBody, signBodyAsync }, sink, secret, standardSecret) {
  const message = { type: 'track', userId: 'u1', event: 'Forwarded', messageId: 'm-runtime', timestamp: '2026-01-01T00:00:00.000Z' };
  const settings = { webhooks: [{ url: `${sink}/webhook` }], sharedSecret: secret, standardWebhooks: { secrets: [standardSecret] } };
  const destination = new WebhookDestination(settings, { minRetryDelay: 10 });
  const { delivered } = await destination.deliver(message, { receivedAt: 0 });
  await destination.close();
  let sync;
  try {
    sync = signBody('{}', secret);
  } catch (error) {
    sync = { error: error.code };
  }
  return { delivered, body: toWebhookBody(message, { receivedAt: 0 }), signedAsync: await signBodyAsync('{}', secret), signedSync: sync };
}

async function checkSignatures(verify, { body, secret, signature }) {
  return {
    good: await verify(body, signature, secret),
    changedBody: await verify(`${body} `, signature, secret),
    otherSecret: await verify(body, signature, `${secret}x`),
    malformed: await verify(body, `sha1=${signature}`, secret),
  };
}

async function checkStandard(verifyStandard, body, { secret, other, headers, replayed }) {
  return {
    good: await verifyStandard(body, headers, secret),
    fetchHeadersAndList: await verifyStandard(body, new Headers(headers), [other, secret]),
    otherSecret: await verifyStandard(body, headers, other),
    changedBody: await verifyStandard(`${body} `, headers, secret),
    replayed: await verifyStandard(body, replayed, secret),
  };
}
