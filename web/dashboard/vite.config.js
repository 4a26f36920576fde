// The dashboard: `npm run dashboard` builds it into build/dashboard and serves it on
// http://127.0.0.1:5173 (PORT overrides). The package comes from dist/ (npm run build), and the
// bundled example's logits are served under /example/ from tests/data/example.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const exampleDir = path.join(root, 'tests/data/example');

// The example files and their index, as the page fetches them: /example/index.json lists them.
function exampleFiles() {
  const names = fs.readdirSync(exampleDir).filter((n) => n.endsWith('.npy')).sort();
  return { names, read: (name) => fs.readFileSync(path.join(exampleDir, name)) };
}

function bundledExample() {
  return {
    name: 'mano-bundled-example',
    configureServer(server) {
      server.middlewares.use('/example/', (req, res, next) => {
        const { names, read } = exampleFiles();
        const name = decodeURIComponent(req.url.replace(/^\//, '').split('?')[0]);
        if (name === 'index.json') {
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify(names));
        } else if (names.includes(name)) {
          res.setHeader('Content-Type', 'application/octet-stream');
          res.end(read(name));
        } else {
          next();
        }
      });
    },
    generateBundle() {
      const { names, read } = exampleFiles();
      this.emitFile({ type: 'asset', fileName: 'example/index.json', source: JSON.stringify(names) });
      for (const name of names) this.emitFile({ type: 'asset', fileName: `example/${name}`, source: read(name) });
    },
  };
}

const port = Number(process.env.PORT ?? 5173);

export default defineConfig({
  root: here,
  base: './',
  plugins: [bundledExample()],
  resolve: {
    alias: [
      { find: /^mano-score\/worker(\?.*)?$/, replacement: `${path.join(root, 'dist/worker.js')}$1` },
      { find: /^mano-score$/, replacement: path.join(root, 'dist/index.js') },
    ],
  },
  worker: { format: 'es' },
  build: {
    outDir: path.join(root, 'build/dashboard'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
  },
  server: { host: '127.0.0.1', port, strictPort: true },
  preview: { host: '127.0.0.1', port, strictPort: true },
});
