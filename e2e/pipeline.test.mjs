// The pipeline on the project's own records: the bundle that `repoprobe answer` (the built-in
// agent and the real Codex CLI, against the tests' servers), `repoprobe judge` and
// `repoprobe bundle` wrote in the CLI test `pipeline::answer_judge_and_bundle_keep_what_the_agent_edited_for_the_site`
// (scripts/test.sh runs it before this file) is opened in the site: each answer's evidence,
// the file the Codex run edited, and the judge's rationales are shown from those very files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, page, ROOT } from './harness.mjs';

const BUNDLE = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'tmp/pipeline/results.json');

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

function bundle() {
  assert.ok(fs.existsSync(BUNDLE), `${BUNDLE} is missing: run \`cargo test -p repoprobe-cli --test cli -- pipeline\` first`);
  return JSON.parse(fs.readFileSync(BUNDLE, 'utf8'));
}

async function openQuestion(model) {
  const p = await page(b);
  await p.goto(`${server.url}?set=none&view=question&id=q1&model=${encodeURIComponent(model)}`);
  await p.setInputFiles('input[type=file]', [{ name: 'results.json', mimeType: 'application/json', buffer: fs.readFileSync(BUNDLE) }]);
  await p.waitForSelector('.answer-col .evidence', { timeout: 20000 });
  return p;
}

test('the Codex run\'s edited file, evidence and rationales are shown from the records the pipeline wrote', async () => {
  const data = bundle();
  const codex = data.answers.find((a) => a.agent?.name === 'codex');
  assert.ok(codex, 'the bundle holds a Codex answer');
  // What `answer` wrote: the object form, with what happened to each file.
  const edited = codex.agent.changes.files.map((f) => f.path);
  assert.deepEqual(edited, ['AGENT-NOTES.md']);
  const p = await openQuestion(codex.model);
  const ev = await p.textContent('.answer-col .evidence');
  assert.match(ev, /Edited the repositoryyes/);
  assert.match(ev, /Changed files.*AGENT-NOTES\.md/);
  assert.match(ev, new RegExp(`Agentcodex ${codex.agent.version.replace(/[.]/g, '\\.')}`));
  assert.match(ev, new RegExp(`Tokens${codex.usage.input_tokens} in, ${codex.usage.output_tokens} out`));
  // Every item's rationale, as the judge wrote it for this answer.
  const mine = data.judgments.filter((j) => j.model === codex.model && j.question_id === 'q1');
  assert.equal(mine.length, 1);
  const shown = await p.$$eval('.checklist .item-rationale', (ds) => ds.map((d) => d.textContent));
  assert.equal(shown.length, mine[0].items.length);
  for (const item of mine[0].items) {
    assert.ok(shown.some((t) => t.includes(item.rationale)), `rationale of ${item.id}: ${item.rationale}`);
  }
  assert.deepEqual(p.errors, []);
});

test('the built-in agent\'s run shows its turns and that it left the repository as it was', async () => {
  const data = bundle();
  const builtin = data.answers.find((a) => a.agent?.name === 'builtin' && a.question_id === 'q1');
  assert.ok(builtin, 'the bundle holds the built-in agent\'s answer to q1');
  const p = await openQuestion(builtin.model);
  const ev = await p.textContent('.answer-col .evidence');
  assert.match(ev, new RegExp(`Turns${builtin.agent.turns}`));
  assert.match(ev, /Agentbuiltin repoprobe /);
  assert.match(ev, /Edited the repositoryno/);
  assert.doesNotMatch(ev, /Changed files/);
  assert.deepEqual(p.errors, []);
});
