/**
 * One 'abort' listener per AbortSignal, shared by every wait on it. Without it, each pending wait adds
 * a listener of its own, and many waits sharing one AbortSignal make Node print
 * `MaxListenersExceededWarning`. Contract: the first subscriber of a signal adds one listener; the last
 * unsubscribe (a wait that settled, timed out or was cancelled) removes it, so nothing is left behind;
 * on abort every subscriber is notified once, in subscription order, and the listener is removed.
 * Subscribe and unsubscribe are O(1). No Node import (works with any EventTarget-style AbortSignal).
 */

/** A wait that wants to hear about its AbortSignal's abort. */
export interface AbortSubscriber {
  /** Called once when the signal aborts (the subscription is already gone then). */
  onAbort(): void;
}

/** The subscribers of one signal, and its one 'abort' listener. */
class AbortHub extends Set<AbortSubscriber> {
  declare readonly signal: AbortSignal;

  constructor(signal: AbortSignal) {
    super();
    this.signal = signal;
  }

  /** The one 'abort' listener. */
  handleEvent(): void {
    const subscribers = [...this];
    this.clear();
    detach(this);
    for (const subscriber of subscribers) subscriber.onAbort();
  }
}

const hubs = new WeakMap<AbortSignal, AbortHub>();

function detach(hub: AbortHub): void {
  hub.signal.removeEventListener('abort', hub);
  if (hubs.get(hub.signal) === hub) hubs.delete(hub.signal);
}

/** Notifies `subscriber` when `signal` aborts (until `unsubscribeAbort`). */
export function subscribeAbort(signal: AbortSignal, subscriber: AbortSubscriber): void {
  let hub = hubs.get(signal);
  if (!hub) {
    hub = new AbortHub(signal);
    hubs.set(signal, hub);
    signal.addEventListener('abort', hub);
  }
  hub.add(subscriber);
}

/** Ends a subscription; the last one of a signal removes its listener. Unknown subscribers are ignored. */
export function unsubscribeAbort(signal: AbortSignal, subscriber: AbortSubscriber): void {
  const hub = hubs.get(signal);
  if (hub?.delete(subscriber) && hub.size === 0) detach(hub);
}
