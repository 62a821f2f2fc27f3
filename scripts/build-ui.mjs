// Second half of the web UI's build (the first is `tsc -p ui/tsconfig.json`): copies the
// static files and the browser build of the `yaml` package next to the compiled modules in
// dist/web, which the service serves at /ui/. No bundler and no CDN: the browser loads the
// ES modules as they are.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
console.log(`web UI built into ${path.relative(root, out)}`);
