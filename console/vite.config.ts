// The console's build: Preact bundled by Vite into dist/, hashed file names under dist/assets/ (served with
// immutable cache headers by src/http/console.ts), each asset also written brotli- and gzip-compressed so that
// the server sends the compressed file to browsers that accept it (@fastify/static's preCompressed). The API
// client is the repository's own package, built from its sources (sdk/typescript/src; console/tsconfig.json maps
// the same name for the type-check). Two pages: the console (index.html) and the customer portal (portal.html,
// served by src/http/portal-page.ts), each its own entry, so the portal's bundle holds only what it imports.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { type Plugin, defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

function precompress(): Plugin {
  return {
    name: 'precompress',
    apply: 'build',
    closeBundle() {
      const dir = join(root, 'dist', 'assets');
      for (const name of readdirSync(dir)) {
        if (!/\.(js|css|svg)$/.test(name)) continue;
        const body = readFileSync(join(dir, name));
        writeFileSync(join(dir, `${name}.gz`), gzipSync(body, { level: 9 }));
        const quality = { [constants.BROTLI_PARAM_QUALITY]: 11 };
        writeFileSync(join(dir, `${name}.br`), brotliCompressSync(body, { params: quality }));
      }
    },
  };
}

export default defineConfig({
  root,
  plugins: [preact(), precompress()],
  resolve: {
    alias: { '@billing-engine/client': fileURLToPath(new URL('../sdk/typescript/src/index.ts', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    rolldownOptions: { input: { index: join(root, 'index.html'), portal: join(root, 'portal.html') } },
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080', '/openapi.json': 'http://127.0.0.1:8080' } },
});
