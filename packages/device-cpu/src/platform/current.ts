/**
 * The platform adapter of this build, main-thread side (see platform.ts). This file is the Node
 * choice; the browser build resolves `./current` to browser.ts instead (tsup.config.ts).
 */
export { platform } from './node';
