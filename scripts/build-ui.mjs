// Second half of the web UI's build (the first is `tsc -p ui/tsconfig.json`): copies the
// static files and the browser build of the `yaml` package next to the compiled modules in
// dist/web, which the service serves at /ui/, and bundles the playground's code editor. No
// CDN: the browser loads tsc's ES modules as they are; only the editor, which imports
// CodeMirror's npm packages, is one bundled module (esbuild) in place of tsc's output of it.
import { cpSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'web');
mkdirSync(out, { recursive: true });
cpSync(path.join(root, 'ui', 'static'), out, { recursive: true });

const yamlRoot = path.dirname(createRequire(import.meta.url).resolve('yaml/package.json'));
const yamlBrowser = path.join(yamlRoot, 'browser', 'dist');
if (!existsSync(path.join(yamlBrowser, 'index.js'))) throw new Error(`yaml's browser build not found in ${yamlBrowser}`);
const vendor = path.join(out, 'vendor', 'yaml');
rmSync(vendor, { recursive: true, force: true });
cpSync(yamlBrowser, vendor, { recursive: true, filter: (file) => !file.endsWith('.d.ts') });
const editor = path.join(out, 'code-editor.js');
buildSync({
  entryPoints: [path.join(root, 'ui', 'src', 'code-editor.ts')],
  outfile: editor,
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
});
console.log(`code editor bundled: ${(statSync(editor).size / 1024).toFixed(0)} KiB minified`);
console.log(`web UI built into ${path.relative(root, out)}`);
