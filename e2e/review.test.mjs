// The Review view (docs/site.md#the-review-view) in headless Chromium: a candidates file
// (testdata/review-site: two plain candidates and a hostile one) reviewed by keyboard alone —
// the four criteria, a note, accept and reject —, reloaded with nothing lost, exported as
// reviews.jsonl (which `repoprobe validate` accepts); two reviewers' files (testdata/reviews)
// dropped together beside their candidates show the agreement `repoprobe curate agreement --format json`
// prints, to the last digit, and the disagreements, one of which an adjudication settles; axe
// finds no WCAG 2.1 AA violation in the view; hostile texts and names are text, and no
// `javascript:` URL becomes a link.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { AxeBuilder } from '@axe-core/playwright';
import { serve, browser, watch, cliJson, tableRows, ROOT, CLI } from './harness.mjs';

const SITE = path.join(ROOT, 'testdata/review-site/candidates.jsonl');
const REVIEWS = path.join(ROOT, 'testdata/reviews');
const HOSTILE_NAME = '<img src=x onerror=alert(7)>Ann';

let server, b;
before(async () => {
  server = await serve(undefined, {
    '/site/candidates.jsonl': { file: SITE },
    '/reviews/candidates.jsonl': { file: path.join(REVIEWS, 'candidates.jsonl') },
    '/reviews/ann.jsonl': { file: path.join(REVIEWS, 'ann.jsonl') },
    '/reviews/bob.jsonl': { file: path.join(REVIEWS, 'bob.jsonl') },
  });
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

const data = (...files) => files.map((f) => `data=${encodeURIComponent(server.url + f)}`).join('&');

/** Waits for candidate `id` to be shown, its decisions' storage key known. */
async function shows(p, id) {
  await p.waitForFunction((id) => document.querySelector('.candidate h2')?.textContent === id, id, { timeout: 20000 });
  await p.waitForFunction(() => document.querySelector('.review-kept')?.textContent.includes('repoprobe-review:v1:'), null, { timeout: 20000 });
}

const state = (p) => p.$$eval('.criteria .criterion-state', (s) => s.map((x) => x.textContent.trim()));
const decided = (p) => p.$eval('.decided', (d) => d.textContent);

/** Nothing hostile became markup or a link. */
async function inert(p) {
  assert.equal(await p.$$eval('img', (i) => i.length), 0, 'no <img> from any text');
  assert.equal(await p.$$eval('main script, .question-text *, .curation-source dd i, .verdicts dd a', (i) => i.length), 0, 'no markup from any text');
  const hrefs = await p.$$eval('a[href]', (a) => a.map((x) => x.getAttribute('href')));
  assert.deepEqual(hrefs.filter((h) => !/^(https?:|\?|#)/i.test(h)), [], 'every link is http(s) or the app\'s own');
}

async function exported(p) {
  await p.focus('button.export-reviews');
  const [dl] = await Promise.all([p.waitForEvent('download'), p.keyboard.press('Enter')]);
  assert.equal(dl.suggestedFilename(), 'reviews.jsonl');
  const file = await dl.path();
  const text = fs.readFileSync(file, 'utf8');
  // The exported file loads back through the core's loader as review records.
  const out = execFileSync(CLI, ['validate', file], { encoding: 'utf8' });
  assert.match(out, /no issues/, out);
  return text.trim().split('\n').map((l) => JSON.parse(l));
}

test('a candidates file reviewed by keyboard alone, reloaded with nothing lost, and exported', async () => {
  const c = await b.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const p = await watch(await c.newPage());
    await p.goto(`${server.url}?${data('site/candidates.jsonl')}&view=review`);
    await shows(p, 's01');
    assert.match(await p.textContent('.progress'), /^0 of 3 reviewed/);
    // The name, asked once (a hostile one: text only, kept as given).
    await p.focus('.reviewer-form input');
    await p.keyboard.type(HOSTILE_NAME);
    await p.keyboard.press('Enter');
    await p.waitForSelector('.reviewer-name');
    assert.equal(await p.textContent('.reviewer-name'), HOSTILE_NAME);
    // Everything about the candidate: checklist with evidence linked at the commit, the
    // source discussion, the verdicts, what enhance merged in and from where.
    const evidence = await p.$$eval('.candidate .item-evidence a', (a) => a.map((x) => x.href));
    assert.ok(evidence.includes('https://github.com/acme/rocket/blob/0123456789abcdef0123456789abcdef01234567/src/engine.rs#L10-L20'), evidence.join(' '));
    assert.ok(await p.$('.curation-source a[href="https://github.com/acme/rocket/discussions/1"]'), 'the discussion linked');
    const text = await p.textContent('.candidate');
    for (const s of ['A real question about the engine.', 'Grounded: k1 at src/engine.rs:10 (1).', 'Summary of page 1: the launch retries.', 'loopback address', 'enhance-model']) {
      assert.ok(text.includes(s), `the candidate shows ${s}`);
    }
    assert.ok(await p.$('.enhance-sources a[href="https://docs.example.org/launch"]'), 'the merged page linked');

    // s01: checklist_quality fails, a note, rejected.
    await p.keyboard.press('2');
    assert.deepEqual(await state(p), ['pass', 'fail', 'pass', 'pass']);
    await p.keyboard.press('n');
    await p.keyboard.type('k2 is vague');
    await p.keyboard.press('Escape');
    await p.keyboard.press('r');
    assert.equal(await decided(p), 'Decision: rejected');
    // s02: code_relevance toggled twice (pass again), task_validity fails, accepted.
    await p.keyboard.press('j');
    await shows(p, 's02');
    await p.keyboard.press('4');
    await p.keyboard.press('4');
    await p.keyboard.press('3');
    assert.deepEqual(await state(p), ['pass', 'pass', 'fail', 'pass']);
    await p.keyboard.press('a');
    assert.equal(await decided(p), 'Decision: accepted');
    // s03, the hostile candidate: its texts are text, its javascript: URLs no links.
    await p.keyboard.press('j');
    await shows(p, 's03');
    assert.ok((await p.textContent('.question-text')).includes('<img src=x onerror=alert(1)><b>bold?</b>'));
    assert.ok((await p.textContent('.candidate')).includes('javascript:alert(3)'), 'the source URL shown as text');
    await inert(p);
    await p.keyboard.press('a');
    // Back to s01 (k twice) and forward: decisions in place.
    await p.keyboard.press('k');
    await p.keyboard.press('k');
    await shows(p, 's01');
    assert.equal(await decided(p), 'Decision: rejected');
    assert.match(await p.textContent('.progress'), /^3 of 3 reviewed/);
    // The help dialog: ? opens it, Escape closes it.
    await p.keyboard.press('?');
    await p.waitForSelector('[role=dialog]');
    assert.ok((await p.textContent('[role=dialog]')).includes('Toggle a criterion'));
    await p.keyboard.press('a');
    assert.equal(await decided(p), 'Decision: rejected', 'keys wait while the dialog is open');
    await p.keyboard.press('Escape');
    await p.waitForSelector('[role=dialog]', { state: 'detached' });
    // Decisions not exported: leaving would warn.
    assert.ok(await p.isVisible('.unexported'));
    const warns = () => p.evaluate(() => { const e = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(e); return e.defaultPrevented; });
    assert.equal(await warns(), true, 'beforeunload warns');

    const records = await exported(p);
    assert.equal(records.length, 3, 'one record per (question, reviewer)');
    const by = Object.fromEntries(records.map((r) => [r.question_id, r]));
    assert.deepEqual(by.s01.criteria, { qa_consistency: true, checklist_quality: false, task_validity: true, code_relevance: true });
    assert.equal(by.s01.decision, 'reject');
    assert.equal(by.s01.note, 'k2 is vague');
    assert.deepEqual(by.s02.criteria, { qa_consistency: true, checklist_quality: true, task_validity: false, code_relevance: true });
    assert.equal(by.s02.decision, 'accept');
    assert.equal(by.s03.decision, 'accept');
    for (const r of records) {
      assert.equal(r.reviewer, HOSTILE_NAME);
      assert.equal(r.role, 'reviewer');
      assert.match(r.reviewed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    assert.equal(await warns(), false, 'exported: nothing to warn of');
    assert.ok(!(await p.isVisible('.unexported')));

    // Reloaded (and a closed tab: a new page of the same browser profile): nothing lost.
    await p.reload();
    await shows(p, 's01');
    assert.match(await p.textContent('.progress'), /^3 of 3 reviewed/);
    assert.equal(await decided(p), 'Decision: rejected');
    assert.deepEqual(await state(p), ['pass', 'fail', 'pass', 'pass']);
    assert.equal(await p.inputValue('.note-label textarea'), 'k2 is vague');
    assert.equal(await p.textContent('.reviewer-name'), HOSTILE_NAME, 'the name not asked again');
    await p.close();
    const q = await watch(await c.newPage());
    await q.goto(`${server.url}?${data('site/candidates.jsonl')}&view=review&id=s02&show=accepted`);
    await shows(q, 's02');
    assert.equal(await decided(q), 'Decision: accepted');
    assert.match(await q.textContent('.progress'), /^3 of 3 reviewed · 2 shown by the filters/);
    await inert(q);
    assert.deepEqual([...p.errors, ...q.errors], []);
  } finally {
    await c.close();
  }
});

test('two reviewers\' exports dropped together: the agreement equals the CLI\'s, and an adjudication settles a disagreement', async () => {
  const c = await b.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const p = await watch(await c.newPage());
    await p.goto(`${server.url}?${data('reviews/candidates.jsonl')}&view=review`);
    await shows(p, 'c01');
    assert.equal(await p.$('#agreement'), null, 'no agreement without reviews');
    await p.focus('.reviewer-form input');
    await p.keyboard.type('adj');
    await p.keyboard.press('Enter');
    await p.waitForSelector('.reviewer-name');
    // A decision of one's own first: the files dropped next keep it (the key is the candidates').
    await p.keyboard.press('a');
    assert.equal(await decided(p), 'Decision: accepted');
    // The two reviewers' exports, dropped together on the page.
    const files = ['ann.jsonl', 'bob.jsonl'].map((f) => [f, fs.readFileSync(path.join(REVIEWS, f), 'utf8')]);
    const dt = await p.evaluateHandle((files) => {
      const dt = new DataTransfer();
      for (const [n, t] of files) dt.items.add(new File([t], n, { type: 'application/x-ndjson' }));
      return dt;
    }, files);
    await p.dispatchEvent('.app', 'dragover', { dataTransfer: dt });
    await p.dispatchEvent('.app', 'drop', { dataTransfer: dt });
    await p.waitForSelector('#agreement tbody tr', { timeout: 20000 });
    assert.match(await p.textContent('.progress'), /^1 of 13 reviewed/, 'the decision kept through the drop');
    const cli = cliJson(['curate', 'agreement', '--format', 'json', path.join(REVIEWS, 'ann.jsonl'), path.join(REVIEWS, 'bob.jsonl')]);
    const rows = await tableRows(p, 'agreement');
    assert.deepEqual(rows.map((r) => r.head), ['qa_consistency', 'checklist_quality', 'task_validity', 'code_relevance', 'decision']);
    for (const row of rows) {
      const want = cli.criteria[row.head];
      ['percent', 'kappa', 'alpha'].forEach((k, i) => {
        const got = row.cells[i].value;
        if (want[k] === null) assert.equal(got, undefined, `${row.head} ${k}`);
        else assert.equal(Number(got), want[k], `${row.head} ${k}: DOM ${got} vs CLI ${want[k]}`);
      });
    }
    assert.ok((await p.textContent('#agreement caption')).includes(`over ${cli.items} question(s)`));
    const listed = await p.$$eval('ul.disagreements a', (a) => a.map((x) => x.textContent));
    assert.deepEqual(listed, cli.disagreements);
    // The first disagreement opens in adjudicator mode, with what each reviewer said.
    const id = cli.disagreements[0];
    await p.focus(`ul.disagreements a >> text="${id}"`);
    await p.keyboard.press('Enter');
    await shows(p, id);
    assert.ok(p.url().includes('adjudicate=1'));
    assert.equal(await p.textContent('.decision h2'), 'Your adjudication');
    const said = await p.$$eval('.reviewers-said tbody th', (t) => t.map((x) => x.textContent));
    assert.deepEqual(said.sort(), ['ann', 'bob']);
    await p.keyboard.press('1');
    await p.keyboard.press('r');
    assert.equal(await decided(p), 'Decision: rejected');
    assert.match(await p.textContent('.progress'), /^1 of \d+ adjudicated/);
    const settled = await p.$$eval('ul.disagreements li', (l) => l.map((x) => x.textContent));
    assert.ok(settled.includes(`${id} — adjudicated: reject`), settled.join(' | '));
    const records = await exported(p);
    const adjudications = records.filter((r) => r.role === 'adjudicator');
    assert.deepEqual(adjudications.map((r) => [r.question_id, r.reviewer, r.decision]), [[id, 'adj', 'reject']]);
    assert.equal(adjudications[0].criteria.qa_consistency, false);
    assert.deepEqual(records.filter((r) => r.role === 'reviewer').map((r) => [r.question_id, r.decision]), [['c01', 'accept']]);
    assert.deepEqual(p.errors, []);
  } finally {
    await c.close();
  }
});

for (const scheme of ['light', 'dark']) {
  test(`no WCAG 2.1 AA violation in the Review view, ${scheme} theme`, async () => {
    const c = await b.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
    try {
      let p = await watch(await c.newPage());
      const found = [];
      const check = async (where) => {
        await p.$$eval('main details', (ds) => ds.forEach((d) => { d.open = true; }));
        const r = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
        assert.ok(r.passes.length > 10, 'axe ran its rules');
        for (const v of r.violations) found.push(`${where}: ${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      };
      await p.goto(`${server.url}?set=none&view=review`);
      await p.waitForSelector('main .empty');
      await check('no candidates');
      await p.goto(`${server.url}?${data('site/candidates.jsonl')}&view=review`);
      await shows(p, 's01');
      await check('the name asked');
      await p.focus('.reviewer-form input');
      await p.keyboard.type('ann');
      await p.keyboard.press('Enter');
      await p.waitForSelector('.reviewer-name');
      await p.keyboard.press('r');
      await check('a candidate decided');
      await p.keyboard.press('?');
      await p.waitForSelector('[role=dialog]');
      await check('the help dialog');
      await p.keyboard.press('Escape');
      // (A decision not exported: leaving this page would ask first; another page goes on.)
      const errors = p.errors;
      p = await watch(await c.newPage());
      await p.goto(`${server.url}?${data('reviews/candidates.jsonl', 'reviews/ann.jsonl', 'reviews/bob.jsonl')}&view=review&adjudicate=1&show=disagreements`);
      await p.waitForSelector('#agreement tbody tr', { timeout: 20000 });
      await p.waitForSelector('.reviewers-said');
      await check('agreement and adjudication');
      assert.deepEqual(found, []);
      assert.deepEqual([...errors, ...p.errors], []);
    } finally {
      await c.close();
    }
  });
}

test('on a phone the Review view does not scroll sideways: the decision sits below the candidate', async () => {
  const c = await b.newContext({ viewport: { width: 390, height: 844 } });
  try {
    const p = await watch(await c.newPage());
    await p.goto(`${server.url}?${data('reviews/candidates.jsonl', 'reviews/ann.jsonl', 'reviews/bob.jsonl')}&view=review&adjudicate=1&show=disagreements`);
    await p.waitForSelector('#agreement tbody tr', { timeout: 20000 });
    await p.waitForSelector('.reviewers-said');
    const wide = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(wide <= 0, `the page is ${wide}px wider than the screen`);
    const [cand, dec] = await Promise.all(['.candidate', '.decision'].map((s) => p.$eval(s, (e) => e.getBoundingClientRect().top)));
    assert.ok(dec > cand, 'the decision below the candidate');
    assert.deepEqual(p.errors, []);
  } finally {
    await c.close();
  }
});
