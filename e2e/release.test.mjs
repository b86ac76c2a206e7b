// A release in headless Chromium (docs/site.md#releases-and-contamination-windows): the
// benchmark, results and release manifest that `repoprobe curate finalize`, `answer` and
// `judge` wrote in the CLI test `curate_pipeline::the_whole_pipeline_makes_candidates_that_answer_judge_and_score_accept`
// (scripts/test.sh runs it before this file). The Data view shows the release's funnel as a
// chart and a table whose counts are the manifest's, and its selection; the `created_after`
// filter of the URL (and its date input) scores only the questions created on or after the
// date, every table saying "scored on N of M questions", its numbers equal to
// `repoprobe score --created-after`'s; axe finds no violation in either view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { serve, browser, watch, cliJson, tableRows, assertParity, ROOT } from './harness.mjs';

const DIR = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'tmp/curate-release');
const FILES = ['benchmark.jsonl', 'answers.jsonl', 'judgments.jsonl'];
const MANIFEST = 'benchmark.manifest.json';

let server, b;
before(async () => {
  assert.ok(fs.existsSync(path.join(DIR, MANIFEST)),
    `${DIR} is missing: run \`cargo test -p repoprobe-cli --test cli -- curate_pipeline\` first`);
  const extra = {};
  for (const f of [...FILES, MANIFEST]) extra[`/release/${f}`] = { file: path.join(DIR, f) };
  server = await serve(undefined, extra);
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

const data = (files) => files.map((f) => `data=${encodeURIComponent(`${server.url}release/${f}`)}`).join('&');
const paths = FILES.map((f) => path.join(DIR, f));

/** A page in a context of its own (axe needs one made by `newContext`), console errors failing. */
async function page() {
  const c = await b.newContext({ viewport: { width: 1280, height: 900 } });
  const p = await watch(await c.newPage());
  // The context goes with its page; a browser already closed (the file's teardown) makes that
  // close reject, which is no failure of the test.
  p.on('close', () => c.close().catch(() => {}));
  return p;
}

async function axe(p) {
  const r = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  assert.deepEqual(r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`), []);
}

test('the Data view shows a release manifest\'s funnel as a chart and a table, and its selection', async () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(DIR, MANIFEST), 'utf8'));
  const p = await page();
  await p.goto(`${server.url}?${data([...FILES, MANIFEST])}&view=data`);
  await p.waitForSelector('section.release', { timeout: 30000 });
  assert.equal(await p.$eval('section.release h3', (h) => h.textContent), `Release ${manifest.version} of ${manifest.date}`);
  // The funnel table: harvested, then every stage the manifest lists, each with its count.
  const rows = await tableRows(p, 'release-0-funnel-table');
  const want = [['harvested', manifest.funnel.threads_harvested], ...manifest.funnel.after.map((s) => [s.stage, s.kept])];
  assert.deepEqual(rows.map((r) => [r.head, Number(r.cells[0].value)]), want);
  assert.ok(want.length >= 5, `the pipeline's stages are all there: ${JSON.stringify(want)}`);
  assert.equal(want.at(-1)[1], manifest.review.kept, 'the last step is what the review kept');
  // The chart is drawn on its canvas (something other than the background was painted).
  await p.waitForFunction(() => {
    const c = document.querySelector('#release-0-funnel canvas');
    if (!c) return false;
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < px.length; i += 4) if (px[i] < 200 && px[i + 2] > 100) return true;
    return false;
  }, null, { timeout: 20000 });
  // The selection and the review's counts, as text.
  const dl = await p.$eval('.release-selection', (d) => d.textContent);
  assert.match(dl, new RegExp(`${manifest.review.candidates} candidates, ${manifest.review.reviewed} reviewed, ${manifest.review.kept} kept`));
  for (const f of manifest.files) {
    assert.ok(await p.$eval('.release-files', (t, h) => t.textContent.includes(h), f.sha256), `${f.role}'s hash shown`);
  }
  // No issue: the manifest is not taken for records.
  assert.match(await p.$eval('#issues', (h) => h.textContent), /Issues \(0\)/);
  await axe(p);
  if (process.env.RELEASE_SHOT) await p.locator('section.release').screenshot({ path: process.env.RELEASE_SHOT });
  assert.deepEqual(p.errors, []);
  await p.close();
});

test('created_after in the URL scores only the questions created on or after it, as the CLI does', async () => {
  const DATE = '2024-05-02';
  const cli = cliJson(['score', ...paths, '--created-after', DATE, '--format', 'json']);
  const all = cliJson(['score', ...paths, '--format', 'json']);
  assert.ok(cli.created_after.questions < cli.created_after.of, JSON.stringify(cli.created_after));
  const p = await page();
  await p.goto(`${server.url}?${data(FILES)}&created_after=${DATE}`);
  await p.waitForSelector('#leaderboard tbody tr', { timeout: 30000 });
  assertParity(await tableRows(p, 'leaderboard'), cli);
  const answers = async () => (await tableRows(p, 'evidence')).map((r) => [r.head, Number(r.cells[0].value)]);
  const evidence = cliJson(['score', ...paths, '--created-after', DATE, '--evidence', '--format', 'json']).evidence;
  const allEvidence = cliJson(['score', ...paths, '--evidence', '--format', 'json']).evidence;
  assert.ok(evidence[0].answers < allEvidence[0].answers, 'the window leaves answers out');
  assert.deepEqual(await answers(), evidence.map((m) => [m.model, m.answers]), 'the evidence is over the window');
  const sentence = `scored on ${cli.created_after.questions} of ${cli.created_after.of} questions created on or after ${DATE}`;
  const notes = await p.$$eval('figure.report-table .note', (n) => n.map((x) => x.textContent));
  assert.ok(notes.length >= 1 && notes.every((n) => n.includes(sentence)), `every table says it: ${JSON.stringify(notes)}`);
  assert.match(await p.$eval('.controls .dropped', (d) => d.textContent), new RegExp(`Scored on ${cli.created_after.questions} of ${cli.created_after.of} questions`));
  assert.equal(await p.$eval('.controls input[type=date]', (i) => i.value), DATE);
  await axe(p);
  // Clearing the date counts every question again, as `score` without the flag.
  await p.fill('.controls input[type=date]', '');
  await p.dispatchEvent('.controls input[type=date]', 'change');
  await p.waitForFunction(() => !location.search.includes('created_after'), null, { timeout: 10000 });
  await p.waitForFunction(() => ![...document.querySelectorAll('figure.report-table .note')].some((n) => n.textContent.includes('scored on')), null, { timeout: 20000 });
  assertParity(await tableRows(p, 'leaderboard'), all);
  assert.deepEqual(await answers(), allEvidence.map((m) => [m.model, m.answers]));
  // A date typed in: the URL says it and the numbers follow.
  await p.fill('.controls input[type=date]', DATE);
  await p.dispatchEvent('.controls input[type=date]', 'change');
  await p.waitForFunction((d) => new URLSearchParams(location.search).get('created_after') === d, DATE, { timeout: 10000 });
  await p.waitForFunction(() => [...document.querySelectorAll('figure.report-table .note')].some((n) => n.textContent.includes('scored on')), null, { timeout: 20000 });
  assertParity(await tableRows(p, 'leaderboard'), cli);
  // A date that is not one is said, not guessed at.
  await p.goto(`${server.url}?${data(FILES)}&created_after=June`);
  await p.waitForFunction(() => document.body.textContent.includes('is not a date'), null, { timeout: 30000 });
  assert.deepEqual(p.errors, []);
  await p.close();
});
