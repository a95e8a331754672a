/**
 * The `keel` command line (the package's bin). Commands live in ./cli/, one per file; this file only
 * runs the program. Without `--verbose` the program runs in a child whose stderr is filtered of the
 * WebGPU driver's own warnings (cli/driver-noise.ts). The process that runs the program turns relaxed SIMD
 * on for the CPU kernels where Node has it behind a flag (cli/relaxed-simd.ts). Either process ends
 * quietly when its output has no reader any more (cli/exit-codes.ts).
 */
import { runFiltered, shouldFilter } from './cli/driver-noise';
import { exitQuietlyOnBrokenPipe } from './cli/exit-codes';
import { createProgram } from './cli/program';
import { enableRelaxedSimd } from './cli/relaxed-simd';

exitQuietlyOnBrokenPipe();
if (shouldFilter(process.argv, process.env)) {
  process.exitCode = await runFiltered(process.argv);
} else {
  enableRelaxedSimd();
  await createProgram().parseAsync(process.argv);
}
