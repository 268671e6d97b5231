// The system's Chromium for the browser tests, driven by playwright-core (its own browser download is
// never used). Without Chromium the browser tests say so in one line and skip; in CI they must run.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Where the OS packages put it (Debian: `apt-get install chromium`); CHROMIUM_PATH names another. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** Quiet, headless, no sandbox (root in a container), no update or background traffic: the tests work offline. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
];

/** Screenshots and other files a browser test leaves for people to look at (kept by CI, ignored by git). */
export const ARTEFACTS_DIR = join(import.meta.dirname, '..', 'artefacts');

/** Chromium's path, or null after saying in one line why the browser tests are skipped (an error under CI=1). */
export function chromiumOrSkip(): string | null {
  const path =
    [process.env.CHROMIUM_PATH, ...CANDIDATES].find((p): p is string => p !== undefined && p !== '' && existsSync(p)) ??
    null;
  if (path !== null) return path;
  const reason = `no Chromium at ${[process.env.CHROMIUM_PATH, ...CANDIDATES].filter(Boolean).join(' or ')} (apt-get install chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI) throw new Error(`Chromium is required in CI: ${reason}`);
  console.log(`skipped: the browser tests (${reason})`);
  return null;
}

export function launchChromium(executablePath: string): Promise<Browser> {
  mkdirSync(ARTEFACTS_DIR, { recursive: true });
  return chromium.launch({ executablePath, args: CHROMIUM_FLAGS, headless: true });
}
