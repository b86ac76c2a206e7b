// axe-core (WCAG 2.1 A and AA rules) on every view, in the light and the dark theme: zero
// violations. The theme follows the system's colour scheme until one is picked, so each pass
// is a browser context with that scheme.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import { serve, browser, watch, cliJson, setFiles } from './harness.mjs';

let server, b;
before(async () => { server = await serve(); b = await browser(); });
after(async () => { await b?.close(); await server?.close(); });

async function violations(p) {
  const r = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  assert.ok(r.passes.length > 10, 'axe ran its rules');
  return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

for (const scheme of ['light', 'dark']) {
  test(`no WCAG 2.1 AA violation on any view, ${scheme} theme`, async () => {
    const c = await b.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
    try {
      const p = await watch(await c.newPage());
      const cli = cliJson(['score', ...setFiles('demo'), '--format', 'json']);
      const model = cli.models[0].model;
      await p.goto(server.url + '?set=demo&view=questions');
      await p.waitForSelector('table.questions tbody tr', { timeout: 20000 });
      const id = await p.$eval('table.questions tbody th a', (a) => a.textContent);
      const views = [
        '?set=demo', '?set=demo&view=breakdown', '?set=demo&view=reliability', '?set=demo&view=failures',
        '?set=demo&view=questions', `?set=demo&view=question&id=${encodeURIComponent(id)}`,
        `?set=demo&view=question&id=${encodeURIComponent(id)}&model=${encodeURIComponent(model)}&item=k1`,
        `?set=demo&view=model&model=${encodeURIComponent(model)}`, '?set=demo&view=data',
        '?set=demo&view=runs', '?set=demo&view=runs&noevidence=1&sort=cost:desc',
        `?set=demo&view=compare&id=${encodeURIComponent(id)}&a=${encodeURIComponent(cli.models[0].model)}&b=${encodeURIComponent(cli.models[1].model)}`,
        '?', '?view=question&id=adk-python-001&model=GPT-5.2',
        // The leaderboard with a paired comparison's figures, by question.
        `?set=demo&cluster=question&a=${encodeURIComponent(cli.models[0].model)}&b=${encodeURIComponent(cli.models[1].model)}`,
      ];
      const found = [];
      for (const q of views) {
        await p.goto(server.url + q);
        await p.waitForSelector('main h1', { timeout: 20000 });
        await p.waitForFunction(() => !document.querySelector('.busy')?.textContent && !document.querySelector('[aria-busy=true]'), null, { timeout: 20000 });
        await p.waitForSelector('main table, main .empty, main .checklist', { timeout: 20000 });
        // Folded parts are checked too.
        await p.$$eval('main details', (ds) => ds.forEach((d) => { d.open = true; }));
        for (const v of await violations(p)) found.push(`${q}: ${v}`);
      }
      assert.deepEqual(found, []);
      assert.deepEqual(p.errors, []);
    } finally {
      await c.close();
    }
  });
}

// The landing view as prerendered at build time (the app kept from taking it over): its form
// controls are look-alikes (src/components/stand_in.rs), which must not read as broken controls.
for (const scheme of ['light', 'dark']) {
  test(`no WCAG 2.1 AA violation on the prerendered landing view, ${scheme} theme`, async () => {
    const c = await b.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
    try {
      const p = await c.newPage();
      await p.route(/repoprobe-site-[^/]*_bg\.wasm$/, (route) => route.abort());
      await p.goto(server.url);
      assert.ok(await p.isVisible('#prerendered .stand-in'), 'the prerendered view with its look-alikes');
      await p.$$eval('main details', (ds) => ds.forEach((d) => { d.open = true; }));
      assert.deepEqual(await violations(p), []);
    } finally {
      await c.close();
    }
  });
}
