// The Judges view (docs/site.md, `?view=judges`) in headless Chromium: testdata/judges loaded by
// `?data=` shows, for every pair of judges, the figures `repoprobe judge-agreement testdata/judges --format
// json` prints (items, exact, κ, α interval, full-credit F1 overall, per kind and per model, and
// the bias, and the 95 % intervals of the overall κ, α, F1 and the bias with their clusters), to
// 1e-9, and its largest disagreements with both rationales, each question linked to its view;
// with the questions in three repositories, the intervals are there and equal the CLI's, and a
// pair of fewer than 30 units says the sample is too small to say; "Judge A" and "Judge B"
// narrow it to one pair, kept in the URL; a hostile judge name and rationale are text; one judge
// alone is told that agreement needs two; axe finds no WCAG 2.1 AA violation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { serve, browser, watch, cliJson, tableRows, ROOT } from './harness.mjs';

const DIR = path.join(ROOT, 'testdata/judges');
const HOSTILE = '<img src=x onerror=alert(7)>';
const SHOWN = 20;

const lines = fs.readFileSync(path.join(DIR, 'judgments.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
// judge-a's run-0 judgments again, by a judge with a hostile name: every item scored the other
// way, every rationale hostile, so every item of theirs is a disagreement with judge-a.
const hostile = lines
  .filter((j) => j.judge === 'judge-a' && j.judge_run === 0)
  .map((j) => ({
    ...j,
    judge: `${HOSTILE}eve`,
    items: j.items.map((i) => ({ ...i, score: i.score > 0 ? 0 : 1, rationale: `${HOSTILE} <script>alert(8)</script> ${i.id}` })),
  }));
const alone = lines.filter((j) => j.judge === 'judge-a');
const jsonl = (records) => ({ type: 'application/x-ndjson', body: records.map((r) => JSON.stringify(r)).join('\n') + '\n' });
// The benchmark with its questions in three repositories (testdata/judges is one: no interval
// by repository), and the judgments of two questions alone (fewer than 30 units a pair).
const repos = fs.readFileSync(path.join(DIR, 'benchmark.jsonl'), 'utf8').split('\n').filter(Boolean)
  .map((l, i) => { const q = JSON.parse(l); return { ...q, repo: { ...q.repo, name: `o/r${i % 3}` } }; });
const few = lines.filter((j) => ['r-000', 'r-001'].includes(j.question_id));
const CIS = ['kappa', 'alpha_interval', 'f1_full_credit', 'bias'];

let server, b;
before(async () => {
  server = await serve(undefined, {
    '/j/benchmark.jsonl': { file: path.join(DIR, 'benchmark.jsonl') },
    '/j/judgments.jsonl': { file: path.join(DIR, 'judgments.jsonl') },
    '/j/hostile.jsonl': jsonl(hostile),
    '/j/alone.jsonl': jsonl(alone),
    '/m/benchmark.jsonl': jsonl(repos),
    '/m/few.jsonl': jsonl(few),
  });
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

const data = (...files) => files.map((f) => `data=${encodeURIComponent(server.url + f)}`).join('&');
const both = () => data('j/benchmark.jsonl', 'j/judgments.jsonl');

/** Waits until the view shows `n` pairs, their tables filled. */
async function pairs(p, n) {
  await p.waitForFunction((n) => document.querySelectorAll('section.judge-pair').length === n
    && document.querySelectorAll('section.judge-pair .report-table tbody tr').length > 0, n, { timeout: 60000 });
}

const close = (shown, want, what) => {
  if (want === null || want === undefined) {
    assert.equal(shown, undefined, `${what}: no value where the CLI has none`);
    return;
  }
  assert.ok(shown !== undefined, `${what}: a value (the CLI's is ${want})`);
  assert.ok(Math.abs(Number(shown) - want) <= 1e-9, `${what}: ${shown} vs the CLI's ${want}`);
};

/** The figures of one scope's row against the CLI's `f`. */
function sameFigures(row, f, what) {
  close(row.cells[0].value, f.items, `${what} items`);
  close(row.cells[1].value, f.exact === null ? null : 100 * f.exact, `${what} exact %`);
  close(row.cells[2].value, f.kappa, `${what} kappa`);
  close(row.cells[3].value, f.alpha_interval, `${what} alpha_interval`);
  close(row.cells[4].value, f.f1_full_credit, `${what} f1_full_credit`);
}

/** An interval shown (`lo,hi`, unrounded) against the CLI's `[lo, hi]` or null. */
const closeCi = (shown, want, what) => {
  if (want === null) {
    assert.equal(shown, undefined, `${what}: no interval where the CLI has none`);
    return;
  }
  assert.ok(shown !== undefined, `${what}: an interval (the CLI's is ${want})`);
  const [lo, hi] = shown.split(',').map(Number);
  close(lo, want[0], `${what} low`);
  close(hi, want[1], `${what} high`);
};

/** Every pair shown equals the CLI's report `cli`, in its order. */
async function parity(p, cli) {
  const sections = await p.$$eval('section.judge-pair', (s) => s.map((x) => ({
    a: x.dataset.a, b: x.dataset.b, bias: x.dataset.biasPp, answers: x.dataset.answers,
    clusters: x.dataset.clusters, tooSmall: x.dataset.tooSmall,
    small: x.querySelector('.judges-too-small')?.textContent,
    ci: { kappa: x.dataset.kappaCi95, alpha_interval: x.dataset.alphaIntervalCi95, f1_full_credit: x.dataset.f1FullCreditCi95, bias: x.dataset.biasCi95 },
  })));
  assert.equal(sections.length, cli.pairs.length, 'one section per pair');
  for (const [n, pair] of cli.pairs.entries()) {
    const what = `${pair.a} vs ${pair.b}`;
    assert.deepEqual([sections[n].a, sections[n].b], [pair.a, pair.b], `pair ${n} is ${what}`);
    close(sections[n].bias, pair.bias_pp, `${what} bias_pp`);
    assert.equal(Number(sections[n].answers), pair.answers, `${what} answers`);
    assert.equal(Number(sections[n].clusters), pair.clusters, `${what} clusters`);
    assert.equal(sections[n].tooSmall, String(pair.too_small), `${what} too_small`);
    for (const f of CIS) closeCi(sections[n].ci[f], pair[`${f}_ci95`], `${what} ${f}_ci95`);
    const rows = await tableRows(p, `judges-pair-${n}`);
    const scopes = [['all', pair], ...Object.entries(pair.by_kind).map(([k, f]) => [`kind ${k}`, f]),
      ...Object.entries(pair.by_model).map(([m, f]) => [`model ${m}`, f])];
    assert.deepEqual(rows.map((r) => r.head), scopes.map(([s]) => s), `${what}: a row per scope`);
    for (const [i, [scope, f]] of scopes.entries()) sameFigures(rows[i], f, `${what} ${scope}`);
    const note = await p.$eval(`#judges-pair-${n} figcaption .note`, (e) => e.textContent);
    assert.match(note, pair.bias_pp === null ? /no answer judged by both/ : /Overall A − B .* pp/, `${what}: the bias sentence`);
    // The overall row shows an interval beside each figure that has one, unless the sample is
    // too small to say; then the section says so, and no cell shows one.
    const overall = rows[0].cells.slice(2, 5).map((c) => c.text);
    const shows = (f) => !pair.too_small && pair[f] !== null && pair[`${f}_ci95`] !== null;
    ['kappa', 'alpha_interval', 'f1_full_credit'].forEach((f, i) => {
      assert.equal(/\(.*–.*\)/.test(overall[i]), shows(f), `${what} ${f}: "${overall[i]}" shows an interval iff the CLI has one to show`);
    });
    if (pair.too_small) {
      assert.match(sections[n].small ?? '', /too small to say/, `${what}: too small to say`);
      assert.match(note, /too small to say/, `${what}: the note says so`);
      assert.doesNotMatch(note, /\[/, `${what}: no bias interval in the note`);
    } else {
      assert.equal(sections[n].small, undefined, `${what}: not too small`);
    }
    // The disagreements, largest gap first, each question a link to its view, both rationales
    // read back from the files.
    const shown = Math.min(SHOWN, pair.disagreements.length);
    const dis = shown === 0 ? [] : await p.$$eval(`#judges-disagreements-${n} tbody tr`, (rs) => rs.map((r) => ({
      id: r.querySelector('th').textContent,
      href: r.querySelector('th a')?.getAttribute('href'),
      cells: [...r.querySelectorAll('td')].map((td) => ({ text: td.textContent, title: td.getAttribute('title') })),
    })));
    assert.equal(dis.length, shown, `${what}: the first ${shown} disagreements`);
    for (const [i, d] of dis.entries()) {
      const want = pair.disagreements[i];
      assert.equal(d.id, want.question_id, `${what} disagreement ${i}: its question`);
      const link = new URL(d.href, server.url);
      assert.equal(link.searchParams.get('view'), 'question');
      assert.equal(link.searchParams.get('id'), want.question_id);
      assert.equal(d.cells[0].text, `${want.model} #${want.attempt}`);
      assert.equal(d.cells[1].text, want.item_id);
      assert.deepEqual([d.cells[2].text, d.cells[3].text], [`${want.score_a}/${want.weight}`, `${want.score_b}/${want.weight}`]);
      assert.deepEqual([d.cells[4].title, d.cells[5].title], [want.rationale_a, want.rationale_b], `${what} disagreement ${i}: the rationales`);
    }
  }
}

test('every pair of judges shows what `repoprobe judge-agreement --format json` prints', async () => {
  const p = await watch(await b.newPage());
  await p.goto(`${server.url}?set=none&${both()}&view=judges`);
  const cli = cliJson(['judge-agreement', 'testdata/judges', '--format', 'json']);
  assert.ok(cli.pairs.length >= 3, 'several pairs to compare');
  await pairs(p, cli.pairs.length);
  await parity(p, cli);
  // A disagreement's question link opens that question's view.
  const href = await p.$eval('#judges-disagreements-0 tbody tr th a', (a) => a.getAttribute('href'));
  await p.click('#judges-disagreements-0 tbody tr th a');
  await p.waitForFunction(() => new URL(location.href).searchParams.get('view') === 'question', null, { timeout: 20000 });
  assert.equal(new URL(p.url()).searchParams.get('id'), new URL(href, server.url).searchParams.get('id'));
  assert.deepEqual(p.errors, []);
  await p.close();
});

test('with the questions in three repositories the intervals equal the CLI\'s; fewer than 30 units are too small to say', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'judges-'));
  try {
    fs.writeFileSync(path.join(tmp, 'benchmark.jsonl'), jsonl(repos).body);
    fs.copyFileSync(path.join(DIR, 'judgments.jsonl'), path.join(tmp, 'judgments.jsonl'));
    const p = await watch(await b.newPage());
    await p.goto(`${server.url}?set=none&${data('m/benchmark.jsonl', 'j/judgments.jsonl')}&view=judges`);
    const cli = cliJson(['judge-agreement', tmp, '--format', 'json']);
    assert.equal(cli.cluster, 'repo');
    assert.ok(cli.pairs.every((x) => x.clusters === 3 && !x.too_small && x.kappa_ci95 !== null && x.bias_ci95 !== null), 'every pair with its intervals');
    await pairs(p, cli.pairs.length);
    await parity(p, cli);
    // The view's cluster switch (`&cluster=`) is the CLI's --cluster.
    await p.goto(`${server.url}?set=none&${data('m/benchmark.jsonl', 'j/judgments.jsonl')}&view=judges&cluster=question`);
    const byQuestion = cliJson(['judge-agreement', tmp, '--format', 'json', '--cluster', 'question']);
    assert.ok(byQuestion.pairs.every((x) => x.clusters > 3), 'more clusters by question than by repository');
    await p.waitForFunction((n) => [...document.querySelectorAll('section.judge-pair')].some((s) => Number(s.dataset.clusters) === n), byQuestion.pairs[0].clusters, { timeout: 60000 });
    await pairs(p, byQuestion.pairs.length);
    await parity(p, byQuestion);
    // Two questions: every pair too small to say, its intervals kept in the JSON.
    fs.writeFileSync(path.join(tmp, 'judgments.jsonl'), jsonl(few).body);
    await p.goto(`${server.url}?set=none&${data('m/benchmark.jsonl', 'm/few.jsonl')}&view=judges`);
    const small = cliJson(['judge-agreement', tmp, '--format', 'json']);
    assert.ok(small.pairs.every((x) => x.too_small && x.items < 30), 'every pair too small');
    assert.ok(small.pairs.some((x) => x.kappa_ci95 !== null), 'intervals in the JSON all the same');
    await pairs(p, small.pairs.length);
    await parity(p, small);
    assert.deepEqual(p.errors, []);
    await p.close();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('"Judge A" and "Judge B" narrow the view to one pair, kept in the URL', async () => {
  const p = await watch(await b.newPage());
  await p.goto(`${server.url}?set=none&${both()}&view=judges`);
  const all = cliJson(['judge-agreement', 'testdata/judges', '--format', 'json']);
  await pairs(p, all.pairs.length);
  const [A, B] = ['judge-c', 'human:ann'];
  await p.selectOption('select[name=a]', A);
  await p.waitForFunction((a) => new URL(location.href).searchParams.get('a') === a, A);
  // A alone: A against every other judge.
  const one = cliJson(['judge-agreement', 'testdata/judges', '--a', A, '--format', 'json']);
  await p.waitForFunction((a) => [...document.querySelectorAll('section.judge-pair')].every((s) => s.dataset.a === a), A, { timeout: 60000 });
  await pairs(p, one.pairs.length);
  await parity(p, one);
  await p.selectOption('select[name=b]', B);
  await p.waitForFunction((b) => new URL(location.href).searchParams.get('b') === b, B);
  await pairs(p, 1);
  const cli = cliJson(['judge-agreement', 'testdata/judges', '--a', A, '--b', B, '--format', 'json']);
  await parity(p, cli);
  const url = new URL(p.url());
  assert.deepEqual([url.searchParams.get('view'), url.searchParams.get('a'), url.searchParams.get('b')], ['judges', A, B]);
  assert.deepEqual(await p.$$eval('select[name=a], select[name=b]', (s) => s.map((x) => x.value)), [A, B]);
  // The URL alone reproduces the view.
  const q = await watch(await b.newPage());
  await q.goto(p.url());
  await pairs(q, 1);
  await parity(q, cli);
  assert.deepEqual([...p.errors, ...q.errors], []);
  await p.close();
  await q.close();
});

test('a hostile judge name and rationale are text', async () => {
  const p = await watch(await b.newPage());
  await p.goto(`${server.url}?set=none&${data('j/benchmark.jsonl', 'j/judgments.jsonl', 'j/hostile.jsonl')}&view=judges`);
  const name = `${HOSTILE}eve`;
  await p.waitForFunction((name) => [...document.querySelectorAll('section.judge-pair')].some((s) => s.dataset.a === name || s.dataset.b === name)
    && document.querySelectorAll('.disagreements tbody td[title]').length > 0, name, { timeout: 60000 });
  // Its pair with judge-a: every rationale of theirs shown is the hostile text, as text.
  const texts = await p.$$eval('section.judge-pair', (s, name) => s
    .filter((x) => x.dataset.a === name || x.dataset.b === name)
    .map((x) => [x.querySelector('h2').textContent, ...[...x.querySelectorAll('.disagreements td[title]')].map((td) => td.textContent)]), name);
  assert.ok(texts.length >= 4, 'the hostile judge paired with every other');
  assert.ok(texts.every((t) => t[0].includes(name)), 'the name shown as text');
  assert.ok(texts.flat().some((t) => t.includes(`${HOSTILE} <script>alert(8)</script>`)), 'the rationale shown as text');
  assert.equal(await p.$$eval('img', (i) => i.length), 0, 'no <img> from any text');
  assert.equal(await p.$$eval('main script, section.judge-pair *:is(img, script, b, i, iframe)', (i) => i.length), 0, 'no markup from any text');
  const hrefs = await p.$$eval('a[href]', (a) => a.map((x) => x.getAttribute('href')));
  assert.deepEqual(hrefs.filter((h) => !/^(https?:|\?|#)/i.test(h)), [], 'every link is http(s) or the app\'s own');
  // Chosen as judge A through the URL, still text.
  await p.goto(`${server.url}?set=none&${data('j/benchmark.jsonl', 'j/judgments.jsonl', 'j/hostile.jsonl')}&view=judges&a=${encodeURIComponent(name)}&b=judge-a`);
  await pairs(p, 1);
  assert.equal(await p.$eval('section.judge-pair', (s) => s.dataset.a), name);
  assert.equal(await p.$$eval('img', (i) => i.length), 0, 'no <img> from any text');
  await p.waitForTimeout(300);
  assert.deepEqual(p.errors, [], 'no script ran, no dialog opened');
  await p.close();
});

test('one judge alone: agreement needs two', async () => {
  const p = await watch(await b.newPage());
  await p.goto(`${server.url}?set=none&${data('j/benchmark.jsonl', 'j/alone.jsonl')}&view=judges`);
  await p.waitForSelector('.judges-none', { timeout: 60000 });
  const text = await p.$eval('.judges-none', (e) => e.textContent);
  assert.match(text, /Agreement needs two judges/);
  assert.match(text, /human:NAME/);
  assert.equal(await p.$$eval('section.judge-pair', (s) => s.length), 0);
  assert.deepEqual(p.errors, []);
  await p.close();
});

for (const scheme of ['light', 'dark']) {
  test(`no WCAG 2.1 AA violation in the Judges view, ${scheme} theme`, async () => {
    const c = await b.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
    try {
      const p = await watch(await c.newPage());
      const found = [];
      const check = async (where) => {
        const r = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
        assert.ok(r.passes.length > 10, 'axe ran its rules');
        for (const v of r.violations) found.push(`${where}: ${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      };
      await p.goto(`${server.url}?set=none&${both()}&view=judges`);
      const cli = cliJson(['judge-agreement', 'testdata/judges', '--format', 'json']);
      await pairs(p, cli.pairs.length);
      await check('every pair');
      await p.goto(`${server.url}?set=none&${data('j/benchmark.jsonl', 'j/alone.jsonl')}&view=judges`);
      await p.waitForSelector('.judges-none', { timeout: 60000 });
      await check('one judge');
      assert.deepEqual(found, []);
      assert.deepEqual(p.errors, []);
    } finally {
      await c.close();
    }
  });
}
