/**
 * The QueueAllocator's argument checks and synchronous errors (internal): the shape of its pool (at
 * construction), alloca's options and its queue affinity (per call: allocation-free and string-free
 * unless they throw), and the RESOURCE_EXHAUSTED of a request the pool cannot serve (too large, its
 * growth failed, or its quarantined blocks leave no room for it).
 *
 * Promises: every error is a KeelError whose message names the allocator (`what`, "QueueAllocator
 * 'x'"), the operation and the broken rule; nothing here changes any state.
 */
import { describeValue, ErrorCode, KeelError, QueueAffinity } from '@keel/hal';
import { checkQueueFences, invalid } from '@keel/hal/driver';
import type { Pool } from './pool';

const POOL_METHODS = ['reserve', 'reserveExisting', 'release', 'resetPeaks', 'trim', 'destroy'] as const;

/** INVALID_ARGUMENT unless `pool` has the shape of a Pool (its methods, numeric sizes, stats). */
export function checkPool(pool: unknown, what: string): void {
  const p = pool as Record<string, unknown> | null | undefined;
  const ok =
    typeof p === 'object' &&
    p !== null &&
    POOL_METHODS.every((m) => typeof p[m] === 'function') &&
    typeof p.alignment === 'number' &&
    typeof p.maxBlockBytes === 'number' &&
    'stats' in p;
  if (!ok) {
    throw invalid(
      `${what}: pool must be a Pool (${POOL_METHODS.slice(0, -1).join(', ')} and destroy functions, numeric alignment and maxBlockBytes, stats)`,
    );
  }
}

/**
 * Checks alloca's `options`: undefined, or an object whose only keys are `alignment` and `label`, the
 * label a string (the alignment is checked against the pool by the caller). Allocation-free when they
 * are good (alloca is on hot paths), the same wording as hal's checkOptions when they are not.
 */
export function checkAllocaOptions(options: unknown, what: string): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(
      `${what}: alloca: options must be an object ({ alignment?, label? }), got ${describeValue(options)}`,
    );
  }
  for (const key in options) {
    if (key !== 'alignment' && key !== 'label') {
      throw invalid(`${what}: alloca: unknown option '${key}' (known options: alignment, label)`);
    }
  }
  const label = (options as { label?: unknown }).label;
  if (label !== undefined && typeof label !== 'string') {
    throw invalid(`${what}: alloca: option 'label' must be a string, got ${describeValue(label)}`);
  }
}

/**
 * Throws the error of an alloca/dealloca whose cheap checks failed: FAILED_PRECONDITION after destroy,
 * else INVALID_ARGUMENT for the affinity (not a mask, or 0: QueueAffinity.NONE names no queue) or a
 * fence (hal's wording, as every queue operation).
 */
export function throwCallError(
  what: string,
  op: string,
  destroyed: boolean,
  affinity: unknown,
  wait: unknown,
  signal: unknown,
): never {
  const where = `${what}: ${op}`;
  if (destroyed) throw new KeelError(ErrorCode.FAILED_PRECONDITION, `${where}: the allocator was destroyed`);
  QueueAffinity.check(affinity, where);
  if (affinity === 0) {
    throw invalid(
      `${where}: queue affinity 0 (QueueAffinity.NONE) names no queue and is never valid for an operation`,
    );
  }
  checkQueueFences(wait, signal, where);
  throw new KeelError(
    ErrorCode.INTERNAL,
    `${where}: throwCallError called for arguments that pass its checks`,
  );
}

/** How messages name an alloca: "alloca" or "alloca 'label'". */
function allocaName(label: string | undefined): string {
  return `alloca${label === undefined ? '' : ` '${label}'`}`;
}

/** The RESOURCE_EXHAUSTED of a request larger than `pool` can ever hold. */
export function tooLarge<M>(
  what: string,
  label: string | undefined,
  byteLength: number,
  pool: Pool<M>,
): KeelError {
  return new KeelError(
    ErrorCode.RESOURCE_EXHAUSTED,
    `${what}: ${allocaName(label)}: ${byteLength} bytes exceed what ${pool.kind} pool '${pool.label}' can ever hold (${pool.maxBlockBytes} bytes)`,
  );
}

/**
 * The RESOURCE_EXHAUSTED of a request whose pool could not grow (its provider failed: `cause`, what
 * the pool's reserve threw) while no pending dealloca frees a block that fits.
 */
export function growthFailed(what: string, label: string | undefined, cause: unknown): KeelError {
  const reason = cause instanceof Error ? cause.message : describeValue(cause);
  return new KeelError(
    ErrorCode.RESOURCE_EXHAUSTED,
    `${what}: ${allocaName(label)}: the pool could not grow and no pending dealloca frees a block that fits: ${reason}`,
    { cause },
  );
}

/**
 * The RESOURCE_EXHAUSTED of a request `pool` can never serve: its quarantined blocks (their dealloca's
 * wait failed, so their memory is never handed out again; `blocks` and `bytes` are the allocator's own,
 * 0 when an earlier user of the pool left them all) leave no room for it even once every other block
 * is released, and no pending dealloca frees a block that fits.
 */
export function neverFits<M>(
  what: string,
  label: string | undefined,
  byteLength: number,
  pool: Pool<M>,
  blocks: number,
  bytes: number,
): KeelError {
  const held =
    blocks > 0
      ? `${bytes} bytes of quarantined blocks (${blocks}; their dealloca's wait failed, so they are never handed out again)`
      : "quarantined blocks an earlier user of the pool left (their dealloca's wait failed, so they are never handed out again)";
  return new KeelError(
    ErrorCode.RESOURCE_EXHAUSTED,
    `${what}: ${allocaName(label)}: ${byteLength} bytes can never be served by ${pool.kind} pool '${pool.label}' (${pool.maxBlockBytes} bytes at most): ${held} leave no room for it even once every other block is released, and no pending dealloca frees a block that fits`,
  );
}

/** `error` as a KeelError (INTERNAL describing it when it is not one): how a queued request fails. */
export function asKeelError(error: unknown): KeelError {
  return KeelError.is(error) ? error : new KeelError(ErrorCode.INTERNAL, describeValue(error));
}
