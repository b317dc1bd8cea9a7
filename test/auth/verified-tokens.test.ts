import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createViewerResolver } from '../../src/auth/tokens';

const SECRET = 'verified-tokens-test-secret-of-32-characters';
const resolve = () => createViewerResolver({ secret: SECRET, algorithms: ['HS256'] });

async function token(subject: string, expiresInSeconds: number, secret = SECRET): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: 'orders:read' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setIssuedAt(now)
    .setExpirationTime(now + expiresInSeconds)
    .sign(new TextEncoder().encode(secret));
}

afterEach(() => vi.useRealTimers());

describe('remembered token verifications', () => {
  it('answers a repeated token like the first time, and refuses it once it expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const resolveViewer = resolve();
    const header = `Bearer ${await token('customer-1', 30)}`;
    const first = await resolveViewer(header);
    expect(first).toMatchObject({ kind: 'customer', customerId: 'customer-1' });
    expect(await resolveViewer(header)).toEqual(first);
    // exp + the 5 s clock tolerance has passed: neither the cache nor jose accepts it.
    vi.setSystemTime(Date.now() + 36_000);
    expect(await resolveViewer(header)).toEqual({ kind: 'invalid' });
  });

  it('never remembers a failure, nor lets one token stand for another', async () => {
    const resolveViewer = resolve();
    const forged = await token('customer-2', 60, 'another-secret-of-at-least-32-characters!');
    expect(await resolveViewer(`Bearer ${forged}`)).toEqual({ kind: 'invalid' });
    expect(await resolveViewer(`Bearer ${forged}`)).toEqual({ kind: 'invalid' });
    const genuine = await token('customer-2', 60);
    expect(await resolveViewer(`Bearer ${genuine}`)).toMatchObject({ customerId: 'customer-2' });
    expect(await resolveViewer(`Bearer ${genuine}x`)).toEqual({ kind: 'invalid' });
  });

  it('stays bounded: thousands of distinct valid tokens all verify, none is confused', async () => {
    const resolveViewer = resolve();
    const tokens = await Promise.all(Array.from({ length: 6_000 }, (_, index) => token(`c-${index}`, 60)));
    const viewers = await Promise.all(tokens.map((value) => resolveViewer(`Bearer ${value}`)));
    expect(
      viewers.every((viewer, index) => viewer.kind === 'customer' && viewer.customerId === `c-${index}`),
    ).toBe(true);
    // The oldest were evicted (1 MB of ~170-byte tokens) and verify again, still correctly.
    expect(await resolveViewer(`Bearer ${tokens[0]}`)).toMatchObject({ customerId: 'c-0' });
  });
});
