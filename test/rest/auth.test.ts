import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_JWT_SECRET, bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import {
  ALICE,
  BOB,
  ORDERS,
  UNKNOWN_ULID,
  call,
  expectJson,
  expectUnauthenticated,
  type Reply,
} from './helpers';

/**
 * GET /api/v1/orders/{order}: every way a token can be wrong (401), visibility (403), unknown
 * orders (404), and the order of those checks. Tokens are minted here; nothing is mocked.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const getOrder = (ulid: string, headers: Record<string, string> = {}, target = server): Promise<Reply> =>
  call(target, `/api/v1/orders/${ulid}`, { headers });

const ALICE_ORDER = ORDERS[1] as string; // order 1 belongs to cus_alice
const BOB_ORDER = ORDERS[6] as string; // order 6 belongs to cus_bob

describe('valid tokens', () => {
  it('show a customer each of their own orders (alice: 1, 2, 5, 7; bob: 3, 4, 6, 8)', async () => {
    for (const [customer, orderIds] of [
      [ALICE, [1, 2, 5, 7]],
      [BOB, [3, 4, 6, 8]],
    ] as const) {
      const token = await mintToken({ sub: customer });
      for (const id of orderIds) {
        const reply = await getOrder(ORDERS[id] as string, bearer(token));
        expect(reply.status, `order ${id} for ${customer}`).toBe(200);
        expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(reply.body).toMatchObject({ id, ulid: ORDERS[id] });
      }
    }
  });

  it('match the ULID case-insensitively: a lower-case ULID finds the order', async () => {
    const reply = await getOrder(ALICE_ORDER.toLowerCase(), bearer(await mintToken({ sub: ALICE })));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: 1, ulid: ALICE_ORDER });
  });

  it('accept a mixed-case ULID too', async () => {
    const mixed = [...ALICE_ORDER].map((c, i) => (i % 2 ? c.toLowerCase() : c)).join('');
    const reply = await getOrder(mixed, bearer(await mintToken({ sub: ALICE })));
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(1);
  });

  it('accept the Bearer scheme in any letter case', async () => {
    const token = await mintToken({ sub: ALICE });
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      expect((await getOrder(ALICE_ORDER, { authorization: `${scheme} ${token}` })).status).toBe(200);
    }
  });

  it('accept a token that expired within the 5 s clock tolerance', async () => {
    const token = await mintToken({ sub: ALICE, expiresAt: now() - 1 });
    expect((await getOrder(ALICE_ORDER, bearer(token))).status).toBe(200);
  });

  it('accept a token whose nbf lies within the 5 s clock tolerance', async () => {
    const token = await mintToken({ sub: ALICE, notBefore: now() + 2 });
    expect((await getOrder(ALICE_ORDER, bearer(token))).status).toBe(200);
  });

  it('ignore issuer and audience when the server configures neither', async () => {
    const token = await mintToken({ sub: ALICE, issuer: 'https://anyone.test', audience: 'anything' });
    expect((await getOrder(ALICE_ORDER, bearer(token))).status).toBe(200);
  });
});

describe('401 Unauthenticated (with WWW-Authenticate: Bearer)', () => {
  const cases: [string, () => Promise<Record<string, string>>][] = [
    ['no Authorization header', async () => ({})],
    ['an empty Authorization header', async () => ({ authorization: '' })],
    ['the Basic scheme', async () => ({ authorization: `Basic ${btoa('cus_alice:secret')}` })],
    [
      'a valid token under another scheme',
      async () => ({ authorization: `Token ${await mintToken({ sub: ALICE })}` }),
    ],
    ['Bearer without a token', async () => ({ authorization: 'Bearer' })],
    ['Bearer followed by spaces only', async () => ({ authorization: 'Bearer    ' })],
    ['a garbage token', async () => bearer('garbage')],
    ['a three-part token that is not JSON', async () => bearer('abc.def.ghi')],
    ['a token with characters outside the token68 alphabet', async () => bearer('a!b@c#')],
    [
      'two tokens',
      async () => bearer(`${await mintToken({ sub: ALICE })} ${await mintToken({ sub: ALICE })}`),
    ],
    ['an expired token', async () => bearer(await mintToken({ sub: ALICE, expiresAt: now() - 60 }))],
    [
      'a token not yet valid (nbf 60 s ahead, beyond the 5 s tolerance)',
      async () => bearer(await mintToken({ sub: ALICE, notBefore: now() + 60 })),
    ],
    [
      'a token signed with another secret',
      async () =>
        bearer(await mintToken({ sub: ALICE, secret: 'another-secret-that-is-also-32-characters-long' })),
    ],
    [
      'a token whose payload was changed after signing',
      async () => {
        const [header, , signature] = (await mintToken({ sub: ALICE })).split('.');
        const payload = base64url({ sub: BOB, scope: 'orders:read:all', exp: now() + 3600 });
        return bearer(`${header}.${payload}.${signature}`);
      },
    ],
    [
      'an unsigned token (alg: none)',
      async () =>
        bearer(
          `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({
            sub: ALICE,
            scope: 'orders:read:all',
            iat: now(),
            exp: now() + 3600,
          })}.`,
        ),
    ],
    [
      'alg: none with a signature copied from a valid token',
      async () => {
        const [, , signature] = (await mintToken({ sub: ALICE })).split('.');
        const payload = base64url({ sub: ALICE, iat: now(), exp: now() + 3600 });
        return bearer(`${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`);
      },
    ],
    [
      'a token signed with the right secret but an algorithm outside the allow-list (HS512)',
      async () =>
        bearer(
          await new SignJWT({})
            .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
            .setSubject(ALICE)
            .setIssuedAt()
            .setExpirationTime('1h')
            .sign(new TextEncoder().encode(TEST_JWT_SECRET)),
        ),
    ],
    [
      'an HMAC signature presented as RS256 (algorithm confusion)',
      async () => {
        const [, payload, signature] = (await mintToken({ sub: ALICE })).split('.');
        return bearer(`${base64url({ alg: 'RS256', typ: 'JWT' })}.${payload}.${signature}`);
      },
    ],
    ['a token without sub', async () => bearer(await mintToken({}))],
    ['a token with an empty sub', async () => bearer(await mintToken({ sub: '' }))],
    [
      'a token with a non-string sub',
      async () =>
        bearer(
          await new SignJWT({ sub: 42 as unknown as string })
            .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
            .setExpirationTime('1h')
            .sign(new TextEncoder().encode(TEST_JWT_SECRET)),
        ),
    ],
  ];

  for (const [name, headers] of cases) {
    it(`for ${name}`, async () => {
      expectUnauthenticated(await getOrder(ALICE_ORDER, await headers()));
    });
  }

  it('comes before 404: an anonymous caller asking for a non-existent order gets 401', async () => {
    expectUnauthenticated(await getOrder(UNKNOWN_ULID));
  });

  it('comes before 404: an anonymous caller asking for a path segment that is not a ULID gets 401', async () => {
    expectUnauthenticated(await getOrder('not-a-ulid'));
  });

  it('comes before 404: a bad token asking for a non-existent order gets 401', async () => {
    expectUnauthenticated(await getOrder(UNKNOWN_ULID, bearer('garbage')));
  });

  it("comes before 403: an anonymous caller asking for someone's order gets 401", async () => {
    expectUnauthenticated(await getOrder(BOB_ORDER));
  });

  it('is also the answer to HEAD, with the header and without a body', async () => {
    const response = await server.request(`/api/v1/orders/${ALICE_ORDER}`, { method: 'HEAD' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe('');
  });
});

describe('403 This action is unauthorized.', () => {
  it("for another customer's order, both ways round", async () => {
    expectJson(await getOrder(BOB_ORDER, bearer(await mintToken({ sub: ALICE }))), 403, {
      message: 'This action is unauthorized.',
    });
    expectJson(await getOrder(ALICE_ORDER, bearer(await mintToken({ sub: BOB }))), 403, {
      message: 'This action is unauthorized.',
    });
  });

  it('for a customer who owns no order at all', async () => {
    const reply = await getOrder(ALICE_ORDER, bearer(await mintToken({ sub: 'cus_carol' })));
    expectJson(reply, 403, { message: 'This action is unauthorized.' });
    expect(reply.headers.get('www-authenticate')).toBeNull();
  });

  it('for scopes that only resemble orders:read:all', async () => {
    for (const scope of ['orders:read', 'orders:read:all:extra', 'ORDERS:READ:ALL', 'orders:read:allx']) {
      const reply = await getOrder(BOB_ORDER, bearer(await mintToken({ sub: ALICE, scope })));
      expect(reply.status, scope).toBe(403);
    }
  });

  it('for a lower-case ULID of another customer (case does not dodge the check)', async () => {
    const reply = await getOrder(BOB_ORDER.toLowerCase(), bearer(await mintToken({ sub: ALICE })));
    expectJson(reply, 403, { message: 'This action is unauthorized.' });
  });
});

describe('the orders:read:all scope', () => {
  const scopes: [string, string | string[]][] = [
    ['a scope string of that one value', 'orders:read:all'],
    ['a space-separated scope string', 'profile orders:read:all email'],
    ['a scope array', ['orders:read:all']],
    ['a scope array with other values', ['profile', 'orders:read:all']],
  ];
  for (const [name, scope] of scopes) {
    it(`given as ${name}, shows anyone's order`, async () => {
      const token = await mintToken({ sub: 'cus_support', scope });
      for (const id of [1, 6]) {
        const reply = await getOrder(ORDERS[id] as string, bearer(token));
        expect(reply.status).toBe(200);
        expect(reply.body.id).toBe(id);
      }
    });
  }

  it('still needs a valid token: an expired admin token is 401', async () => {
    const token = await mintToken({ sub: 'cus_support', scope: 'orders:read:all', expiresAt: now() - 60 });
    expectUnauthenticated(await getOrder(BOB_ORDER, bearer(token)));
  });

  it('does not invent orders: unknown ULID is still 404', async () => {
    const token = await mintToken({ sub: 'cus_support', scope: 'orders:read:all' });
    expectJson(await getOrder(UNKNOWN_ULID, bearer(token)), 404, { message: 'Order not found.' });
  });
});

describe('404 Order not found.', () => {
  it('for a well-formed ULID that no order has', async () => {
    expectJson(await getOrder(UNKNOWN_ULID, bearer(await mintToken({ sub: ALICE }))), 404, {
      message: 'Order not found.',
    });
  });

  const notUlids = [
    ['a word', 'not-a-ulid'],
    ['a numeric order id', '1'],
    ['a ULID one character short', ALICE_ORDER.slice(0, -1)],
    ['a ULID one character long', `${ALICE_ORDER}0`],
    ['a ULID with a letter outside Crockford base32 (U)', `${ALICE_ORDER.slice(0, -1)}U`],
    ['a ULID beyond the 48-bit time range (leading 8)', `8${ALICE_ORDER.slice(1)}`],
    ['a ULID with a trailing encoded space', `${ALICE_ORDER}%20`],
    ['a broken percent-encoding', '%E0%A4%A'],
    ['a Mongo operator', '%7B%22%24ne%22%3A%22%22%7D'],
  ];
  for (const [name, segment] of notUlids) {
    it(`for a path segment that is not a ULID: ${name}`, async () => {
      expectJson(await getOrder(segment as string, bearer(await mintToken({ sub: ALICE }))), 404, {
        message: 'Order not found.',
      });
    });
  }
});

describe('issuer and audience, when the server is configured with them', () => {
  const ISSUER = 'https://issuer.test';
  const AUDIENCE = 'storefront';
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startTestServer({
      env: { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, PUBLIC_BASE_URL: 'https://shop.example.com' },
    });
  });
  afterAll(() => strict.stop());

  const order = (headers: Record<string, string>) => getOrder(ALICE_ORDER, headers, strict);

  it('accept the right issuer and audience', async () => {
    const reply = await order(bearer(await mintToken({ sub: ALICE, issuer: ISSUER, audience: AUDIENCE })));
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(1);
  });

  it('reject a wrong issuer with 401', async () => {
    const token = await mintToken({ sub: ALICE, issuer: 'https://evil.test', audience: AUDIENCE });
    expectUnauthenticated(await order(bearer(token)));
  });

  it('reject a wrong audience with 401', async () => {
    const token = await mintToken({ sub: ALICE, issuer: ISSUER, audience: 'another-api' });
    expectUnauthenticated(await order(bearer(token)));
  });

  it('reject a token without issuer or audience with 401', async () => {
    expectUnauthenticated(await order(bearer(await mintToken({ sub: ALICE, audience: AUDIENCE }))));
    expectUnauthenticated(await order(bearer(await mintToken({ sub: ALICE, issuer: ISSUER }))));
    expectUnauthenticated(await order(bearer(await mintToken({ sub: ALICE }))));
  });

  it('still apply ownership after a successful check (403)', async () => {
    const token = await mintToken({ sub: BOB, issuer: ISSUER, audience: AUDIENCE });
    expectJson(await order(bearer(token)), 403, { message: 'This action is unauthorized.' });
  });
});
