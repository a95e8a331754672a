/**
 * The `keel` command line (the package's bin). Commands live in ./cli/, one per file; this file only
 * runs the program.
 */
import { createProgram } from './cli/program';

await createProgram().parseAsync(process.argv);
