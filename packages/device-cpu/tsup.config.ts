import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

export default defineConfig([
  packageBuild(),
  // The worker script is loaded by URL (`new URL('./worker.js', import.meta.url)`) from either build.
  { ...packageBuild({ worker: 'src/worker.ts' }, { formats: ['esm'] }), dts: false, clean: false },
]);
