// End-to-end tests of the question explorer and the evidence of the runs: rationales in place
// beside the chosen answer, paths linked to the pinned commit on a known forge (text elsewhere),
// Markdown rendered as nodes (raw HTML as text), each answer's cost, tokens, turns and edits,
// and the leaderboard's evidence columns equal to means computed here from the fixture.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, page, watch, tableRows, ROOT } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const REPO = 'https://github.com/example/python';
// q1 on GitHub at a pinned commit; q2 keeps the golden set's URL (not a known forge).
const bench = fs.readFileSync(path.join(ROOT, 'testdata/golden/benchmark.jsonl'), 'utf8')
  .trim().split('\n').map((l) => JSON.parse(l))
  .filter((q) => q.id === 'q1' || q.id === 'q2')
  .map((q) => (q.id === 'q1' ? { ...q, repo: { ...q.repo, url: REPO, commit: COMMIT } } : q));
const ANSWER = 'The entry point is in `src/main.rs`.\n\n- first\n- second\n\n```rust\nfn main() {}\n```\n\n<b>raw html</b> <img src=x onerror="window.__pwned=1">';
const answers = [
  { question_id: 'q1', model: 'alpha', attempt: 0, answer: ANSWER, duration_s: 12.5,
    usage: { input_tokens: 1200, output_tokens: 300, cost_usd: 0.0123 },
    agent: { name: 'claude-code', version: '2.1.3', turns: 7, worktree_changed: true, changes: ['src/main.rs'] } },
  { question_id: 'q2', model: 'alpha', attempt: 0, answer: 'See src/lib.rs:12.', duration_s: 3,
    usage: { input_tokens: 800, output_tokens: 100, cost_usd: 0.02 },
    agent: { name: 'claude-code', version: '2.1.3', turns: 2, worktree_changed: false } },
  { question_id: 'q1', model: 'beta', attempt: 0, answer: 'Short.', usage: { input_tokens: 10, output_tokens: 5, cost_usd: 0.5 },
    agent: { name: 'codex', turns: 1, worktree_changed: false } },
  { question_id: 'q2', model: 'beta', attempt: 0, answer: 'Short.', usage: { input_tokens: 30, output_tokens: 7, cost_usd: 0.25 },
    agent: { name: 'codex', turns: 3, worktree_changed: false } },
];
const judgment = (question_id, model, judge_run, k1) => ({
  question_id, model, attempt: 0, judge: 'J', judge_run,
  items: [
    { id: 'k1', rationale: `Run ${judge_run}: the answer names src/lib.rs:12 as the entry.`, score: k1 },
    { id: 'k2', rationale: `Run ${judge_run}: misses the second fact.`, score: 0 },
    { id: 'clarity', rationale: `Run ${judge_run}: clear enough.`, score: 1 },
  ],
});
const judgments = [
  judgment('q1', 'alpha', 0, 5), judgment('q1', 'alpha', 1, 3),
  judgment('q2', 'alpha', 0, 5), judgment('q1', 'beta', 0, 0), judgment('q2', 'beta', 0, 3),
];
const jsonl = (rows) => Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
const FILES = [
  { name: 'benchmark.jsonl', mimeType: 'application/json', buffer: jsonl(bench) },
  { name: 'answers.jsonl', mimeType: 'application/json', buffer: jsonl(answers) },
  { name: 'judgments.jsonl', mimeType: 'application/json', buffer: jsonl(judgments) },
];

/** Opens `query` on the fixture's files (picked, so they replace the bundled set). */
export async function open(p, query) {
  await p.goto(server.url + '?set=none&' + query);
  await p.setInputFiles('input[type=file]', FILES);
}

test('a chosen model shows every item\'s rationales in place, beside its answer and its evidence', async () => {
  const p = await page(b);
  await open(p, 'view=question&id=q1&model=alpha');
  await p.waitForFunction(() => document.querySelectorAll('.checklist .item-rationale').length === 6, null, { timeout: 20000 });
  const texts = await p.$$eval('.checklist .item-rationale', (ds) => ds.map((d) => d.textContent));
  for (const run of [0, 1]) {
    for (const t of ['the answer names src/lib.rs:12 as the entry.', 'misses the second fact.', 'clear enough.']) {
      assert.ok(texts.some((x) => x.includes(`Run ${run}: ${t}`)), `run ${run}: ${t}`);
    }
  }
  // Score chips in words, the tier reached, and the two runs' disagreement on k1.
  const k1 = await p.textContent('#item-k1');
  assert.match(k1, /full 5\/5/);
  assert.match(k1, /partial 3\/5/);
  assert.match(k1, /judge runs disagree/);
  assert.match(await p.textContent('#item-k1 .rubric li.reached'), /full|partial/);
  assert.doesNotMatch(await p.textContent('#item-k2'), /disagree/);
  // The path in a rationale links to the file at the pinned commit.
  const href = `${REPO}/blob/${COMMIT}/src/lib.rs#L12`;
  assert.equal(await p.$$eval(`.item-rationale a.path[href="${href}"]`, (as) => as.length), 2);
  // The answer beside it: Markdown as nodes, raw HTML as text, its path linked, its evidence.
  const answer = '.answer-col';
  assert.equal(await p.$$eval(`${answer} .markdown li`, (l) => l.length), 2);
  assert.match(await p.textContent(`${answer} .markdown pre code`), /fn main\(\) \{\}/);
  assert.match(await p.textContent(`${answer} .markdown`), /<b>raw html<\/b>/);
  assert.equal(await p.$$eval(`${answer} .markdown b, ${answer} img, main img`, (x) => x.length), 0);
  assert.equal(await p.$$eval(`${answer} .markdown a.path[href="${REPO}/blob/${COMMIT}/src/main.rs"]`, (x) => x.length), 1);
  const ev = await p.textContent(`${answer} .evidence`);
  assert.match(ev, /Cost\$0\.0123/);
  assert.match(ev, /Tokens1200 in, 300 out/);
  assert.match(ev, /Turns7/);
  assert.match(ev, /Duration12\.5 s/);
  assert.match(ev, /Agentclaude-code 2\.1\.3/);
  assert.match(ev, /Edited the repositoryyes/);
  assert.match(ev, /Changed filessrc\/main\.rs/);
  // Wide screen: the answer sits beside the checklist.
  const [c, a] = await p.$$eval('.checklist-col, .answer-col', (els) => els.map((e) => e.getBoundingClientRect().left));
  assert.ok(a > c + 100, `answer at ${a} px beside the checklist at ${c} px`);
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(p.errors, []);
});

test('a path stays text when the repository is not on a known forge', async () => {
  const p = await page(b);
  await open(p, 'view=question&id=q2&model=alpha');
  await p.waitForFunction(() => document.querySelectorAll('.checklist .item-rationale').length === 3, null, { timeout: 20000 });
  assert.match(await p.textContent('#item-k1 .item-rationale'), /src\/lib\.rs:12/);
  assert.equal(await p.$$eval('main a.path', (as) => as.length), 0);
  assert.deepEqual(p.errors, []);
});

test('the matrix shows a cell\'s rationales on focus, and the weights sit behind one control', async () => {
  const p = await page(b);
  await open(p, 'view=question&id=q1');
  await p.waitForSelector('table.matrix tbody tr');
  assert.equal(await p.$$eval('.checklist .item-rationale', (x) => x.length), 0);
  await p.focus('table.matrix tbody td.cell a');
  assert.ok(await p.isVisible('table.matrix tbody td.cell .tip'));
  assert.match(await p.textContent('table.matrix tbody td.cell .tip'), /src\/lib\.rs:12/);
  assert.equal(await p.isVisible('input[aria-label="Weight of k1 in every table"]'), false);
  await p.click('details.reweight > summary');
  assert.ok(await p.isVisible('input[aria-label="Weight of k1 in every table"]'));
  assert.deepEqual(p.errors, []);
});

test('the leaderboard\'s evidence columns are the means of the answers\' records', async () => {
  const p = await page(b);
  await open(p, 'view=leaderboard');
  await p.waitForSelector('#evidence tbody tr', { timeout: 20000 });
  const rows = await tableRows(p, 'evidence');
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  for (const model of ['alpha', 'beta']) {
    const mine = answers.filter((a) => a.model === model);
    const row = rows.find((r) => r.head === model);
    assert.ok(row, model);
    const [n, cost, input, output, turns, , edited] = row.cells;
    assert.equal(Number(n.value), mine.length);
    assert.ok(Math.abs(Number(cost.value) - mean(mine.map((a) => a.usage.cost_usd))) < 1e-12, `${model} cost ${cost.value}`);
    assert.equal(cost.text, mean(mine.map((a) => a.usage.cost_usd)).toFixed(4));
    assert.equal(Number(input.value), mean(mine.map((a) => a.usage.input_tokens)));
    assert.equal(Number(output.value), mean(mine.map((a) => a.usage.output_tokens)));
    assert.equal(Number(turns.value), mean(mine.map((a) => a.agent.turns)));
    assert.equal(Number(edited.value), 100 * mean(mine.map((a) => (a.agent.worktree_changed ? 1 : 0))));
  }
  assert.deepEqual(p.errors, []);
});

test('on a phone the answer sits below the checklist', async () => {
  const c = await b.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  try {
    const p = await watch(await c.newPage());
    await open(p, 'view=question&id=q1&model=alpha');
    await p.waitForSelector('.answer-col .evidence', { timeout: 20000 });
    const [list, answer] = await p.$$eval('.checklist-col, .answer-col', (els) => els.map((e) => e.getBoundingClientRect().toJSON()));
    assert.ok(answer.top >= list.bottom - 1, `answer at ${answer.top} px, checklist ends at ${list.bottom} px`);
    assert.deepEqual(p.errors, []);
  } finally {
    await c.close();
  }
});

test('? lists the keyboard shortcuts in a dialog, Escape closes it', async () => {
  const p = await page(b);
  await p.goto(server.url + '?view=question&id=adk-python-001');
  await p.waitForSelector('table.matrix tbody tr', { timeout: 20000 });
  await p.keyboard.press('?');
  await p.waitForSelector('[role=dialog]');
  const text = await p.textContent('[role=dialog]');
  for (const k of ['j / →', 'k / ←', 'n / p', 'm / M']) assert.ok(text.includes(k), k);
  assert.equal(await p.evaluate(() => document.activeElement?.textContent), 'Close');
  await p.keyboard.press('Escape');
  await p.waitForSelector('[role=dialog]', { state: 'detached' });
  await p.click('button.help-open');
  await p.waitForSelector('[role=dialog]');
  await p.click('[role=dialog] button:has-text("Close")');
  await p.waitForSelector('[role=dialog]', { state: 'detached' });
  assert.deepEqual(p.errors, []);
});

test('a chart\'s export buttons stand at its right edge, on a wide screen and on a phone', async () => {
  // The caption spanned the page while the canvas kept its own width: at 1280 px the buttons
  // stood ~490 px right of the chart they export.
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const c = await b.newContext({ viewport });
    try {
      const p = await watch(await c.newPage());
      for (const query of ['?set=demo', '?set=demo&view=failures']) {
        await p.goto(server.url + query);
        await p.waitForSelector('figure.chart canvas', { timeout: 20000 });
        const charts = await p.$$eval('figure.chart', (fs) => fs.map((f) => ({
          id: f.id,
          canvas: f.querySelector('canvas').getBoundingClientRect().toJSON(),
          exports: f.querySelector('.exports').getBoundingClientRect().toJSON(),
        })));
        assert.ok(charts.length > 0, `${query}: no chart`);
        for (const { id, canvas, exports } of charts) {
          const where = `${query} at ${viewport.width} px, chart ${id}`;
          assert.ok(Math.abs(exports.right - canvas.right) <= 2, `${where}: exports end at ${exports.right} px, the canvas at ${canvas.right} px`);
          assert.ok(canvas.right <= viewport.width, `${where}: the canvas ends at ${canvas.right} px, past the screen`);
        }
      }
      assert.deepEqual(p.errors, []);
    } finally {
      await c.close();
    }
  }
});
