// `import.meta.url` in a CommonJS build for browsers (`require` through a bundler; injected by
// tsup.base.ts, dropped where the code does not use it): the page's current script or base URL, else
// the Web Worker's own location. It names no Node built-in and reads no `__filename` (a
// ReferenceError in a worker).
function currentUrl() {
  if (typeof document !== 'undefined') {
    return document.currentScript?.src || new URL('main.js', document.baseURI).href;
  }
  return typeof self !== 'undefined' && self.location ? self.location.href : undefined;
}

export const __keelImportMetaUrl = /* @__PURE__ */ currentUrl();
