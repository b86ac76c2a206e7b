// The site's Content-Security-Policy lives in index.html as a <meta http-equiv> (so that every
// static host serves it, headers or not). It lets no inline script run but those the page
// itself has, each by the SHA-256 of its text: the one in index.html that starts the worker and
// the loader trunk writes for the page's wasm, whose text (it names the hashed file names) is
// only known after a build. So trunk's post-build hook (scripts/post-build.mjs, Trunk.toml)
// applies this last, on the finished index.html in its staging directory, for `trunk build`,
// `trunk serve` and `--public-url` builds alike; scripts/single-file.mjs uses the same functions
// for its own policy.
//   node scripts/csp.mjs [FILE]   (FILE: $TRUNK_STAGING_DIR/index.html, else dist/index.html)
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const META = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"\s*\/?>/i;

/** The text of every inline script the browser runs (no `src`; classic or module). */
export function inlineScripts(html) {
  const out = [];
  for (const m of html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script\s*>/gi)) {
    const attrs = m[1] || '';
    if (/\ssrc\s*=/i.test(attrs)) continue;
    const type = attrs.match(/\stype\s*=\s*"([^"]*)"/i)?.[1]?.trim().toLowerCase() ?? '';
    if (type && type !== 'module' && !/^(text|application)\/(javascript|ecmascript)$/.test(type)) continue;
    out.push(m[2]);
  }
  return out;
}

/** `'sha256-…'` of a script's text, as CSP hashes it (UTF-8 bytes, as written). */
export const hashSource = (text) => `'sha256-${crypto.createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The policy of `html`'s CSP meta, or null. */
export const policyOf = (html) => html.match(META)?.[1] ?? null;

/** `html` with its CSP meta's content set to `policy` (the meta must be there, first in head). */
export function withPolicy(html, policy) {
  if (!META.test(html)) throw new Error('no <meta http-equiv="Content-Security-Policy"> in the html');
  return html.replace(META, () => `<meta http-equiv="Content-Security-Policy" content="${policy}" />`);
}

/** `policy` with script-src allowing exactly the inline scripts of `html` (earlier hashes go). */
export function withScriptHashes(policy, html) {
  const hashes = [...new Set(inlineScripts(html).map(hashSource))];
  let found = false;
  const out = policy.split(';').map((d) => {
    const words = d.trim().split(/\s+/).filter(Boolean);
    if (words[0] !== 'script-src') return d.trim();
    found = true;
    return [...words.filter((w) => !w.startsWith("'sha256-")), ...hashes].join(' ');
  }).filter(Boolean).join('; ');
  if (!found) throw new Error('the Content-Security-Policy has no script-src');
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] || path.join(process.env.TRUNK_STAGING_DIR || 'dist', 'index.html');
  const html = fs.readFileSync(file, 'utf8');
  const policy = policyOf(html);
  if (!policy) { console.error(`csp: no Content-Security-Policy meta in ${file}`); process.exit(2); }
  const next = withScriptHashes(policy, html);
  fs.writeFileSync(file, withPolicy(html, next));
  console.log(`csp: ${file}: script-src allows ${inlineScripts(html).length} inline script(s) by hash`);
}
