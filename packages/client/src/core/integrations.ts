/**
 * Destination selection: keys are destination names, case-sensitive; `All: false`
 * disables every destination not set to true on its own. Values may also be an object of
 * destination-specific settings, which leaves the destination enabled.
 */
export type Integrations = { All?: boolean } & Record<string, boolean | Record<string, unknown>>;

/**
 * Whether `destination` receives a message carrying `integrations`.
 * @example isDestinationEnabled({ All: false, Webhooks: true }, 'Webhooks') // true
 */
export function isDestinationEnabled(integrations: Integrations | undefined, destination: string): boolean {
  const own = integrations?.[destination];
  if (own !== undefined) return own !== false;
  return integrations?.All !== false;
}
