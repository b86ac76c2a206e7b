// No script from data: a repository URL that is not http(s) renders as text, never as a link, and
// no dialog opens, even when the file comes by `?data=` in a link; and the page's
// Content-Security-Policy (index.html, finished by scripts/csp.mjs) is in dist/ and in force,
// with every view working under it and no violation reported. (`page()` in harness.mjs fails a
// test on any CSP violation or dialog.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, page, DIST, ROOT } from './harness.mjs';

const HOSTILE = {
  q1: 'javascript:alert(1)',
  q2: ' JaVaScRiPt:alert(document.domain)',
  q3: 'data:text/html,<script>alert(1)</script>',
  q4: 'vbscript:msgbox(1)',
  q5: 'java\tscript:alert(1)',
};

let server, b;
before(async () => {
  // The golden benchmark's questions with hostile repository URLs (q4 and q5: copies of q1),
  // and one left with its https URL.
  const lines = fs.readFileSync(path.join(ROOT, 'testdata/golden/benchmark.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const out = [];
  for (const [id, url] of Object.entries(HOSTILE)) {
    const q = structuredClone(lines.find((x) => x.id === id) || lines[0]);
    q.id = id;
    q.repo.url = url;
    out.push(q);
  }
  const good = structuredClone(lines[0]);
  good.id = 'q6';
  good.repo.url = 'https://example.invalid/repo';
  out.push(good);
  server = await serve(undefined, { '/evil/benchmark.jsonl': out.map((q) => JSON.stringify(q)).join('\n') });
  b = await browser();
});
after(async () => { await b?.close(); await server?.close(); });

test('a javascript:, data: or vbscript: repository URL renders as text, and no dialog ever opens', async () => {
  const p = await page(b);
  for (const [id, url] of Object.entries(HOSTILE)) {
    // The attack as a link: the file by ?data=, straight to the question's view.
    await p.goto(server.url + `?data=${encodeURIComponent(server.url + 'evil/benchmark.jsonl')}&view=question&id=${id}`);
    await p.waitForSelector('p.meta', { timeout: 20000 });
    assert.equal(await p.$$eval('p.meta a', (as) => as.length), 0, `${id}: no link for ${JSON.stringify(url)}`);
    assert.equal(await p.$$eval('main a[href]', (as) => as.filter((a) => !/^https?:$/.test(a.protocol)).length), 0, `${id}: every link is http(s)`);
    const shown = await p.textContent('p.meta .url-text');
    assert.ok(shown.includes('/tree/'), `${id}: the URL is shown as text: ${shown}`);
    // Even a click on it runs nothing.
    await p.click('p.meta .url-text');
  }
  // An https URL still links to the commit.
  await p.goto(server.url + `?data=evil/benchmark.jsonl&view=question&id=q6`);
  await p.waitForSelector('p.meta a');
  assert.equal(await p.$eval('p.meta a', (a) => a.href), 'https://example.invalid/repo/tree/0000000000000000000000000000000000000000');
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(p.errors, []);
});

test('the Content-Security-Policy is in dist/: inline scripts by hash only, no eval, no javascript: URLs', () => {
  const html = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
  const policy = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)"/)?.[1];
  assert.ok(policy, 'a CSP meta in dist/index.html');
  assert.ok(html.indexOf(policy) < html.indexOf('<script'), 'the policy comes before any script');
  const d = Object.fromEntries(policy.split(';').map((x) => x.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
  assert.deepEqual(d['script-src'].filter((s) => !s.startsWith("'sha256-")), ["'self'", "'wasm-unsafe-eval'"]);
  // One hash per inline script: the worker's start, the prerendered landing view's check of the
  // address (src/lib.rs `takeover`) and trunk's loader.
  assert.equal(d['script-src'].filter((s) => s.startsWith("'sha256-")).length, 3);
  assert.deepEqual(d['default-src'], ["'self'"]);
  assert.deepEqual(d['worker-src'], ["'self'"]);
  assert.deepEqual(d['object-src'], ["'none'"]);
  for (const s of ['https:', 'http:']) assert.ok(d['connect-src'].includes(s), `connect-src allows ${s} (?data=)`);
  assert.ok(!policy.includes("'unsafe-eval'") && !d['script-src'].includes("'unsafe-inline'"));
});

test('every view works under the CSP with no violation, on the paper and the demo sets', async () => {
  const p = await page(b);
  for (const set of ['paper', 'demo']) {
    await p.goto(server.url + `?set=${set}&view=questions`);
    await p.waitForSelector('table.questions tbody tr', { timeout: 20000 });
    const id = await p.$eval('table.questions tbody th a', (a) => a.textContent);
    for (const v of ['leaderboard', 'breakdown', 'reliability', 'failures', 'questions', `question&id=${encodeURIComponent(id)}`, 'models', 'data']) {
      await p.goto(server.url + `?set=${set}&view=${v}`);
      await p.waitForSelector('main h1', { timeout: 20000 });
      await p.waitForFunction(() => !document.querySelector('.busy')?.textContent, null, { timeout: 20000 });
      assert.doesNotMatch(await p.textContent('main'), /Could not|No judgments are loaded/, `${set} ${v}`);
    }
    // The charts draw (canvas) and export; the worker runs (tables above).
    await p.goto(server.url + `?set=${set}&view=breakdown`);
    await p.waitForSelector('canvas', { timeout: 20000 });
  }
  assert.deepEqual(p.errors, []);
});
