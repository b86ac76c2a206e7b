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

const server = await serve();
const b = await browser();
const p = await b.newPage();
await p.addInitScript(() => {
  window.__long = [];
  new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__long.push(e.duration))).observe({ type: 'longtask', buffered: true });
});

let t = Date.now();
await p.goto(server.url);
await p.waitForSelector('#leaderboard tbody tr', { timeout: 60000 });
const cold = Date.now() - t;
// The first page of a fresh browser also waits for the browser's own start-up (its worker
// threads, fonts, storage); five more, each in a fresh context (empty cache) of the same browser.
const warm = [];
for (let i = 0; i < 5; i++) {
  const c = await b.newContext();
  const q = await c.newPage();
  t = Date.now();
  await q.goto(server.url);
  await q.waitForSelector('#leaderboard tbody tr', { timeout: 60000 });
  warm.push(Date.now() - t);
  await c.close();
}
const median = [...warm].sort((x, y) => x - y)[2];
console.log(`first render (bundled paper set, loopback): ${cold} ms in a fresh browser; median ${median} ms of 5 in fresh contexts of the running browser (${warm.join(', ')}) (target ≤ 500 ms)`);

await p.goto(server.url + '?set=none');
await p.waitForSelector('header');
await p.evaluate(() => { window.__long = []; });
t = Date.now();
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
