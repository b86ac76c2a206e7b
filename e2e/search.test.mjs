// The search over every step of every run (`?view=runs&q=…`), in the worker, over a multi-run
// trajectories file read by ranges: a string planted in one step of one run of the demo set's
// runs is found in exactly that run and step, the Runs table keeps that run alone, and the hit
// opens the step; a regular expression finds what a plain search does; a blank or bad one says
// why.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, page, ROOT } from './harness.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-search-'));
const DEMO = path.join(ROOT, 'public-data/demo');
const PLANT = 'PLANTED_needle_7f3a';
let server, b, target;

before(async () => {
  const lines = fs.readFileSync(path.join(DEMO, 'synthetic-demo.trajectories.jsonl'), 'utf8').split('\n').filter(Boolean);
  // One run in the middle of the file, one step in the middle of the run.
  const at = Math.floor(lines.length * 0.6);
  const run = JSON.parse(lines[at]);
  const step = Math.floor(run.trajectory.steps.length / 2);
  run.trajectory.steps[step].message = `${run.trajectory.steps[step].message || ''} ${PLANT} here`.trim();
  lines[at] = JSON.stringify(run);
  target = { question: run.question_id, model: run.model, attempt: run.attempt, step: step + 1 };
  let offset = 0;
  const entries = lines.map((l) => {
    const r = JSON.parse(l);
    const e = { question_id: r.question_id, model: r.model, attempt: r.attempt, offset, length: Buffer.byteLength(l) };
    offset += Buffer.byteLength(l) + 1;
    return e;
  });
  fs.writeFileSync(path.join(TMP, 'runs.trajectories.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(path.join(TMP, 'runs.trajectories.index.json'), JSON.stringify({
    format: 'repoprobe-trajectories-index', version: 1, bytes: offset, entries,
  }));
  server = await serve(undefined, {
    '/s/results.json': { file: path.join(DEMO, 'synthetic-demo.json') },
    '/s/runs.trajectories.jsonl': { file: path.join(TMP, 'runs.trajectories.jsonl') },
    '/s/runs.trajectories.index.json': { file: path.join(TMP, 'runs.trajectories.index.json') },
  });
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); fs.rmSync(TMP, { recursive: true, force: true }); });

const data = () => `?data=${encodeURIComponent(server.url + 's/results.json')}&data=${encodeURIComponent(server.url + 's/runs.trajectories.jsonl')}`;

async function searched(p, q) {
  await p.goto(server.url + data() + '&view=runs' + q);
  await p.waitForSelector('#search-state[data-done=true]', { timeout: 30000 });
  return p.$eval('#search-state', (e) => ({ ...e.dataset, text: e.textContent }));
}

test('a string planted in one step of one run is found there, and nowhere else', async () => {
  const p = await page(b);
  const before = server.requests.length;
  const s = await searched(p, `&q=${PLANT.toLowerCase()}`);
  assert.equal(s['runsHit'], '1', s.text);
  const hits = await p.$$eval('#search-hits li', (li) => li.map((l) => ({ href: l.querySelector('a').getAttribute('href'), text: l.textContent })));
  assert.equal(hits.length, 1);
  assert.match(hits[0].text, new RegExp(`step ${target.step}:`));
  assert.match(hits[0].text, new RegExp(PLANT));
  assert.match(hits[0].href, new RegExp(`step=${target.step}(&|$)`));
  // Read by ranges, in reads of whole lines, never one request for the whole file.
  const reads = server.requests.slice(before).filter((r) => r.path.endsWith('runs.trajectories.jsonl'));
  assert.ok(reads.length > 0 && reads.every((r) => r.status === 206 && r.range), JSON.stringify(reads.slice(0, 3)));
  // The table keeps that run alone.
  await p.waitForFunction(() => document.querySelector('#runs-count')?.dataset.kept === '1', null, { timeout: 20000 });
  const row = await p.$eval('.runs-table tr[data-question]', (r) => ({ ...r.dataset }));
  assert.deepEqual([row.question, row.model, Number(row.attempt)], [target.question, target.model, target.attempt]);
  // The hit opens its step.
  await p.click('#search-hits a');
  await p.waitForSelector(`#trajectory [id$="step-${target.step}"], #trajectory .step`, { timeout: 20000 });
  await p.waitForFunction((t) => document.querySelector('#trajectory')?.textContent.includes(t), PLANT, { timeout: 20000 });
  assert.ok(p.url().includes(`step=${target.step}`));
  assert.deepEqual(p.errors, []);
});

test('a regular expression finds it too; a bad one says why', async () => {
  const p = await page(b);
  const s = await searched(p, `&re=1&q=${encodeURIComponent('PLANTED_needle_[0-9a-f]{4}')}`);
  assert.equal(s['runsHit'], '1', s.text);
  const bad = await searched(p, `&re=1&q=${encodeURIComponent('(unclosed')}`);
  assert.equal(bad['runsHit'], '0');
  assert.match(await p.$eval('.search-state', (e) => e.textContent), /not a regular expression/);
  // Something every run holds: every run is kept.
  const all = await searched(p, '&q=SYNTHETIC');
  await p.waitForFunction((n) => document.querySelector('#runs-count')?.dataset.kept === n, all['runsHit'], { timeout: 20000 });
  assert.equal(Number(all['runsHit']), Number(await p.$eval('#runs-count', (e) => e.dataset.total)));
  assert.deepEqual(p.errors, []);
});
