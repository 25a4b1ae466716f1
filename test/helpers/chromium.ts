import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { IN_CI } from './ci.js';

/** Debian's Chromium, which the page tests drive. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Why the page tests skip here (a one-line reason), or undefined when they run: they run when
 * Chromium is installed, and under CI=true (which installs it: .ci/run), where a missing one fails them.
 */
export const CHROMIUM_SKIP = existsSync(CHROMIUM) || IN_CI ? undefined : `${CHROMIUM} is missing (apt-get install chromium)`;

/** Headless Chromium with a throwaway profile; `close()` ends it and removes the profile. */
export async function launchChromium(): Promise<{ browser: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(path.join(tmpdir(), 'chromium-profile-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
