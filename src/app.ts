import { createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Db } from 'mongodb';
import type { ViewerResolver } from './auth/tokens';
import type { Config } from './config';
import { createContext, type AppContext } from './context';
import { createOrderRepository } from './db/order-repository';
import { createProductRepository } from './db/product-repository';
import { isDatabaseUnavailable } from './db/mongo';
import { serviceUnavailable } from './errors';
import { GRAPHIQL_DEFAULT_QUERY } from './graphiql';
import type { Logger } from './logger';
import { useRestApi } from './rest/use-rest-api';
import { schema } from './schema/index';

export interface AppDependencies {
  config: Config;
  db: Db;
  resolveViewer: ViewerResolver;
  logger: Logger;
  /** Plugins that run before the APIs (docs, health, metrics …). */
  plugins?: Plugin[];
}

export type App = YogaServerInstance<Record<string, unknown>, AppContext>;

/** The Yoga instance that serves /graphql and /api/v1 from one schema and one data path. */
export function createApp(deps: AppDependencies): App {
  const { config, db, resolveViewer, logger } = deps;
  const contextDeps = {
    products: createProductRepository(db),
    orders: createOrderRepository(db),
    resolveViewer,
    storeLocale: config.storeLocale,
  };

  return createYoga<Record<string, unknown>, AppContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    context: ({ request }) => createContext(request, contextDeps),
    graphiql: { title: 'Storefront Gateway', defaultQuery: GRAPHIQL_DEFAULT_QUERY },
    logging: {
      debug: (...args) => logger.debug(args.map(String).join(' ')),
      info: (...args) => logger.info(args.map(String).join(' ')),
      warn: (...args) => logger.warn(args.map(String).join(' ')),
      error: (...args) => logger.error({ err: args[0] }, 'graphql error'),
    },
    maskedErrors: {
      // Never expose internals, not even in development; a lost database is a retryable 503.
      maskError(error, message) {
        const original = (error as { originalError?: unknown }).originalError ?? error;
        if (isDatabaseUnavailable(original)) return serviceUnavailable();
        const masked = maskError(error, message, false);
        if (masked !== error) logger.error({ err: original }, 'unexpected error');
        return masked;
      },
    },
    plugins: [
      ...(deps.plugins ?? []),
      useRestApi({
        publicBaseUrl: config.publicBaseUrl,
        onUnexpectedError: (error, request) =>
          logger.error({ err: error, url: request.url }, 'unexpected error in /api/v1'),
      }),
    ],
  });
}
