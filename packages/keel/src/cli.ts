/**
 * The `keel` command line (the package's bin). Commands live in ./cli/, one per file; this file only
 * runs the program. Without `--verbose` the program runs in a child whose stderr is filtered of the
 * WebGPU driver's own warnings (cli/driver-noise.ts).
 */
import { runFiltered, shouldFilter } from './cli/driver-noise';
import { createProgram } from './cli/program';

if (shouldFilter(process.argv, process.env)) {
  process.exitCode = await runFiltered(process.argv);
} else {
  await createProgram().parseAsync(process.argv);
}
