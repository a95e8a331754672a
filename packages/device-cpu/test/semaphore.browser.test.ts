/**
 * SharedTimelineSemaphore between a cross-origin isolated page and a module Web Worker: a ping-pong
 * where the page signals odd values and waits asynchronously (never blocking the main thread), the
 * worker blocks in waitSync and signals even ones; then a failure set by the page reaches the worker's
 * waitSync as ABORTED carrying the page's code. The page's own waitSync is refused (main thread).
 */
import { ErrorCode, KeelError, SharedTimelineSemaphore } from '@keel/fence';
import { expect, it } from 'vitest';

interface Reply {
  readonly t: 'done' | 'failed' | 'error';
  readonly value?: number;
  readonly code?: string;
  readonly causeCode?: string;
  readonly message?: string;
}

function nextReply(worker: Worker): Promise<Reply> {
  return new Promise((resolve, reject) => {
    worker.addEventListener('message', (event: MessageEvent<Reply>) => resolve(event.data), { once: true });
    worker.addEventListener('error', (event) => reject(new Error(`worker failed: ${event.message}`)), {
      once: true,
    });
  });
}

it('ping-pongs between the page and a Web Worker, and carries a failure to it', async () => {
  const rounds = 200;
  const timeline = new SharedTimelineSemaphore(0, { label: 'page↔worker' });
  const worker = new Worker(new URL('./fixtures/semaphore-worker.js', import.meta.url), { type: 'module' });
  try {
    const done = nextReply(worker);
    worker.postMessage({ handle: timeline.handle, rounds });
    for (let i = 0; i < rounds; i++) {
      timeline.signal(2 * i + 1);
      await timeline.wait(2 * i + 2, { timeoutMs: 20_000 });
      expect(timeline.value).toBe(2 * i + 2);
    }
    expect(await done).toEqual({ t: 'done', value: 2 * rounds });

    // The main thread may not block: waitSync is refused here even for a reached value.
    expect(() => timeline.waitSync(1)).toThrow(
      expect.objectContaining({ code: ErrorCode.FAILED_PRECONDITION }),
    );

    const failed = nextReply(worker);
    timeline.fail(new KeelError(ErrorCode.DATA_LOSS, 'the page gave up'));
    const reply = await failed;
    expect(reply.t).toBe('failed');
    expect(reply.code).toBe(ErrorCode.ABORTED);
    expect(reply.causeCode).toBe(ErrorCode.DATA_LOSS);
    expect(reply.message).toContain('page↔worker');
  } finally {
    worker.terminate();
  }
});
