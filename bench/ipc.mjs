// What the benchmarks' parent processes share about their children.

/** Waits for the first IPC message of `type` from `child`; rejects if the child exits first. */
export function nextMessage(child, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (message) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code, signal) => reject(new Error(`child exited (${signal ?? code}) before sending ${type}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
