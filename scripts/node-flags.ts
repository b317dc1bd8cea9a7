import { readFileSync } from 'node:fs';

/**
 * The V8 flags `npm start` and `npm run start:production` give the server (package.json
 * `config.nodeFlags`), for whatever else starts it: the bench and the tests' server processes.
 */
export const SERVER_NODE_FLAGS = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    config: { nodeFlags: string };
  }
).config.nodeFlags
  .split(' ')
  .filter(Boolean);
