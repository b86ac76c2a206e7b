// The Runs view's and the search's speed in headless Chromium (a benchmark, not a test: it prints
// figures).
//   node e2e/speed-runs.mjs [--models 60 --questions 500] [--search-mb 2048]
// Figures: for `repoprobe synth --models M --questions Q --trajectories` (M × Q runs) given by
// `?data=` URLs: the Runs view's first paint (from the navigation to its first rows), a sort by
// cost and a filter ("read none of the evidence"), each from the click to the new first row;
// then a search over a trajectories file of --search-mb MB (the runs' lines repeated, indexed):
// MB/s from the request to its last progress message, and the peak of the browser's resident
// memory (every Chromium process, sampled every 100 ms) over its level before the search.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, CLI, ROOT } from './harness.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const [models, questions, searchMb] = [arg('models', '60'), arg('questions', '500'), Number(arg('search-mb', '2048'))];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-speed-runs-'));
const bundle = path.join(dir, 'runs.json');
const lines = path.join(dir, 'runs.trajectories.jsonl');
execFileSync(CLI, ['synth', '--models', models, '--questions', questions, '--seed', '1', '--out', bundle, '--trajectories', lines], { cwd: ROOT, stdio: 'inherit' });

// The big file for the search: the runs' lines again and again, each copy's keys its own
// (attempt = copy), indexed. Written as a stream: never held here either.
const big = path.join(dir, 'big.trajectories.jsonl');
const src = fs.readFileSync(lines, 'utf8').split('\n').filter(Boolean);
const fd = fs.openSync(big, 'w');
const entries = [];
let offset = 0;
const NEEDLE = 'NEEDLE_in_one_step';
for (let copy = 0; offset < searchMb * 1e6; copy++) {
  const chunk = [];
  for (const l of src) {
    const r = JSON.parse(l);
    r.attempt = copy;
    // One step of the file's first run holds the needle: one hit, the whole file read.
    if (entries.length === 0) r.trajectory.steps[0].message = `${r.trajectory.steps[0].message} ${NEEDLE}`;
    const text = JSON.stringify(r);
    const length = Buffer.byteLength(text);
    entries.push({ question_id: r.question_id, model: r.model, attempt: copy, offset, length });
    offset += length + 1;
    chunk.push(text);
    if (offset >= searchMb * 1e6) break;
  }
  fs.writeSync(fd, chunk.join('\n') + '\n');
}
fs.closeSync(fd);
fs.writeFileSync(path.join(dir, 'big.trajectories.index.json'), JSON.stringify({ format: 'repoprobe-trajectories-index', version: 1, bytes: offset, entries }));

const server = await serve(undefined, {
  '/r/runs.json': { file: bundle },
  '/r/runs.trajectories.jsonl': { file: lines },
  '/r/runs.trajectories.index.json': { file: path.join(dir, 'runs.trajectories.index.json') },
  '/r/big.trajectories.jsonl': { file: big },
  '/r/big.trajectories.index.json': { file: path.join(dir, 'big.trajectories.index.json') },
});
const b = await browser();
const p = await b.newPage();
const data = (t) => `?data=${encodeURIComponent(server.url + 'r/runs.json')}&data=${encodeURIComponent(server.url + `r/${t}.trajectories.jsonl`)}`;

// First paint of the Runs view: navigation start → its first row in the DOM (a
// MutationObserver in the page, so nothing of the driver's runs meanwhile).
await p.addInitScript(() => {
  new MutationObserver((_, o) => {
    if (document.querySelector('.runs-table tr[data-question]')) {
      window.__rpRows = performance.now();
      o.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
});
await p.goto(server.url + data('runs') + '&view=runs');
await p.waitForFunction(() => window.__rpRows, null, { timeout: 120000 });
const first = await p.evaluate(() => window.__rpRows);
const total = await p.$eval('#runs-count', (e) => Number(e.dataset.total));

/** From a click on `selector` to a first row other than the one before it. */
async function timed(selector) {
  return p.evaluate(async (sel) => {
    const key = () => {
      const r = document.querySelector('.runs-table tr[data-question]');
      return r && `${r.dataset.question}|${r.dataset.model}|${r.dataset.attempt}|${document.querySelector('#runs-count').dataset.kept}`;
    };
    const before = key();
    const t0 = performance.now();
    document.querySelector(sel).click();
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      if (key() !== before) return performance.now() - t0;
      if (performance.now() - t0 > 60000) return NaN;
    }
  }, selector);
}
// Right after the first rows the worker is still busy with the load's background work (the
// report's intervals, the files' hashes), which a click then waits behind: timed once, then
// again after it settled.
const busySort = await timed('th a[href*="sort=cost"]');
await new Promise((r) => setTimeout(r, 5000));
const sort = await timed('th a[href*="sort=cost"]');
const filter = await timed('input[name=noevidence]');
const unfilter = await timed('input[name=noevidence]');
console.log(`runs view: ${total} runs; first rows ${first.toFixed(0)} ms after navigation; right after, sort by cost ${busySort.toFixed(0)} ms; settled: sort (reversed) ${sort.toFixed(0)} ms, filter "read none of the evidence" ${filter.toFixed(0)} ms, filter off ${unfilter.toFixed(0)} ms`);

// The search over the big file.
const rss = () => {
  try {
    return execFileSync('ps', ['-C', 'chromium', '-o', 'rss='], { encoding: 'utf8' }).split('\n').filter(Boolean).reduce((a, x) => a + Number(x), 0) * 1024;
  } catch { return 0; }
};
await p.goto(server.url + data('big') + '&view=runs');
await p.waitForSelector('#runs-count', { timeout: 120000 });
await new Promise((r) => setTimeout(r, 1000));
const base = rss();
let peak = base;
const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 100);
const t0 = Date.now();
await p.fill('input[name=q]', NEEDLE);
await p.click('form.run-search button[type=submit]');
await p.waitForSelector('#search-state[data-done=true]', { timeout: 30 * 60000 });
const secs = (Date.now() - t0) / 1000;
clearInterval(sampler);
const state = await p.$eval('#search-state', (e) => ({ ...e.dataset, text: e.textContent }));
console.log(`search: ${(offset / 1e6).toFixed(0)} MB, ${entries.length} runs in ${secs.toFixed(1)} s = ${(offset / 1e6 / secs).toFixed(0)} MB/s; runs with a hit ${state.runsHit}; browser memory ${(base / 1e6).toFixed(0)} MB before, peak +${((peak - base) / 1e6).toFixed(0)} MB`);
await b.close();
await server.close();
fs.rmSync(dir, { recursive: true, force: true });
