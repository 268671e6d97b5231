// The console over real HTTP for the browser tests: a gateway listening on 127.0.0.1 with the console
// on (plain http, the development setting), console users, a legacy key imported for the scripted bot,
// and Chromium; pages in fresh contexts, signed in through the form as a person would.
import { expect } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, PASSWORD } from './console.js';
import { launchChromium } from './browser.js';

export const BOT_HANDLE = 'brightpath:telegram-bot';

export interface ConsoleBrowser {
  gw: Gateway;
  base: string;
  browser: Browser;
  /** A page in a context of its own (its own cookies), 1360 × 900 unless told otherwise. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Fills and sends the sign-in form; does not wait for where it lands. */
  signIn(page: Page, name: string, password?: string): Promise<void>;
  /** The scripted legacy bot's call over real HTTP, with the imported key; its status. */
  botCall(): Promise<number>;
  close(): Promise<void>;
}

/** `users`: name → workspace slug, or null for the service team; `rulesDir`: a copy a test may edit. */
export async function startConsoleBrowser(
  executablePath: string,
  options: { legacyKey: string; users: Record<string, string | null>; rulesDir?: string },
): Promise<ConsoleBrowser> {
  const gw = await startGateway({
    console: { secureCookies: false },
    ...(options.rulesDir ? { rulesDir: options.rulesDir } : {}),
  });
  gw.secrets.add(options.legacyKey);
  const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  for (const [name, workspace] of Object.entries(options.users)) await addUser(gw, name, workspace);
  expect(
    (await gw.admin('POST', `/admin/v1/integrations/${BOT_HANDLE}/keys/import`, { key: options.legacyKey })).statusCode,
  ).toBe(201);
  const browser = await launchChromium(executablePath);
  return {
    gw,
    base,
    browser,
    async newPage(contextOptions = {}) {
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, ...contextOptions });
      return context.newPage();
    },
    async signIn(page, name, password = PASSWORD) {
      await page.goto(`${base}/console`);
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    },
    botCall: async () =>
      (await fetch(`${base}/api/bots/api/boards/`, { headers: { 'x-bot-api-key': options.legacyKey } })).status,
    async close() {
      await browser.close();
      await gw.close();
    },
  };
}
