export { ErrorCode, KeelError, type KeelErrorOptions, type StructuredKeelError } from './keel-error';
