import { createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { shareEdgeHooks } from '../../src/http/shared-edge-hooks';
import { schema } from '../../src/schema/index';

/** Plugins that record what they see, on a bare Yoga over our schema (no database is reached). */
function recorder(seen: string[]) {
  const plugin = (name: string, extra: Plugin = {}): Plugin => ({
    onRequest({ url }) {
      seen.push(`${name} request ${url.pathname}`);
    },
    onResponse({ response }) {
      seen.push(`${name} response ${response.status}`);
    },
    ...extra,
  });
  return plugin;
}

describe('shareEdgeHooks', () => {
  it('runs every request and response hook in order, waiting on async ones, as separate hooks would', async () => {
    const seen: string[] = [];
    const plugin = recorder(seen);
    const plugins = [
      plugin('a'),
      {
        async onRequest() {
          await new Promise((resolve) => setTimeout(resolve, 5));
          seen.push('b request');
        },
      } satisfies Plugin,
      plugin('c', {
        onResponse({ response, setResponse }) {
          seen.push(`c response ${response.status}`);
          setResponse(new Response('replaced', { status: 418 }));
        },
      }),
      plugin('d'),
    ];
    const yoga = createYoga({ schema, plugins: shareEdgeHooks(plugins), logging: false });
    const response = await yoga.fetch('http://localhost/graphql?query=%7B__typename%7D');
    expect(response.status).toBe(418);
    expect(seen).toEqual([
      'a request /graphql',
      'b request',
      'c request /graphql',
      'd request /graphql',
      'a response 200',
      'c response 200',
      'd response 418',
    ]);
  });

  it('runs no request hook after one ends the response, and keeps the plugins’ other hooks', async () => {
    const seen: string[] = [];
    const plugin = recorder(seen);
    let validated = 0;
    const plugins = [
      plugin('a', {
        onValidate() {
          validated += 1;
        },
      }),
      {
        onRequest({ url, endResponse }) {
          if (url.pathname === '/stop') endResponse(new Response('stopped', { status: 299 }));
        },
      } satisfies Plugin,
      plugin('c'),
    ];
    const yoga = createYoga({ schema, plugins: shareEdgeHooks(plugins), logging: false });
    const stopped = await yoga.fetch('http://localhost/stop');
    expect([stopped.status, await stopped.text()]).toEqual([299, 'stopped']);
    expect(seen).toEqual(['a request /stop', 'a response 299', 'c response 299']);
    await yoga.fetch('http://localhost/graphql?query=%7B__typename%7D');
    expect(validated).toBe(1);
  });
});
