import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv/app');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('has documented defaults', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toMatchObject({
      env: 'development',
      host: '127.0.0.1',
      port: 4000,
      mongo: { uri: undefined, dbName: 'storefront', maxPoolSize: 20, readPreference: 'primary' },
      dataDir: '/srv/app/data',
      publicBaseUrl: undefined,
      jwt: { algorithms: ['HS256'] },
      storeLocale: 'en-US',
      logLevel: 'info',
      seedFixturesWhenEmpty: true,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ MONGODB_URI: 'http://localhost:27017' }, 'MONGODB_URI'],
    [{ MONGODB_DB: 'bad name!' }, 'MONGODB_DB'],
    [{ PUBLIC_BASE_URL: 'not a url' }, 'PUBLIC_BASE_URL'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ JWT_ALGORITHMS: 'HS256,none' }, 'JWT_ALGORITHMS'],
    [{ JWT_JWKS_URL: 'https://idp.example.com/jwks', JWT_ALGORITHMS: 'HS256' }, 'JWT_ALGORITHMS'],
    [{ STORE_LOCALE: 'xx-!!' }, 'STORE_LOCALE'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET or JWT_JWKS_URL'],
    [
      { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), PUBLIC_BASE_URL: 'https://shop.example' },
      'MONGODB_URI',
    ],
    [
      { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), MONGODB_URI: 'mongodb://db.example/' },
      'PUBLIC_BASE_URL: required',
    ],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ RESPONSE_CACHE_MAX_BYTES: '-1' }, 'RESPONSE_CACHE_MAX_BYTES'],
    [{ MONGODB_MAX_POOL_SIZE: '0' }, 'MONGODB_MAX_POOL_SIZE'],
    [{ MONGODB_READ_PREFERENCE: 'fastest' }, 'MONGODB_READ_PREFERENCE'],
  ])('rejects %o naming %s', (env, variable) => {
    const problems = problemsOf(env);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).toContain(variable);
  });

  it('reports every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'x', LOG_LEVEL: 'loud' });
    expect(problems.some((problem) => problem.startsWith('PORT'))).toBe(true);
    expect(problems.some((problem) => problem.startsWith('LOG_LEVEL'))).toBe(true);
  });

  it('accepts a production setup with JWT settings and trims the base URL', () => {
    const config = loadConfig(
      {
        NODE_ENV: 'production',
        JWT_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
        JWT_ISSUER: 'https://idp.example.com/',
        JWT_AUDIENCE: 'storefront',
        PUBLIC_BASE_URL: 'https://shop.example.com/',
        MONGODB_URI: 'mongodb+srv://cluster.example.net',
        MONGODB_READ_PREFERENCE: 'secondaryPreferred',
      },
      '/srv/app',
    );
    expect(config.jwt.algorithms).toEqual(['RS256', 'ES256', 'PS256', 'EdDSA']);
    expect(config.publicBaseUrl).toBe('https://shop.example.com');
    expect(config.mongo.readPreference).toBe('secondaryPreferred');
    expect(config.seedFixturesWhenEmpty).toBe(false);
    expect(config.rateLimit).toEqual({
      requestsPerMinute: 600,
      costPerMinute: 1_000_000,
      failOpen: true,
      trustedProxies: [],
    });
  });

  it('limits nothing by default outside production, and checks proxies and the trusted-only manifest', () => {
    const config = loadConfig(
      { TRUSTED_PROXIES: '10.0.0.0/8, loopback', PERSISTED_OPERATIONS: 'apq' },
      '/srv/app',
    );
    expect(config.rateLimit).toMatchObject({ requestsPerMinute: 0, costPerMinute: 0 });
    expect(config.rateLimit.trustedProxies).toEqual(['10.0.0.0/8', 'loopback']);
    expect(config.persistedOperations).toEqual({ mode: 'apq', manifestPath: undefined });
    const problems = problemsOf({ TRUSTED_PROXIES: '10.0.0.0/99', PERSISTED_OPERATIONS: 'trusted-only' });
    expect(problems).toContain(
      'TRUSTED_PROXIES: "10.0.0.0/99" is not an address, a CIDR or loopback/linklocal/uniquelocal',
    );
    expect(problems).toContain(
      'PERSISTED_OPERATIONS_MANIFEST: required when PERSISTED_OPERATIONS=trusted-only',
    );
  });
});

describe('log format', () => {
  const formatOf = (env: Record<string, string>, terminal: boolean) =>
    loadConfig(env, '/srv/app', terminal).logFormat;
  const production = {
    NODE_ENV: 'production',
    MONGODB_URI: 'mongodb://db:27017',
    JWT_SECRET: 'x'.repeat(32),
    PUBLIC_BASE_URL: 'https://shop.example.com',
  };

  it('is pretty at a terminal outside production, and JSON when piped or in production', () => {
    expect(formatOf({}, true)).toBe('pretty');
    expect(formatOf({ NODE_ENV: 'test' }, true)).toBe('pretty');
    expect(formatOf({}, false)).toBe('json');
    expect(formatOf(production, true)).toBe('json');
    expect(formatOf({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(formatOf({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
  });

  it('refuses pretty in production and unknown formats', () => {
    expect(problemsOf({ ...production, LOG_FORMAT: 'pretty' })).toEqual([
      'LOG_FORMAT: pretty is for development; production writes JSON lines',
    ]);
    expect(problemsOf({ LOG_FORMAT: 'yaml' })[0]).toMatch(/^LOG_FORMAT: /);
  });
});

describe('documentation', () => {
  it('documents every configuration variable in the README table and .env.example', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile('README.md', 'utf8');
    const example = await readFile('.env.example', 'utf8');
    const { CONFIG_VARIABLES } = await import('../src/config');
    for (const name of CONFIG_VARIABLES) {
      expect(readme, name).toMatch(new RegExp(`^\\| \`${name}\` +\\|`, 'm'));
      expect(example, name).toMatch(new RegExp(`^# ${name}=`, 'm'));
    }
  });
});
