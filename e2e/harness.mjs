// Shared set-up of the end-to-end tests: a static server for dist/ on 127.0.0.1, Debian's
// headless Chromium driven by playwright-core, and the real `repoprobe` binary.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = process.env.SITE_DIST || path.join(ROOT, 'dist');
export const CLI = process.env.REPOPROBE_BIN || path.join(ROOT, 'target/release/repoprobe');

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.jsonl': 'application/x-ndjson',
  '.png': 'image/png', '.svg': 'image/svg+xml',
};

/** Serves `dir` (and `extra` files by URL path: JSON text or bytes, `{ type, body }`, or `{ file }`:
 * a file on disk) on an ephemeral loopback port, under `prefix` (a static host's sub-path: anything
 * outside it is 404). Files from disk answer HTTP Range requests (`bytes=A-B`, 206 with
 * Content-Range) unless `ranges: false` (a server without Range support: 200 and the whole file);
 * `requests` logs each request's path, Range header and status. */
export async function serve(dir = DIST, extra = {}, prefix = '/', { ranges = true } = {}) {
  const requests = [];
  const send = (req, res, file, type) => {
    const size = fs.statSync(file).size;
    const m = ranges && /^bytes=(\d+)-(\d*)$/.exec(req.headers.range || '');
    if (m) {
      const start = Number(m[1]);
      const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
      if (start >= size || end < start) {
        res.writeHead(416, { 'content-range': `bytes */${size}` });
        res.end();
        return 416;
      }
      res.writeHead(206, {
        'content-type': type, 'content-range': `bytes ${start}-${end}/${size}`,
        'content-length': end - start + 1, 'accept-ranges': 'bytes',
      });
      fs.createReadStream(file, { start, end }).pipe(res);
      return 206;
    }
    res.writeHead(200, { 'content-type': type, 'content-length': size, ...(ranges ? { 'accept-ranges': 'bytes' } : {}) });
    fs.createReadStream(file).pipe(res);
    return 200;
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const log = { path: url.pathname, range: req.headers.range || null, status: 0 };
    requests.push(log);
    if (!url.pathname.startsWith(prefix)) { res.writeHead(404); res.end('outside the sub-path'); log.status = 404; return; }
    url.pathname = '/' + url.pathname.slice(prefix.length);
    if (extra[url.pathname]) {
      const e = extra[url.pathname];
      if (e.file) { log.status = send(req, res, e.file, e.type || TYPES[path.extname(e.file)] || 'application/octet-stream'); return; }
      const json = typeof e === 'string' || Buffer.isBuffer(e);
      res.writeHead(200, { 'content-type': json ? 'application/json' : e.type });
      res.end(json ? e : e.body);
      log.status = 200;
      return;
    }
    let file = path.join(dir, decodeURIComponent(url.pathname));
    if (!file.startsWith(dir)) { res.writeHead(403); res.end(); log.status = 403; return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!fs.existsSync(file)) { res.writeHead(404); res.end('not found'); log.status = 404; return; }
    log.status = send(req, res, file, TYPES[path.extname(file)] || 'application/octet-stream');
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  // `close` ends the connections a page still holds too: `server.close` alone waits for them,
  // and a page left open with a request under way held one test file's teardown for minutes.
  const close = () => new Promise((ok) => { server.close(ok); server.closeAllConnections(); });
  return { url: `http://127.0.0.1:${port}${prefix}`, requests, close };
}

export async function browser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    // playwright runs headless with a fresh profile of its own; these keep Chromium off the
    // (closed) network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A page that fails the test on any uncaught error in the app, any breach of the page's
 * Content-Security-Policy (the `securitypolicyviolation` event, or Chromium's console error) and
 * any dialog (`alert(1)` from a hostile file would open one). */
export async function page(b) {
  return watch(await b.newPage());
}

/** Collects `p`'s errors, CSP violations and dialogs in `p.errors`. Its `goto` returns once the
 * app has taken over the landing view prerendered in index.html (src/lib.rs `takeover`): the
 * tests drive the app, whose controls work, not the static page it replaces (e2e/prerender.test.mjs
 * tests that one); `p.gotoStatic` returns at the load event. */
export async function watch(p) {
  p.gotoStatic = p.goto.bind(p);
  p.goto = async (url, options) => {
    const r = await p.gotoStatic(url, options);
    await p.waitForFunction(() => !document.getElementById('prerendered'), null, { timeout: 20000 });
    return r;
  };
  p.errors = [];
  p.on('pageerror', (e) => p.errors.push(String(e)));
  p.on('dialog', (d) => { p.errors.push(`a dialog opened: ${d.type()} ${d.message()}`); d.dismiss().catch(() => {}); });
  p.on('console', (m) => {
    if (m.type() === 'error' && /Content[ -]Security[ -]Policy/i.test(m.text())) p.errors.push(`CSP: ${m.text()}`);
  });
  await p.exposeFunction('__rpViolation', (v) => p.errors.push(`CSP violation: ${v}`));
  await p.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__rpViolation?.(`${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`));
  });
  return p;
}

/** Runs the real CLI and parses its JSON output. */
export function cliJson(args) {
  return JSON.parse(execFileSync(CLI, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
}

/** The files of a bundled set, as paths under public-data/. */
export function setFiles(name) {
  const m = JSON.parse(fs.readFileSync(path.join(ROOT, 'public-data/index.json'), 'utf8'));
  return m.sets[name].files.map((f) => path.join('public-data', f));
}

/** Rows of a report table: [{ head, cells: [{ text, value, header }] }] (`header`: the text of
 * the cell's column head; `cell(row, 'Overall')` finds a cell by it). */
export async function tableRows(p, id) {
  // A table with cells still to come (the leaderboard's intervals after a large load: the worker
  // answers the tables first) is read once they are there.
  await p.waitForFunction((id) => !document.querySelector(`#${id}[aria-busy=true]`), id, { timeout: 60000 });
  return p.$$eval(`#${id} tbody tr`, (rows) => rows.map((r) => {
    const heads = [...r.closest('table').querySelectorAll('thead th')].map((h) => h.textContent.trim());
    return {
      head: r.querySelector('th').textContent,
      group: r.dataset.group,
      cells: [...r.querySelectorAll('td')].map((td, i) => ({
        text: td.textContent, value: td.dataset.value, halfWidth: td.dataset.halfWidth, header: heads[i + 1], title: td.title,
      })),
    };
  }));
}

/** The cell of `row` (from `tableRows`) under the column head `header` (case-insensitive). */
export function cell(row, header) {
  const c = row.cells.find((x) => x.header?.toLowerCase() === header.toLowerCase());
  assert.ok(c, `a column "${header}" in ${JSON.stringify(row.cells.map((x) => x.header))}`);
  return c;
}

const COLUMNS = [['overall', 'Overall'], ['knowledge', 'Knowledge'], ['clarity', 'Clarity'], ['perfect', 'Perfect']];

/** Every number of the recomputed Table 3 (`rows`, from `tableRows(p, 'leaderboard')`) equals
 * the CLI's JSON, to the last digit; columns found by their heads. */
export function assertParity(rows, cli) {
  assert.equal(rows.length, cli.models.length, 'one row per (model, judge)');
  for (const m of cli.models) {
    const row = rows.find((r) => r.head === m.model && r.cells[0].text === m.judge);
    assert.ok(row, `row for ${m.model} / ${m.judge}`);
    for (const [k, h] of COLUMNS) {
      const v = cell(row, h).value;
      assert.equal(Number(v), m[k], `${m.model} ${k}: DOM ${v} vs CLI ${m[k]}`);
    }
    assert.equal(Number(cell(row, 'Coverage').value), m.coverage * 100, `${m.model} coverage`);
    const ci = m.ci95 ? `${m.ci95[0].toFixed(1)}–${m.ci95[1].toFixed(1)}` : '—';
    assert.equal(cell(row, '95% CI').text, ci, `${m.model} CI`);
  }
}

/** Drops a file named `name` holding `text` on `selector`, as a user's drag and drop does. */
export async function dropFile(p, selector, name, text) {
  const dt = await p.evaluateHandle(([n, t]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([t], n, { type: 'application/json' }));
    return dt;
  }, [name, text]);
  await p.dispatchEvent(selector, 'dragover', { dataTransfer: dt });
  await p.dispatchEvent(selector, 'drop', { dataTransfer: dt });
}
