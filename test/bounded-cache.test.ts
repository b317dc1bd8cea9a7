import { describe, expect, it } from 'vitest';
import { createBoundedCache } from '../src/bounded-cache';

describe('createBoundedCache', () => {
  it('holds at most maxBytes, dropping the least recently used first', () => {
    const cache = createBoundedCache<string>({ maxBytes: 100, maxEntryBytes: 60 });
    expect(cache.set('a', 'A', 40, 10_000)).toBe(true);
    expect(cache.set('b', 'B', 40, 10_000)).toBe(true);
    expect(cache.get('a')).toBe('A'); // a is now the most recent
    expect(cache.set('c', 'C', 40, 10_000)).toBe(true);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('A');
    expect(cache.get('c')).toBe('C');
    expect(cache.bytes).toBe(80);
  });

  it('does not store an entry over maxEntryBytes, nor with a TTL of 0', () => {
    const cache = createBoundedCache<string>({ maxBytes: 1_000, maxEntryBytes: 60 });
    expect(cache.set('big', 'x', 61, 10_000)).toBe(false);
    expect(cache.set('now', 'x', 1, 0)).toBe(false);
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });

  it('forgets expired entries and replaces an entry under the same key', async () => {
    const cache = createBoundedCache<string>({ maxBytes: 1_000, maxEntryBytes: 100 });
    cache.set('k', 'one', 10, 20);
    cache.set('k', 'two', 30, 20);
    expect(cache.bytes).toBe(30);
    expect(cache.get('k')).toBe('two');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(cache.get('k')).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });
});
