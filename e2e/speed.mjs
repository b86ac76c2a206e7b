// The site's speed, measured in headless Chromium (a benchmark, not a test: it prints figures).
//   node e2e/speed.mjs [--models 20 --questions 500 --runs 5]
// Figures: wasm size (raw and gzipped), first render of the leaderboard on loopback (in a fresh
// browser, and the median of five fresh contexts of that browser), and for a
// dropped `repoprobe synth` file: time until every table is shown, and the longest main-thread
// task (PerformanceObserver 'longtask') while it loads.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { serve, browser, DIST, CLI } from './harness.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const [models, questions, runs] = [arg('models', '20'), arg('questions', '500'), arg('runs', '5')];

for (const wasm of fs.readdirSync(DIST).filter((f) => f.endsWith('.wasm'))) {
  const raw = fs.readFileSync(path.join(DIST, wasm));
  const page = !wasm.startsWith('repoprobe-worker');
  console.log(`wasm ${page ? 'page' : 'worker'}: ${(raw.length / 1024).toFixed(0)} KB raw, ${(zlib.gzipSync(raw, { level: 9 }).length / 1024).toFixed(0)} KB gzipped${page ? ' (target ≤ 350 KB)' : ''}`);
}

const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rp-speed-')), 'synth.json');
execFileSync(CLI, ['synth', '--models', models, '--questions', questions, '--runs', runs, '--seed', '1', '--out', file], { stdio: 'ignore' });
const size = fs.statSync(file).size;

// The yardstick of the first render: a plain static page with the same table — the reported
// Table 3's HTML as the build prerendered it into index.html, the same stylesheet, no script.
const built = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
const tableAt = built.search(/<figure[^>]* id="reported-table3"/);
const css = fs.readdirSync(DIST).find((f) => /^style-.*\.css$/.test(f));
if (tableAt < 0 || !css) throw new Error('no prerendered reported Table 3 or stylesheet in the build');
const STATIC = '/static-table3.html';
const staticPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Table 3</title><link rel="stylesheet" href="${css}"></head><body><main><h1>Leaderboard</h1>${built.slice(tableAt, built.indexOf('</figure>', tableAt) + '</figure>'.length)}</main></body></html>`;

// And, to tell the scripts' cost from the page's own, the built page itself without any script.
const BARE = '/bare-landing.html';
const barePage = built.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<link rel="(module)?preload"[^>]*>/g, '');
const html = (body) => ({ type: 'text/html; charset=utf-8', body });
const server = await serve(undefined, { [STATIC]: html(staticPage), [BARE]: html(barePage) });
const b = await browser();
const p = await b.newPage();
await p.addInitScript(() => {
  window.__long = [];
  new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__long.push(e.duration))).observe({ type: 'longtask', buffered: true });
});

// First render, timed inside the page: from the navigation's start (performance.timeOrigin) to
// the paint of the landing view's first table as the browser reports it (Element Timing API:
// each table's caption carries `elementtiming` = its id; its rows enter the DOM in the same
// update). On the paper set that is Table 3 as reported (the recomputed one is folded below the
// case studies); with data to rank on, the recomputed leaderboard.
// Nothing of the test's own runs in the page meanwhile (waitForSelector would inject
// playwright's script, ~35 ms of parsing on the main thread, right in the window measured).
// The time the rows entered the DOM, and the driver's wall clock (goto → painted, over CDP),
// are printed beside it.
const FIRST = () => {
  window.__rows = new Promise((done) => {
    const r = {};
    const mo = new MutationObserver(() => {
      if (!document.querySelector('#leaderboard tbody tr, #reported-table3 tbody tr')) return;
      mo.disconnect();
      r.inserted = performance.now();
    });
    document.addEventListener('DOMContentLoaded', () => {
      // Prerendered (or a static page): the rows came with the HTML, parsed by now.
      if (document.querySelector('#leaderboard tbody tr, #reported-table3 tbody tr')) r.inserted = performance.now();
      else mo.observe(document.body, { childList: true, subtree: true });
    });
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if ((e.identifier === 'leaderboard' || e.identifier === 'reported-table3') && r.painted === undefined) {
          r.painted = e.renderTime || e.loadTime;
          done(r);
        }
      }
    }).observe({ type: 'element', buffered: true });
  });
};
async function firstRender(q, url = server.url) {
  await q.addInitScript(FIRST);
  const t = Date.now();
  await q.goto(url);
  const r = await q.evaluate(() => window.__rows);
  const wall = Date.now() - t;
  return { ...r, wall };
}
const fmt = (r) => `${r.painted.toFixed(0)}`;
const cold = await firstRender(p);
// The first page of a fresh browser also waits for the browser's own start-up (its worker
// threads, fonts, storage); five more, each in a fresh context (empty cache) of the same browser,
// each followed by the static page in a fresh context, timed the same way (so both see the same
// machine load).
const warm = [];
const plain = [];
const bare = [];
for (let i = 0; i < 5; i++) {
  for (const [out, url] of [[warm, server.url], [plain, server.url + STATIC.slice(1)], [bare, server.url + BARE.slice(1)]]) {
    const c = await b.newContext();
    out.push(await firstRender(await c.newPage(), url));
    await c.close();
  }
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
console.log(`first render (bundled paper set, loopback), navigation start → first table painted: ${fmt(cold)} ms in a fresh browser; median ${median(warm.map((r) => r.painted)).toFixed(0)} ms of 5 in fresh contexts (${warm.map(fmt).join(', ')}) (target ≤ 500 ms)`);
console.log(`  rows in the DOM at ${[cold, ...warm].map((r) => r.inserted.toFixed(0)).join(', ')} ms; driver's wall clock goto → rows seen ${[cold, ...warm].map((r) => r.wall).join(', ')} ms`);
const [site, yard] = [median(warm.map((r) => r.painted)), median(plain.map((r) => r.painted))];
console.log(`first render: ${site.toFixed(0)} ms vs static ${yard.toFixed(0)} ms = ${(site / yard).toFixed(2)}× (target ≤ 1.5×); static page, 5 fresh contexts: ${plain.map(fmt).join(', ')} ms`);
console.log(`  the built landing page without its scripts: median ${median(bare.map((r) => r.painted)).toFixed(0)} ms (${bare.map(fmt).join(', ')})`);

await p.goto(server.url + '?set=none');
await p.waitForSelector('header');
await p.evaluate(() => { window.__long = []; });
let t = Date.now();
await p.setInputFiles('input[type=file]', file);
const n = Number(models);
await p.waitForFunction((n) => document.querySelectorAll('#leaderboard tbody tr').length === n, n, { timeout: 120000 });
const shown = Date.now() - t;
const long = await p.evaluate(() => window.__long);
console.log(`drop ${(size / 1e6).toFixed(1)} MB (${models} models × ${questions} questions × ${runs} runs): every table shown after ${shown} ms (target ≤ 1000 ms)`);
console.log(`longest main-thread task while loading: ${Math.max(0, ...long).toFixed(0)} ms over ${long.length} long task(s) (target ≤ 100 ms)`);
for (const view of ['breakdown', 'reliability', 'failures', 'questions']) {
  t = Date.now();
  await p.click(`header nav a[href*="view=${view}"]`);
  await p.waitForSelector('main table');
  console.log(`switch to ${view}: ${Date.now() - t} ms`);
}
await b.close();
await server.close();
