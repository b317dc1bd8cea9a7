import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS } from '../../seed/fixtures';
import { launchChromium } from '../support/chromium';
import { openOutsideWriter, type OutsideWriter } from '../support/outside-writer';
import { mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * Issue 27: GraphiQL, as the server serves it at /graphql, is a client of a live-orders
 * subscription. A person's steps in headless Chromium: the document in the URL, the owner's token
 * in the Headers editor, Run; then an outside writer changes the order and the result pane shows it.
 */

let server: TestServer;
let writer: OutsideWriter;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
});
afterAll(async () => {
  await browser?.close();
  await writer?.close();
  await server?.stop();
});

/** The result pane's text, once it holds every one of `parts` (GraphiQL shows the latest event). */
async function resultShows(page: Page, parts: string[]): Promise<string> {
  const paneText = () => document.querySelector('section.result-window')?.textContent ?? '';
  try {
    const pane = await page.waitForFunction(
      (wanted) => {
        const text = document.querySelector('section.result-window')?.textContent ?? '';
        return wanted.every((part) => text.includes(part)) && text;
      },
      parts,
      { timeout: 15_000 },
    );
    return (await pane.jsonValue()) as string;
  } catch (error) {
    throw new Error(
      `the result pane never showed ${parts.join(', ')}; it shows: ${await page.evaluate(paneText)}`,
      {
        cause: error,
      },
    );
  }
}

describe('GraphiQL at /graphql', () => {
  it('runs a subscription: the order now, then the status an outside writer sets', async () => {
    const order = FIXTURE_ORDERS.find((candidate) => candidate.customer_id === FIXTURE_CUSTOMERS.alice)!;
    const token = await mintToken({ sub: FIXTURE_CUSTOMERS.alice });
    const document = `subscription { order(ulid: "${order.ulid}") { ulid fulfillmentStatus } }`;
    const page = await browser.newPage();
    const streams: number[] = [];
    page.on('response', (response) => {
      if (response.headers()['content-type']?.startsWith('text/event-stream'))
        streams.push(response.status());
    });
    try {
      await page.goto(`${server.url}/graphql?query=${encodeURIComponent(document)}`);
      await page.getByRole('button', { name: 'Headers', exact: true }).click();
      // The editor is Monaco: select what is there and put the JSON in as one input (typing it
      // key by key would meet the editor's auto-closed brackets and quotes).
      await page.locator('.monaco-editor[data-uri$="-headers.json"]').click();
      await page.keyboard.press('Control+A');
      await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${token}` }));
      await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).click();

      const first = await resultShows(page, [order.ulid, '"fulfillmentStatus"']);
      expect(first).toContain(`"${order.fulfillment_status.toUpperCase()}"`);
      expect(first).not.toContain('"errors"');
      expect(streams).toEqual([200]);

      const changedTo = order.fulfillment_status === 'refunded' ? 'completed' : 'refunded';
      await writer.orders.updateOne(
        { ulid: order.ulid },
        { $set: { fulfillment_status: changedTo, updated_at: new Date() } },
      );
      const changed = await resultShows(page, [order.ulid, `"${changedTo.toUpperCase()}"`]);
      expect(changed).not.toContain('"errors"');
      // Still the one stream: the change came down it, not through a new request.
      expect(streams).toEqual([200]);
    } finally {
      await page.close();
    }
  });
});
