// What the site did not count, said where the user is looking (issue 22): each kind of bad file
// the loader knows, dropped on the leaderboard, is named there with its problem (and a good file
// dropped next still scores); a bundle with bad records shows their count on every view; a
// `?data=` URL that fails is named with its reason and what the numbers are from instead; the
// exports wait for the intervals; and none of it logs a console error (a favicon 404 included).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { AxeBuilder } from '@axe-core/playwright';
import { serve, browser, page, watch, tableRows, ROOT, DIST, CLI } from './harness.mjs';

const SUB_DIST = path.join(ROOT, 'dist-sub');
const SINGLE = path.join(ROOT, 'dist-single/repoprobe-results.html');

const golden = (f) => fs.readFileSync(path.join(ROOT, 'testdata/golden', f), 'utf8');
const BENCH = golden('benchmark.jsonl');
const JUDGMENTS = golden('judgments.jsonl');
// One valid judgment of the golden benchmark (q1, model A, judge J, run 0).
const J = JUDGMENTS.split('\n')[0];
const judgment = (edit) => { const j = JSON.parse(J); edit(j); return JSON.stringify(j); };

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

/** A page that also records every console error and every HTTP answer ≥ 400 (the harness fails
 * on CSP errors only), except those of `expected` URLs: requests the test makes fail on purpose,
 * which the browser itself logs ("Failed to load resource …"). */
async function strictPage(expected = []) {
  const p = await page(b);
  p.logged = [];
  const wanted = (url) => expected.some((e) => url && url.includes(e));
  p.on('console', (m) => {
    if (m.type() === 'error' && !wanted(m.location()?.url)) p.logged.push(`console: ${m.text()} (${m.location()?.url})`);
  });
  p.on('response', (r) => { if (r.status() >= 400 && !wanted(r.url())) p.logged.push(`HTTP ${r.status()} ${r.url()}`); });
  p.on('requestfailed', (r) => { if (!wanted(r.url())) p.logged.push(`failed: ${r.url()} ${r.failure()?.errorText}`); });
  return p;
}

function clean(p) {
  assert.deepEqual(p.errors, [], 'no error in the app');
  assert.deepEqual(p.logged, [], 'no console error, no failed request');
}

/** Drops files (`[name, text or Buffer]`) on the page at once, as a user's drag and drop does. */
async function drop(p, files) {
  const list = files.map(([n, t]) => [n, Buffer.from(t).toString('base64')]);
  const dt = await p.evaluateHandle((list) => {
    const dt = new DataTransfer();
    for (const [n, b64] of list) {
      const bin = atob(b64), bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], n, { type: 'application/json' }));
    }
    return dt;
  }, list);
  await p.dispatchEvent('.app', 'dragover', { dataTransfer: dt });
  await p.dispatchEvent('.app', 'drop', { dataTransfer: dt });
}

const text = (p, sel) => p.$eval(sel, (e) => e.textContent);

// A question whose checklist has five knowledge items (1 to 4 allowed).
const badChecklist = (() => {
  const q = JSON.parse(BENCH.split('\n')[0]);
  q.id = 'q5';
  q.checklist = [0, 1, 2, 3, 4].map((i) => ({ ...q.checklist[0], id: `x${i}` })).concat(q.checklist.at(-1));
  return JSON.stringify(q);
})();

// [file name, bytes, what the leaderboard must say of it]
const BAD = [
  ['garbage.bin', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1]), /garbage\.bin could not be read: not JSON: .*found byte 0xd0 \(line 1, column 1\)/],
  ['empty.jsonl', '', /empty\.jsonl could not be read: the file is empty/],
  ['truncated.json', J.slice(0, 120), /truncated\.json could not be read: invalid JSON: EOF while parsing/],
  ['deep.json', judgment((j) => { j.agent = 0; }).replace('"agent":0', `"agent":${'['.repeat(200)}${']'.repeat(200)}`),
    /deep\.json gave no valid record: 1 record of deep\.json was not counted \(nested too deep\); the first, at \$\.agent\[0\].*: invalid JSON: recursion limit exceeded/],
  ['types.jsonl', judgment((j) => { j.judge_run = 'zero'; }),
    /types\.jsonl gave no valid record: 1 record of types\.jsonl was not counted \(wrong type\); the first, at .*judge_run: invalid type: string "zero", expected u32/],
  ['nan.jsonl', J.replace('"score": 5', '"score": NaN'),
    /nan\.jsonl could not be read: invalid JSON: expected value \(NaN and Infinity are not numbers in JSON\)/],
  ['checklist.jsonl', badChecklist,
    /checklist\.jsonl gave no valid record: 1 record of checklist\.jsonl was not counted \(invalid checklist\); the first, at .*: invalid question "q5": the checklist has 5 knowledge items: it must have 1 to 4/],
  ['unknown.jsonl', judgment((j) => { j.question_id = 'q9'; }),
    /unknown\.jsonl gave no valid record: 1 record of unknown\.jsonl was not counted \(unknown question\); the first, at .*judgment of unknown question "q9"/],
  ['dupkey.jsonl', J.replace('"model": "A"', '"model": "A", "model": "B"'),
    /dupkey\.jsonl gave no valid record: 1 record of dupkey\.jsonl was not counted \(duplicate key\); the first, at .*duplicate field `model`/],
];

test('each kind of bad file dropped on the leaderboard is named there with its problem, and a good file dropped next still scores', async () => {
  for (const [name, bytes, says] of BAD) {
    const p = await strictPage();
    await p.goto(server.url + '?set=none');
    await p.waitForSelector('main .empty');
    // The file alone, with the benchmark its records would need.
    await drop(p, [['benchmark.jsonl', BENCH], [name, bytes]]);
    await p.waitForSelector('main .why-empty li');
    const empty = await text(p, 'main .why-empty');
    assert.match(empty, says, `${name}: the leaderboard's empty state says why`);
    assert.match(empty, /benchmark\.jsonl holds 3 questions and no judgment/);
    assert.doesNotMatch(empty, /No judgments are loaded yet/);
    // Under the "Numbers from …" line too, linking to the Data view's list.
    const note = await text(p, '.load-problems .not-counted');
    assert.ok(note.includes(name), `${name}: ${note}`);
    assert.equal(await p.$eval('.load-problems .not-counted a', (a) => new URLSearchParams(a.search).get('view') + a.hash), 'data#issues');
    // A good file added next still scores, and the bad one is still named.
    await drop(p, [['judgments.jsonl', JUDGMENTS]]);
    await p.waitForSelector('#leaderboard tbody tr');
    const rows = await tableRows(p, 'leaderboard');
    assert.deepEqual(rows.map((r) => `${r.head}/${r.cells[0].text}`).sort(), ['A/J', 'A/K', 'B/J']);
    assert.ok((await text(p, '.load-problems .not-counted')).includes(name));
    clean(p);
    await p.close();
  }
});

test('a file read but holding nothing the leaderboard uses says so', async () => {
  const p = await strictPage();
  await p.goto(server.url + '?set=none');
  await drop(p, [['benchmark.jsonl', BENCH], ['scalar.jsonl', golden('scalar_judgments.jsonl')], ['package.json', '{"name": "x", "version": "1.0.0"}']]);
  await p.waitForSelector('main .why-empty li');
  const empty = await text(p, 'main .why-empty');
  assert.match(empty, /scalar\.jsonl holds 2 scalar judgments and no judgment/);
  assert.match(empty, /package\.json gave no valid record: 1 record of package\.json was not counted \(not a RepoProbe record\); the first, at \$: cannot tell what this record is/);
  // The breakdown, which needs judgments too, says the same.
  await p.click('header nav a:has-text("Breakdown")');
  await p.waitForSelector('main h1:has-text("Breakdown")');
  assert.equal(await text(p, 'main .why-empty'), empty);
  clean(p);
});

test('a bundle with bad records shows their count on the leaderboard, the breakdown and a question view', async () => {
  // The golden judgments' first nine lines are valid (README.md there).
  const lines = JUDGMENTS.split('\n').slice(0, 9).map((l) => JSON.parse(l));
  const bad = [
    { ...lines[0], question_id: 'q9' }, // unknown question
    { ...lines[2], judge_run: 5, items: lines[2].items.map((i) => (i.id === 'k1' ? { ...i, score: 1 } : i)) }, // score not allowed
    { ...lines[4], judge_run: 5, items: lines[4].items.filter((i) => i.id !== 'k2') }, // missing item
    lines[6], // a duplicate of a judgment above
  ];
  const bundle = JSON.stringify({
    format: 'repoprobe-results', version: 1,
    benchmark: BENCH.trim().split('\n').map((l) => JSON.parse(l)),
    judgments: lines.concat(bad),
  });
  const p = await strictPage();
  await p.goto(server.url + '?set=none');
  await drop(p, [['results.json', bundle]]);
  await p.waitForSelector('#leaderboard tbody tr');
  const line = /4 records of results\.json were not counted \((?=.*unknown question)(?=.*score not allowed)(?=.*missing item)(?=.*duplicate record).*\)/;
  assert.match(await text(p, '.load-problems .not-counted'), line);
  await p.click('header nav a:has-text("Breakdown")');
  await p.waitForSelector('main h1:has-text("Breakdown")');
  assert.match(await text(p, '.load-problems .not-counted'), line);
  await p.click('header nav a:has-text("Questions")');
  await p.click('main a[href*="view=question"][href*="id=q1"]');
  await p.waitForSelector('table.matrix tbody tr');
  assert.match(await text(p, '.load-problems .not-counted'), line);
  // "details": the Data view's list of the same four.
  await p.click('.load-problems .not-counted a');
  await p.waitForSelector('table.issues tbody tr');
  assert.equal((await p.$$('table.issues tbody tr')).length, 4);
  clean(p);
});

test('a good set of files says nothing of problems', async () => {
  const p = await strictPage();
  await p.goto(server.url + '?set=none');
  await drop(p, [['benchmark.jsonl', BENCH], ['judgments.jsonl', JUDGMENTS.split('\n').slice(0, 9).join('\n')]]);
  await p.waitForSelector('#leaderboard tbody tr');
  assert.equal(await p.$('.load-problems'), null);
  clean(p);
});

/** A loopback port nothing listens on. */
async function closedPort() {
  const s = net.createServer();
  await new Promise((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address();
  await new Promise((ok) => s.close(ok));
  return port;
}

test('a ?data= URL that fails is named with its reason and what the numbers are from instead', async () => {
  const s2 = await serve(DIST, { '/extra/benchmark.jsonl': BENCH, '/extra/judgments.jsonl': JUDGMENTS });
  const refused = `http://127.0.0.1:${await closedPort()}/judgments.jsonl`;
  try {
    // A 404 beside files that did come: the numbers are theirs.
    let p = await strictPage(['/extra/missing.jsonl']);
    await p.goto(s2.url + '?set=none&data=extra/benchmark.jsonl&data=extra/judgments.jsonl&data=extra/missing.jsonl');
    await p.waitForSelector('#leaderboard tbody tr');
    await p.waitForSelector('.load-problems .fetch-failed');
    assert.equal(await text(p, '.load-problems .fetch-failed'), 'Could not fetch extra/missing.jsonl: the server answered HTTP 404 Not Found.');
    assert.equal(await text(p, '.load-problems .instead'), 'The numbers are from benchmark.jsonl, judgments.jsonl instead.');
    clean(p);
    await p.close();
    // A refused connection, alone: the bundled set counts instead.
    p = await strictPage([refused]);
    await p.goto(s2.url + '?data=' + encodeURIComponent(refused));
    await p.waitForSelector('.load-problems .instead');
    assert.match(await text(p, '.load-problems .fetch-failed'), new RegExp(`^Could not fetch ${refused.replace(/[.]/g, '\\.')}: the browser could not fetch it \\(.+\\): the server could not be reached, refused the connection, or does not let other sites read it \\(CORS\\)\\.$`));
    assert.match(await text(p, '.load-problems .instead'), /^The numbers are from the bundled “\w+” set instead, an example\.$/);
    clean(p);
    await p.close();
    // Nothing else: the leaderboard's empty state names the URL and why, not "nothing loaded".
    p = await strictPage(['/extra/missing.jsonl']);
    await p.goto(s2.url + '?set=none&data=extra/missing.jsonl');
    await p.waitForSelector('main .why-empty li');
    assert.equal(await text(p, 'main .why-empty li'), 'Could not fetch extra/missing.jsonl: the server answered HTTP 404 Not Found.');
    assert.equal(await text(p, '.load-problems .instead'), 'Nothing else is loaded: there are no numbers.');
    // The questions view too.
    await p.click('header nav a:has-text("Questions")');
    await p.waitForSelector('main h1:has-text("Questions")');
    assert.equal(await text(p, 'main .why-empty li'), 'Could not fetch extra/missing.jsonl: the server answered HTTP 404 Not Found.');
    assert.match(await text(p, 'main .why-empty'), /^No questions to show/);
    clean(p);
    await p.close();
  } finally {
    await s2.close();
  }
});

test('untrusted file names and messages render as text only', async () => {
  const evil = '<img src=x onerror="window.__pwned=1">.jsonl';
  const p = await strictPage();
  await p.goto(server.url + '?set=none');
  await drop(p, [['benchmark.jsonl', BENCH], [evil, judgment((j) => { j.question_id = '<img src=x onerror="window.__pwned=2">'; })]]);
  await p.waitForSelector('main .why-empty li');
  assert.ok((await text(p, '.load-problems .not-counted')).includes(evil));
  assert.ok((await text(p, 'main .why-empty')).includes('onerror=\\"window.__pwned=2\\"'));
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  assert.equal(await p.$$eval('img', (imgs) => imgs.length), 0);
  clean(p);
});

test('on large data the exports wait for the intervals, saying why', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-exports-'));
  const file = path.join(dir, 'synth.json');
  // 20 rows × 60 questions × 1,000 resamples under `ci=bootstrap`: the intervals come in a
  // second answer (the CLT's, the default, never wait).
  execFileSync(CLI, ['synth', '--models', '20', '--questions', '60', '--runs', '1', '--seed', '2', '--out', file], { stdio: 'ignore' });
  const s2 = await serve(DIST, { '/synth.json': fs.readFileSync(file) });
  try {
    const p = await strictPage();
    // What the export buttons were while the table was busy, seen as it happened.
    await p.addInitScript(() => {
      window.__rpBusyExports = null;
      new MutationObserver(() => {
        const t = document.querySelector('#leaderboard[aria-busy=true]');
        if (t && !window.__rpBusyExports) {
          window.__rpBusyExports = [...t.querySelectorAll('.exports button')].map((b) => ({ disabled: b.disabled, title: b.title }));
        }
      }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-busy'] });
    });
    await p.goto(s2.url + '?data=synth.json&ci=bootstrap');
    await p.waitForFunction(() => window.__rpBusyExports, null, { timeout: 60000 });
    const busy = await p.evaluate(() => window.__rpBusyExports);
    assert.equal(busy.length, 3);
    for (const b of busy) {
      assert.equal(b.disabled, true);
      assert.match(b.title, /once the 95% intervals have been computed/);
    }
    await tableRows(p, 'leaderboard');
    const after = await p.$$eval('#leaderboard .exports button', (bs) => bs.map((b) => ({ disabled: b.disabled, title: b.title })));
    assert.deepEqual(after, [0, 1, 2].map(() => ({ disabled: false, title: '' })));
    clean(p);
  } finally {
    await s2.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every build has its icon inline: no request for one, no 404, nothing the CSP blocks', async () => {
  const builds = [[DIST, '/'], [SUB_DIST, '/sub/'], [SINGLE, null]].filter(([d]) => fs.existsSync(d));
  assert.ok(builds.length >= 1);
  for (const [dir, prefix] of builds) {
    const s = prefix ? await serve(dir, {}, prefix) : null;
    try {
      const p = await strictPage();
      const icons = [];
      p.on('request', (r) => { if (/favicon|\.ico$|icon/.test(new URL(r.url()).pathname)) icons.push(r.url()); });
      await p.goto(s ? s.url + '?view=data' : 'file://' + dir + '?view=data');
      await p.waitForSelector('table.files tbody tr', { timeout: 20000 });
      const href = await p.$eval('link[rel=icon]', (l) => l.href);
      assert.match(href, /^data:image\/svg\+xml,/, dir);
      // The page has been up a while: a browser asks for the icon soon after the load.
      await p.waitForTimeout(500);
      assert.deepEqual(icons, [], dir);
      clean(p);
      await p.close();
    } finally {
      await s?.close();
    }
  }
});

test('the problem line and the empty state pass axe (WCAG 2.1 AA), light and dark', async () => {
  const s2 = await serve(DIST, { '/extra/benchmark.jsonl': BENCH });
  try {
    for (const scheme of ['light', 'dark']) {
      const c = await b.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
      try {
        const p = await watch(await c.newPage());
        await p.goto(s2.url + '?set=none&data=extra/benchmark.jsonl&data=extra/missing.jsonl');
        await drop(p, [['garbage.bin', Buffer.from([0xd0, 0xcf])], ['results.jsonl', judgment((j) => { j.question_id = 'q9'; })]]);
        await p.waitForSelector('main .why-empty li:has-text("garbage.bin")');
        await p.waitForSelector('.load-problems .not-counted');
        const r = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
        assert.ok(r.passes.length > 10, 'axe ran its rules');
        assert.deepEqual(r.violations.map((v) => `${scheme}: ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`), []);
        assert.deepEqual(p.errors, []);
      } finally {
        await c.close();
      }
    }
  } finally {
    await s2.close();
  }
});
