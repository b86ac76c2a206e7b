// The site's speed, measured in headless Chromium (a benchmark, not a test: it prints figures).
//   node e2e/speed.mjs [--models 20 --questions 500 --runs 5]
// (--only-trajectories: the trajectory figures alone, after the first render.)
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
// --contexts N: fresh contexts per page in the first render (default 5); --only-first-render: stop after it.
const contexts = Number(arg('contexts', '5'));

for (const wasm of fs.readdirSync(DIST).filter((f) => f.endsWith('.wasm'))) {
  const raw = fs.readFileSync(path.join(DIST, wasm));
  const page = !wasm.startsWith('repoprobe-worker');
  console.log(`wasm ${page ? 'page' : 'worker'}: ${(raw.length / 1000).toFixed(0)} KB raw, ${(zlib.gzipSync(raw, { level: 9 }).length / 1000).toFixed(0)} KB gzipped (KB of 1000 bytes, as scripts/wasm-budget.sh)${page ? ' (target ≤ 350 KB)' : ''}`);
}

const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rp-speed-')), 'synth.json');
execFileSync(CLI, ['synth', '--models', models, '--questions', questions, '--runs', runs, '--seed', '1', '--out', file], { stdio: 'ignore' });
const size = fs.statSync(file).size;

// The yardstick of the first render: a plain static page with the same table — the reported
// Table 3's HTML as the build prerendered it into index.html, the same stylesheet, no script.
const built = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
const tableAt = built.search(/<figure[^>]* id="reported-table3"/);
// The same stylesheet, delivered as the built page delivers it (inline since issue 14, else a file).
const css = fs.readdirSync(DIST).find((f) => /^style-.*\.css$/.test(f));
const sheet = built.match(/<style>[\s\S]*?<\/style>/)?.[0] ?? (css && `<link rel="stylesheet" href="${css}">`);
if (tableAt < 0 || !sheet) throw new Error('no prerendered reported Table 3 or stylesheet in the build');
const STATIC = '/static-table3.html';
const staticPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Table 3</title>${sheet}</head><body><main><h1>Leaderboard</h1>${built.slice(tableAt, built.indexOf('</figure>', tableAt) + '</figure>'.length)}</main></body></html>`;

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
  // The app's takeover of the prerendered landing view (src/lib.rs `takeover`): its removal.
  window.__takeover = new Promise((done) => document.addEventListener('DOMContentLoaded', () => {
    if (!document.getElementById('prerendered')) return done(undefined);
    new MutationObserver((_, mo) => {
      if (document.getElementById('prerendered')) return;
      mo.disconnect();
      done(performance.now());
    }).observe(document.body, { childList: true });
  }));
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
  // (Only the site takes over; the static and script-less pages never do.)
  const takeover = url === server.url ? await q.evaluate(() => window.__takeover) : undefined;
  return { ...r, wall, takeover };
}
const fmt = (r) => `${r.painted.toFixed(0)}`;
const cold = await firstRender(p);
// The first page of a fresh browser also waits for the browser's own start-up (its worker
// threads, fonts, storage); five more (--contexts), each in a fresh context (empty cache) of the
// same browser, each followed by the static page in a fresh context, timed the same way (so both
// see the same machine load).
const warm = [];
const plain = [];
const bare = [];
for (let i = 0; i < contexts; i++) {
  for (const [out, url] of [[warm, server.url], [plain, server.url + STATIC.slice(1)], [bare, server.url + BARE.slice(1)]]) {
    const c = await b.newContext();
    out.push(await firstRender(await c.newPage(), url));
    await c.close();
  }
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
console.log(`first render (bundled paper set, loopback), navigation start → first table painted: ${fmt(cold)} ms in a fresh browser; median ${median(warm.map((r) => r.painted)).toFixed(0)} ms of ${contexts} in fresh contexts (${warm.map(fmt).join(', ')}) (target ≤ 500 ms)`);
console.log(`  rows in the DOM at ${[cold, ...warm].map((r) => r.inserted.toFixed(0)).join(', ')} ms; driver's wall clock goto → rows seen ${[cold, ...warm].map((r) => r.wall).join(', ')} ms`);
const [site, yard] = [median(warm.map((r) => r.painted)), median(plain.map((r) => r.painted))];
console.log(`first render: ${site.toFixed(0)} ms vs static ${yard.toFixed(0)} ms = ${(site / yard).toFixed(2)}× (target ≤ 1.5×); static page, ${contexts} fresh contexts: ${plain.map(fmt).join(', ')} ms`);
console.log(`  the built landing page without its scripts: median ${median(bare.map((r) => r.painted)).toFixed(0)} ms (${bare.map(fmt).join(', ')})`);
const took = warm.map((r) => r.takeover).filter((x) => x !== undefined);
console.log(`  the app took over (the prerendered view removed) at median ${median(took).toFixed(0)} ms after the navigation's start (${took.map((x) => x.toFixed(0)).join(', ')}), ${median(warm.map((r) => r.takeover - r.painted)).toFixed(0)} ms after the first paint`);
if (process.argv.includes('--only-first-render')) {
  await b.close();
  await server.close();
  fs.rmSync(file);
  process.exit(0);
}

// ---- Dropped files (streamed loads) ----
// Timed inside the page: from the file input's `change` event (a capturing listener, before the
// app's) to the moment the leaderboard has a row per model, and the next frame after it: every
// table is shown (on large data the worker answers the tables first and their 95 % intervals
// after; the time until the intervals are in the table too is printed beside). In the
// same page, the same File is then read with `text()` and `JSON.parse`d, for scale: the target
// is the tables within 2× of the bare parse. Memory: the peak resident set (VmHWM of
// /proc/PID/status) of the page's renderer process, which runs its worker too, found over CDP
// (SystemInfo.getProcessInfo); the worker's wasm memory as the worker reports it.
const gigabyte = !process.argv.includes('--no-gigabyte');
let t;
const DROP = (n) => {
  window.__drop = new Promise((done) => {
    document.addEventListener('change', (e) => {
      const f = e.target.files && e.target.files[0];
      if (!f) return;
      window.__file = f;
      const t0 = performance.now();
      const r = {};
      const mo = new MutationObserver(() => {
        if (document.querySelectorAll('#leaderboard tbody tr').length !== n) return;
        if (r.rows === undefined) {
          r.rows = performance.now() - t0;
          requestAnimationFrame(() => setTimeout(() => {
            r.frame = performance.now() - t0;
            if (r.intervals !== undefined) done(r);
          }));
        }
        if (document.querySelector('#leaderboard[aria-busy=true]')) return;
        mo.disconnect();
        r.intervals = performance.now() - t0;
        if (r.frame !== undefined) done(r);
      });
      mo.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-busy'] });
    }, { capture: true, once: true });
  });
};
const cdp = await b.newBrowserCDPSession();
const renderers = async () => (await cdp.send('SystemInfo.getProcessInfo')).processInfo
  .filter((x) => x.type === 'renderer').map((x) => x.id);
const status = (pid) => {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number((s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm')) || [])[1] || 0) * 1024;
    return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
  } catch { return { hwm: 0, rss: 0 }; }
};
const MB = (x) => (x / 1e6).toFixed(0);
/** The worker's wasm memory size and the phases of its last load (its User Timing measures). */
const workerFigures = async (q) => {
  for (const w of q.workers()) {
    const f = await w.evaluate(() => self.__rpMemory && {
      wasm: self.__rpMemory.buffer.byteLength,
      phases: performance.getEntriesByType('measure').map((m) => `${m.name.replace('rp:', '')} ${m.duration.toFixed(0)}`).join(', '),
    }).catch(() => undefined);
    if (f) return f;
  }
  return {};
};
/** Drops `f` (a path) into a fresh page of a fresh context; the times, and the page's renderer
 * processes' peak memory. */
async function drop(f, n, timeout) {
  const before = new Set(await renderers());
  const c = await b.newContext();
  const q = await c.newPage();
  await q.addInitScript(() => {
    window.__long = [];
    new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__long.push(e.duration))).observe({ type: 'longtask', buffered: true });
  });
  await q.goto(server.url + '?set=none');
  await q.waitForSelector('header');
  const mine = (await renderers()).filter((pid) => !before.has(pid));
  await q.evaluate(DROP, n);
  await q.evaluate(() => { window.__long = []; });
  let sampled = 0;
  const poll = setInterval(() => { sampled = Math.max(sampled, mine.reduce((a, pid) => a + status(pid).rss, 0)); }, 100);
  const t = Date.now();
  await q.setInputFiles('input[type=file]', f);
  const inPage = await q.evaluate(() => window.__drop, null, { timeout });
  const wall = Date.now() - t;
  clearInterval(poll);
  const long = await q.evaluate(() => window.__long);
  // Chromium may start a spare renderer beside the page's: the page's (with its worker) is the
  // largest; the sum over all new ones is printed too.
  const hwms = mine.map((pid) => status(pid).hwm);
  const hwm = Math.max(0, ...hwms);
  return { q, c, ...inPage, wall, long, hwm, hwms, sampled, pids: mine, ...(await workerFigures(q)) };
}


// Trajectories (docs/site.md#trajectories). (1) A 10,000-step, ~50 MB trajectory: the time from
// the click that opens the section to its first steps painted (target ≤ 300 ms) and of a search
// over it, answered by the worker (target ≤ 100 ms), both inside the page. (2) A ~2 GB
// trajectories file (one ~1 MB run repeated under 2,000 keys, written to /tmp and deleted after)
// dropped with its index beside a results bundle: the load time it adds to the bundle's alone
// (target ≤ 2 s) and the tab's memory it adds (target ≤ 100 MB); then without its index, the
// scan's throughput (the worker's own figure, in the Data view).
async function trajectoryFigures(b, server) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-traj-speed-'));
  const KEY = { question_id: 'q1', model: 'm', attempt: 0 };
  const bundle = path.join(dir, 'results.json');
  fs.writeFileSync(bundle, JSON.stringify({
    format: 'repoprobe-results', version: 1,
    benchmark: [{ id: 'q1', question: 'Where does it start?', reference_answer: 'src/lib.rs', category: 'Project Architecture',
      repo: { name: 'o/r', url: 'https://github.com/o/r', commit: '0123456789abcdef0123456789abcdef01234567', language: 'Rust', theme: 't' },
      checklist: [{ id: 'k1', kind: 'knowledge', key_point: 'k', weight: 9, rubric: [{ score: 0, criterion: 'no' }, { score: 9, criterion: 'yes' }], evidence: ['src/f1.rs'] },
        { id: 'clarity', kind: 'clarity', key_point: 'c', weight: 1, rubric: [{ score: 0, criterion: 'no' }, { score: 1, criterion: 'yes' }] }] }],
    answers: [{ ...KEY, answer: 'It starts in src/lib.rs.', agent: { files_read: ['src/f1.rs'] } }],
    judgments: [], scalar_judgments: [], failure_modes: [], reported: [],
  }));
  // The trajectory: a system prompt, then agent steps each reading a file of ~5 KB.
  const body = 'x'.repeat(4900);
  const steps = [{ step_id: 1, source: 'system', message: 'You are an agent.' }];
  for (let i = 2; i <= 10000; i++) {
    steps.push({ step_id: i, source: 'agent', message: i % 10 ? '' : `Step ${i}: reading more NEEDLE${i}`,
      tool_calls: [{ tool_call_id: `c${i}`, function_name: 'read_file', arguments: { path: `/w/src/f${i}.rs` } }],
      observation: { results: [{ source_call_id: `c${i}`, content: `/w/src/f${i}.rs\n${body}` }] },
      metrics: { prompt_tokens: 1000 + i, completion_tokens: 20 } });
  }
  // In the order `repoprobe bundle` writes it: the steps last.
  const traj = { schema_version: 'ATIF-v1.8', agent: { name: 'builtin', version: '1' }, extra: { ...KEY, worktree: '/w' }, steps };
  const line = JSON.stringify({ ...KEY, trajectory: traj });
  const lines = path.join(dir, 'results.trajectories.jsonl');
  fs.writeFileSync(lines, line + '\n');
  const index = (entries, bytes) => JSON.stringify({ format: 'repoprobe-trajectories-index', version: 1, bytes, entries });
  fs.writeFileSync(path.join(dir, 'results.trajectories.index.json'), index([{ ...KEY, offset: 0, length: Buffer.byteLength(line) }], Buffer.byteLength(line) + 1));
  const files = ['results.json', 'results.trajectories.jsonl', 'results.trajectories.index.json'].map((f) => path.join(dir, f));
  const opens = [], wholes = [], searches = [];
  for (let i = 0; i < 3; i++) {
    const c = await b.newContext();
    const q = await c.newPage();
    await q.goto(`${server.url}?set=none&view=question&id=q1&model=m`);
    await q.waitForSelector('header');
    await q.setInputFiles('input[type=file]', files);
    await q.waitForSelector('#trajectory summary', { timeout: 60000 });
    // First steps painted (from the line's first bytes), then the whole run read (the summary
    // gives its count); the searches are over the whole run.
    const [open, whole] = await q.evaluate(() => new Promise((done) => {
      const t0 = performance.now();
      let first = null, painted = false;
      const mo = new MutationObserver(() => {
        if (!painted && document.querySelector('#trajectory .step')) {
          painted = true;
          requestAnimationFrame(() => setTimeout(() => { first = performance.now() - t0; check(); }));
        }
        check();
      });
      const check = () => {
        if (first === null || !/\(10000 steps/.test(document.querySelector('#trajectory summary').textContent)) return;
        mo.disconnect();
        done([first, performance.now() - t0]);
      };
      mo.observe(document.body, { childList: true, subtree: true, characterData: true });
      document.querySelector('#trajectory summary').click();
    }));
    opens.push(open);
    wholes.push(whole);
    for (const needle of ['needle5000', 'NEEDLE9990', 'absent-text']) {
      await q.fill('input[name=traj-q]', needle);
      searches.push(await q.evaluate(() => new Promise((done) => {
        const before = document.querySelector('.traj-count').textContent;
        const t0 = performance.now();
        const mo = new MutationObserver(() => {
          const now = document.querySelector('.traj-count').textContent;
          if (now === before || !/hold/.test(now)) return;
          mo.disconnect();
          done({ ms: performance.now() - t0, said: now });
        });
        mo.observe(document.body, { childList: true, subtree: true, characterData: true });
        document.querySelector('.traj-search button').click();
      })));
    }
    if (i === 2) console.log(`  the worker's phases (ms): ${(await workerFigures(q)).phases || 'unknown'}`);
    await c.close();
  }
  console.log(`trajectory of 10,000 steps, ${(Buffer.byteLength(line) / 1e6).toFixed(1)} MB: click → first steps painted ${opens.map((x) => x.toFixed(0)).join(', ')} ms (median ${median(opens).toFixed(0)}, target ≤ 300 ms); whole run read and shown ${wholes.map((x) => x.toFixed(0)).join(', ')} ms; search → steps listed ${searches.map((x) => x.ms.toFixed(0)).join(', ')} ms (median ${median(searches.map((x) => x.ms)).toFixed(0)}, target ≤ 100 ms; ${searches.slice(0, 3).map((x) => x.said).join(' / ')})`);

  // (2) A 2 GB file of 2,000 runs of ~1 MB, written in place, with its index.
  const big = path.join(dir, 'big.trajectories.jsonl');
  const run = JSON.stringify({ schema_version: 'ATIF-v1.8', agent: { name: 'builtin', version: '1' },
    steps: Array.from({ length: 200 }, (_, i) => ({ step_id: i + 1, source: 'agent', message: 'y'.repeat(5000) })) });
  const fd = fs.openSync(big, 'w');
  const entries = [];
  let at = 0;
  const N = Math.ceil(2e9 / run.length);
  for (let i = 0; i < N; i++) {
    const l = Buffer.from(`{"question_id":"q1","model":"big-${i}","attempt":0,"trajectory":${run}}\n`);
    fs.writeSync(fd, l);
    entries.push({ question_id: 'q1', model: `big-${i}`, attempt: 0, offset: at, length: l.length - 1 });
    at += l.length;
  }
  fs.closeSync(fd);
  const bigIndex = path.join(dir, 'big.trajectories.index.json');
  fs.writeFileSync(bigIndex, index(entries, at));
  const loadOf = async (given) => {
    const before = new Set(await renderers());
    const c = await b.newContext();
    const q = await c.newPage();
    await q.goto(`${server.url}?set=none&view=data`);
    await q.waitForSelector('header');
    const mine = (await renderers()).filter((pid) => !before.has(pid));
    const base = Math.max(0, ...mine.map((pid) => status(pid).rss));
    const shown = q.evaluate((want) => new Promise((done) => {
      document.addEventListener('change', () => {
        const t0 = performance.now();
        const mo = new MutationObserver(() => {
          const rows = document.querySelectorAll('table.files tbody tr').length;
          const traj = document.querySelectorAll('table.trajectory-files tbody tr').length;
          if (rows < 1 || traj < want) return;
          mo.disconnect();
          done(performance.now() - t0);
        });
        mo.observe(document.body, { childList: true, subtree: true });
      }, { capture: true, once: true });
    }), given.length - 1 - (given.some((f) => f.endsWith('index.json')) ? 1 : 0));
    await q.setInputFiles('input[type=file]', given);
    const ms = await shown;
    const hwm = Math.max(0, ...mine.map((pid) => status(pid).hwm));
    const note = await q.$eval('table.trajectory-files', (t) => t.textContent).catch(() => '');
    await c.close();
    return { ms, hwm, base, note };
  };
  try {
    const alone = [], withBig = [];
    for (let i = 0; i < 3; i++) {
      alone.push(await loadOf([bundle]));
      withBig.push(await loadOf([bundle, big, bigIndex]));
    }
    const added = median(withBig.map((r) => r.ms)) - median(alone.map((r) => r.ms));
    const mem = median(withBig.map((r) => r.hwm)) - median(alone.map((r) => r.hwm));
    console.log(`a ${(at / 1e9).toFixed(2)} GB trajectories file (${N} runs) dropped with its index beside a bundle: loaded in ${withBig.map((r) => r.ms.toFixed(0)).join(', ')} ms vs the bundle alone ${alone.map((r) => r.ms.toFixed(0)).join(', ')} ms: adds ${added.toFixed(0)} ms (target ≤ 2000 ms); the tab's peak RSS ${withBig.map((r) => MB(r.hwm)).join(', ')} MB vs ${alone.map((r) => MB(r.hwm)).join(', ')} MB: adds ${MB(mem)} MB (target ≤ 100 MB)`);
    const scan = await loadOf([bundle, big]);
    const said = (scan.note.match(/\(([\d.]+ MB in \d+ ms, \d+ MB\/s)\)/) || [])[1] || scan.note;
    console.log(`  the same file without its index: indexed by a scan of its line heads, ${said}; loaded in ${scan.ms.toFixed(0)} ms, the tab's peak RSS ${MB(scan.hwm)} MB`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
if (process.argv.includes('--only-trajectories')) {
  await trajectoryFigures(b, server);
  await b.close();
  await server.close();
  process.exit(0);
}

const n = Number(models);
const drops = [];
for (let i = 0; i < 3; i++) {
  const r = await drop(file, n, 120000);
  if (i < 2) await r.c.close();
  drops.push(r);
}
const last = drops.at(-1);
// JSON.parse of the same File in the same page, three times.
const parses = await last.q.evaluate(async () => {
  const out = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const text = await window.__file.text();
    const t1 = performance.now();
    JSON.parse(text);
    out.push({ read: t1 - t0, parse: performance.now() - t1 });
  }
  return out;
});
const shownMs = median(drops.map((d) => d.frame));
const parseMs = median(parses.map((x) => x.parse));
console.log(`drop ${(size / 1e6).toFixed(1)} MB: ${shownMs.toFixed(0)} ms vs JSON.parse ${parseMs.toFixed(0)} ms = ${(shownMs / parseMs).toFixed(2)}× (target ≤ 2×)`);
console.log(`  (${models} models × ${questions} questions × ${runs} runs) change event → rows in the DOM ${drops.map((d) => d.rows.toFixed(0)).join(', ')} ms, → next frame ${drops.map((d) => d.frame.toFixed(0)).join(', ')} ms, → the 95 % intervals in the table ${drops.map((d) => d.intervals.toFixed(0)).join(', ')} ms (median ${median(drops.map((d) => d.intervals)).toFixed(0)} ms = ${(median(drops.map((d) => d.intervals)) / parseMs).toFixed(2)}×), driver's wall clock ${drops.map((d) => d.wall).join(', ')} ms; JSON.parse ${parses.map((x) => x.parse.toFixed(0)).join(', ')} ms after File.text() ${parses.map((x) => x.read.toFixed(0)).join(', ')} ms`);
console.log(`  the worker's phases (ms): ${drops.map((d) => d.phases || 'unknown').join(' | ')}`);
console.log(`  longest main-thread task while loading: ${Math.max(0, ...last.long).toFixed(0)} ms over ${last.long.length} long task(s) (target ≤ 100 ms); the page's renderer peak RSS ${MB(last.hwm)} MB (before the JSON.parse runs), worker wasm memory ${last.wasm ? MB(last.wasm) + ' MB' : 'unknown'}`);
const p2 = last.q;
for (const view of ['breakdown', 'reliability', 'failures', 'questions']) {
  t = Date.now();
  await p2.click(`header nav a[href*="view=${view}"]`);
  await p2.waitForSelector('main table');
  console.log(`switch to ${view}: ${Date.now() - t} ms`);
}
// A question's answers and rationales, read back from the dropped file when its view opens.
t = Date.now();
await p2.click('main table a[href*="view=question"]');
await p2.waitForSelector('table.matrix tbody td a');
console.log(`open a question (its texts read back from the file): ${Date.now() - t} ms; the worker's phases (ms): ${(await workerFigures(p2)).phases || 'unknown'}`);
await last.c.close();

// The same file as `?data=URL`: the worker's start script fetches it (`response.blob()`, held by
// the browser) and the worker streams it like a dropped file. From the navigation's start to
// the leaderboard's rows, inside the page; three fresh contexts.
const ROWS = (n) => {
  window.__rows = new Promise((done) => {
    const mo = new MutationObserver(() => {
      if (document.querySelectorAll('#leaderboard tbody tr').length !== n) return;
      mo.disconnect();
      done(performance.now());
    });
    document.addEventListener('DOMContentLoaded', () => mo.observe(document.body, { childList: true, subtree: true }));
  });
};
const withData = await serve(DIST, { '/synth.json': fs.readFileSync(file) });
const fetched = [];
for (let i = 0; i < 3; i++) {
  const c = await b.newContext();
  const q = await c.newPage();
  await q.addInitScript(ROWS, n);
  await q.goto(withData.url + '?data=synth.json');
  fetched.push(await q.evaluate(() => window.__rows));
  await c.close();
}
await withData.close();
console.log(`?data= ${(size / 1e6).toFixed(1)} MB over loopback: navigation start → every table ${median(fetched).toFixed(0)} ms (${fetched.map((x) => x.toFixed(0)).join(', ')})`);
fs.rmSync(file);

if (gigabyte) {
  const [gm, gq, gr] = [100, 1400, 5];
  const big = path.join(path.dirname(file), 'synth-1g.json');
  t = Date.now();
  execFileSync(CLI, ['synth', '--models', String(gm), '--questions', String(gq), '--runs', String(gr), '--seed', '1', '--out', big], { stdio: 'ignore' });
  const bigSize = fs.statSync(big).size;
  console.log(`(synth of ${(bigSize / 1e6).toFixed(0)} MB took ${Date.now() - t} ms)`);
  try {
    const r = await drop(big, gm, 600000);
    const mem = () => `${MB(Math.max(0, ...r.pids.map((pid) => status(pid).hwm)))} MB`;
    console.log(`drop ${(bigSize / 1e6).toFixed(0)} MB (${gm} models × ${gq} questions × ${gr} runs): every table shown after ${r.frame.toFixed(0)} ms (driver's wall clock ${r.wall} ms); the tab's peak RSS ${MB(r.hwm)} MB (target < 1500 MB: VmHWM of its renderer process, which runs the worker too; every new renderer: ${r.hwms.map(MB).join(' + ')} MB, their RSS sampled every 100 ms peaked at ${MB(r.sampled)} MB together); worker wasm memory ${r.wasm ? MB(r.wasm) + ' MB' : 'unknown'}; longest main-thread task ${Math.max(0, ...r.long).toFixed(0)} ms; the worker's phases (ms): ${r.phases || 'unknown'}`);
    t = Date.now();
    await r.q.click('header nav a[href*="view=questions"]');
    await r.q.waitForSelector('main table a[href*="view=question"]', { timeout: 120000 });
    console.log(`  then the questions list: ${Date.now() - t} ms, the tab's peak RSS since ${mem()}`);
    t = Date.now();
    await r.q.click('main table a[href*="view=question"]');
    await r.q.waitForSelector('table.matrix tbody td a', { timeout: 120000 });
    const after = await workerFigures(r.q);
    const cdpPage = await r.c.newCDPSession(r.q);
    const heap = await cdpPage.send('Runtime.getHeapUsage');
    const pageWasm = await r.q.evaluate(() => window.__rpMemory && window.__rpMemory.buffer.byteLength);
    console.log(`  the page's own: wasm memory ${MB(pageWasm || 0)} MB, JS heap ${MB(heap.usedSize)} MB used of ${MB(heap.totalSize)} MB`);
    console.log(`  then a question, its texts read back from the file: ${Date.now() - t} ms, the tab's peak RSS since ${mem()}; worker wasm memory ${MB(after.wasm || 0)} MB; the worker's phases (ms): ${after.phases || 'unknown'}`);
    await r.c.close();
  } finally {
    fs.rmSync(big, { force: true });
  }
}
await trajectoryFigures(b, server);
await b.close();
await server.close();
