//! Throughput and memory of a long `repoprobe judge` run against a loopback server with a fixed
//! latency (a benchmark that prints figures, not a test):
//!
//!   cargo bench -p repoprobe-cli --bench throughput [-- --latency-ms 100 --concurrency 64]
//!
//! With latency L and concurrency C the most any client can do is C / L requests a second; the
//! run's throughput is reported as a share of that (target ≥ 90 %). Peak RSS of the `repoprobe`
//! process (from `wait4`) is reported for growing numbers of records: it must stay flat, since
//! records go to the journal as they finish and only their keys are kept.

#[path = "../tests/cli/common/mod.rs"]
#[allow(dead_code)] // the bench uses the fake server and the answers only
mod common;

use common::*;
use std::io::Write;
use std::time::{Duration, Instant};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == &format!("--{name}"))
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `n` answers to the golden benchmark's three questions (as many models as it takes).
fn answers(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let p = dir.join(format!("answers-{n}.jsonl"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    for i in 0..n {
        let q = ["q1", "q2", "q3"][i % 3];
        writeln!(
            f,
            r#"{{"question_id":"{q}","model":"M{}","answer":"an answer of some length to judge, number {i}"}}"#,
            i / 3
        )
        .unwrap();
    }
    p
}

/// Runs `judge` to its end; returns (wall time, peak RSS in KiB).
fn run(api: &FakeApi, dir: &std::path::Path, n: usize, concurrency: u64) -> (Duration, i64) {
    let out = dir.join(format!("j-{n}.jsonl"));
    let mut c = live_cmd(api, "judge", &out);
    c.arg(BENCHMARK)
        .arg(answers(dir, n))
        .args(["--concurrency", &concurrency.to_string()])
        .stderr(std::process::Stdio::null());
    let t = Instant::now();
    #[allow(clippy::zombie_processes)] // reaped by wait4 below, which also gives its rusage
    let child = c.spawn().unwrap();
    // SAFETY: `rusage` is plain integers, for which all-zero bytes are a valid value.
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waits for our own child, once; std's Child is not waited on afterwards.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let wall = t.elapsed();
    assert!(
        pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "judge failed"
    );
    assert_eq!(records(&out).len(), n, "every key judged once");
    (wall, usage.ru_maxrss)
}

fn main() {
    let latency = arg("latency-ms", 100);
    let concurrency = arg("concurrency", 64);
    let n = arg("records", 3000) as usize;
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| s.latency = Duration::from_millis(latency));
    let dir = tempfile::tempdir().unwrap();

    let (wall, rss) = run(&api, dir.path(), n, concurrency);
    let ideal = concurrency as f64 / (latency as f64 / 1000.0);
    let got = n as f64 / wall.as_secs_f64();
    println!(
        "throughput: {n} judgments in {:.2} s = {got:.0}/s; concurrency {concurrency} ÷ latency {latency} ms = {ideal:.0}/s; share {:.1} % (target ≥ 90 %); peak RSS {:.1} MiB",
        wall.as_secs_f64(),
        100.0 * got / ideal,
        rss as f64 / 1024.0
    );

    // Memory as the number of records grows, at no latency (the client's own footprint).
    api.with(|s| s.latency = Duration::ZERO);
    for n in [1_000, 4_000, 16_000] {
        let (wall, rss) = run(&api, dir.path(), n, concurrency);
        println!(
            "memory: {n:>6} judgments: peak RSS {:.1} MiB ({:.1} s)",
            rss as f64 / 1024.0,
            wall.as_secs_f64()
        );
    }
}
