// The Runs view (`?view=runs`) on the bundled demo set, whose trajectories file is read by
// ranges: a filter keeps as many runs as `repoprobe list-runs --count` does for the same filter, the
// rows are the CLI's in the CLI's order, the table holds a window of rows and scrolls to the
// last, and a row opens its run's trajectory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, cliJson, setFiles, tableRows, ROOT, CLI } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const FILES = setFiles('demo');
const count = (flags) => Number(execFileSync(CLI, ['list-runs', ...FILES, ...flags, '--count'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());

async function kept(p, query) {
  await p.goto(server.url + '?set=demo&view=runs' + query);
  await p.waitForSelector('#runs-count', { timeout: 30000 });
  return p.$eval('#runs-count', (e) => ({ kept: Number(e.dataset.kept), total: Number(e.dataset.total) }));
}

const keys = (p) => p.$$eval('.runs-table tbody tr[data-question]', (rows) => rows.map((r) => ({
  key: `${r.dataset.question}|${r.dataset.model}|${r.dataset.attempt}`,
  score: r.querySelectorAll('td')[4]?.dataset.value,
})));

test('a filter keeps the runs the CLI keeps, in the CLI\'s order', async () => {
  const p = await page(b);
  const all = await kept(p, '');
  assert.equal(all.total, count([]), 'every run');
  for (const [query, flags] of [
    ['&noevidence=1', ['--read-no-evidence']],
    ['&noevidence=1&verdict=failure', ['--read-no-evidence', '--verdict', 'failure']],
    ['&edit=1', ['--attempted-edit']],
    ['&model=synth-model-03&min=20&max=70', ['--model', 'synth-model-03', '--min-score', '20', '--max-score', '70']],
  ]) {
    const want = count(flags);
    assert.ok(want > 0 && want < all.total, `${flags.join(' ')} keeps some runs (${want})`);
    const got = await kept(p, query);
    assert.equal(got.kept, want, `${query}: the site keeps ${got.kept}, the CLI ${want}`);
    assert.equal((await keys(p)).length, want, 'fewer than a window: every kept row is in the DOM');
  }
  // Sorted by cost, most expensive first: the CLI's rows in the CLI's order, scores to the digit.
  const cli = cliJson(['list-runs', ...FILES, '--read-no-evidence', '--sort', 'cost:desc', '--format', 'json']);
  await kept(p, '&noevidence=1&sort=cost:desc');
  const rows = await keys(p);
  assert.deepEqual(rows.map((r) => r.key), cli.rows.map((r) => `${r.question_id}|${r.model}|${r.attempt}`));
  rows.forEach((r, i) => assert.equal(r.score === undefined ? null : Number(r.score), cli.rows[i].score));
  assert.equal(await p.$eval('th[aria-sort]', (th) => th.getAttribute('aria-sort')), 'descending');
  assert.deepEqual(p.errors, []);
});

test('the table holds a window of rows and scrolls to the last', async () => {
  const p = await page(b);
  const all = await kept(p, '&sort=question');
  const first = await keys(p);
  assert.ok(first.length < all.kept, `a window (${first.length} rows) of ${all.kept}`);
  const cli = cliJson(['list-runs', ...FILES, '--sort', 'question', '--format', 'json']).rows;
  const last = cli[cli.length - 1];
  await p.$eval('.runs-scroll', (s) => { s.scrollTop = s.scrollHeight; });
  await p.waitForFunction((k) => !!document.querySelector(`.runs-table tr[data-question="${k}"]`), last.question_id, { timeout: 20000 });
  const now = await keys(p);
  assert.equal(now[now.length - 1].key, `${last.question_id}|${last.model}|${last.attempt}`);
  assert.ok(now.length <= 300, 'still a window');
  assert.deepEqual(p.errors, []);
});

test('a row opens its run\'s trajectory, read by ranges from the bundled file', async () => {
  const p = await page(b);
  const before = server.requests.length;
  await kept(p, '&edit=1');
  const href = await p.$eval('.runs-table a.open-run', (a) => a.getAttribute('href'));
  const row = await p.$eval('.runs-table tr[data-question]', (r) => ({ ...r.dataset }));
  await p.click('.runs-table a.open-run');
  await p.waitForSelector('#trajectory summary', { timeout: 20000 });
  if (!(await p.$eval('#trajectory', (d) => d.open))) await p.click('#trajectory summary');
  await p.waitForSelector('#trajectory .step', { timeout: 20000 });
  assert.match(href, /view=question/);
  assert.ok(p.url().includes(encodeURIComponent(row.question)) || p.url().includes(row.question));
  // The run attempted an edit: its trajectory shows the refused write.
  const text = await p.$eval('#trajectory', (t) => t.textContent);
  assert.match(text, /write_file/);
  assert.match(text, /SYNTHETIC/);
  // Its line came by a Range request; the file was never downloaded whole.
  const asked = server.requests.slice(before).filter((r) => r.path.endsWith('synthetic-demo.trajectories.jsonl'));
  assert.ok(asked.length > 0 && asked.every((r) => r.status === 206), JSON.stringify(asked));
  assert.deepEqual(p.errors, []);
});

test('two runs picked in the Runs view are side by side, their evidence reads marked as the CLI counts them', async () => {
  const cli = cliJson(['list-runs', ...FILES, '--format', 'json']).rows.filter((r) => r.evidence_read);
  // A question with one run that read some of its evidence and another that read other of it.
  const byQ = new Map();
  for (const r of cli) byQ.set(r.question_id, [...(byQ.get(r.question_id) || []), r]);
  const [a, b2] = [...byQ.values()].map((rs) => {
    const a = rs.find((r) => r.evidence_read.length > 0);
    const b = a && rs.find((r) => r !== a && JSON.stringify(r.evidence_read) !== JSON.stringify(a.evidence_read));
    return [a, b];
  }).find(([x, y]) => x && y);
  const p = await page(b);
  await kept(p, `&question=${encodeURIComponent(a.question_id)}`);
  const tick = async (r) => p.check(`.runs-table tr[data-model="${r.model}"][data-attempt="${r.attempt}"] input.pick`);
  await tick(a);
  await tick(b2);
  await p.click('#side-by-side');
  await p.waitForSelector('#compare tbody tr', { timeout: 20000 });
  const heads = await p.$$eval('#compare thead th.side', (ths) => ths.map((t) => t.dataset.model));
  assert.deepEqual(heads, [a.model, b2.model]);
  // Column 2 is a's, column 3 b's: the first reads of evidence are the CLI's evidence read.
  for (const [col, run] of [[2, a], [3, b2]]) {
    const first = await p.$$eval(`#compare tbody td:nth-child(${col}) .read.evidence.first`, (s) => s.map((x) => x.textContent));
    assert.deepEqual([...first].sort(), [...run.evidence_read].sort(), `${run.model}: first evidence reads`);
  }
  // A marked read is a word in its line, as the legend's samples are: not a panel of its own
  // (the answer's `.evidence` panel shares the class name; a screenshot showed each one a
  // full-width bar).
  const blocks = await p.$$eval('#compare .read, .compare-legend .read, main .read', (s) =>
    s.filter((x) => getComputedStyle(x).display !== 'inline').map((x) => `${x.className}: ${getComputedStyle(x).display}`));
  assert.deepEqual(blocks, []);
  // The turn numbers' column is narrow; the two runs share the rest.
  const [turnW, tableW] = await p.$eval('#compare', (t) => [t.querySelector('thead th').getBoundingClientRect().width, t.getBoundingClientRect().width]);
  assert.ok(turnW < tableW * 0.15, `turn column ${turnW} of ${tableW} px`);
  // Each side's checklist with the judge's scores.
  assert.equal(await p.$$eval('.side-items', (s) => s.length), 2);
  await p.waitForFunction(() => document.querySelectorAll('.side-items .rationale').length > 0, null, { timeout: 20000 });
  assert.deepEqual(p.errors, []);
});

test('the landing page reaches the demo set\'s runs and a run\'s trajectory in a click', async () => {
  const p = await page(b);
  await p.goto(server.url);
  await p.waitForSelector('#explore a', { timeout: 20000 });
  const links = await p.$$eval('#explore a', (as) => as.map((a) => a.getAttribute('href')));
  assert.equal(links.length, 2);
  await p.click('#explore a >> nth=0');
  await p.waitForSelector('#runs-count', { timeout: 30000 });
  assert.equal(await p.$eval('#runs-count', (e) => e.dataset.total), String(count([])));
  await p.goto(server.url);
  await p.waitForSelector('#explore a', { timeout: 20000 });
  await p.click('#explore a >> nth=1');
  await p.waitForSelector('#trajectory .step', { timeout: 30000 });
  assert.match(await p.$eval('#trajectory', (t) => t.textContent), /SYNTHETIC/);
  assert.deepEqual(p.errors, []);
});

test('the share of runs that attempted an edit is the CLI\'s, model by model', async () => {
  const cli = cliJson(['score', ...FILES, '--evidence', '--format', 'json']).evidence;
  assert.ok(cli.some((m) => m.attempted_edit_pct > 0), 'some model attempted an edit');
  const p = await page(b);
  await p.goto(server.url + '?set=demo');
  await p.waitForSelector('#evidence tbody tr', { state: 'attached', timeout: 20000 });
  const rows = await tableRows(p, 'evidence');
  for (const m of cli) {
    const row = rows.find((r) => r.head === m.model);
    assert.ok(row, m.model);
    // The last column: "Attempted an edit (%)".
    const cell = row.cells[row.cells.length - 1];
    assert.equal(Number(cell.value), m.attempted_edit_pct, `${m.model}: DOM ${cell.value} vs CLI ${m.attempted_edit_pct}`);
  }
  assert.deepEqual(p.errors, []);
});
