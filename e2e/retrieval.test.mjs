// The retrieval table in the site equals `repoprobe score --format json`'s `retrieval` rows for
// the same files, to the last digit: the golden fixture with evidence on its checklist items
// (testdata/golden/retrieval, whose values are computed by hand in the CLI test), dropped on the
// page; and the model page shows that model's row.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, page, cliJson, tableRows, ROOT } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const DIR = 'testdata/golden/retrieval';
// The table's columns after the model, in the order of the core's `retrieval_table`.
const COLUMNS = ['runs', 'evidence_recall', 'read_precision', 'items_retrieved', 'attainment_retrieved',
  'attainment_not_retrieved', 'failures', 'failures_not_retrieved', 'labelled_failures', 'context_miss',
  'context_miss_not_retrieved'];

function assertRow(row, want) {
  COLUMNS.forEach((k, i) => {
    const cell = row.cells[i];
    if (want[k] === null) {
      assert.equal(cell.value, undefined, `${want.model} ${k}: the DOM has ${cell.text}, the CLI null`);
    } else {
      assert.equal(Number(cell.value), want[k], `${want.model} ${k}: DOM ${cell.value} vs CLI ${want[k]}`);
    }
  });
}

test('the retrieval table equals the CLI\'s retrieval rows, on the leaderboard and each model page', async () => {
  const cli = cliJson(['score', DIR, '--format', 'json']).retrieval;
  assert.ok(cli.length > 0, 'the fixture has retrieval rows');
  const p = await page(b);
  await p.goto(server.url + '?set=none');
  const files = fs.readdirSync(path.join(ROOT, DIR)).filter((f) => /\.jsonl?$/.test(f)).map((f) => path.join(ROOT, DIR, f));
  await p.setInputFiles('input[type=file]', files);
  await p.waitForSelector('#retrieval tbody tr', { state: 'attached', timeout: 20000 });
  const rows = await tableRows(p, 'retrieval');
  assert.equal(rows.length, cli.length, 'one row per model');
  for (const want of cli) {
    const row = rows.find((r) => r.head === want.model);
    assert.ok(row, `a row for ${want.model}`);
    assertRow(row, want);
  }
  // The model page: that model's row only.
  const first = cli[0];
  await p.goto(server.url + `?view=model&model=${encodeURIComponent(first.model)}&set=none`);
  await p.setInputFiles('input[type=file]', files);
  await p.waitForSelector('#model-retrieval tbody tr', { state: 'attached', timeout: 20000 });
  const mine = await tableRows(p, 'model-retrieval');
  assert.equal(mine.length, 1);
  assertRow(mine[0], first);
  assert.deepEqual(p.errors, []);
});
