// The trajectory in the question view, on the pipeline's own files (the bundle and the
// trajectories file `repoprobe bundle` wrote in the CLI test `pipeline`, with its index): given
// by drop or by `?data=` (then read by HTTP Range requests, and downloaded once from a server
// without them), the steps are shown, a file the agent read is linked at the pinned commit,
// search finds a step, `&step=N` opens step N, the checklist's evidence is marked retrieved, axe
// finds nothing; a hostile trajectory stays text; an index of another file is named.
//
// The pipeline's benchmark has no repository URL and no evidence: the copy served here has
// `https://github.com/acme/widget` and evidence `src/lib.rs` on q1's k1 (the file its runs read).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { serve, browser, page, watch, ROOT } from './harness.mjs';

const DIR = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'tmp/pipeline');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-trajectory-'));
const BUNDLE = path.join(TMP, 'results.json');
const LINES = path.join(DIR, 'results.trajectories.jsonl');
const INDEX = path.join(DIR, 'results.trajectories.index.json');
const REPO = 'https://github.com/acme/widget';

let server, plain, b, data;
before(async () => {
  assert.ok(fs.existsSync(LINES), `${LINES} is missing: run \`cargo test -p repoprobe-cli --test cli -- pipeline\` first`);
  data = JSON.parse(fs.readFileSync(path.join(DIR, 'results.json'), 'utf8'));
  for (const q of data.benchmark) {
    q.repo.url = REPO;
    if (q.id === 'q1') q.checklist.find((c) => c.id === 'k1').evidence = ['src/lib.rs'];
  }
  fs.writeFileSync(BUNDLE, JSON.stringify(data));
  const extra = {
    '/t/results.json': { file: BUNDLE },
    '/t/results.trajectories.jsonl': { file: LINES },
    '/t/results.trajectories.index.json': { file: INDEX },
    '/u/results.json': { file: BUNDLE },
    '/u/results.trajectories.jsonl': { file: LINES },
  };
  server = await serve(undefined, extra);
  plain = await serve(undefined, extra, '/', { ranges: false });
  b = await browser();
});
after(async () => {
  await b?.close(); await server?.close(); await plain?.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

const builtin = () => data.answers.find((a) => a.agent?.name === 'builtin' && a.question_id === 'q1');
const question = (model, extra = '') => `view=question&id=q1&model=${encodeURIComponent(model)}${extra}`;

async function pick(p, files) {
  await p.setInputFiles('input[type=file]', files.map((f) => ({
    name: f.name || path.basename(f), mimeType: 'application/json', buffer: f.buffer || fs.readFileSync(f),
  })));
}

async function open(p) {
  await p.waitForSelector('#trajectory summary', { timeout: 20000 });
  if (!(await p.$eval('#trajectory', (d) => d.open))) await p.click('#trajectory summary');
  await p.waitForSelector('#trajectory .step', { timeout: 20000 });
}

test('dropped with its index: steps, the file read linked at its commit, search, &step=N, retrieval marks, axe', async () => {
  const a = builtin();
  const commit = data.benchmark.find((q) => q.id === 'q1').repo.commit;
  // axe runs only in a page of a context of one's own.
  const c = await b.newContext({ viewport: { width: 1280, height: 900 } });
  const p = await watch(await c.newPage());
  await p.goto(`${server.url}?set=none&${question(a.model)}`);
  await pick(p, [BUNDLE, LINES, INDEX]);
  await open(p);
  const steps = await p.$$eval('#trajectory .step', (s) => s.length);
  const line = fs.readFileSync(LINES, 'utf8').split('\n').map((l) => l && JSON.parse(l))
    .find((l) => l && l.question_id === 'q1' && l.model === a.model);
  assert.equal(steps, line.trajectory.steps.length, 'every step of the run (fewer than a page)');
  // The read_file call, with the file it read linked at the pinned commit.
  const href = `${REPO}/blob/${commit}/src/lib.rs`;
  const read = await p.$$eval('#trajectory .call', (cs) => cs.map((c) => ({
    head: c.querySelector('.call-head').textContent,
    links: [...c.querySelectorAll('.call-read a')].map((x) => x.href),
  })));
  assert.ok(read.some((c) => /read_file/.test(c.head) && c.links.includes(href)), JSON.stringify(read));
  // The evidence the run read: marked in the checklist and in the step.
  assert.match(await p.textContent('#item-k1'), /src\/lib\.rs read by the agent/);
  assert.match(await p.textContent('#item-k1 .retrieval'), /^retrieved/);
  assert.equal(await p.$$eval('.retrieval', (r) => r.length), 1, 'only the item with evidence');
  assert.ok(await p.$('#trajectory .call-read .evidence-mark'));
  // The outline of turns, each a link to its step.
  const turns = await p.$$eval('.traj-outline li a', (as) => as.map((x) => x.textContent));
  assert.match(turns[0], /^Turn 1 \(step 3\)/);
  // Its numbers are never cut: the list's marker box holds a turn number of three digits
  // ("100."), which two-digit-wide padding cut to "0." inside the scrolling outline.
  const fits = await p.$eval('.traj-outline ol', (ol) => {
    const li = ol.querySelector('li');
    const font = getComputedStyle(li);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `${font.fontWeight} ${font.fontSize} ${font.fontFamily}`;
    return [parseFloat(getComputedStyle(ol).paddingLeft), ctx.measureText('100. ').width];
  });
  assert.ok(fits[0] >= fits[1], `marker box ${fits[0]}px, "100. " is ${fits[1]}px`);
  // Search: in the worker, answered with the steps, listed and marked.
  await p.fill('input[name=traj-q]', 'MARKER_ALPHA');
  await p.press('input[name=traj-q]', 'Enter');
  await p.waitForFunction(() => /hold/.test(document.querySelector('.traj-count')?.textContent || ''));
  const count = await p.textContent('.traj-count');
  const found = await p.$$eval('.traj-matches a', (as) => as.map((x) => x.textContent));
  assert.ok(found.length >= 1, count);
  assert.match(count, new RegExp(`^${found.length} steps? hold`));
  assert.ok((await p.$$('#trajectory .step.match')).length >= 1);
  // A match's link is `&step=N`: the step gets the focus.
  const n = Number(found[0].split(' ')[1]);
  await p.click('.traj-matches a');
  await p.waitForFunction((n) => document.activeElement?.id === `step-${n}`, n, { timeout: 10000 });
  assert.match(p.url(), new RegExp(`step=${n}`));
  // The filter by kind: only the read steps.
  await p.selectOption('.traj-filter select', 'read');
  await p.waitForFunction(() => /kind=read/.test(location.search));
  await p.waitForFunction(() => [...document.querySelectorAll('#trajectory .step')].every((s) => /read/.test(s.querySelector('.step-head').textContent)));
  // axe on the view with the trajectory open.
  const r = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  assert.ok(r.passes.length > 10, 'axe ran its rules');
  assert.deepEqual(r.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((x) => x.target.join(' ')).join(' | ')}`), []);
  assert.deepEqual(p.errors, []);
  await c.close();
});

test('?data= for both reads a run by an HTTP Range request, and &step=N opens step N', async () => {
  const a = builtin();
  const p = await page(b);
  const before = server.requests.length;
  await p.goto(`${server.url}?data=${server.url}t/results.json&data=${server.url}t/results.trajectories.jsonl&${question(a.model, '&step=4')}`);
  await p.waitForSelector('#step-4', { timeout: 20000 });
  assert.ok(await p.$eval('#trajectory', (d) => d.open), 'the deep link opens the section');
  await p.waitForFunction(() => document.activeElement?.id === 'step-4', null, { timeout: 10000 });
  const mine = server.requests.slice(before).filter((r) => r.path === '/t/results.trajectories.jsonl');
  assert.ok(mine.length >= 2, JSON.stringify(mine));
  assert.ok(mine.every((r) => r.range && r.status === 206), `every request of the file is ranged: ${JSON.stringify(mine)}`);
  assert.ok(server.requests.slice(before).some((r) => r.path === '/t/results.trajectories.index.json' && r.status === 200));
  assert.deepEqual(p.errors, []);
});

test('a server without Range support, and no index: the file is downloaded once and the view says so', async () => {
  const a = builtin();
  const p = await page(b);
  const before = plain.requests.length;
  await p.goto(`${plain.url}?data=${plain.url}u/results.json&data=${plain.url}u/results.trajectories.jsonl&${question(a.model, '&step=3')}`);
  await p.waitForSelector('#step-3', { timeout: 20000 });
  const notes = await p.$$eval('.traj-note', (n) => n.map((x) => x.textContent).join(' | '));
  assert.match(notes, /does not answer HTTP Range requests/);
  const mine = plain.requests.slice(before).filter((r) => r.path === '/u/results.trajectories.jsonl');
  assert.equal(mine.length, 1, `downloaded once: ${JSON.stringify(mine)}`);
  assert.deepEqual(p.errors, []);
});

test('a hostile trajectory (no index: scanned) renders as text with no link; an index of another file is named', async () => {
  const a = builtin();
  const hostile = {
    question_id: 'q1', model: a.model, attempt: a.attempt,
    trajectory: {
      schema_version: 'ATIF-v1.8', agent: { name: 'evil', version: '1' },
      extra: { worktree: '/w' },
      steps: [
        { step_id: 1, source: 'user', message: '<img src=x onerror=alert(1)> <script>alert(2)</script>' },
        {
          step_id: 2, source: 'agent', message: '[x](javascript:alert(3)) <a href="javascript:alert(4)">y</a>',
          reasoning_content: '<b>bold</b>',
          tool_calls: [{ tool_call_id: 'c', function_name: 'read_file', arguments: { path: 'javascript:alert(5)' } },
            { tool_call_id: 'd', function_name: 'read_file', arguments: { path: '/w/src/lib.rs' } }],
          observation: { results: [{ source_call_id: 'c', content: '<iframe src="javascript:alert(6)"></iframe>' },
            { source_call_id: 'd', content: 'javascript:alert(7)/x.rs' }] },
          extra: { error: true },
        },
      ],
    },
  };
  const text = JSON.stringify(hostile) + '\n';
  const p = await page(b);
  await p.goto(`${server.url}?set=none&${question(a.model)}`);
  await pick(p, [BUNDLE, { name: 'evil.trajectories.jsonl', buffer: Buffer.from(text) }]);
  await open(p);
  // Folded texts are made when opened.
  await p.$$eval('#trajectory details.folded', (ds) => ds.forEach((d) => { d.open = true; }));
  await p.waitForFunction(() => document.querySelectorAll('#trajectory details.folded pre').length === document.querySelectorAll('#trajectory details.folded').length);
  const t = await p.textContent('#trajectory');
  assert.match(t, /<img src=x onerror=alert\(1\)>/);
  assert.match(t, /<iframe src="javascript:alert\(6\)"><\/iframe>/);
  assert.match(t, /no index was given: made one by reading the file's 1 lines/);
  assert.match(t, /Error: the run ended here with an error/);
  assert.equal(await p.$$eval('#trajectory img, #trajectory script, #trajectory iframe, #trajectory b', (e) => e.length), 0);
  const hrefs = await p.$$eval('#trajectory a', (as) => as.map((x) => x.getAttribute('href')));
  assert.ok(hrefs.every((h) => h.startsWith('?') || h.startsWith(`${REPO}/blob/`)), JSON.stringify(hrefs));
  // The absolute path under the worktree, shown relative and linked; the hostile one is text.
  assert.ok(hrefs.some((h) => h.endsWith('/src/lib.rs')));
  assert.ok(!hrefs.some((h) => /javascript/i.test(h)));
  assert.deepEqual(p.errors, []);

  // An index that is not of this file: named where the load's problems are.
  const q = await page(b);
  await q.goto(`${server.url}?set=none&${question(a.model)}`);
  const index = JSON.parse(fs.readFileSync(INDEX, 'utf8'));
  index.bytes += 1;
  await pick(q, [BUNDLE, LINES, { name: 'results.trajectories.index.json', buffer: Buffer.from(JSON.stringify(index)) }]);
  await q.waitForFunction(() => /results\.trajectories\.jsonl/.test(document.body.textContent) && /another version/.test(document.body.textContent), null, { timeout: 20000 });
  assert.equal(await q.$('#trajectory'), null, 'its runs are not offered');
  assert.deepEqual(q.errors, []);
});
