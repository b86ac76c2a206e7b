// How fast a Web Worker can read a dropped File, by method (a benchmark, not a test: it prints
// figures). Issue 14, row 2: the worker's read + parse of a 72.9 MB drop was ~3.4× slower than
// the core's native parse, so this times the reading alone, in a plain JavaScript worker of the
// same headless Chromium, each method also copying every chunk into a wasm memory (as the worker
// does before parsing it):
//   stream      `blob.stream()` read chunk by chunk (Chromium gives ~1 MiB chunks for a File);
//               also without the copy into wasm memory
//   slice N     `blob.slice(a, a + N).arrayBuffer()`, the next slice asked for before this one
//               is copied
//   sync N      `FileReaderSync.readAsArrayBuffer(blob.slice(a, a + N))` (synchronous, workers only)
//   text+parse  `blob.text()` then `JSON.parse`, for scale
//   node e2e/read-methods.mjs [--runs 3] [--file PATH]   (default: a `repoprobe synth` file of 72.9 MB)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, CLI } from './harness.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const runs = Number(arg('runs', '3'));
let file = arg('file', null);
let made = null;
if (!file) {
  made = fs.mkdtempSync(path.join(os.tmpdir(), 'rp-read-'));
  file = path.join(made, 'synth.json');
  execFileSync(CLI, ['synth', '--models', '20', '--questions', '500', '--runs', '5', '--seed', '1', '--out', file], { stdio: 'ignore' });
}

// The worker: times each method on the File it is given, in rotation so that every method sees
// the same machine load.
const WORKER = `
const MiB = 1 << 20;
const mem = new WebAssembly.Memory({ initial: 16 * 16, maximum: 65536 });
const into = (u8) => { new Uint8Array(mem.buffer, 0, u8.length).set(u8); return u8.length; };
const methods = {
  async stream(f) {
    const r = f.stream().getReader(); let n = 0, chunks = 0;
    for (;;) { const x = await r.read(); if (x.done) break; n += into(x.value); chunks++; }
    return { n, chunks };
  },
  async 'stream, no copy'(f) {
    const r = f.stream().getReader(); let n = 0, chunks = 0;
    for (;;) { const x = await r.read(); if (x.done) break; n += x.value.length; chunks++; }
    return { n, chunks };
  },
  slice: (size) => async (f) => {
    let n = 0, chunks = 0, a = 0;
    let next = f.slice(0, size).arrayBuffer();
    while (a < f.size) {
      const buf = await next; a += buf.byteLength;
      if (a < f.size) next = f.slice(a, a + size).arrayBuffer();
      n += into(new Uint8Array(buf)); chunks++;
      if (!buf.byteLength) break;
    }
    return { n, chunks };
  },
  sync: (size) => async (f) => {
    const rd = new FileReaderSync(); let n = 0, chunks = 0;
    for (let a = 0; a < f.size; a += size) { n += into(new Uint8Array(rd.readAsArrayBuffer(f.slice(a, a + size)))); chunks++; }
    return { n, chunks };
  },
  async 'text+parse'(f) { const t = await f.text(); JSON.parse(t); return { n: t.length, chunks: 1 }; },
};
const plan = [['stream', methods.stream], ['stream, no copy', methods['stream, no copy']]];
for (const s of [1, 4, 8, 16]) plan.push(['slice ' + s + ' MiB', methods.slice(s * MiB)]);
for (const s of [1, 4, 8, 16]) plan.push(['sync ' + s + ' MiB', methods.sync(s * MiB)]);
plan.push(['text+parse', methods['text+parse']]);
onmessage = async (e) => {
  const f = e.data.file, out = {};
  for (let i = 0; i < e.data.runs; i++) {
    for (const [name, m] of plan) {
      const t0 = performance.now();
      const r = await m(f);
      (out[name] = out[name] || []).push({ ms: performance.now() - t0, ...r });
    }
  }
  postMessage(out);
};`;

const server = await serve(fs.mkdtempSync(path.join(os.tmpdir(), 'rp-read-www-')), {
  '/': { type: 'text/html; charset=utf-8', body: '<!doctype html><title>read</title><input type="file">' },
});
const b = await browser();
const p = await b.newPage();
await p.goto(server.url);
await p.setInputFiles('input[type=file]', file);
const out = await p.evaluate(async ([src, runs]) => {
  const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
  const f = document.querySelector('input').files[0];
  return new Promise((ok) => { w.onmessage = (e) => ok(e.data); w.postMessage({ file: f, runs }); });
}, [WORKER, runs]);
const size = fs.statSync(file).size;
console.log(`reading ${(size / 1e6).toFixed(1)} MB in a worker, ${runs} runs in rotation (ms, and MB/s of the median):`);
for (const [name, rs] of Object.entries(out)) {
  const ms = rs.map((r) => r.ms).sort((x, y) => x - y);
  const med = ms[Math.floor(ms.length / 2)];
  console.log(`  ${name.padEnd(16)} ${rs.map((r) => r.ms.toFixed(0)).join(', ').padEnd(18)} median ${med.toFixed(0)} ms = ${(size / 1e3 / med).toFixed(0)} MB/s; ${rs[0].chunks} chunks`);
}
await b.close();
await server.close();
if (made) fs.rmSync(made, { recursive: true });
