// Packs a `trunk build` output into ONE html file that opens from file:// (no server): e-mail it,
// attach it to a paper's artifact, open it offline.
//   node scripts/single-file.mjs [DIST=dist] [OUT=dist-single/repoprobe-results.html]
// A page opened from file:// may fetch nothing (no wasm, no data, no module script) and may not
// start a worker from a file, so everything goes inside: the stylesheet as <style>; the page's
// wasm-bindgen glue as an inline module that instantiates its wasm from base64; the worker as a
// blob made of its glue and start script (src/bin/repoprobe-worker-start.js), with its wasm and
// the data sets of public-data/index.json in `self.__rpInline`; and a Content-Security-Policy of
// its own (scripts/csp.mjs). The app itself is the same build, unchanged.
import fs from 'node:fs';
import path from 'node:path';
import { policyOf, withPolicy, withScriptHashes } from './csp.mjs';

const [dist = 'dist', out = 'dist-single/repoprobe-results.html'] = process.argv.slice(2);
const read = (f) => fs.readFileSync(path.join(dist, f));
const fail = (why) => { console.error(`single-file: ${why}`); process.exit(2); };
const b64 = (buf) => buf.toString('base64');
/** Text that goes inside a <script> element must not close it. */
const scriptSafe = (text, what) => {
  if (/<\/script/i.test(text)) fail(`${what} contains "</script": it cannot be inlined`);
  return text;
};
const local = (url) => url.replace(/^\//, '').replace(/^\.\//, '');

let html = read('index.html').toString();

// 1. No <base>: a file:// page resolves nothing against it.
html = html.replace(/<base [^>]*>\s*/, '');

// 2. The stylesheet, inline.
html = html.replace(/<link rel="stylesheet" href="([^"]+)"[^>]*>/, (_, href) =>
  `<style>\n${read(local(href)).toString().replace(/<\/style/gi, '<\\/style')}\n</style>`);

// 3. The page's wasm: trunk's loader imports the glue module and fetches the wasm; instead the
// glue is inlined as a module (its exports kept local) and given the wasm's bytes.
const loader = html.match(/<script type="module">([\s\S]*?)<\/script>/);
if (!loader) fail('no trunk loader (<script type="module">) in index.html');
// (As trunk writes it, or as scripts/post-build.mjs defers it: a dynamic import.)
const gluePath = loader[1].match(/import init, \* as bindings from '([^']+)'|await import\("([^"]+)"\)/)?.slice(1).find(Boolean);
const wasmPath = loader[1].match(/module_or_path: '([^']+)'/)?.[1];
if (!gluePath || !wasmPath) fail('the trunk loader does not name its glue and wasm as expected');
let glue = read(local(gluePath)).toString();
const exported = [];
glue = glue
  .replace(/^export default (\w+);?$/m, (_, name) => `const __default = ${name};`)
  .replace(/^export \{([^}]*)\};?$/gm, (_, names) => {
    let out = '';
    for (const n of names.split(',').map((x) => x.trim()).filter(Boolean)) {
      const [local, as] = n.split(/\s+as\s+/);
      if (as === 'default') out += `const __default = ${local};\n`;
      else exported.push(n);
    }
    return out;
  })
  .replace(/^export (function|class|const|let|async function) (\w+)/gm, (_, kind, name) => { exported.push(name); return `${kind} ${name}`; });
if (/^export /m.test(glue) || !glue.includes('const __default')) fail(`the glue ${gluePath} has exports this packer does not know`);
if (/import\.meta\.url/.test(glue.replace(/new URL\([^)]*import\.meta\.url\)/g, ''))) fail('the glue reads import.meta.url beyond its default wasm path');
const bindings = exported.map((n) => { const [local, as = local] = n.split(/\s+as\s+/); return as === local ? local : `${as}: ${local}`; }).join(', ');
const page = `${glue}
const __bytes = (s) => { const b = atob(s), a = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) a[i] = b.charCodeAt(i); return a; };
// As trunk's loader does in the built page (scripts/post-build.mjs): after the landing view's
// first paint, and after index.html has started the worker (a promise's callbacks run in order).
if (window.__rpAfterFirstPaint) await window.__rpAfterFirstPaint;
const __instance = await __default({ module_or_path: __bytes("${b64(read(local(wasmPath)))}") });
window.wasmBindings = { ${bindings} };
dispatchEvent(new CustomEvent("TrunkApplicationStarted", { detail: { wasm: __instance } }));
`;
html = html.replace(loader[0], () => `<script type="module">\n${scriptSafe(page, 'the page glue')}\n</script>`);

// 4. No preloads: there is nothing to fetch.
html = html.replace(/<link rel="(?:modulepreload|preload)"[^>]*>/g, '');

// 5. The worker, from a blob holding its start script and everything it would fetch.
// The manifest and the files of its sets: what the start script may ask for.
const MANIFEST = 'public-data/index.json';
const manifest = JSON.parse(read(MANIFEST).toString());
const files = { [MANIFEST]: b64(read(MANIFEST)) };
for (const [name, set] of Object.entries(manifest.sets || {})) {
  for (const f of set.files || []) {
    const rel = `public-data/${f}`;
    if (!fs.existsSync(path.join(dist, rel))) fail(`set ${name} lists ${rel}, which is not in ${dist}`);
    files[rel] = b64(read(rel));
  }
}
// The glue goes in the same blob (defining `wasm_bindgen`): the worker inherits the page's
// policy, under which it could not import a script from another blob.
const worker = `self.__rpInline = ${JSON.stringify({
  wasm: b64(read('repoprobe-worker_bg.wasm')),
  files,
})};\n${read('repoprobe-worker.js')}\n${read('repoprobe-worker-start.js')}`;
const start = 'new Worker("./repoprobe-worker-start.js", { name: location.search })';
if (!html.includes(start)) fail(`index.html does not start its worker with ${start}`);
html = html.replace(start, () => 'new Worker(URL.createObjectURL(new Blob([document.getElementById("rp-worker").textContent], { type: "text/javascript" })), { name: location.search })');
// Before the script that starts the worker (it runs while <head> is parsed).
html = html.replace('<script>', () => `<script type="text/plain" id="rp-worker">${scriptSafe(worker, 'the worker')}</script>\n    <script>`);

// 6. Its own Content-Security-Policy: nothing from anywhere ('none'; a file:// page has no
// origin to call 'self'), its inline scripts by hash (computed here, on the final text), its
// wasm, its worker from a blob, ?data= URLs over http(s), its inline stylesheet and style
// attributes.
if (!policyOf(html)) fail('index.html has no Content-Security-Policy meta (scripts/csp.mjs)');
html = withPolicy(html, withScriptHashes("default-src 'none'; script-src 'wasm-unsafe-eval'; worker-src blob:; " +
  "connect-src https: http:; style-src 'unsafe-inline'; img-src data: blob:; object-src 'none'; base-uri 'none'; form-action 'none'", html));

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, html);
console.log(`single-file: ${out} (${(html.length / 1e6).toFixed(1)} MB; ${Object.keys(files).length} data files inside)`);
