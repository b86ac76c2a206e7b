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

const LOADER = /<script type="module">\s*(import init, \* as bindings from '[^']+';)/;
const WASM_PRELOAD = /<link rel="preload" [^>]*type="application\/wasm"[^>]*>/;

/** What trunk's loader waits for before it fetches and starts the page's wasm: on the landing
 * page (the prerendered view, src/lib.rs `takeover`), its first contentful paint on screen (the
 * paint timing entry; where there is none, one frame and a task after it; 2 s at most).
 * Fetching and compiling the wasm and mounting the app (hidden) during that paint only delay it
 * on a busy machine (issue 14, benches/README "Site first paint"); the worker, started in the
 * head, loads the data meanwhile, and a file dropped before the app runs is kept for it
 * (index.html, `takeover::early_drops`). Other addresses show nothing until the app runs: no wait. */
export const AFTER_FIRST_PAINT = `if (location.search.length <= 1 && document.visibilityState !== "hidden") await new Promise((go) => {
    setTimeout(go, 2000);
    if ((PerformanceObserver.supportedEntryTypes || []).includes("paint")) {
        new PerformanceObserver((list, o) => {
            if (list.getEntriesByName("first-contentful-paint").length) { o.disconnect(); go(); }
        }).observe({ type: "paint", buffered: true });
    } else requestAnimationFrame(() => setTimeout(go));
});`;

/** `html` whose trunk loader waits for the first paint before it starts the page's wasm, and
 * without the wasm's preload (which would fetch it during that paint); throws if trunk's loader
 * is not as expected. The glue module is still imported (and modulepreloaded) at once: small,
 * and scripts/single-file.mjs reads the loader's import. */
export function deferLoader(html) {
  if (!LOADER.test(html)) throw new Error("no trunk loader (<script type=\"module\"> import init, * as bindings from '…') in the html");
  if (!WASM_PRELOAD.test(html)) throw new Error('no preload of the page\'s wasm in the html');
  return html
    .replace(LOADER, (m) => `${m}\n${AFTER_FIRST_PAINT}`)
    .replace(WASM_PRELOAD, '');
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
