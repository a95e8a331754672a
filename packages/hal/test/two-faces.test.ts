/**
 * Issue 16: hal's two faces. The package root is the user API; device-author helpers (queue-argument
 * checks, failure propagation, the queue front) are only on the `@keel/hal/driver` subpath.
 */
import { describe, expect, it } from 'vitest';
import * as driver from '../src/driver/index';
import * as root from '../src/index';

const AUTHOR_HELPERS = [
  'checkQueueRef',
  'checkQueueFences',
  'checkExecuteArguments',
  'checkDeallocaBuffer',
  'checkBufferParams',
  'checkBufferByteLength',
  'hostBytes',
  'isFence',
  'madeByCreateBuffer',
  'abortedBy',
  'propagateFailure',
  'failTimepoints',
  'signalPendingTimepoints',
  'hasPendingTimepoint',
  'unhandledFailureReporter',
  'completeSignal',
  'resolveRange',
  'QueueFront',
  'QueueRecord',
  'RecordPool',
  'OpKind',
  'RunList',
  'PlanSink',
  'RefTableBuilder',
  'TypedArrayBuilder',
  'invalid',
];

describe('hal: two faces', () => {
  it('keeps device-author helpers off the package root', () => {
    const leaked = AUTHOR_HELPERS.filter((name) => name in root);
    expect(leaked).toEqual([]);
  });

  it('offers every device-author helper on @keel/hal/driver', () => {
    const missing = AUTHOR_HELPERS.filter((name) => !(name in driver));
    expect(missing).toEqual([]);
  });

  it('keeps the user API at the root', () => {
    for (const name of [
      'BufferUsage',
      'MemoryType',
      'QueueAffinity',
      'KeelError',
      'ErrorCode',
      'bufferRef',
    ]) {
      expect(name in root, name).toBe(true);
    }
  });
});
