import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }),
  {
    ...packageBuild({ cli: 'src/cli.ts' }, { formats: ['esm'] }),
    dts: false,
    clean: false,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
