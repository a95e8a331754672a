// `import.meta.url` in a CommonJS build for Node (injected by tsup.base.ts; dropped where the code
// does not use it): the file URL of the module, percent-encoded (`#`, `%` and spaces in the install
// path resolve). `require` inside the function, so that nothing is required when it is dropped.
function fileUrlOf(filename) {
  return require('node:url').pathToFileURL(filename).href;
}

export const __keelImportMetaUrl = /* @__PURE__ */ fileUrlOf(__filename);
