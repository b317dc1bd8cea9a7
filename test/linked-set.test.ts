import { describe, expect, it } from 'vitest';
import { LinkedSet } from '../src/linked-set';

describe('LinkedSet', () => {
  it('adds, finds, deletes and counts members as a Set does, in the order added', () => {
    const set = new LinkedSet<{ id: number }>();
    const [a, b, c] = [{ id: 1 }, { id: 2 }, { id: 3 }];
    set.add(a).add(b).add(c).add(b);
    expect(set.size).toBe(3);
    expect([...set]).toEqual([a, b, c]);
    expect(set.delete(b)).toBe(true);
    expect(set.delete(b)).toBe(false);
    expect(set.has(b)).toBe(false);
    expect([...set]).toEqual([a, c]);
    expect(set.delete(a) && set.delete(c)).toBe(true);
    expect([...set]).toEqual([]);
    set.add(b);
    expect([...set]).toEqual([b]);
    expect(set.size).toBe(1);
  });

  it('iterates the members it had when iteration began, whatever is deleted meanwhile', () => {
    const set = new LinkedSet<{ id: number }>();
    const members = [1, 2, 3, 4].map((id) => ({ id }));
    for (const member of members) set.add(member);
    const seen = Array.from(set, (member) => {
      set.delete(members[(member.id % 4) as 0 | 1 | 2 | 3] as { id: number });
      return member.id;
    });
    expect(seen).toEqual([1, 2, 3, 4]);
    set.clear();
    expect(set.size).toBe(0);
    expect([...set]).toEqual([]);
  });

  it('keeps one object in two sets apart', () => {
    const first = new LinkedSet<object>();
    const second = new LinkedSet<object>();
    const member = {};
    first.add(member);
    second.add(member);
    first.delete(member);
    expect(first.has(member)).toBe(false);
    expect(second.has(member)).toBe(true);
    expect([...second]).toEqual([member]);
  });
});
