// The landing view prerendered into index.html at build time (scripts/prerender.mjs, from the
// app's own components): shown before any script runs and without JavaScript, with the paper's
// numbers; taken over by the app with no layout shift and the same numbers; never shown on an
// address that will show something else (`?data=`, another view).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, watch, tableRows, assertParity, cliJson, CLI, ROOT, dropFile } from './harness.mjs';

let server, b, mine, mineFile;
before(async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rp-prerender-')), 'mine.json');
  execFileSync(CLI, ['synth', '--models', '3', '--questions', '6', '--runs', '1', '--seed', '3', '--out', file], { stdio: 'ignore' });
  mine = fs.readFileSync(file, 'utf8');
  mineFile = file;
  server = await serve(undefined, { '/mine/results.json': mine });
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

/** The paper's Table 3 as its reported file gives it: row → [overall, knowledge, clarity, perfect]. */
function reportedTable3() {
  const file = JSON.parse(fs.readFileSync(path.join(ROOT, 'public-data/reported/repoprobe-paper.json'), 'utf8'));
  const out = new Map();
  for (const v of file.values.filter((v) => v.table === '3')) {
    const i = ['overall', 'knowledge', 'clarity', 'perfect'].indexOf(v.column);
    if (i < 0) continue;
    if (!out.has(v.row)) out.set(v.row, []);
    out.get(v.row)[i] = v.value;
  }
  return out;
}

function assertReportedNumbers(rows) {
  const want = reportedTable3();
  assert.equal(rows.length, want.size, 'one row per model of Table 3');
  for (const [model, values] of want) {
    const row = rows.find((r) => r.head === model);
    assert.ok(row, `row for ${model}`);
    values.forEach((v, i) => assert.equal(Number(row.cells[i].value), v, `${model} column ${i}`));
  }
}

test('without JavaScript the page shows the paper\'s Table 3 as reported, with its numbers', async () => {
  const c = await b.newContext({ javaScriptEnabled: false });
  const p = await c.newPage();
  await p.goto(server.url);
  assert.ok(await p.isVisible('#reported-table3 tbody tr'), 'the reported table is shown');
  assertReportedNumbers(await tableRows(p, 'reported-table3'));
  assert.match(await p.textContent('main'), /The case studies/);
  assert.match(await p.textContent('noscript'), /shows the paper's tables/);
  await c.close();
});

test('the built index.html carries the table and no script of its own', () => {
  const html = fs.readFileSync(path.join(ROOT, process.env.SITE_DIST || 'dist', 'index.html'), 'utf8');
  const start = html.indexOf('<div id="prerendered">');
  assert.ok(start > 0, 'the prerendered container');
  const inside = html.slice(start, html.indexOf('<script', start));
  assert.match(inside, /<figure[^>]*id="reported-table3"/);
  assert.match(inside, /<caption elementtiming="reported-table3">Table 3 as reported in the paper/);
  // Its form controls are look-alikes (src/components/stand_in.rs), hidden from assistive
  // technology; its buttons stay buttons.
  assert.doesNotMatch(inside, /<(select|input|textarea)\b/);
  const standIns = inside.match(/<span [^>]*class="stand-in[^"]*"[^>]*>/g) ?? [];
  assert.ok(standIns.length >= 5, `the header's and the controls' look-alikes: ${standIns.length}`);
  for (const s of standIns) assert.match(s, /aria-hidden="true"/, s);
});

test('the page\'s glue and wasm are fetched only after the landing view\'s first paint', async () => {
  const c = await b.newContext();
  const p = await watch(await c.newPage());
  await p.goto(server.url);
  const { painted, ...fetched } = await p.evaluate(async () => {
    const start = (re) => performance.getEntriesByType('resource').find((r) => re.test(r.name))?.startTime;
    const fcp = performance.getEntriesByName('first-contentful-paint')[0];
    return {
      painted: fcp?.startTime,
      glue: start(/repoprobe-site-[^/]*\.js$/),
      wasm: start(/repoprobe-site-[^/]*_bg\.wasm$/),
    };
  });
  assert.ok(painted !== undefined, 'a first contentful paint');
  for (const [what, at] of Object.entries(fetched)) {
    assert.ok(at !== undefined, `${what} fetched`);
    assert.ok(at >= painted, `${what} requested at ${at} ms, before the first paint at ${painted} ms`);
  }
  assert.deepEqual(p.errors, []);
  await c.close();
});

test('the app takes the landing view over without a layout shift and with the same numbers, then works', async () => {
  // Tall enough that the whole landing view is in the viewport: a shift anywhere in it counts.
  const c = await b.newContext({ viewport: { width: 1280, height: 4000 } });
  const p = await watch(await c.newPage());
  // The page's wasm waits until the prerendered view has been read.
  let release;
  const gate = new Promise((ok) => { release = ok; });
  await p.route(/repoprobe-site-[^/]*_bg\.wasm$/, async (route) => { await gate; await route.continue(); });
  await p.addInitScript(() => {
    window.__shift = [];
    new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__shift.push(e.value)))
      .observe({ type: 'layout-shift', buffered: true });
    // What the app's view says at the very moment the prerendered one goes (before that frame
    // is painted), beside what the prerendered one said.
    document.addEventListener('DOMContentLoaded', () => {
      window.__pre = document.querySelector('#prerendered main').innerText;
      const mo = new MutationObserver(() => {
        if (document.getElementById('prerendered')) return;
        mo.disconnect();
        window.__atTakeover = document.querySelector('main').innerText;
      });
      mo.observe(document.body, { childList: true });
    });
  });
  await p.gotoStatic(server.url);
  assert.ok(await p.isVisible('#prerendered #reported-table3 tbody tr'), 'shown before the app runs');
  // The boxes of the header's pieces (its controls look-alikes in the prerendered copy).
  const headerBoxes = () => p.$$eval('header > *, header label > *', (es) => es.map((e) => {
    const r = e.getBoundingClientRect();
    return { what: `${e.tagName.toLowerCase()}.${e.className}`, type: e.type, x: r.x, y: r.y, width: r.width, height: r.height };
  }));
  const before = {
    rows: await tableRows(p, 'reported-table3'),
    main: await p.innerText('main'),
    box: await p.$eval('#reported-table3', (e) => JSON.stringify(e.getBoundingClientRect())),
    header: await headerBoxes(),
  };
  assertReportedNumbers(before.rows);
  release();
  await p.waitForFunction(() => !document.getElementById('prerendered'), null, { timeout: 20000 });
  // The app's own, in the same place, with the same text to the last digit.
  // (An empty cell is written as a space by the HTML renderer, a text node of its own: trimmed.)
  const trimmed = (rows) => rows.map((r) => ({ ...r, cells: r.cells.map((c) => ({ ...c, text: c.text.trim() })) }));
  assert.deepEqual(trimmed(await tableRows(p, 'reported-table3')), trimmed(before.rows));
  assert.equal(await p.evaluate(() => window.__atTakeover), await p.evaluate(() => window.__pre), 'the app\'s view when it took over');
  assert.equal(await p.innerText('main'), before.main);
  assert.equal(await p.$eval('#reported-table3', (e) => JSON.stringify(e.getBoundingClientRect())), before.box);
  // The header's controls where their look-alikes were: the same heights and places to a
  // pixel (a select's width is its widest option's rounded up to a whole pixel, the
  // look-alike's is not: < 1 px apart).
  const after = await headerBoxes();
  assert.equal(after.length, before.header.length + 1, 'the same pieces, and the file input (hidden) added');
  const shown = after.filter((a) => a.type !== 'file');
  assert.equal(shown.length, before.header.length, shown.map((a) => a.what).join(' '));
  shown.forEach((a, i) => {
    const w = before.header[i];
    for (const k of ['x', 'y', 'width', 'height']) assert.ok(Math.abs(a[k] - w[k]) < 1, `${a.what} ${k}: ${a[k]} where ${w.what} was ${w[k]}`);
  });
  // Two frames later, every layout shift the page ever had is in.
  await p.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  assert.deepEqual(await p.evaluate(() => window.__shift), [], 'no layout shift');
  // Working: a sort, and a view of the app's.
  await p.click('#reported-table3 thead th:nth-child(2) button');
  assert.equal(await p.getAttribute('#reported-table3 thead th:nth-child(2)', 'aria-sort'), 'descending');
  await p.click('header nav a[href*="view=breakdown"]');
  await p.waitForSelector('main table');
  assert.equal(await p.$('#reported-table3 caption'), null);
  assert.deepEqual(p.errors, []);
  await c.close();
});

test('an address with ?data= or another view never shows the prerendered paper table', async () => {
  for (const query of [`?data=${encodeURIComponent(server.url + 'mine/results.json')}`, '?view=breakdown', '?set=demo']) {
    const c = await b.newContext();
    const p = await watch(await c.newPage());
    await p.addInitScript(() => {
      // Checked before every frame from the first: was the prerendered view ever rendered?
      window.__seen = false;
      const look = () => {
        const el = document.getElementById('prerendered');
        if (el && el.getClientRects().length > 0) window.__seen = true;
        requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    });
    await p.gotoStatic(server.url + query);
    await p.waitForSelector('main table', { timeout: 20000 });
    assert.equal(await p.evaluate(() => window.__seen), false, `${query}: the prerendered view was rendered`);
    assert.equal(await p.$('#prerendered'), null, query);
    if (query.startsWith('?data=')) {
      // The user's file alone: its three models, none of the paper's.
      await p.waitForFunction(() => document.querySelectorAll('#leaderboard tbody tr').length === 3, null, { timeout: 20000 });
      assert.doesNotMatch(await p.innerText('main'), /GPT-5\.2/);
    }
    assert.deepEqual(p.errors, []);
    await c.close();
  }
});

test('the prerendered theme switch says the theme remembered, as the app\'s will', async () => {
  const c = await b.newContext();
  const p = await watch(await c.newPage());
  await p.route(/repoprobe-site-[^/]*_bg\.wasm$/, (route) => route.abort());
  await p.addInitScript(() => localStorage.setItem('theme', 'dark'));
  await p.gotoStatic(server.url);
  assert.equal(await p.getAttribute('html', 'data-theme'), 'dark');
  // Its look-alike (src/components/stand_in.rs) shows that option alone.
  assert.deepEqual(await p.$$eval('#prerendered .theme .stand-in > .shown', (es) => es.map((e) => e.dataset.value)), ['dark']);
  assert.equal(await p.innerText('#prerendered .theme .stand-in'), 'Dark');
  await c.close();
});

test('a file dropped on the prerendered view before the app takes over is the app\'s, not the browser\'s', async () => {
  const p = await watch(await b.newPage());
  // The page's wasm waits until the file has been dropped.
  let release;
  const gate = new Promise((ok) => { release = ok; });
  await p.route(/repoprobe-site-[^/]*_bg\.wasm$/, async (route) => { await gate; await route.continue(); });
  await p.gotoStatic(server.url);
  const url = p.url();
  await dropFile(p, '#prerendered', 'mine.json', mine);
  // Kept for the app (the browser did not take it: the drop's default was prevented).
  assert.equal(await p.evaluate(() => window.__rpEarlyDrops.length), 1);
  assert.equal(p.url(), url);
  release();
  await p.waitForFunction(() => !document.getElementById('prerendered'), null, { timeout: 20000 });
  // The app counts the dropped file alone, as a drop on its own view does.
  const cli = cliJson(['score', mineFile, '--format', 'json']);
  await p.waitForFunction((m) => [...document.querySelectorAll('#leaderboard tbody th')].some((t) => t.textContent.includes(m)), cli.models[0].model, { timeout: 20000 });
  assertParity(await tableRows(p, 'leaderboard'), cli);
  assert.match(await p.textContent('.sources'), /mine\.json/);
  assert.equal(await p.evaluate(() => window.__rpEarlyDrops.length), 0);
  assert.deepEqual(p.errors, []);
});
