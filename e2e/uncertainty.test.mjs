// How sure the leaderboard's numbers are (issue 53): Overall ± half its interval, the rank ranges
// and their groups, the paired comparison's figures and a model's variance components equal
// `repoprobe score --format json` on the same files (1e-9), under the URL's `cluster` as under
// the CLI's `--cluster`; the switch writes the URL. Every expectation is computed here from the
// CLI's JSON: the bundled demo data may change.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { serve, browser, page, cliJson, setFiles, tableRows, cell, assertParity } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

const demo = (...flags) => cliJson(['score', ...setFiles('demo'), '--format', 'json', ...flags]);

function near(dom, want, what) {
  assert.ok(dom !== undefined, `${what}: no data-value`);
  assert.ok(Math.abs(Number(dom) - want) <= 1e-9, `${what}: DOM ${dom} vs CLI ${want}`);
}

const rankText = ([lo, hi]) => (lo === hi ? String(lo) : `${lo}–${hi}`);

const CLUSTER_WORDS = { repo: /by repository/, question: /by question/, none: /not clustered/ };

/** The leaderboard once it shows `cli`'s numbers (its first row's Overall). */
async function leaderboardOf(p, cli) {
  const m = cli.models.find((x) => x.se != null) || cli.models[0];
  await p.waitForFunction((v) => [...document.querySelectorAll('#leaderboard tbody tr td[data-value]')]
    .some((td) => td.dataset.value === String(v)), m.se ?? m.overall, { timeout: 30000 });
  return tableRows(p, 'leaderboard');
}

/** ±, SE, rank ranges, groups and hovers of the leaderboard's rows equal the CLI's. */
function assertUncertainty(rows, cli, cluster) {
  assertParity(rows, cli);
  for (const m of cli.models) {
    const row = rows.find((r) => r.head === m.model && r.cells[0].text === m.judge);
    // Overall ± the interval's half-width: "54.3 ± 2.1", the unrounded half in data-half-width.
    const pm = cell(row, 'Overall');
    if (m.ci95) {
      near(pm.halfWidth, (m.ci95[1] - m.ci95[0]) / 2, `${m.model} ±`);
      assert.match(pm.text, new RegExp(` ± ${((m.ci95[1] - m.ci95[0]) / 2).toFixed(1)}`));
    } else {
      assert.equal(pm.halfWidth, undefined, `${m.model}: no interval`);
      assert.doesNotMatch(pm.text, /±/);
    }
    if (m.se == null) assert.equal(cell(row, 'SE').text, '—');
    else near(cell(row, 'SE').value, m.se, `${m.model} SE`);
    const rank = cell(row, 'Rank');
    const want = rankText(m.rank);
    assert.ok(rank.text.startsWith(want) && !/^\d/.test(rank.text.slice(want.length)), `${m.model} rank: ${rank.text} vs ${want}`);
    // The hover says how: the clusters, the method and how many clusters.
    assert.match(pm.title, CLUSTER_WORDS[cluster]);
    assert.match(pm.title, cli.policy.ci === 'clt' ? /CLT/ : /bootstrap.*B = \d+, seed \d+/);
    assert.match(pm.title, new RegExp(`over ${m.clusters} cluster`));
    assert.match(rank.title, /surely ahead/);
    // Models sharing a rank range (none of them separated) are one group, the others none.
    const peers = cli.models.filter((x) => x.judge === m.judge && rankText(x.rank) === want);
    if (peers.length > 1) {
      assert.ok(row.group, `${m.model} is in a group`);
      for (const x of peers) {
        assert.equal(rows.find((r) => r.head === x.model && r.cells[0].text === x.judge).group, row.group);
      }
    } else {
      assert.equal(row.group, undefined, `${m.model} is alone`);
    }
  }
}

test('the leaderboard\'s ± half-intervals, SEs and rank ranges are the CLI\'s, by repository and by question', async () => {
  const p = await page(b);
  const repo = demo();
  assert.equal(repo.policy.cluster, 'repo');
  await p.goto(server.url + '?set=demo');
  assertUncertainty(await leaderboardOf(p, repo), repo, 'repo');
  assert.match(await p.textContent('#uncertainty-method'), /by repository/);

  // The exports carry what the table shows: ±, SE, 95% CI and the rank range, and LaTeX's
  // footnote names the cluster and the method.
  const exported = async (label) => {
    const [dl] = await Promise.all([p.waitForEvent('download'), p.click(`#leaderboard .exports button:has-text("${label}")`)]);
    return fs.readFileSync(await dl.path(), 'utf8');
  };
  const csv = await exported('CSV');
  const head = csv.split('\n')[0];
  for (const col of ['Overall', 'SE', '95% CI', 'Rank']) assert.ok(head.includes(col), `CSV header ${head} has ${col}`);
  const first = repo.models.find((m) => m.ci95);
  assert.ok(csv.includes(` ± ${((first.ci95[1] - first.ci95[0]) / 2).toFixed(1)}`), 'CSV carries Overall ± half the interval');
  assert.match(await exported('Markdown'), /\| SE \| 95% CI \| Rank \|/);
  const tex = await exported('LaTeX');
  assert.match(tex, /\$\\pm\$/);
  assert.match(tex, /mean \$\\pm\$ 1\.96 \$\\times\$ SE, clustered by repository/);

  const question = demo('--cluster', 'question');
  await p.goto(server.url + '?set=demo&cluster=question');
  assertUncertainty(await leaderboardOf(p, question), question, 'question');
  assert.deepEqual(p.errors, []);
});

test('the cluster switch writes the URL and the figures follow', async () => {
  const p = await page(b);
  await p.goto(server.url + '?set=demo');
  await leaderboardOf(p, demo());
  await p.selectOption('.controls label:has-text("Clusters") select', 'none');
  await p.waitForFunction(() => new URLSearchParams(location.search).get('cluster') === 'none');
  const none = demo('--cluster', 'none');
  assertUncertainty(await leaderboardOf(p, none), none, 'none');
  // Back to the default: not written.
  await p.selectOption('.controls label:has-text("Clusters") select', 'repo');
  await p.waitForFunction(() => !new URLSearchParams(location.search).has('cluster'));
  await leaderboardOf(p, demo());
  assert.deepEqual(p.errors, []);
});

test('the paired comparison shows the CLI\'s difference, SE, interval, p-value, correlation and mde80', async () => {
  const p = await page(b);
  const all = demo();
  const mine = all.models.filter((m) => m.judge === all.judge);
  const [a, c] = [mine[0].model, mine[1].model];
  const cli = demo('--compare', a, c).paired;
  assert.ok(cli, 'the CLI compares them');
  await p.goto(`${server.url}?set=demo&a=${encodeURIComponent(a)}&b=${encodeURIComponent(c)}`);
  await p.waitForSelector('#paired-figures', { timeout: 30000 });
  const value = (sel) => p.$eval(sel, (e) => e.dataset.value);
  near(await value('#paired-mean-diff'), cli.mean_diff, 'mean difference');
  near(await value('#paired-se'), cli.se, 'SE');
  near(await value('#paired-p'), cli.p_value, 'p-value');
  near(await value('#paired-correlation'), cli.correlation, 'correlation');
  near(await value('#paired-mde80'), cli.mde80, 'mde80');
  const ci = await p.$$eval('#paired-ci95 [data-value]', (es) => es.map((e) => e.dataset.value));
  near(ci[0], cli.ci95[0], 'interval low');
  near(ci[1], cli.ci95[1], 'interval high');
  assert.match(await p.textContent('#paired-mde80'), /detects 4 times in 5/);
  assert.match(await p.textContent('section.paired'), /Why pairing helps/);
  assert.match(await p.textContent('section.paired .hint'), /by repository.*CLT/);
  assert.deepEqual(p.errors, []);
});

test('a model\'s page shows where its noise comes from and a projected SE', async () => {
  const p = await page(b);
  const all = demo();
  const m = all.models.find((x) => x.judge === all.judge);
  await p.goto(`${server.url}?set=demo&view=model&model=${encodeURIComponent(m.model)}`);
  await p.waitForSelector('#variance-questions', { timeout: 30000 });
  for (const [id, k] of [['questions', 'questions'], ['attempts', 'attempts'], ['judge-runs', 'judge_runs']]) {
    const v = await p.$eval(`#variance-${id}`, (e) => e.dataset.value);
    if (m.variance[k] == null) assert.equal(v, undefined);
    else near(v, m.variance[k], `variance ${k}`);
  }
  assert.match(await p.textContent('section.noise'), /A projection, not a measurement/);
  // Four times the attempts (or judge runs, whichever the data can say something of): a
  // smaller projected SE.
  const input = m.variance.attempts != null ? 'attempts' : m.variance.judge_runs != null ? 'judge-runs' : null;
  if (input && m.se) {
    const projected = () => p.$eval('#projected-se', (e) => e.dataset.value);
    const before = await projected();
    assert.ok(Number(before) > 0, `a projection at the measured K and R: ${before}`);
    await p.fill(`input[name=${input}]`, String(4 * (input === 'attempts' ? m.attempts : m.runs)));
    await p.press(`input[name=${input}]`, 'Enter');
    await p.waitForFunction((x) => document.querySelector('#projected-se').dataset.value !== x, before);
    assert.ok(Number(await projected()) <= Number(before), 'more of them: no larger an SE');
  }
  assert.deepEqual(p.errors, []);
});
