// @ts-check
/* global module */
/**
 * The layers of src/, checked by `npm run deps` (part of `npm test`); docs/architecture.md draws
 * them. Top to bottom: process → app → APIs (REST adapter and GraphQL schema above the HTTP
 * plugins) → request (context, auth, catalog input rules) → data (db/, store/) → helpers.
 * An import may point down or stay in its own folder; never up, never in a circle. The embedded
 * database (src/engine/) is a wing apart: it imports nothing of the gateway, and only the process
 * entry (src/server.ts, src/server-embedded.ts) and scripts/ import it, through its index.
 */
const layer = {
  process: '^src/(main|server|server-embedded|start-failure)[.]ts$',
  app: '^src/app(-data|-dependencies|-caches|-limits|-yoga-options)?[.]ts$',
  adapters:
    '^src/(rest|schema|docs)/|^src/(graphql-limits|graphql-response-cache|graphiql|graphql-subscription-root)[.]ts$',
  plugins: '^src/(http|limits|persisted|observability)/',
  request: '^src/(context[.]ts$|auth/|catalog/)',
  data: '^src/(db|store)/',
  helpers:
    '^src/(errors|config|config-env|logger|bounded-cache|linked-set|single-flight|graphql-cost|graphql-cost-arguments|graphql-nesting)[.]ts$|^src/format/',
};
const order = ['process', 'app', 'adapters', 'plugins', 'request', 'data', 'helpers'];

/** One rule per layer: nothing below it imports it. */
const upward = order.slice(1).map((name, index) => ({
  name: `not-up-to-${order[index]}`,
  comment: `${order[index]} is above ${order.slice(index + 1).join(', ')}: those must not import it`,
  severity: 'error',
  from: { path: order.slice(index + 1).map((below) => layer[below]) },
  to: { path: layer[order[index]] },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'adapters-apart',
      comment: 'The GraphQL schema does not know the REST adapter or the docs; REST does not know the docs',
      severity: 'error',
      from: { path: '^src/schema/' },
      to: { path: '^src/(rest|docs)/' },
    },
    {
      name: 'rest-not-docs',
      severity: 'error',
      from: { path: '^src/rest/' },
      to: { path: '^src/docs/' },
    },
    {
      name: 'every-file-has-a-layer',
      comment: 'A new top-level file or folder of src/ gets its place in the layers above',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/engine/', ...Object.values(layer)] },
      to: {},
    },
    {
      name: 'engine-stands-alone',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/', pathNot: '^src/engine/' },
    },
    {
      name: 'engine-only-where-the-process-starts',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/engine/', '^src/server(-embedded)?[.]ts$'] },
      to: { path: '^src/engine/' },
    },
    {
      name: 'engine-through-its-index',
      severity: 'error',
      from: { path: '^(src|scripts)/', pathNot: '^src/engine/' },
      to: { path: '^src/engine/', pathNot: '^src/engine/index[.]ts$' },
    },
    {
      name: 'src-stands-alone',
      comment: 'Production never loads sample data, scripts, the bench or the tests',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(seed|scripts|bench|test)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
