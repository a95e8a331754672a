import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

// Two entries (the user API and the driver kit) share most modules: code splitting puts them in shared
// chunks once instead of bundling them twice (the kit's classes and helpers are then one copy).
export default defineConfig({
  ...packageBuild({ index: 'src/index.ts', driver: 'src/driver/index.ts' }),
  splitting: true,
});
