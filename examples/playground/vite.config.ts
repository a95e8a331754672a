/**
 * Vite config of the Keel playground: the page is served cross-origin isolated (COOP `same-origin` +
 * COEP `require-corp`) by the dev server and by `vite preview`, so `SharedArrayBuffer` exists and the
 * CPU device runs task mode on Web Workers. Nothing else is configured: Vite bundles the device's
 * module workers and copies the MLP's WebAssembly kernel module (`new URL(..., import.meta.url)`).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** The headers that make the page cross-origin isolated (`crossOriginIsolated === true`). */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  server: { headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
  build: { target: 'es2022' },
});
