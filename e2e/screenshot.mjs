// Takes the README's screenshots of the built site: node e2e/screenshot.mjs [outdir]
import path from 'node:path';
import { serve, browser, ROOT } from './harness.mjs';

const out = process.argv[2] || path.join(ROOT, 'docs');
const server = await serve();
const b = await browser();
const p = await b.newPage({ viewport: { width: 1280, height: 900 } });
for (const [name, query, wait] of [
  ['leaderboard', '?set=demo', '#leaderboard tbody tr'],
  // One answer read against its checklist: rationales in place, the answer and its evidence beside.
  ['question', '?view=question&id=adk-python-001&model=GPT-5.2', '.checklist .item-rationale'],
]) {
  await p.goto(server.url + query);
  await p.waitForSelector(wait, { timeout: 20000 });
  // Nothing still to come (the leaderboard's intervals, sent after the tables on large data).
  await p.waitForFunction(() => !document.querySelector('[aria-busy=true]'), null, { timeout: 20000 });
  await p.screenshot({ path: path.join(out, `screenshot-${name}.png`), fullPage: false });
}
await b.close();
await server.close();
