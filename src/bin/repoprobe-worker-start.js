// The site's Web Worker starts here: index.html runs `new Worker("./repoprobe-worker-start.js",
// { name: location.search })` before anything else. Before the worker's wasm has even arrived,
// this fetches the data the page's query asks for — the bundled set (`?set=NAME`, else the
// manifest's default; `none` for none) and every `?data=URL`, all at once — on this thread, so
// neither a busy page nor the page's own wasm delays it. It says which files it got in one
// message, `started` (src/protocol.rs `Started`): to the page, which lists them at once, and,
// once the wasm (src/bin/repoprobe-worker.rs) listens, to the wasm with the files beside it,
// which loads them under the options of this worker's name (the page's query), read as the
// page reads them (src/options.rs). This script reads no option but `keep`, below.
//
// The bundled set is an example: `?data=` files replace it unless the URL keeps it
// (`?set=NAME&data=…`, or `keep=1`; src/options.rs `keep_bundled`). It is fetched even then
// (it is small), so that keeping it is one click with no reload; the wasm loads only the files
// that count (src/options.rs `counted`).
//
// The single-file build (scripts/single-file.mjs) runs this same script from a blob, with
// `self.__rpInline` set: its wasm and every file of public-data/ as base64, so that it needs no
// fetch at all (a page opened from file:// may fetch nothing), and the glue (`wasm_bindgen`)
// already defined in the same blob (its page's Content-Security-Policy lets no other script run).
"use strict";
(function () {
    // The wasm and its glue are fetched at once and without blocking (importScripts of the
    // glue's URL would hold this thread for a round trip, and the data's callbacks with it).
    var inline = self.__rpInline;
    var decode = function (b64) {
        var bin = atob(b64), out = new Uint8Array(bin.length);
        for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
        return out;
    };
    var wasm = inline ? Promise.resolve(decode(inline.wasm)) : fetch("./repoprobe-worker_bg.wasm");
    var glue = inline ? Promise.resolve(null) : fetch("./repoprobe-worker.js").then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status + " for repoprobe-worker.js");
        return r.text();
    });
    var query = new URLSearchParams(self.name || "");
    var message = function (e) { return (e && e.message) || String(e); };
    // Seconds a server has to answer (its headers) before its file counts as not fetched.
    var ANSWER_TIMEOUT_S = 30;
    // A file's body is kept as a Blob: the browser holds it, the wasm reads it as a stream and
    // reads a question's texts back from it by byte range, never holding it whole.
    var blob = function (url) {
        if (inline && Object.prototype.hasOwnProperty.call(inline.files, url)) {
            return Promise.resolve(new Blob([decode(inline.files[url])]));
        }
        // Only the answer is timed, not its body: a large file may take long to arrive.
        var ctl = typeof AbortController === "function" ? new AbortController() : null;
        var timer = ctl && setTimeout(function () { ctl.abort(); }, ANSWER_TIMEOUT_S * 1000);
        return fetch(url, ctl ? { signal: ctl.signal } : undefined).then(function (r) {
            clearTimeout(timer);
            if (!r.ok) throw new Error("the server answered HTTP " + r.status + (r.statusText ? " " + r.statusText : ""));
            return r.blob();
        }, function (e) {
            clearTimeout(timer);
            if (e && e.name === "AbortError") throw new Error("no answer from the server within " + ANSWER_TIMEOUT_S + " s");
            // The browser tells a page no more than this (by design): a server that cannot be
            // reached, one that refused the connection and one that does not let other sites
            // read its files (CORS) all fail alike.
            throw new Error("the browser could not fetch it (" + message(e) + "): the server could not be reached, refused the connection, or does not let other sites read it (CORS)");
        });
    };
    // A trajectories file (`*.trajectories.jsonl`, docs/site.md#trajectories) is not
    // downloaded: its index (`*.trajectories.index.json` beside it) is, and the worker reads a
    // run's line by an HTTP Range request when the question view asks for it. A first request
    // for one byte tells whether the server answers ranges (206, with the file's size in
    // Content-Range) or not (200: that answer is the whole file, kept, so it is downloaded
    // once); without an index the file is downloaded whole too, and the worker indexes it by
    // reading it. Either fallback is said (`note`) in the view.
    var TRAJ = /\.trajectories\.jsonl(?=$|[?#])/;
    var indexOf = function (u) { return u.replace(TRAJ, ".trajectories.index.json"); };
    // What the start message says of a file beyond its name and size, by URL.
    var extras = {};
    var ranged = function (u, index) {
        var iu = indexOf(u);
        return fetch(u, { headers: { Range: "bytes=0-0" } }).then(function (r) {
            if (r.status === 206) {
                var cr = r.headers.get("content-range"), m = cr && /\/(\d+)\s*$/.exec(cr);
                if (r.body && r.body.cancel) r.body.cancel().catch(function () {});
                return index.then(function () {
                    // Without Content-Range (a server that does not let other sites read it)
                    // the size is unknown here: the worker takes the index's word for it.
                    extras[u] = { ranged: u, size: m ? Number(m[1]) : 0 };
                    return new Blob([]);
                }, function (e) {
                    extras[u] = { note: "no index at " + iu + " (" + message(e) + "): the file was downloaded whole and indexed by reading it" };
                    return blob(u);
                });
            }
            if (!r.ok) throw new Error("the server answered HTTP " + r.status + (r.statusText ? " " + r.statusText : ""));
            extras[u] = { note: "the server does not answer HTTP Range requests (HTTP " + r.status + " to one): the file was downloaded whole" };
            return r.blob();
        }, function () {
            // Not reachable by a range request (CORS, a refusal): asked once more, plainly, so
            // that the reason said is the plain request's.
            return blob(u).then(function (b) {
                extras[u] = { note: "a Range request to it failed: the file was downloaded whole" };
                return b;
            });
        });
    };
    // [url, origin, Promise<Blob>, optional], in the order the files are loaded; an optional
    // file (a trajectories file's index, looked for beside it) that cannot be had is no failure.
    // (Each marked handled at once: one that fails before the manifest is read, a refused
    // connection, is reported below, not as an uncaught error of the worker.)
    var urls = query.getAll("data");
    var data = [];
    urls.forEach(function (u) {
        var lines = u.replace(/\.trajectories\.index\.json(?=$|[?#])/, ".trajectories.jsonl");
        // An index given beside its trajectories file is fetched once, with it, below.
        if (lines !== u && urls.indexOf(lines) >= 0 && !inline) return;
        if (TRAJ.test(u) && !inline) {
            var index = blob(indexOf(u));
            index.catch(function () {});
            var l = ranged(u, index);
            l.catch(function () {});
            data.push([u, "url", l]);
            data.push([indexOf(u), "url", index.catch(function () { return null; }), true]);
            return;
        }
        var b = blob(u);
        b.catch(function () {});
        data.push([u, "url", b]);
    });
    // What could not be fetched: `failed`, the `?data=` URLs (each with why, shown on every
    // view); `failures`, the rest (the manifest, the bundled set, the wasm), in words.
    var failures = [], failed = [];
    var set = query.get("set");
    // As src/options.rs `keep_bundled` reads the URL: only to know whether the bundled set's
    // failures are worth saying.
    var keep = query.has("keep") ? query.get("keep") === "1" : (data.length > 0 && !!set && set !== "none");
    // The bundled set's failures matter only when it counts.
    var bundledCounts = keep || data.length === 0;
    var setInfo = null;
    var MANIFEST = "public-data/index.json";
    var bundled = set === "none" ? Promise.resolve([]) : blob(MANIFEST)
        .then(function (b) { return b.text(); })
        .then(function (t) {
            try { return JSON.parse(t); } catch (e) { throw new Error(MANIFEST + ": " + message(e)); }
        })
        .then(function (m) {
            var name = set || m.default || "paper";
            var files = m.sets && m.sets[name] && m.sets[name].files;
            if (!Array.isArray(files)) throw new Error("no bundled data set named " + JSON.stringify(name));
            setInfo = { name: name, label: String(m.sets[name].label || ""), case_studies: m.sets[name].case_studies === true };
            // A bundled trajectories file is read as a `?data=` one is: by ranges, its index
            // (listed beside it) downloaded, the runs' lines never all at once.
            var idx = {};
            files.forEach(function (f) {
                if (/\.trajectories\.index\.json$/.test(f)) { var b = blob("public-data/" + f); b.catch(function () {}); idx["public-data/" + f] = b; }
            });
            return files.map(function (f) {
                var u = "public-data/" + f;
                if (idx[u]) return [u, "bundled", idx[u]];
                if (TRAJ.test(u) && !inline) {
                    var index = idx[indexOf(u)] || blob(indexOf(u));
                    index.catch(function () {});
                    var l = ranged(u, index);
                    l.catch(function () {});
                    return [u, "bundled", l];
                }
                return [u, "bundled", blob(u)];
            });
        })
        .catch(function (e) { if (bundledCounts) failures.push(message(e)); return []; });
    var given = bundled.then(function (list) {
        list = list.concat(data);
        return Promise.all(list.map(function (f) {
            return f[2].catch(function (e) {
                if (f[1] === "url") failed.push({ url: f[0], reason: message(e) });
                else if (bundledCounts) failures.push(f[0] + ": " + message(e));
                return null;
            });
        })).then(function (blobs) {
            var files = [], kept = [];
            list.forEach(function (f, i) {
                if (!blobs[i]) return;
                var x = extras[f[0]] || {};
                files.push({ name: f[0], origin: f[1], size: x.ranged ? x.size : blobs[i].size, ranged: x.ranged, note: x.note });
                kept.push(blobs[i]);
            });
            var started = JSON.stringify({ started: { files: files, failures: failures, failed: failed, set: setInfo } });
            self.postMessage(started);
            return { started: started, count: files.length, blobs: kept };
        });
    });

    var ready = glue.then(function (text) {
        if (text !== null) importScripts(URL.createObjectURL(new Blob([text], { type: "text/javascript" })));
        return wasm_bindgen({ module_or_path: wasm });
    });
    // Without its wasm the worker can do nothing: say so on the page rather than load forever.
    ready.catch(function (e) {
        self.postMessage(JSON.stringify({ started: { files: [], failures: ["the worker's wasm: " + message(e)] } }));
    });
    Promise.all([given, ready]).then(function (r) {
        if (!r[0].count) return;
        self.dispatchEvent(new MessageEvent("message", { data: [r[0].started, r[0].blobs] }));
    });
})();
