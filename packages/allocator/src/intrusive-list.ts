/**
 * An intrusive doubly linked list (internal): the nodes carry their own `prev`/`next` links, so adding
 * and removing allocate nothing and are O(1). Used for the queue allocator's FIFO of requests waiting
 * for memory and for its dying blocks in age order.
 *
 * Promises: `head` is the oldest node pushed and not removed, `tail` the newest, `size` their count; a
 * removed node's links are cleared. `remove` must be given a node of this list.
 */

/** A node's links (undefined at the ends, and while the node is in no list). */
export interface Linked<T> {
  prev: T | undefined;
  next: T | undefined;
}

export class IntrusiveList<T extends Linked<T>> {
  head: T | undefined;
  tail: T | undefined;
  size = 0;

  /** Appends `node` (the newest). */
  push(node: T): void {
    node.prev = this.tail;
    node.next = undefined;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.size++;
  }

  /** Unlinks `node`, a node of this list. */
  remove(node: T): void {
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = undefined;
    node.next = undefined;
    this.size--;
  }

  /** Forgets every node (their links are left as they are). */
  clear(): void {
    this.head = undefined;
    this.tail = undefined;
    this.size = 0;
  }
}
