interface Node<T> {
  member: T | undefined;
  previous: Node<T> | undefined;
  next: Node<T> | undefined;
}

/**
 * A set of short-lived objects that a long-lived owner keeps (a server's open responses, a
 * database client's open cursors), as a list linked through a small node on each member: adding
 * and deleting allocate that node and nothing else, and a deleted node lets go of everything.
 *
 * Not a `Set`, because of how V8 collects one that lives long and whose members come and go: its
 * hash table is replaced as members are added and deleted, and once the table is in the old
 * generation each replacement is allocated there too. The table it replaces is garbage that only
 * a full collection frees, and it still points at the members it held; the young-generation
 * collector counts those pointers as live. So every member such a table ever held, with all it
 * reaches (a whole request; a cursor and its documents), survived each scavenge and was promoted:
 * ~1 MB a scavenge on a small GraphQL answer, and scavenges four times as long (issue 38, fifth
 * round in docs/benchmarks.md).
 */
export class LinkedSet<T extends object> implements Iterable<T> {
  /** Where a member keeps its node: a key of this set's own, so one object can be in two sets. */
  readonly #slot = Symbol('LinkedSet node');
  #first: Node<T> | undefined;
  #last: Node<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  #nodeOf(member: T): Node<T> | undefined {
    return (member as Record<symbol, Node<T> | undefined>)[this.#slot];
  }

  has(member: T): boolean {
    return this.#nodeOf(member) !== undefined;
  }

  add(member: T): this {
    if (this.has(member)) return this;
    const node: Node<T> = { member, previous: this.#last, next: undefined };
    if (this.#last) this.#last.next = node;
    else this.#first = node;
    this.#last = node;
    (member as Record<symbol, Node<T> | undefined>)[this.#slot] = node;
    this.#size++;
    return this;
  }

  delete(member: T): boolean {
    const node = this.#nodeOf(member);
    if (!node) return false;
    if (node.previous) node.previous.next = node.next;
    else this.#first = node.next;
    if (node.next) node.next.previous = node.previous;
    else this.#last = node.previous;
    (member as Record<symbol, Node<T> | undefined>)[this.#slot] = undefined;
    node.member = node.previous = node.next = undefined;
    this.#size--;
    return true;
  }

  clear(): void {
    for (const member of this) this.delete(member);
  }

  /** The members at the time of the call, in the order added: deleting while iterating is safe. */
  *[Symbol.iterator](): IterableIterator<T> {
    const members: T[] = [];
    for (let node = this.#first; node; node = node.next) members.push(node.member as T);
    yield* members;
  }
}
