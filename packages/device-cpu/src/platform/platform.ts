/**
 * The platform layer of the CPU device: what task mode needs from the host environment, as two thin
 * adapters over one protocol (protocol.ts) — Node's worker_threads (node.ts, node-worker.ts) and the
 * browser's module Web Workers (browser.ts, browser-worker.ts). The adapter is chosen at build time,
 * never at run time: the sources import `./current` and `./current-worker` (the Node adapter, for
 * type-checking and the Node build); the browser build (tsup.config.ts) resolves those two modules to
 * the browser adapter, so the browser bundle never names a Node built-in. package.json's `exports`
 * conditions (`browser` / `node` / `default`) pick the build.
 *
 * Every adapter exports the same names with these types (checked with `satisfies` in each file).
 */
import type { FromWorker, ToWorker, WorkerInit } from '../protocol';

/** What a queue hears from one of its worker threads. */
export interface WorkerEvents {
  /** Any message the worker posted: Keel's (protocol.ts, FROM_WORKER) or a kernel's own. */
  onMessage(message: unknown): void;
  /** The thread failed (uncaught error, failed to load) or sent an unreadable message. */
  onError(what: string): void;
  /** The thread is gone (it exited, crashed or was terminated). */
  onExit(code: number): void;
}

/** One worker thread of a task-mode queue, as the queue drives it. */
export interface WorkerThread {
  postMessage(message: ToWorker): void;
  /** Keeps the host alive while the thread has work (Node); absent where threads hold nothing alive. */
  ref?(): void;
  unref?(): void;
  /** Ends the thread; resolves once it is gone. */
  terminate(): Promise<void>;
}

/** The main-thread side of an adapter. */
export interface MainPlatform {
  /** Logical cores available to this process or page (≥ 1). */
  availableParallelism(): number;
  /** The mode `createCpuDevice` uses when none is given. */
  defaultMode(): 'sync' | 'task';
  /** Why task mode cannot run here (a sentence for a KeelError), or undefined when it can. */
  taskModeUnavailable(): string | undefined;
  /** Starts one worker thread running dist's worker.js with `init`. */
  spawnWorker(init: WorkerInit, name: string, events: WorkerEvents): WorkerThread;
}

/** The worker side: the channel to the main thread and the data the worker was started with. */
export interface ParentChannel {
  readonly init: WorkerInit;
  postMessage(message: FromWorker): void;
  /** Installs the message handler (messages that arrived before are delivered first, in order). */
  onMessage(handler: (message: ToWorker) => void): void;
}

/**
 * The worker side of an adapter: calls `start` once the init data is there (at once in Node, on the
 * first message in browsers). A callback, not a promise: the worker entry has no top-level await, which
 * bundlers emitting classic-script workers (Vite's default `worker.format: 'iife'`) cannot bundle.
 */
export type ConnectParent = (start: (channel: ParentChannel) => void) => void;
