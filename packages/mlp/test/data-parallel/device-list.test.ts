/**
 * The device list of data-parallel runs (`keel demo --devices`): the accepted forms and every rule a
 * list can break (KeelError with its code and a message naming the option and the rule), and the
 * adapter-index check against the adapters present.
 */
import { listWebGpuAdapters } from '@keel/device-webgpu';
import { ErrorCode, KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { MAX_DATA_PARALLEL_DEVICES, openDeviceList, parseDeviceList } from '../../src/index';

function errorOf(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (error) {
    if (KeelError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a KeelError');
}

describe('parseDeviceList', () => {
  it('accepts cpu, cpu:N, webgpu, webgpu:I and webgpu:IxN', () => {
    expect(parseDeviceList('cpu')).toEqual([{ kind: 'cpu', label: 'cpu:0' }]);
    expect(parseDeviceList('cpu:2').map((e) => e.label)).toEqual(['cpu:0', 'cpu:1']);
    expect(parseDeviceList('cpu,webgpu')).toEqual([
      { kind: 'cpu', label: 'cpu:0' },
      { kind: 'webgpu', adapter: 0, label: 'webgpu:0' },
    ]);
    expect(parseDeviceList('webgpu:0, webgpu:1').map((e) => [e.kind, e.adapter])).toEqual([
      ['webgpu', 0],
      ['webgpu', 1],
    ]);
    expect(parseDeviceList('webgpu:0x2')).toEqual([
      { kind: 'webgpu', adapter: 0, label: 'webgpu:0' },
      { kind: 'webgpu', adapter: 0, label: 'webgpu:0#1' },
    ]);
  });

  it.each([
    ['', 'comma-separated list'],
    ['cpu,', 'is empty'],
    ['tpu', "unknown device kind 'tpu'"],
    ['cpu:0', 'positive integer'],
    ['cpu:two', 'positive integer'],
    ['webgpu:-1', 'non-negative integer'],
    ['webgpu:01', 'non-negative integer'],
    ['webgpu:0x0', 'positive integer'],
    ['cpu,cpu', "write one 'cpu:N' entry"],
    ['cpu:2,cpu', "write one 'cpu:N' entry"],
    ['webgpu,webgpu:0', "'webgpu:0xN'"],
    ['webgpu:1,webgpu:1', 'adapter 1 is named twice'],
  ])('%j is INVALID_ARGUMENT naming the option and the rule', (spec, rule) => {
    const error = errorOf(() => parseDeviceList(spec, '--devices'));
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.message).toContain('--devices');
    expect(error.message).toContain(rule);
  });

  it('refuses a non-string and more devices than a run takes', () => {
    expect(errorOf(() => parseDeviceList(3, '--devices')).code).toBe(ErrorCode.INVALID_ARGUMENT);
    const error = errorOf(() => parseDeviceList(`cpu:${MAX_DATA_PARALLEL_DEVICES + 1}`, '--devices'));
    expect(error.code).toBe(ErrorCode.OUT_OF_RANGE);
    expect(error.message).toContain(`more than ${MAX_DATA_PARALLEL_DEVICES} devices`);
    expect(parseDeviceList(`cpu:${MAX_DATA_PARALLEL_DEVICES}`)).toHaveLength(MAX_DATA_PARALLEL_DEVICES);
  });
});

describe('openDeviceList', () => {
  it('refuses an adapter index beyond the adapters present (OUT_OF_RANGE), before opening anything', async () => {
    const present = (await listWebGpuAdapters()).length;
    const entries = parseDeviceList(`cpu,webgpu:${present}`, '--devices');
    const error = await openDeviceList(entries, { what: '--devices' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(KeelError.is(error, ErrorCode.OUT_OF_RANGE)).toBe(true);
    expect((error as KeelError).message).toContain(`'webgpu:${present}' names WebGPU adapter ${present}`);
    expect((error as KeelError).message).toContain(`${present} adapter(s) are present`);
  });
});
