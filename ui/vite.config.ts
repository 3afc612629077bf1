// The dashboard's build: one script and one style sheet with fixed names (no content hashes), so
// a rebuild of the same sources is byte-identical and scripts/check-ui-bundle can compare it with
// the committed ui/dist/. Served by `bulwark serve` under /ui/ (src/server/dashboard_routes.cc).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact', legalComments: 'none' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    rollupOptions: {
      output: {
        entryFileNames: 'assets/app.js',
        chunkFileNames: 'assets/[name].js',
        assetFileNames: 'assets/[name][extname]',
      },
    },
  },
});
