// Trunk's post-build hook (Trunk.toml): finishes the built index.html in its staging directory,
// in this order (trunk starts the hooks of one stage side by side, so the steps that rewrite the
// same file are one hook):
//   1. the landing view rendered at build time into `<div id="prerendered">` (scripts/prerender.mjs);
//   2. the page's wasm started after the landing view's first paint (`deferLoader`);
//   3. the hashes of the inline scripts, as they are now, into the CSP (scripts/csp.mjs).
//   node scripts/post-build.mjs [FILE]   (FILE: $TRUNK_STAGING_DIR/index.html, else dist/index.html)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, renderLanding, withPrerendered } from './prerender.mjs';
import { inlineScripts, policyOf, withPolicy, withScriptHashes } from './csp.mjs';

const LOADER = /<script type="module">\s*import init, \* as bindings from '([^']+)';/;
const GLUE_PRELOAD = /<link rel="modulepreload" ([^>]*)>/;
const WASM_PRELOAD = /<link rel="preload" [^>]*type="application\/wasm"[^>]*>/;

/** `html` whose trunk loader fetches the page's glue module and wasm only once index.html's
 * `__rpAfterFirstPaint` has resolved: on the landing page, the prerendered view's first paint
 * on screen (src/lib.rs `takeover`). Fetching, compiling and mounting the app (hidden) during
 * that paint only delay it on a busy machine (benches/README "Site first paint"); a
 * file dropped before the app runs is kept for it (index.html, `takeover::early_drops`). The
 * glue's modulepreload (with its integrity) is added then, before its import; the wasm's preload
 * goes. Throws if trunk's loader or preloads are not as expected. */
export function deferLoader(html) {
  const loader = html.match(LOADER);
  const glue = html.match(GLUE_PRELOAD);
  if (!loader) throw new Error("no trunk loader (<script type=\"module\"> import init, * as bindings from '…') in the html");
  if (!glue || !glue[1].includes(`href="${loader[1]}"`)) throw new Error('no modulepreload of the loader\'s glue in the html');
  if (!WASM_PRELOAD.test(html)) throw new Error('no preload of the page\'s wasm in the html');
  const attrs = Object.fromEntries([...glue[1].matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const wait = `<script type="module">
// (scripts/post-build.mjs) After the landing view's first paint (index.html), then as trunk wrote it.
if (window.__rpAfterFirstPaint) await window.__rpAfterFirstPaint;
const glue = document.createElement("link");
for (const [k, v] of Object.entries(${JSON.stringify({ rel: 'modulepreload', ...attrs })})) glue.setAttribute(k, v);
document.head.append(glue);
const bindings = await import(${JSON.stringify(loader[1])}), init = bindings.default;`;
  return html.replace(LOADER, () => wait).replace(GLUE_PRELOAD, '').replace(WASM_PRELOAD, '');
}

const main = fileURLToPath(import.meta.url) === path.resolve(process.argv[1] ?? '');
if (main) {
  const file = process.argv[2]
    ?? (process.env.TRUNK_STAGING_DIR ? path.join(process.env.TRUNK_STAGING_DIR, 'index.html') : path.join(ROOT, 'dist', 'index.html'));
  const landing = renderLanding(ROOT);
  let html = withPrerendered(fs.readFileSync(file, 'utf8'), landing);
  html = deferLoader(html);
  const policy = policyOf(html);
  if (!policy) throw new Error(`no Content-Security-Policy meta in ${file}`);
  html = withPolicy(html, withScriptHashes(policy, html));
  fs.writeFileSync(file, html);
  console.log(`post-build: the landing view (${landing.length} characters of HTML) put into ${path.relative(ROOT, file)}, the page's wasm started after its first paint, ${inlineScripts(html).length} inline script(s) allowed by hash`);
}
