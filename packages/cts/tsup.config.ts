import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

// Private (the device packages' tests import it): ESM only.
export default defineConfig(packageBuild(undefined, { formats: ['esm'] }));
