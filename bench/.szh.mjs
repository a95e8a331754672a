// bundles hal (root + driver) from sources with @keel/fence external; writes /tmp/szh-out.js
import * as esbuild from 'esbuild';
import { gzipSync } from 'node:zlib';
import { writeFileSync, existsSync } from 'node:fs';
const r = await esbuild.build({ stdin:{contents:"export * from '@keel/hal'; export * from '@keel/hal/driver';", resolveDir:'/work/wt-sz-fence/bench', loader:'js'}, bundle:true, platform:'browser', format:'esm', minify:true, write:false, logLevel:'silent', metafile:true, outdir:'/tmp/x', external:['@keel/fence'],
 plugins:[{name:'s',setup(b){b.onResolve({filter:/^@keel\/hal(\/driver)?$/},(a)=>({path: a.path.endsWith('driver')?'/work/wt-sz-fence/packages/hal/src/driver/index.ts':'/work/wt-sz-fence/packages/hal/src/index.ts'}));}}]});
const c = r.outputFiles.find(f=>f.path.endsWith('.js')).contents;
writeFileSync('/tmp/szh-out.js', c);
console.log(c.length, gzipSync(c,{level:9}).length);
const o = Object.values(r.metafile.outputs).find(o=>o.bytes>0);
for (const [f,v] of Object.entries(o.inputs).sort((a,b)=>b[1].bytesInOutput-a[1].bytesInOutput)) console.log(v.bytesInOutput, f.replace(/^.*packages\//,''));
