/**
 * Explains a kernel module that a task-mode worker could not import because of its file type (Node's
 * ERR_UNKNOWN_FILE_EXTENSION, e.g. a `.ts` kernel): workers do not share the main thread's loader
 * hooks — tsx, for one, registers its hooks on the main thread only on Node 20 — so the message says
 * what to do (README § Kernels written in TypeScript). Other errors pass through unchanged.
 */
export function withKernelImportHint(error: unknown): unknown {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') {
    return error;
  }
  return new Error(
    `${error.message} (in a task-mode worker: loader hooks of the main thread, such as \`--import tsx\` ` +
      "on Node 20, do not apply there; load a JavaScript module that imports the TypeScript file with tsx's " +
      '`tsImport`, or compile the kernels to JavaScript: see the @keel/device-cpu README, "Kernels written in TypeScript")',
    { cause: error },
  );
}
