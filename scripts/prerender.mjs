// The landing view rendered at build time: scripts/post-build.mjs (trunk's post-build hook,
// Trunk.toml) runs this on the finished index.html in its staging directory, before the page's
// loader is deferred and the inline scripts are hashed into the CSP. It builds and
// runs the site's native `prerender` binary (src/bin/prerender.rs: the app's own components,
// the same core calls and data as the worker's first load of the default bundled set) and puts
// its HTML into `<div id="prerendered">`, so the page shows the paper's tables before any
// script runs, and without JavaScript. The app takes the page over (src/lib.rs `takeover`).
//   node scripts/prerender.mjs [FILE]   (FILE: $TRUNK_STAGING_DIR/index.html, else dist/index.html)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MARKER = /<div id="prerendered">\s*<\/div>/;

/** `html` with `landing` inside its (empty) prerendered container; throws if there is none. */
export function withPrerendered(html, landing) {
  if (!MARKER.test(html)) throw new Error('no empty <div id="prerendered"></div> in the html');
  if (/<script/i.test(landing)) throw new Error('the prerendered html has a script');
  return html.replace(MARKER, () => `<div id="prerendered">${landing}</div>`);
}

/** Runs the site's native `prerender` binary of the checkout at `root` on its public-data and
 * returns the landing view's HTML. */
export function renderLanding(root) {
  // Natively (trunk's environment names the wasm target for its own cargo runs, not for this).
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('CARGO_BUILD_TARGET')) delete env[k];
  return execFileSync('cargo', ['run', '--quiet', '--offline', '-p', 'repoprobe-site', '--bin', 'prerender', '--', path.join(root, 'public-data')], {
    cwd: root, env, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'],
  });
}

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const main = fileURLToPath(import.meta.url) === path.resolve(process.argv[1] ?? '');
if (main) {
  const file = process.argv[2]
    ?? (process.env.TRUNK_STAGING_DIR ? path.join(process.env.TRUNK_STAGING_DIR, 'index.html') : path.join(ROOT, 'dist', 'index.html'));
  const landing = renderLanding(ROOT);
  fs.writeFileSync(file, withPrerendered(fs.readFileSync(file, 'utf8'), landing));
  console.log(`prerender: the landing view (${landing.length} characters of HTML) put into ${path.relative(ROOT, file)}`);
}
