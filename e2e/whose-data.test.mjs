// Whose data the numbers are (docs/metrics.md#whose-data): files a user adds — by the picker, by drop,
// by ?data= — replace the bundled example set, so the site shows exactly what `repoprobe score`
// prints for those files alone; keeping the bundled set is one click (or `?set=NAME&data=…`) and
// then gives the union. And the landing view of the paper set leads with the paper's reported
// Table 3 and its case studies, not a ranking of three questions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, cliJson, setFiles, tableRows, cell, CLI, ROOT, dropFile } from './harness.mjs';

let server, b, bundle, text;
before(async () => {
  // A bundle of the user's: 24 questions, 3 models (the case: on top of the paper set's
  // three questions, every model of it lost points it never had a chance at).
  bundle = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rp-whose-')), 'mine.json');
  execFileSync(CLI, ['synth', '--models', '3', '--questions', '24', '--runs', '2', '--seed', '7', '--out', bundle], { stdio: 'ignore' });
  text = fs.readFileSync(bundle, 'utf8');
  server = await serve(undefined, { '/mine/results.json': text });
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

const COLUMNS = [['overall', 'Overall'], ['knowledge', 'Knowledge'], ['clarity', 'Clarity'], ['perfect', 'Perfect']];

/** The leaderboard shows `cli`'s numbers, every one of them (waits until it does). */
async function assertShows(p, cli) {
  await p.waitForFunction((want) => {
    const rows = [...document.querySelectorAll('#leaderboard tbody tr')];
    return rows.length === want.length && want.every(([m, v]) =>
      rows.some((r) => r.querySelector('th').textContent === m && r.querySelectorAll('td')[1]?.dataset.value === String(v)));
  }, cli.models.map((m) => [m.model, m.overall]), { timeout: 20000 });
  const rows = await tableRows(p, 'leaderboard');
  assert.equal(rows.length, cli.models.length);
  for (const m of cli.models) {
    const row = rows.find((r) => r.head === m.model && r.cells[0].text === m.judge);
    assert.ok(row, `row for ${m.model}`);
    COLUMNS.forEach(([k, h]) => assert.equal(Number(cell(row, h).value), m[k], `${m.model} ${k}`));
    assert.equal(Number(cell(row, 'Coverage').value), m.coverage * 100, `${m.model} coverage`);
  }
}

const alone = () => cliJson(['score', bundle, '--format', 'json']);
const union = () => cliJson(['score', ...setFiles('paper'), bundle, '--format', 'json']);

test('a bundle added by the picker on the default page replaces the paper set; keeping it is one click, and gives the union', async () => {
  const p = await page(b);
  await p.goto(server.url);
  await p.waitForSelector('#reported-table3 tbody tr', { timeout: 20000 });
  assert.match(await p.textContent('.sources'), /bundled “paper” set/);
  await p.setInputFiles('input[type=file]', bundle);
  const cli = alone();
  await assertShows(p, cli);
  // The paper's questions are gone from every view: the user's 24 only.
  assert.equal(cli.models[0].coverage, 1);
  assert.match(await p.textContent('.sources'), /your 1 file\(s\): mine\.json only \(they replace the bundled “paper” set\)/);
  // The recomputed table is the headline now, the first table of the page.
  assert.equal(await p.$eval('main table', (t) => t.closest('figure')?.id), 'leaderboard');
  // Keep the bundled set: one click, then the union of both, as the CLI prints it for both.
  await p.check('label.keep input');
  await p.waitForFunction(() => new URL(location.href).searchParams.get('keep') === '1');
  await assertShows(p, union());
  assert.match(await p.textContent('.sources'), /and the bundled “paper” set \(6 files\), kept by you/);
  // And off again.
  await p.uncheck('label.keep input');
  await assertShows(p, cli);
  // Adding more of your own files adds to them (the paper set stays out).
  await p.setInputFiles('input[type=file]', { name: 'more.jsonl', mimeType: 'application/json', buffer: fs.readFileSync(path.join(ROOT, 'testdata/golden/benchmark.jsonl')) });
  await assertShows(p, cliJson(['score', bundle, 'testdata/golden/benchmark.jsonl', '--format', 'json']));
  assert.match(await p.textContent('.sources'), /your 2 file\(s\): mine\.json, more\.jsonl only/);
  assert.deepEqual(p.errors, []);
});

test('a bundle dropped on the default page gives exactly the CLI numbers for it alone', async () => {
  const p = await page(b);
  await p.goto(server.url + '?set=paper');
  await p.waitForSelector('#reported-table3 tbody tr', { timeout: 20000 });
  await dropFile(p, '.app', 'mine.json', text);
  await assertShows(p, alone());
  // Its Data view lists the user's file only.
  await p.click('header nav a:has-text("Data")');
  await p.waitForSelector('table.files tbody tr');
  assert.deepEqual(await p.$$eval('table.files tbody th', (ths) => ths.map((t) => t.textContent)), ['mine.json']);
  assert.match(await p.textContent('main'), /Not counted: the bundled “paper” set \(6 files\), which your files replace/);
  assert.deepEqual(p.errors, []);
});

test('?data= alone replaces the bundled set; ?set=paper&data= keeps it; the switch follows the URL', async () => {
  const p = await page(b);
  await p.goto(server.url + '?data=mine/results.json');
  await assertShows(p, alone());
  assert.equal(await p.isChecked('label.keep input'), false);
  // One click keeps the paper set (fetched, not counted, so no reload).
  await p.check('label.keep input');
  await assertShows(p, union());
  // The URL that says both keeps both from the start.
  const q = await page(b);
  await q.goto(server.url + '?set=paper&data=mine/results.json');
  await assertShows(q, union());
  assert.equal(await q.isChecked('label.keep input'), true);
  await q.uncheck('label.keep input');
  await q.waitForFunction(() => new URL(location.href).searchParams.get('keep') === '0');
  await assertShows(q, alone());
  assert.deepEqual([...p.errors, ...q.errors], []);
});

test('the landing view of the paper set leads with Table 3 as printed, then the case studies with their rationales one click away', async () => {
  const p = await page(b);
  await p.goto(server.url);
  await p.waitForSelector('#reported-table3 tbody tr', { timeout: 20000 });
  // The first table on the page is the paper's own Table 3, said to be as printed.
  assert.equal(await p.$eval('main table', (t) => t.closest('figure')?.id), 'reported-table3');
  assert.match(await p.$eval('main h2', (h) => h.textContent), /as printed in the paper/);
  // The case studies: one section per reconstructed question, each with its model's scores.
  const n = fs.readFileSync(path.join(ROOT, 'public-data/sample/benchmark.jsonl'), 'utf8').trim().split('\n').length;
  await p.waitForFunction((n) => document.querySelectorAll('.case-study table tbody tr').length >= n, n);
  assert.equal(await p.$$eval('.case-study', (s) => s.length), n);
  // The recomputed table is there, folded, and says it is no ranking.
  assert.equal(await p.isVisible('#leaderboard'), false);
  assert.match(await p.textContent('details.recomputed summary'), /not a ranking/);
  // A score opens the judge's rationales.
  await p.click('.case-study table tbody td a');
  await p.waitForSelector('.rationale');
  assert.match(await p.textContent('.rationale'), /judge run \d: score \d/);
  // With data enough to rank on (the demo), the recomputed leaderboard is the headline.
  await p.goto(server.url + '?set=demo');
  await p.waitForSelector('#leaderboard tbody tr', { timeout: 20000 });
  assert.equal(await p.$eval('main table', (t) => t.closest('figure')?.id), 'leaderboard');
  assert.equal(await p.$$eval('.case-study', (s) => s.length), 0);
  assert.deepEqual(p.errors, []);
});

test('a model that never saw a question is said so in its row, not silently zeroed; a failed run stays a plain zero', async () => {
  // The user's bundle, with synth-model-01 run on its first 3 questions only (no answer, no
  // judgment for the other 21), and one failed run (an answer with `error`, no judgment) of
  // synth-model-02.
  const full = JSON.parse(text);
  const ids = full.benchmark.map((q) => q.id);
  const seen = new Set(ids.slice(0, 3));
  const partial = structuredClone(full);
  const keep = (r) => r.model !== 'synth-model-01' || seen.has(r.question_id);
  for (const k of ['answers', 'judgments', 'scalar_judgments', 'failure_modes']) partial[k] = (partial[k] || []).filter(keep);
  const failed = partial.answers.find((a) => a.model === 'synth-model-02' && a.question_id === ids[5]);
  failed.error = 'agent timed out';
  failed.answer = null;
  partial.judgments = partial.judgments.filter((j) => !(j.model === 'synth-model-02' && j.question_id === ids[5]));
  const file = path.join(path.dirname(bundle), 'partial.json');
  fs.writeFileSync(file, JSON.stringify(partial));
  const cli = cliJson(['score', file, '--format', 'json']);
  const m1 = cli.models.find((m) => m.model === 'synth-model-01');
  const m2 = cli.models.find((m) => m.model === 'synth-model-02');
  assert.deepEqual([m1.never_answered, m1.benchmark_questions, m2.never_answered], [21, 24, 0]);

  const p = await page(b);
  await p.goto(server.url + '?set=none');
  await p.setInputFiles('input[type=file]', file);
  await assertShows(p, cli);
  const notes = await p.$$eval('#leaderboard tbody tr', (rows) => rows.map((r) => [r.querySelector('th').textContent, r.querySelector('.row-note')?.textContent ?? null]));
  assert.deepEqual(Object.fromEntries(notes), {
    'synth-model-01': 'answered 3 of 24 questions; 21 counted as 0',
    'synth-model-02': null, // its failed run is a plain zero
    'synth-model-03': null,
  });
  // Under `exclude` they are left out, and nothing needs saying.
  await p.selectOption('.controls select >> nth=0', 'exclude');
  await assertShows(p, cliJson(['score', file, '--format', 'json', '--missing', 'exclude']));
  assert.equal(await p.$$eval('#leaderboard .row-note', (n) => n.length), 0);
  assert.deepEqual(p.errors, []);
});
