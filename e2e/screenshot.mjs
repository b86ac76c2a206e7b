// Takes the README's screenshots of the built site: node e2e/screenshot.mjs [outdir]
// The trajectory's is taken from the pipeline's own files (`cargo test -p repoprobe-cli --test
// cli -- pipeline` leaves them in target/tmp/pipeline), given by `?data=`, when they are there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, ROOT } from './harness.mjs';

const out = process.argv[2] || path.join(ROOT, 'docs');
const pipeline = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'tmp/pipeline');
const extra = {};
let trajectory = null;
if (fs.existsSync(path.join(pipeline, 'results.trajectories.jsonl'))) {
  // The pipeline's repository has no URL: the copy served names one, so paths link at the commit.
  const data = JSON.parse(fs.readFileSync(path.join(pipeline, 'results.json'), 'utf8'));
  for (const q of data.benchmark) q.repo.url = 'https://github.com/acme/widget';
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-shot-'));
  fs.writeFileSync(path.join(tmp, 'results.json'), JSON.stringify(data));
  extra['/t/results.json'] = { file: path.join(tmp, 'results.json') };
  for (const f of ['results.trajectories.jsonl', 'results.trajectories.index.json']) {
    extra[`/t/${f}`] = { file: path.join(pipeline, f) };
  }
  const a = data.answers.find((x) => x.agent?.name === 'builtin' && x.question_id === 'q1');
  trajectory = `view=question&id=q1&model=${encodeURIComponent(a.model)}&step=3`;
}
// Three model judges and people's grades (human:ann) of the same answers: the Judges view's
// agreement and the Grade view.
for (const f of ['benchmark.jsonl', 'judgments.jsonl']) {
  extra[`/j/${f}`] = { file: path.join(ROOT, 'testdata/judges', f) };
}
const server = await serve(undefined, extra);
const judged = `data=${server.url}j/benchmark.jsonl&data=${server.url}j/judgments.jsonl`;
const b = await browser();
const p = await b.newPage({ viewport: { width: 1280, height: 900 } });
const shots = [
  ['leaderboard', '?set=demo', '#leaderboard tbody tr'],
  // One answer read against its checklist: rationales in place, the answer and its evidence beside.
  ['question', '?view=question&id=adk-python-001&model=GPT-5.2', '.checklist .item-rationale'],
  // Every run of the demo set that read none of its evidence, the costliest first.
  ['runs', '?set=demo&view=runs&noevidence=1&sort=cost:desc', '.runs-table tbody tr[data-question]'],
];
// A model judge against people: every figure of the pair, the bias, the largest disagreements.
shots.push(['judges', `?${judged}&view=judges&a=judge-b&b=${encodeURIComponent('human:ann')}`, '#judges-pair-0 tbody tr']);
// Grading by hand, the judge's verdict hidden: the item, its rubric and the answer; the judge's verdict not shown yet.
shots.push(['grade', '?set=demo&view=grade&n=2&seed=1', '.grade-item']);
if (trajectory) {
  // One run's trajectory, step 3 opened: the tool call that read a file, linked at its commit.
  shots.push(['trajectory', `?data=${server.url}t/results.json&data=${server.url}t/results.trajectories.jsonl&${trajectory}`, '#trajectory .step']);
}
for (const [name, query, wait] of shots) {
  await p.goto(server.url + query);
  await p.waitForSelector(wait, { timeout: 20000 });
  // Nothing still to come (the leaderboard's intervals, sent after the tables on large data).
  await p.waitForFunction(() => !document.querySelector('[aria-busy=true]'), null, { timeout: 20000 });
  if (name === 'trajectory') {
    await p.$eval('#trajectory', (d) => d.scrollIntoView());
  }
  await p.screenshot({ path: path.join(out, `screenshot-${name}.png`), fullPage: false });
}
// Two runs of one question side by side, picked in the Runs view as a user does: the first two
// runs of the first question with a run that read some of its evidence and one that read none.
await p.goto(server.url + '?set=demo&view=runs&noevidence=1');
await p.waitForSelector('.runs-table tbody tr[data-question]', { timeout: 20000 });
const question = await p.$eval('.runs-table tbody tr[data-question]', (tr) => tr.dataset.question);
await p.goto(server.url + `?set=demo&view=runs&question=${encodeURIComponent(question)}&sort=evidence_recall:desc`);
await p.waitForSelector('.runs-table tbody tr input.pick', { timeout: 20000 });
const picks = await p.$$('.runs-table tbody tr input.pick');
await picks[0].check();
await picks[picks.length - 1].check();
await p.click('#side-by-side');
await p.waitForSelector('#compare tbody tr', { timeout: 20000 });
await p.waitForFunction(() => !document.querySelector('[aria-busy=true]'), null, { timeout: 20000 });
await p.screenshot({ path: path.join(out, 'screenshot-compare.png'), fullPage: false });
await b.close();
await server.close();
