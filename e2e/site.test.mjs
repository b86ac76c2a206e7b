// End-to-end tests of the built site in headless Chromium: parity with the CLI, loading by
// drop/picker and URL, navigation by URL and keyboard, and inert untrusted text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { serve, browser, page, watch, cliJson, setFiles, tableRows, assertParity, ROOT } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

async function leaderboard(p, query = '') {
  await p.goto(server.url + query);
  // Attached, not visible: on the paper set alone the recomputed table is folded away under
  // the reported one and the case studies (whose-data.test.mjs).
  await p.waitForSelector('#leaderboard tbody tr', { state: 'attached', timeout: 20000 });
  return tableRows(p, 'leaderboard');
}

test('the leaderboard shows exactly what `repoprobe score --format json` prints for the same files', async () => {
  const p = await page(b);
  const rows = await leaderboard(p);
  assertParity(rows, cliJson(['score', ...setFiles('paper'), '--format', 'json']));
  assert.deepEqual(p.errors, []);
});

test('parity holds under the exclude policy and on the synthetic demo set', async () => {
  const p = await page(b);
  let rows = await leaderboard(p, '?missing=exclude');
  assertParity(rows, cliJson(['score', ...setFiles('paper'), '--format', 'json', '--missing', 'exclude']));
  assert.match(await p.textContent('footer'), /missing = exclude/);
  rows = await leaderboard(p, '?set=demo');
  assertParity(rows, cliJson(['score', ...setFiles('demo'), '--format', 'json']));
});

test('the reported Table 3 carries the audit findings', async () => {
  const p = await page(b);
  await leaderboard(p);
  const rows = await tableRows(p, 'reported-table3');
  assert.equal(rows.length, 20);
  const qwen = rows.find((r) => r.head === 'Qwen3-Max');
  assert.match(qwen.cells.at(-1).text, /off by 0\.12/);
  const gpt = rows.find((r) => r.head === 'GPT-5.2');
  assert.equal(gpt.cells.at(-1).text, '');
});

test('a dropped file with invalid records loads what is valid and lists every issue with its location', async () => {
  const p = await page(b);
  await p.goto(server.url + '?set=none&view=data');
  const dir = path.join(ROOT, 'testdata/golden');
  await p.setInputFiles('input[type=file]', fs.readdirSync(dir).filter((f) => /\.jsonl?$/.test(f)).map((f) => path.join(dir, f)));
  await p.waitForSelector('table.issues tbody tr');
  const issues = await p.$$eval('table.issues tbody tr', (rs) => rs.map((r) => r.textContent));
  assert.equal(issues.length, 6);
  assert.ok(issues.some((t) => t.includes('judgments.jsonl') && t.includes('line 10') && t.includes('not allowed')), issues.join('\n'));
  const cli = cliJson(['score', 'testdata/golden', '--format', 'json']);
  // Navigating inside the app keeps the files the user added.
  await p.click('header nav a:has-text("Leaderboard")');
  await p.waitForFunction(() => document.querySelectorAll('#leaderboard tbody tr').length === 3);
  assertParity(await tableRows(p, 'leaderboard'), cli);
});

test('a question link opens the judge rationale of one cell, and j/k move between questions', async () => {
  const p = await page(b);
  await p.goto(server.url + '?view=question&id=adk-python-001&model=GPT-5.2&item=k1');
  await p.waitForSelector('.rationale');
  const text = await p.textContent('.rationale');
  assert.match(text, /judge run 4: score 0/);
  assert.match(await p.textContent('table.matrix'), /GPT-5\.2/);
  await p.keyboard.press('n');
  await p.waitForFunction(() => new URLSearchParams(location.search).get('item') === 'k2');
  assert.match(await p.textContent('.rationale'), /on k2/);
  await p.keyboard.press('j');
  await p.waitForFunction(() => new URLSearchParams(location.search).get('id') === 'crawl4ai-001' || new URLSearchParams(location.search).get('id') === 'pulse-001');
  assert.equal(p.errors.length, 0);
});

test('untrusted text renders inert: script tags and onerror attributes stay text', async () => {
  const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
  const bench = fs.readFileSync(path.join(ROOT, 'testdata/golden/benchmark.jsonl'), 'utf8');
  const judgments = [0, 1].map((run) => JSON.stringify({
    question_id: 'q1', model: evil, judge: evil, judge_run: run,
    items: [{ id: 'k1', rationale: evil, score: 5 }, { id: 'k2', rationale: evil, score: 4 }, { id: 'clarity', rationale: evil, score: 1 }],
  })).join('\n');
  const p = await page(b);
  await p.goto(server.url + '?set=none');
  await p.setInputFiles('input[type=file]', [
    { name: 'bench.jsonl', mimeType: 'application/json', buffer: Buffer.from(bench) },
    { name: 'evil.jsonl', mimeType: 'application/json', buffer: Buffer.from(judgments) },
  ]);
  await p.waitForSelector('#leaderboard tbody tr');
  assert.equal((await tableRows(p, 'leaderboard'))[0].head, evil);
  await p.goto(server.url + '?set=none&view=question&id=q1');
  await p.setInputFiles('input[type=file]', [
    { name: 'bench.jsonl', mimeType: 'application/json', buffer: Buffer.from(bench) },
    { name: 'evil.jsonl', mimeType: 'application/json', buffer: Buffer.from(judgments) },
  ]);
  await p.waitForSelector('table.matrix tbody tr');
  await p.click('table.matrix tbody td a');
  await p.waitForSelector('.rationale');
  assert.ok((await p.textContent('.rationale')).includes(evil));
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  assert.equal(await p.$$eval('img', (imgs) => imgs.length), 0);
});

test('?data=URL fetches a results file at start', async () => {
  const extra = fs.readFileSync(path.join(ROOT, 'testdata/golden/judgments.jsonl'), 'utf8');
  const bench = fs.readFileSync(path.join(ROOT, 'testdata/golden/benchmark.jsonl'), 'utf8');
  const s2 = await serve(undefined, { '/extra/judgments.jsonl': extra, '/extra/benchmark.jsonl': bench });
  try {
    const p = await page(b);
    await p.goto(s2.url + '?set=none&data=extra/benchmark.jsonl&data=extra/judgments.jsonl&view=data');
    await p.waitForSelector('table.issues tbody tr');
    const files = await p.$$eval('table.files tbody th', (ths) => ths.map((t) => t.textContent));
    assert.deepEqual(files, ['extra/benchmark.jsonl', 'extra/judgments.jsonl']);
    // The worker hashes what it was given: the Data view shows each file's SHA-256.
    const sha = crypto.createHash('sha256').update(bench).digest('hex');
    await p.waitForFunction((h) => [...document.querySelectorAll('table.files td.hash')].some((td) => td.textContent === h), sha);
    assert.equal((await p.$$('table.issues tbody tr')).length, 4); // lines 10, 12, 13, 15 (line 11 is valid without the answers file)
    await p.close();
  } finally {
    await s2.close();
  }
});

test('Tables 4, 5 and 7 in the DOM equal the CLI JSON to the last digit', async () => {
  const cli = cliJson(['score', ...setFiles('demo'), '--format', 'json']);
  const p = await page(b);
  const num = (cell) => (cell.value === undefined ? null : Number(cell.value));

  await p.goto(server.url + '?set=demo&view=breakdown&axis=category');
  await p.waitForSelector('#table4-category tbody tr', { timeout: 20000 });
  const strata = await tableRows(p, 'table4-category');
  assert.equal(strata.length, cli.strata.category.length);
  for (const s of cli.strata.category) {
    const row = strata.find((r) => r.head === s.stratum);
    assert.ok(row, s.stratum);
    assert.equal(row.cells[0].text, String(s.questions));
    assert.deepEqual(row.cells.slice(1).map(num), [s.mean, s.std, s.perfect_mean, s.perfect_std], s.stratum);
  }

  await p.click('header nav a:has-text("Reliability")');
  await p.waitForSelector('#table5 tbody tr');
  const rel = await tableRows(p, 'table5');
  assert.equal(rel.length, cli.reliability.length);
  for (const r of cli.reliability) {
    const row = rel.find((x) => x.head === r.model);
    const sc = r.scalar || {};
    assert.equal(row.cells[0].text, String(r.runs));
    assert.deepEqual(row.cells.slice(1).map(num),
      [sc.mean ?? null, sc.std ?? null, sc.range ?? null, r.checklist.mean, r.checklist.std, r.checklist.range], r.model);
  }

  // Per-item agreement comes from the worker on demand.
  await p.waitForSelector('table.agreement tbody tr');
  assert.ok((await p.$$('table.agreement tbody tr')).length > 0);

  await p.click('header nav a:has-text("Failure modes")');
  await p.waitForSelector('#table7 tbody tr');
  const fm = await tableRows(p, 'table7');
  const modes = ['edit_bias', 'shallow_explanation', 'misinterpretation', 'context_miss', 'hallucination'];
  modes.forEach((m, i) => {
    const cells = fm[i].cells.map(num);
    assert.deepEqual(cells, [...cli.failure_modes.map((f) => f.shares[m]), cli.failure_mode_average[m]], m);
  });
  // Questions, hardest first: the mean score column comes from the per-item rows too.
  await p.click('header nav a:has-text("Questions")');
  await p.click('a:has-text("Hardest first")');
  await p.waitForFunction(() => /\d/.test(document.querySelector('table.questions tbody td.num')?.textContent || ''));
  const means = await p.$$eval('table.questions tbody td.num', (tds) => tds.map((t) => Number(t.textContent)));
  assert.ok(means.length > 10 && means.every((m, i) => i === 0 || means[i - 1] <= m), 'sorted ascending by mean score');
  assert.deepEqual(p.errors, []);
});

test('dropping questions recomputes every number as `score --drop-question` does, from the list or the URL', async () => {
  const p = await page(b);
  await p.goto(server.url + '?set=demo&view=questions');
  await p.waitForSelector('table.questions tbody tr');
  const ids = await p.$$eval('table.questions tbody th a', (as) => as.slice(0, 2).map((a) => a.textContent));
  for (const id of ids) {
    await p.click(`input[aria-label="count ${id} in every number"]`);
    await p.waitForFunction((id) => new URL(location.href).searchParams.get('drop')?.split(',').includes(id), id);
  }
  assert.equal(await p.isChecked(`input[aria-label="count ${ids[0]} in every number"]`), false);
  await p.click('header nav a:has-text("Leaderboard")');
  await p.waitForSelector('#leaderboard tbody tr');
  const cli = cliJson(['score', ...setFiles('demo'), '--format', 'json', '--drop-question', ids[0], '--drop-question', ids[1]]);
  assert.deepEqual(cli.policy.dropped_questions, [...ids].sort());
  // Wait for the recomputed table (the notice shows at once, the numbers when the worker answers).
  await p.waitForFunction((v) => document.querySelector('#leaderboard tbody tr td[data-value]') &&
    [...document.querySelectorAll('#leaderboard tbody tr')].some((r) => r.querySelectorAll('td')[1]?.dataset.value === String(v)), cli.models[0].overall);
  assertParity(await tableRows(p, 'leaderboard'), cli);
  assert.match(await p.textContent('.controls .dropped'), /WITHOUT 2 question\(s\)/);
  assert.match(await p.textContent('main'), /WITHOUT 2 question\(s\) dropped by the reader/);
  // The same URL opened afresh gives the same numbers (the first load reads `drop` too).
  const url = p.url();
  const q = await page(b);
  await q.goto(url);
  await q.waitForSelector('#leaderboard tbody tr');
  assertParity(await tableRows(q, 'leaderboard'), cli);
  // And "count every question again" restores the full table.
  await q.click('a:has-text("Count every question again")');
  await q.waitForFunction(() => !new URL(location.href).searchParams.has('drop'));
  await q.waitForFunction(() => !document.querySelector('.controls .dropped'));
  assert.deepEqual([...p.errors, ...q.errors], []);
});

test('re-weighting items live recomputes every number as `score --weight` does, from the controls or the URL', async () => {
  const p = await page(b);
  await p.goto(server.url + '?set=demo&view=questions');
  await p.waitForSelector('table.questions tbody tr');
  const id = await p.$eval('table.questions tbody th a', (a) => a.textContent);
  // One item of one question, in its detail view: its weight to 3.
  await p.goto(server.url + `?set=demo&view=question&id=${encodeURIComponent(id)}`);
  await p.waitForSelector('ol.checklist li');
  // Typed once the question's answers and judgments are read back (the view is built again then).
  await p.waitForFunction(() => !document.querySelector('.question-loading'));
  const item = (await p.$eval('ol.checklist li', (li) => li.id)).replace(/^item-/, '');
  const input = `input[aria-label="Weight of ${item} in every table"]`;
  // The weights live behind one control, out of the reading path.
  await p.click('details.reweight > summary');
  await p.fill(input, '3');
  await p.press(input, 'Tab');
  await p.waitForFunction((r) => new URL(location.href).searchParams.get('w') === r, `${id}/${item}=3`);
  assert.equal(await p.inputValue(input), '3');
  // Then, on the leaderboard, clarity to 0 and knowledge items alike.
  await p.click('header nav a:has-text("Leaderboard")');
  await p.waitForSelector('#leaderboard tbody tr');
  const clarity = 'label:has-text("Clarity weight") input';
  await p.fill(clarity, '0');
  await p.press(clarity, 'Tab');
  await p.check('label:has-text("Knowledge items count alike") input');
  const rules = [`${id}/${item}=3`, '*/@clarity=0', '*/@knowledge=1'];
  await p.waitForFunction((w) => new URL(location.href).searchParams.get('w') === w, rules.join(','));
  const cli = cliJson(['score', ...setFiles('demo'), '--format', 'json', ...rules.flatMap((r) => ['--weight', r])]);
  assert.deepEqual(cli.policy.weights, rules);
  const plain = cliJson(['score', ...setFiles('demo'), '--format', 'json']);
  assert.notEqual(cli.models[0].overall, plain.models.find((m) => m.model === cli.models[0].model).overall);
  await p.waitForFunction((v) => [...document.querySelectorAll('#leaderboard tbody tr')].some((r) => r.querySelectorAll('td')[1]?.dataset.value === String(v)), cli.models[0].overall);
  assertParity(await tableRows(p, 'leaderboard'), cli);
  assert.match(await p.textContent('.controls [role=status]'), /RE-WEIGHTED by you/);
  assert.match(await p.textContent('main'), /RE-WEIGHTED by the reader/);
  // The same URL opened afresh gives the same numbers (the first load reads `w` too).
  const q = await page(b);
  await q.goto(p.url());
  await q.waitForSelector('#leaderboard tbody tr');
  assertParity(await tableRows(q, 'leaderboard'), cli);
  assert.equal(await q.inputValue(clarity), '0');
  // A rule naming no item is said, not ignored.
  const bad = await page(b);
  await bad.goto(server.url + '?set=demo&w=' + encodeURIComponent('*/nope=2'));
  await bad.waitForFunction(() => /no question has such an item/.test(document.querySelector('main')?.textContent || ''));
  // And "use the checklists' own weights" restores the plain table.
  await q.click('a:has-text("Use the checklists\' own weights")');
  await q.waitForFunction(() => !new URL(location.href).searchParams.has('w'));
  await q.waitForFunction((v) => [...document.querySelectorAll('#leaderboard tbody tr')].some((r) => r.querySelectorAll('td')[1]?.dataset.value === String(v)), plain.models[0].overall);
  assertParity(await tableRows(q, 'leaderboard'), plain);
  assert.deepEqual([...p.errors, ...q.errors, ...bad.errors], []);
});

test('on a phone-sized screen no view scrolls sideways: wide tables scroll in their own box', async () => {
  const c = await b.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  try {
    const p = await watch(await c.newPage());
    const errors = p.errors;
    // The layout viewport's width (clientWidth), not innerWidth: on a phone the browser zooms out
    // to show a page wider than the screen, and innerWidth grows with it.
    await p.goto(server.url + '?set=demo&view=questions');
    await p.waitForSelector('table.questions tbody tr');
    const id = await p.$eval('table.questions tbody th a', (a) => a.textContent);
    const model = cliJson(['score', ...setFiles('demo'), '--format', 'json']).models[0].model;
    for (const q of ['view=leaderboard', 'view=breakdown', 'view=reliability', 'view=failures', 'view=questions',
      `view=question&id=${encodeURIComponent(id)}`, `view=model&model=${encodeURIComponent(model)}`, 'view=data']) {
      await p.goto(server.url + '?set=demo&' + q);
      await p.waitForSelector('main h1, main table', { timeout: 20000 });
      await p.waitForFunction(() => !document.querySelector('[aria-busy=true]'));
      // Measured once the data is in (the heading alone comes first; the tables are what is wide).
      await p.waitForFunction(() => !document.querySelector('.busy')?.textContent && document.querySelector('main table, main .empty'), null, { timeout: 20000 });
      const [page, view] = await p.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      assert.ok(page <= view, `${q}: the page is ${page} px wide on a ${view} px screen`);
    }
    // The landing view of the paper set, each case study's question, and its Data view.
    for (const q of ['', 'view=data', 'view=questions', 'view=question&id=adk-python-001', 'view=question&id=adk-python-001&model=GPT-5.2&item=k1']) {
      await p.goto(server.url + '?' + q);
      await p.waitForSelector('main h1', { timeout: 20000 });
      await p.waitForFunction(() => !document.querySelector('.busy')?.textContent);
      const [page, view] = await p.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      assert.ok(page <= view, `?${q}: the page is ${page} px wide on a ${view} px screen`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await c.close();
  }
});

// Built by scripts/test.sh with `trunk build --public-url /sub/ --dist dist-sub`: what a static
// host under a sub-path (GitHub Pages) serves. Every asset, the worker and the data must come
// from under /sub/, and a deep link must load on its own.
const SUB_DIST = path.join(ROOT, 'dist-sub');
test('the site works under a sub-path: deep links, the worker, the bundled data', { skip: !fs.existsSync(SUB_DIST) && 'no dist-sub (scripts/test.sh builds it)' }, async () => {
  const sub = await serve(SUB_DIST, {}, '/sub/');
  try {
    const p = await page(b);
    const outside = [];
    p.on('request', (r) => {
      const u = new URL(r.url()); // blob: URLs (the worker's glue) are not requests to the host
      if (u.protocol.startsWith('http') && !u.pathname.startsWith('/sub/')) outside.push(r.url());
    });
    await p.goto(sub.url + '?set=demo&view=breakdown&axis=language');
    await p.waitForSelector('main table tbody tr', { timeout: 20000 });
    assert.match(await p.textContent('main'), /language/i);
    await p.click('header nav a:has-text("Leaderboard")');
    await p.waitForSelector('#leaderboard tbody tr');
    assertParity(await tableRows(p, 'leaderboard'), cliJson(['score', ...setFiles('demo'), '--format', 'json']));
    assert.ok(new URL(p.url()).pathname.startsWith('/sub/'), p.url());
    // (The icon is inline: not even /favicon.ico is asked for.)
    assert.deepEqual(outside, []);
    assert.deepEqual(p.errors, []);
  } finally {
    await sub.close();
  }
});

// Built by scripts/test.sh with `node scripts/single-file.mjs`: one html file that must work
// opened from disk, with no server at all — every request it makes is to itself, a blob or data.
const SINGLE = path.join(ROOT, 'dist-single/repoprobe-results.html');
test('the single-file build works from file://: the bundled sets, views, re-weighting, with no fetch', { skip: !fs.existsSync(SINGLE) && 'no dist-single (scripts/test.sh builds it)' }, async () => {
  const p = await page(b);
  const fetched = [];
  p.on('request', (r) => { if (!/^(blob|data):/.test(r.url()) && !r.url().startsWith('file://' + SINGLE)) fetched.push(r.url()); });
  const url = 'file://' + SINGLE;
  await p.goto(url);
  await p.waitForSelector('#leaderboard tbody tr', { state: 'attached', timeout: 20000 });
  assertParity(await tableRows(p, 'leaderboard'), cliJson(['score', ...setFiles('paper'), '--format', 'json']));
  // Its own Content-Security-Policy is in force: every inline script by hash, nothing else.
  const policy = await p.$eval('meta[http-equiv="Content-Security-Policy"]', (m) => m.content);
  assert.match(policy, /script-src 'wasm-unsafe-eval'( 'sha256-[A-Za-z0-9+/=]+')+;/);
  assert.match(policy, /worker-src blob:/);
  await p.click('header nav a:has-text("Breakdown")');
  await p.waitForSelector('main table tbody tr');
  const rules = ['*/@clarity=3'];
  await p.goto(url + '?set=demo&w=' + encodeURIComponent(rules.join(',')));
  await p.waitForSelector('#leaderboard tbody tr', { timeout: 20000 });
  assertParity(await tableRows(p, 'leaderboard'), cliJson(['score', ...setFiles('demo'), '--format', 'json', '--weight', rules[0]]));
  assert.deepEqual(fetched, []);
  assert.deepEqual(p.errors, []);
});
