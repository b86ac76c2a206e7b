// End-to-end tests of streamed loads: a dropped multi-MB file is read by the worker as a stream
// with its texts skipped, its tables equal the CLI's for the same file, and a question view reads
// that question's answers and rationales back from the file by byte range; a file changed on
// disk since it was dropped is an error in that view, not a crash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, cliJson, tableRows, assertParity, CLI } from './harness.mjs';

let server, b, dir, file, data, cli;
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-stream-'));
  file = path.join(dir, 'synth.json');
  // 10 models × 100 questions: large enough that under `ci=bootstrap` the worker sends the
  // intervals after the tables (worker::scoring::defer_intervals, from 10 × 100 × 1,000
  // resamples on; the CLT's, the default, come with the tables).
  execFileSync(CLI, ['synth', '--models', '10', '--questions', '100', '--runs', '5', '--seed', '7', '--out', file], { stdio: 'ignore' });
  data = JSON.parse(fs.readFileSync(file, 'utf8'));
  cli = cliJson(['score', file, '--format', 'json']);
  server = await serve();
  b = await browser();
});
after(async () => {
  await b?.close();
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Goes to `query` inside the app (the router follows history), keeping the files dropped. */
async function navigate(p, query) {
  await p.evaluate((q) => {
    history.pushState(null, '', q);
    dispatchEvent(new PopStateEvent('popstate'));
  }, query);
}

/** A question with an answer of a model judged by the judge in force, late in the file (so that
 * its records are far from its start), with what the view must show of it. */
function sample() {
  const judge = cli.models[0].judge;
  const judged = data.judgments.filter((j) => j.judge === judge && (j.attempt ?? 0) === 0);
  const j = judged[Math.floor(judged.length * 0.8)];
  const a = data.answers.find((a) => a.question_id === j.question_id && a.model === j.model && (a.attempt ?? 0) === 0 && !a.error);
  assert.ok(a, 'the synthetic file has an answer for that judgment');
  const runs = judged.filter((x) => x.question_id === j.question_id && x.model === j.model);
  return { id: j.question_id, model: j.model, answer: a.answer, rationales: runs.map((r) => r.items[0].rationale), item: j.items[0].id };
}

test('a dropped multi-MB file gives the CLI\'s tables, and a question view reads its texts back from the file', async () => {
  assert.ok(fs.statSync(file).size > 2e6, 'a multi-MB file');
  const p = await page(b);
  await p.goto(server.url + '?set=none&ci=bootstrap');
  await p.setInputFiles('input[type=file]', file);
  await p.waitForFunction((n) => document.querySelectorAll('#leaderboard tbody tr').length === n, cli.models.length, { timeout: 60000 });
  // The bootstrap's intervals came in a second answer (the worker's User Timing says so), and
  // the table shows them, equal to the CLI's, once they are there (tableRows waits for them).
  assertParity(await tableRows(p, 'leaderboard'), cliJson(['score', file, '--format', 'json', '--ci', 'bootstrap']));
  const measures = await Promise.all(p.workers().map((w) => w.evaluate(() => performance.getEntriesByType('measure').map((m) => m.name)).catch(() => [])));
  assert.ok(measures.some((m) => m.includes('rp:intervals')), `the intervals were sent apart: ${JSON.stringify(measures)}`);

  const s = sample();
  await navigate(p, `?set=none&view=question&id=${s.id}&model=${s.model}&item=${s.item}`);
  await p.waitForSelector('.rationale .run', { timeout: 20000 });
  const rationale = await p.textContent('.rationale');
  for (const r of s.rationales) assert.ok(rationale.includes(r), `the rationale ${JSON.stringify(r.slice(0, 60))}… is shown`);
  // The answer's Markdown is rendered as nodes; its words are all there.
  const answer = (await p.textContent('.answer-col')).replace(/\s+/g, ' ');
  const first = s.answer.split('\n').find((l) => l.trim()).replace(/[*_`#>-]/g, '').replace(/\s+/g, ' ').trim().slice(0, 80);
  assert.ok(answer.includes(first), `the answer's text ${JSON.stringify(first)} is shown`);
  assert.equal(await p.$$eval('[role=alert]', (e) => e.length), 0);
  assert.deepEqual(p.errors, []);
});

test('a file changed on disk after it was dropped is an error in the question view, not a crash', async () => {
  const copy = path.join(dir, 'changed.json');
  fs.copyFileSync(file, copy);
  const p = await page(b);
  await p.goto(server.url + '?set=none');
  await p.setInputFiles('input[type=file]', copy);
  await p.waitForFunction((n) => document.querySelectorAll('#leaderboard tbody tr').length === n, cli.models.length, { timeout: 60000 });
  fs.writeFileSync(copy, fs.readFileSync(copy, 'utf8').replace(/"rationale": ?"/g, '"rationale":"changed '));
  const s = sample();
  await navigate(p, `?set=none&view=question&id=${s.id}&model=${s.model}&item=${s.item}`);
  await p.waitForSelector('main [role=alert]', { timeout: 20000 });
  assert.match(await p.textContent('main [role=alert]'), /could not be read back/);
  // The rest of the view is there, the tables too.
  assert.match(await p.textContent('main h1'), new RegExp(s.id));
  await navigate(p, '?set=none');
  await p.waitForFunction((n) => document.querySelectorAll('#leaderboard tbody tr').length === n, cli.models.length);
  assert.deepEqual(p.errors, []);
});
