/**
 * The platform adapter of this build, worker side (see platform.ts). This file is the Node choice;
 * the browser build resolves `./current-worker` to browser-worker.ts instead (tsup.config.ts).
 */
export { connectParent } from './node-worker';
