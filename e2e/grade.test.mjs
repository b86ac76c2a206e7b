// The Grade view (docs/site.md#the-grade-view) in headless Chromium: testdata/judges loaded by
// `?data=`, judge-a's sample (n=2, seed=3) graded by keyboard alone — a score's key, r, the
// rationale typed, Enter, j — blind: judge-a's rationale of an item is nowhere in the page's
// HTML before the grade is recorded, and shown after; the grades survive a new tab; the export
// is judgments of human:NAME that `repoprobe validate` accepts, and loaded beside judge-a's
// judgments the Judges view's pair equals `repoprobe judge-agreement --a judge-a --b human:NAME` to 1e-9;
// a grader's judgments in the files are taken into the store by a button; unknown keys are said;
// hostile answers and rationales are text; axe finds no WCAG 2.1 AA violation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { AxeBuilder } from '@axe-core/playwright';
import { serve, browser, watch, cliJson, tableRows, ROOT, CLI } from './harness.mjs';

const DIR = path.join(ROOT, 'testdata/judges');
const HOSTILE = '<img src=x onerror=alert(7)>';
const NAME = 'zoe';

const lines = fs.readFileSync(path.join(DIR, 'judgments.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const judgeA = lines.filter((j) => j.judge === 'judge-a');
const hostile = judgeA.map((j) => (j.judge_run !== 0 ? j : {
  ...j, items: j.items.map((i) => ({ ...i, rationale: `${HOSTILE} hostile ${j.question_id} ${j.model} ${i.id}` })),
}));
const answers = judgeA.filter((j) => j.judge_run === 0).map((j) => ({
  question_id: j.question_id, model: j.model, attempt: j.attempt,
  answer: `${HOSTILE}<script>alert(8)</script> answer of ${j.model}`, agent: { name: 'test' }, usage: null, duration_s: 1, error: null,
}));
const jsonl = (records) => ({ type: 'application/x-ndjson', body: records.map((r) => JSON.stringify(r)).join('\n') + '\n' });

/** judge-a's run-0 rationale and score of an item. */
function verdictOf(q, model, attempt, item) {
  const j = lines.find((x) => x.judge === 'judge-a' && x.judge_run === 0 && x.question_id === q && x.model === model && x.attempt === attempt);
  return j.items.find((i) => i.id === item);
}

let server, b;
const extra = {
  '/j/benchmark.jsonl': { file: path.join(DIR, 'benchmark.jsonl') },
  '/j/judgments.jsonl': { file: path.join(DIR, 'judgments.jsonl') },
  '/j/judge-a.jsonl': jsonl(judgeA),
  '/h/judgments.jsonl': jsonl(hostile),
  '/h/answers.jsonl': jsonl(answers),
};
before(async () => {
  server = await serve(undefined, extra);
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

const data = (...files) => files.map((f) => `data=${encodeURIComponent(server.url + f)}`).join('&');
const GRADE = () => `${server.url}?set=none&${data('j/benchmark.jsonl', 'j/judgments.jsonl')}&view=grade&judge=judge-a&n=2&seed=3`;

/** The unit shown, once its question's texts came and the grades' key is known. */
async function unit(p) {
  await p.waitForFunction(() => document.querySelector('.grade-answer')?.textContent.trim().length > 0
    && document.querySelector('.grade-kept')?.textContent.includes('repoprobe-grade:v1:'), null, { timeout: 30000 });
  const head = await p.textContent('#grade-q');
  const m = /^(.*) · (.*) #(\d+)$/.exec(head);
  const item = /^Item (\S+) /.exec(await p.textContent('#grade-item-h'))[1];
  return { q: m[1], model: m[2], attempt: Number(m[3]), item, head: `${head}/${item}` };
}

async function nameWithKeyboard(p, name) {
  await p.waitForSelector('.grader-form input');
  await p.focus('.grader-form input');
  await p.keyboard.type(name);
  await p.keyboard.press('Enter');
  await p.waitForSelector('.grader-name');
}

const html = (p) => p.evaluate(() => document.documentElement.outerHTML);

/** Grades the unit shown by keyboard alone with the `k`-th allowed score; returns what was given. */
async function gradeOne(p, k, why) {
  const u = await unit(p);
  const keys = await p.$$eval('.grade-scores li', (li) => li.map((l) => ({ key: l.querySelector('kbd').textContent, score: Number(l.querySelector('input').value) })));
  const pick = keys[k % keys.length];
  const want = verdictOf(u.q, u.model, u.attempt, u.item);
  assert.ok(want, `judge-a judged ${u.head}`);
  await p.keyboard.press(pick.key);
  await p.keyboard.press('r');
  await p.keyboard.type(why);
  await p.keyboard.press('Escape');
  assert.equal(await p.$eval('input[name=grade-score]:checked', (i) => Number(i.value)), pick.score, 'the key picked its score');
  assert.ok(!(await html(p)).includes(want.rationale), `${u.head}: judge-a's rationale hidden before the grade`);
  assert.equal(await p.$('.grade-verdict'), null, 'no verdict before the grade');
  await p.keyboard.press('Enter');
  await p.waitForSelector('.grade-verdict .verdict-rationale');
  assert.equal(await p.textContent('.grade-verdict .verdict-rationale'), want.rationale);
  assert.ok((await html(p)).includes(want.rationale), `${u.head}: shown once graded`);
  const said = pick.score === want.score ? 'agree' : `differs by ${Math.abs(pick.score - want.score)}`;
  assert.equal(await p.textContent('.verdict-compared'), said);
  return { ...u, score: pick.score, why };
}

test('graded blind by keyboard alone, kept, exported, validated, and compared in the Judges view', async () => {
  const c = await b.newContext({ viewport: { width: 1280, height: 900 } });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'grade-'));
  try {
    let p = await watch(await c.newPage());
    await p.goto(GRADE());
    await unit(p);
    assert.equal(await p.$eval('select[name=judge]', (s) => s.value), 'judge-a');
    assert.equal(await p.inputValue('input[name=n]'), '2');
    assert.equal(await p.inputValue('input[name=seed]'), '3');
    await nameWithKeyboard(p, NAME);
    assert.equal(await p.textContent('.grader-name'), `human:${NAME}`);
    assert.match(await p.textContent('.progress'), /^item 1 of \d+ of answer 1 of \d+; 0 of \d+ items graded/);
    const given = [];
    for (let i = 0; i < 5; i++) {
      const before = (await unit(p)).head;
      given.push(await gradeOne(p, i, `my reason ${i}`));
      await p.keyboard.press('j');
      await p.waitForFunction((h) => {
        const q = document.querySelector('#grade-q')?.textContent;
        const it = document.querySelector('#grade-item-h')?.textContent.split(' ')[1];
        return q && `${q}/${it}` !== h;
      }, before, { timeout: 20000 });
    }
    assert.match(await p.textContent('.progress'), /; 5 of \d+ items graded/);
    // k goes back: the last item's grade and verdict are there.
    await p.keyboard.press('k');
    await p.waitForSelector('.grade-verdict .verdict-rationale');
    assert.equal(await p.inputValue('.grade-item textarea'), 'my reason 4');
    // A new tab of the same browser: the grades and the name are kept.
    await p.close();
    p = await watch(await c.newPage());
    await p.goto(GRADE());
    await unit(p);
    assert.equal(await p.textContent('.grader-name'), `human:${NAME}`, 'the name not asked again');
    assert.match(await p.textContent('.progress'), /; 5 of \d+ items graded/);
    // It opens at the first item not graded; the first answer (every item graded) is complete.
    const first = given.filter((g) => g.q === given[0].q && g.model === given[0].model);
    assert.ok(first.length >= 2, 'the first answer graded through');
    // The link to compare, and the export.
    const link = new URL(await p.$eval('.grade-next a', (a) => a.getAttribute('href')), server.url);
    assert.deepEqual([link.searchParams.get('view'), link.searchParams.get('a'), link.searchParams.get('b')], ['judges', 'judge-a', `human:${NAME}`]);
    await p.focus('button.export-grades');
    const [dl] = await Promise.all([p.waitForEvent('download'), p.keyboard.press('Enter')]);
    assert.equal(dl.suggestedFilename(), `grades-human-${NAME}.jsonl`);
    const text = fs.readFileSync(await dl.path(), 'utf8');
    const records = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(records.length >= 1, 'a complete answer exported');
    for (const r of records) assert.deepEqual([r.judge, r.judge_run], [`human:${NAME}`, 0]);
    const mine = records.find((r) => r.question_id === given[0].q && r.model === given[0].model && r.attempt === given[0].attempt);
    assert.ok(mine, 'the first answer exported');
    for (const g of first) {
      const i = mine.items.find((x) => x.id === g.item);
      assert.deepEqual([i.score, i.rationale], [g.score, g.why], `${g.head} exported as given`);
    }
    assert.match(await p.textContent('.grade-progress .status'), /Exported \d+ answer\(s\).*\d+ answer\(s\) not completely graded left out/);
    const exported = path.join(tmp, `grades-human-${NAME}.jsonl`);
    fs.writeFileSync(exported, text);
    const out = execFileSync(CLI, ['validate', path.join(DIR, 'benchmark.jsonl'), exported], { encoding: 'utf8' });
    assert.match(out, /no issues/, out);
    // Loaded beside judge-a's judgments, the Judges view's pair is the CLI's.
    fs.copyFileSync(path.join(DIR, 'benchmark.jsonl'), path.join(tmp, 'benchmark.jsonl'));
    fs.writeFileSync(path.join(tmp, 'judge-a.jsonl'), jsonl(judgeA).body);
    const cli = cliJson(['judge-agreement', tmp, '--a', 'judge-a', '--b', `human:${NAME}`, '--format', 'json']);
    extra['/x/grades.jsonl'] = { type: 'application/x-ndjson', body: text };
    const q = await watch(await c.newPage());
    await q.goto(`${server.url}?set=none&${data('j/benchmark.jsonl', 'j/judge-a.jsonl', 'x/grades.jsonl')}&view=judges&a=judge-a&b=${encodeURIComponent(`human:${NAME}`)}`);
    await q.waitForFunction(() => document.querySelectorAll('section.judge-pair .report-table tbody tr').length > 0, null, { timeout: 60000 });
    assert.equal(cli.pairs.length, 1);
    const pair = cli.pairs[0];
    const section = await q.$eval('section.judge-pair', (x) => ({ a: x.dataset.a, b: x.dataset.b, bias: x.dataset.biasPp, answers: x.dataset.answers }));
    assert.deepEqual([section.a, section.b], [pair.a, pair.b]);
    assert.equal(Number(section.answers), pair.answers);
    close(section.bias, pair.bias_pp, 'bias_pp');
    const rows = await tableRows(q, 'judges-pair-0');
    const scopes = [['all', pair], ...Object.entries(pair.by_kind).map(([k, f]) => [`kind ${k}`, f]),
      ...Object.entries(pair.by_model).map(([m, f]) => [`model ${m}`, f])];
    assert.deepEqual(rows.map((r) => r.head), scopes.map(([s]) => s));
    for (const [i, [scope, f]] of scopes.entries()) {
      close(rows[i].cells[0].value, f.items, `${scope} items`);
      close(rows[i].cells[1].value, f.exact === null ? null : 100 * f.exact, `${scope} exact %`);
      close(rows[i].cells[2].value, f.kappa, `${scope} kappa`);
      close(rows[i].cells[3].value, f.alpha_interval, `${scope} alpha_interval`);
      close(rows[i].cells[4].value, f.f1_full_credit, `${scope} f1_full_credit`);
    }
    assert.deepEqual([...p.errors, ...q.errors], []);
  } finally {
    await c.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

function close(shown, want, what) {
  if (want === null || want === undefined) {
    assert.equal(shown, undefined, `${what}: no value where the CLI has none`);
    return;
  }
  assert.ok(shown !== undefined, `${what}: a value (the CLI's is ${want})`);
  assert.ok(Math.abs(Number(shown) - want) <= 1e-9, `${what}: ${shown} vs the CLI's ${want}`);
}

test('a grader\'s judgments in the files are taken as grades; unknown keys are said', async () => {
  const c = await b.newContext();
  try {
    const p = await watch(await c.newPage());
    await p.goto(`${GRADE()}&keys=${encodeURIComponent('r-000|m2|0,zz|m1|0,bad')}`);
    await unit(p);
    assert.match(await p.textContent('.grade-unknown'), /zz\|m1\|0/);
    assert.match(await p.textContent('.grade-unread'), /bad/);
    assert.match(await p.textContent('.progress'), /of answer 1 of 1;/);
    await nameWithKeyboard(p, 'ann');
    await p.click('button.import-grades');
    await p.waitForFunction(() => /Took [1-9]\d* item grade/.test(document.querySelector('.grade-progress .status')?.textContent || ''), null, { timeout: 20000 });
    // human:ann graded r-000 m2 #0 through: every item taken, its verdict shown, her rationale in the field.
    assert.match(await p.textContent('.progress'), /; 4 of 4 items graded/);
    await p.waitForSelector('.grade-verdict .verdict-rationale');
    const ann = lines.find((j) => j.judge === 'human:ann' && j.question_id === 'r-000' && j.model === 'm2' && j.attempt === 0);
    assert.equal(await p.inputValue('.grade-item textarea'), ann.items[0].rationale);
    assert.deepEqual(p.errors, []);
  } finally {
    await c.close();
  }
});

test('hostile answers and rationales are text', async () => {
  const c = await b.newContext();
  try {
    const p = await watch(await c.newPage());
    await p.goto(`${server.url}?set=none&${data('j/benchmark.jsonl', 'h/judgments.jsonl', 'h/answers.jsonl')}&view=grade&judge=judge-a&n=1&seed=0`);
    await unit(p);
    assert.ok((await p.textContent('.grade-answer')).includes(HOSTILE), 'the answer as text');
    await nameWithKeyboard(p, `${HOSTILE}eve`);
    assert.equal(await p.textContent('.grader-name'), `human:${HOSTILE}eve`);
    assert.ok(!(await p.textContent('main')).includes('hostile'), 'blind');
    const key = await p.$eval('.grade-scores kbd', (k) => k.textContent);
    await p.keyboard.press(key);
    await p.keyboard.press('Enter');
    await p.waitForSelector('.grade-verdict .verdict-rationale');
    assert.ok((await p.textContent('.verdict-rationale')).startsWith(`${HOSTILE} hostile`));
    assert.equal(await p.$$eval('img', (i) => i.length), 0, 'no <img> from any text');
    assert.equal(await p.$$eval('main script', (i) => i.length), 0);
    assert.deepEqual(p.errors, []);
  } finally {
    await c.close();
  }
});

for (const scheme of ['light', 'dark']) {
  test(`no WCAG 2.1 AA violation in the Grade view, ${scheme} theme`, async () => {
    const c = await b.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
    try {
      const p = await watch(await c.newPage());
      const found = [];
      const check = async (where) => {
        const r = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
        assert.ok(r.passes.length > 10, 'axe ran its rules');
        for (const v of r.violations) found.push(`${where}: ${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      };
      await p.goto(GRADE());
      await unit(p);
      await check('the name asked');
      await nameWithKeyboard(p, 'ann');
      const key = await p.$eval('.grade-scores kbd', (k) => k.textContent);
      await p.keyboard.press(key);
      await p.keyboard.press('Enter');
      await p.waitForSelector('.grade-verdict');
      await check('an item graded');
      await p.keyboard.press('?');
      await p.waitForSelector('[role=dialog]');
      assert.ok((await p.textContent('[role=dialog]')).includes('Record your grade'));
      await check('the help dialog');
      assert.deepEqual(found, []);
      assert.deepEqual(p.errors, []);
    } finally {
      await c.close();
    }
  });
}
