//! A reader that closes stdout early.

use super::*;

/// `repoprobe … | head`: the reader closes the pipe after a few bytes; the command ends quietly
/// with its own exit code, no panic ("failed printing to stdout") and no error.
#[test]
fn a_reader_that_stops_early_ends_the_output_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.json");
    let synth = [
        "synth",
        "--models",
        "4",
        "--questions",
        "200",
        "--runs",
        "2",
        "--seed",
        "3",
    ];
    let mut to_file = synth.to_vec();
    to_file.extend(["--out", path_str(&file)]);
    run(&to_file).expect_code(0);
    let score = [
        "score",
        path_str(&file),
        "--format",
        "json",
        "--items",
        "--bootstrap",
        "0",
    ];
    let validate = ["validate", path_str(&file)];
    for args in [&synth[..], &score[..], &validate[..]] {
        // Whole, the output is more than a pipe holds, so the command is still writing when
        // the reader goes (or, for `validate`, short: written before).
        let whole = run(args);
        whole.expect_code(0);
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("repoprobe"))
            .args(args)
            .env_clear()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 16];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            stderr.trim().is_empty() || !stderr.contains("error"),
            "{args:?}: {stderr}"
        );
        assert_eq!(&first[..], &whole.stdout.as_bytes()[..16], "{args:?}");
        if args[0] != "validate" {
            assert!(
                whole.stdout.len() > 1 << 18,
                "{args:?}: {} bytes",
                whole.stdout.len()
            );
        }
    }
}

#[test]
fn score_ends_with_what_it_did_not_count_per_file_in_the_sites_words() {
    let r = run(&["score", GOLDEN, "--bootstrap", "0"]);
    r.expect_code(0);
    let tail: Vec<&str> = r
        .stderr
        .lines()
        .skip_while(|l| !l.contains("scores use the valid records only"))
        .collect();
    // Five judgment records and one scalar judgment left out, one sentence per file: the very
    // sentences `repoprobe_core::issue::summary_lines` gives the site.
    assert!(
        tail.iter().any(|l| l
            .trim_start()
            .starts_with("5 records of judgments.jsonl were not counted (")),
        "{}",
        r.stderr
    );
    assert!(
        tail.iter().any(|l| l
            .trim_start()
            .starts_with("1 record of scalar_judgments.jsonl was not counted (")),
        "{}",
        r.stderr
    );
}
