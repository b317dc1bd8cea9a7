import type { Browser } from 'playwright-core';
import { findOnPath } from './redis-server';

/**
 * What the browser suites need of the machine: Debian's Chromium on PATH, driven by playwright-core
 * (which brings no browser of its own). `npm test` makes sure of it first (scripts/ensure-chromium.ts).
 */

export const CHROMIUM_BINARY = 'chromium';
export const CHROMIUM_PACKAGE = 'chromium';

export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findOnPath(CHROMIUM_BINARY, env);
}

export function chromiumMissingMessage(why?: string): string {
  return `${CHROMIUM_BINARY} not found on PATH${why ? ` and ${why}` : ''}: install it (Debian/Ubuntu: sudo apt-get install ${CHROMIUM_PACKAGE}) for the browser tests.`;
}

/** Headless, as root in a container (no sandbox), and quiet: no calls home on a closed network. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(chromiumMissingMessage());
  // Loaded here, not at the top: npm test's set-up step reads this file and needs none of it.
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
