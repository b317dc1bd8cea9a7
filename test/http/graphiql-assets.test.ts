import { get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 37: GraphiQL's page is small HTML; its script, styles, workers and icon are files named by
 * their hash and cached for a year, so a second visit transfers the page only.
 */

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface Loaded {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The bytes and headers as sent (no decompression, no cache). */
function load(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Loaded> {
  return new Promise((resolve, reject) => {
    const request = get(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    request.on('error', reject);
  });
}

/** The /graphiql/ files a page names, in its attributes and its workers' table. */
function assetPaths(html: string): string[] {
  return [...new Set([...html.matchAll(/"(\/graphiql\/[^"]+)"/g)].map((match) => match[1] as string))];
}

/** The page's files, their content hashes masked. */
const ASSET_FILES = [
  '/graphiql/editor-worker.*.js',
  '/graphiql/favicon.*.ico',
  '/graphiql/graphiql.*.css',
  '/graphiql/graphiql.*.js',
  '/graphiql/graphql-worker.*.js',
  '/graphiql/json-worker.*.js',
];
const hashesMasked = (paths: readonly string[]) =>
  paths.map((path) => path.replace(/\.[\w-]{16}\./, '.*.')).sort();

describe('GraphiQL’s page and files', () => {
  it('is a page under 50 KB naming versioned files that are cached for a year', async () => {
    const page = await load('/graphql', { accept: 'text/html' });
    expect(page.status).toBe(200);
    // Before: the whole editor inline, 9,142,000 bytes.
    expect(page.body.byteLength).toBeLessThan(50_000);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers.etag).toMatch(/^"[\w-]+"$/);

    const paths = assetPaths(page.body.toString('utf8'));
    expect(hashesMasked(paths)).toEqual(ASSET_FILES);
    let total = 0;
    for (const path of paths) {
      const asset = await load(path);
      expect(asset.status, path).toBe(200);
      expect(asset.headers['cache-control'], path).toBe('public, max-age=31536000, immutable');
      expect(asset.headers['content-type'], path).toMatch(
        path.endsWith('.js') ? /^text\/javascript/ : path.endsWith('.css') ? /^text\/css/ : /^image\//,
      );
      expect(asset.headers['x-content-type-options']).toBe('nosniff');
      total += asset.body.byteLength;
    }
    // The editor is all there, from this server.
    expect(total).toBeGreaterThan(8_000_000);
  });

  it('answers a revisit of the page with 304, and a file of another version with 404', async () => {
    const page = await load('/graphql', { accept: 'text/html', 'accept-encoding': 'br' });
    expect(page.headers['content-encoding']).toBe('br');
    const again = await load('/graphql', {
      accept: 'text/html',
      'accept-encoding': 'br',
      'if-none-match': String(page.headers.etag),
    });
    expect(again.status).toBe(304);
    expect(again.body.byteLength).toBe(0);
    expect((await load('/graphiql/graphiql.AAAAAAAAAAAAAAAA.js')).status).toBe(404);
  });

  it('compresses each file once: the same bytes for every load', async () => {
    const script = assetPaths((await load('/graphql', { accept: 'text/html' })).body.toString('utf8')).find(
      (path) => path.startsWith('/graphiql/graphiql.') && path.endsWith('.js'),
    )!;
    const first = await load(script, { 'accept-encoding': 'br' });
    expect(first.headers['content-encoding']).toBe('br');
    expect(first.body.byteLength).toBeLessThan(2_000_000);
    const cpu = process.cpuUsage();
    for (let index = 0; index < 4; index++) {
      expect((await load(script, { 'accept-encoding': 'br' })).body.equals(first.body)).toBe(true);
    }
    const { user, system } = process.cpuUsage(cpu);
    expect((user + system) / 1e6).toBeLessThan(0.5);
  });

  it('in a browser: a second visit transfers only the page; the files are cache hits', async () => {
    const context = await browser.newContext();
    const errors: string[] = [];
    context.on('weberror', (error) => errors.push(error.error().message));
    // What reached the server: the browser's own cache answers the rest.
    let received: string[] = [];
    let answering = 0;
    const onRequest = (request: IncomingMessage, response: ServerResponse) => {
      received.push(request.url ?? '');
      answering += 1;
      response.once('close', () => (answering -= 1));
    };
    server.http.on('request', onRequest);
    const paths = () => [...new Set(received.map((url) => new URL(url, server.url).pathname))].sort();
    const visit = async (atLeast: number) => {
      received = [];
      const page = await context.newPage();
      await page.goto(`${server.url}/graphql`);
      await page.locator('.monaco-editor').first().waitFor({ timeout: 20_000 });
      // The editor's three workers start a moment later.
      await page.waitForFunction(
        () => new Set(performance.getEntriesByType('resource').map((entry) => entry.name)).size >= 6,
        undefined,
        { timeout: 20_000 },
      );
      // A worker's file can reach the server after the browser lists its entry: wait for the server.
      for (const deadline = Date.now() + 20_000; paths().length < atLeast && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 50));
      // Every answer written, and a moment for the browser to store them, before the page goes:
      // under load a worker's file still on its way when the page closed was fetched again.
      for (const deadline = Date.now() + 20_000; answering > 0 && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 50));
      await page.waitForTimeout(250);
      const status = await page.evaluate(
        () => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).responseStatus,
      );
      await page.close();
      return { status, received: paths() };
    };
    try {
      const first = await visit(7);
      expect(errors).toEqual([]);
      expect(hashesMasked(first.received)).toEqual([...ASSET_FILES, '/graphql']);
      const second = await visit(1);
      expect(second.received).toEqual(['/graphql']);
      expect(second.status).toBe(200);
    } finally {
      server.http.off('request', onRequest);
      await context.close();
    }
  }, 60_000);
});
