/**
 * WebGPU's global types, as Keel's published declarations name them, without choosing where they come
 * from. Each is declared here as an empty global interface: declarations of one interface merge, so
 * where the consumer's setup defines it (the DOM lib of TypeScript 6 and later, or `@webgpu/types` in its
 * `types`), the full definition applies and nothing collides (TypeScript 7's DOM lib and `@webgpu/types`
 * would, if the published types referenced `@webgpu/types` themselves); where neither is present (a
 * Node-only setup without `@webgpu/types`), these names still resolve, as opaque objects, so the
 * declarations type-check with `skipLibCheck` off. Only interfaces can merge: the published API names no
 * WebGPU type alias or enum (features are plain strings).
 */

declare global {
  // biome-ignore-start lint/suspicious/noEmptyInterface: placeholders that merge with the real definitions
  interface GPU {}
  interface GPUAdapter {}
  interface GPUAdapterInfo {}
  interface GPUBindGroup {}
  interface GPUBindGroupLayout {}
  interface GPUBuffer {}
  interface GPUComputePipeline {}
  interface GPUDevice {}
  interface GPUError {}
  interface GPUPipelineLayout {}
  interface GPUQueue {}
  interface GPURequestAdapterOptions {}
  interface GPUShaderModule {}
  interface GPUSupportedLimits {}
  // biome-ignore-end lint/suspicious/noEmptyInterface: placeholders that merge with the real definitions
}

export {};
