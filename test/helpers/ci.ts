/**
 * The one rule for "in CI" (`.ci/run` and the CI service set `CI=true`): there a test needing a
 * component (Chromium, PostgreSQL, promtool, a tmpfs, a pinned runtime) must run and fails when it
 * is missing; elsewhere it skips with a one-line reason.
 */
export const IN_CI = process.env.CI === 'true';
