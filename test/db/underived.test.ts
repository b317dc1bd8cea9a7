import { describe, expect, it } from 'vitest';
import { createUnderived } from '../../src/db/feed/underived';

const ids = (underived: ReturnType<typeof createUnderived>, collection: string, derived: bigint) =>
  underived.ids(collection, derived)?.ids;

describe('the products the search rows may not reflect yet', () => {
  it('are unknown until the own channel has a position, then those whose commit ends past the holder', () => {
    const underived = createUnderived();
    underived.noted('products', [1, 2], 100n);
    expect(ids(underived, 'products', 1_000n)).toBeUndefined();
    underived.reached(100n);
    expect(ids(underived, 'products', 99n)).toBeUndefined();
    expect(ids(underived, 'products', 100n)).toEqual([]);
    underived.noted('products', [3, '3'], 200n);
    underived.noted('products', [4], 300n);
    underived.noted('orders', [3], 300n);
    expect(ids(underived, 'products', 100n)).toEqual([3, '3', 4]);
    expect(ids(underived, 'products', 200n)).toEqual([4]);
    expect(ids(underived, 'orders', 200n)).toEqual([3]);
    expect(ids(underived, 'products', 300n)).toEqual([]);
  });

  it('a document changed again keeps its latest commit', () => {
    const underived = createUnderived();
    underived.reached(10n);
    underived.noted('products', [1, 2], 100n);
    underived.noted('products', [1], 200n);
    expect(ids(underived, 'products', 100n)).toEqual([1]);
  });

  it('say by their version whether a change was handed on since', () => {
    const underived = createUnderived();
    underived.reached(10n);
    underived.noted('products', [1], 100n);
    const first = underived.ids('products', 10n)!.version;
    expect(underived.ids('products', 100n)!.version).toBe(first);
    underived.noted('products', [2], 200n);
    expect(underived.ids('products', 10n)!.version).toBeGreaterThan(first);
  });

  it("a transaction handed on in parts is pending until its end, whatever the holder's position", () => {
    const underived = createUnderived();
    underived.reached(10n);
    underived.noted('products', [1], 0n);
    underived.noted('products', [2], 0n);
    // A position reported inside it says nothing of the dropped or pending parts.
    underived.reached(50n);
    expect(ids(underived, 'products', 10n ** 12n)).toEqual([1, 2]);
    underived.noted('products', [3], 400n);
    underived.ended(400n);
    expect(ids(underived, 'products', 399n)).toEqual([1, 2, 3]);
    expect(ids(underived, 'products', 400n)).toEqual([]);
  });

  it('past the bound, or after the own channel reopened, is unknown until the holder passes the next position', () => {
    const underived = createUnderived(3);
    underived.reached(10n);
    underived.noted('products', [1, 2, 3, 4], 100n);
    underived.reached(100n);
    expect(ids(underived, 'products', 99n)).toBeUndefined();
    expect(ids(underived, 'products', 100n)).toEqual([]);
    underived.reopened();
    expect(ids(underived, 'products', 10n ** 12n)).toBeUndefined();
    underived.reached(500n);
    underived.noted('products', [5], 600n);
    expect(ids(underived, 'products', 499n)).toBeUndefined();
    expect(ids(underived, 'products', 500n)).toEqual([5]);
  });
});
