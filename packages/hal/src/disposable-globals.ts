/**
 * The explicit-resource-management names Keel's published declarations use (`Device extends
 * AsyncDisposable`, `[Symbol.asyncDispose]()`, `[Symbol.dispose]()`), declared for consumers whose `lib`
 * lacks `esnext.disposable` (a browser tsconfig with `"lib": ["ES2022", "DOM"]`). The same declarations
 * as `@types/node`'s compatibility file: they merge with TypeScript's own where the lib has them, so
 * they never collide.
 */

declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
    readonly asyncDispose: unique symbol;
  }
  interface Disposable {
    [Symbol.dispose](): void;
  }
  interface AsyncDisposable {
    [Symbol.asyncDispose](): PromiseLike<void>;
  }
}

export {};
