// The console's build: Preact (aliased for the JSX runtime) bundled by Vite into dist/, hashed file names under
// dist/assets/ (served with immutable cache headers by src/http/console.ts).
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', target: 'es2022', reportCompressedSize: true },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080', '/openapi.json': 'http://127.0.0.1:8080' } },
});
