/**
 * One string for a pair of a source and a name within it (an audience, a webhook URL, a
 * `messageId`): a map key no two different pairs share, whatever characters the names hold.
 */
export function sourceKey(source: string, name: string): string {
  return JSON.stringify([source, name]);
}
