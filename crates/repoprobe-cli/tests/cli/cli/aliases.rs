//! The old spellings through the real binary: the same output as today's, and one `note:` line
//! on stderr naming today's (the rewrite of every alias is tested in `src/aliases.rs`).

use super::{SAMPLE, run};

/// `--format text` and `judges … --seed`: stdout equals today's spelling's, the note says which.
#[test]
fn an_old_spelling_runs_as_todays_and_says_so_once() {
    let judges = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/judges");
    for (old, new, says) in [
        (
            vec!["validate", SAMPLE, "--format", "text"],
            vec!["validate", SAMPLE, "--format", "table"],
            "`repoprobe validate --format text` is now `--format table`",
        ),
        (
            vec!["judges", judges, "--seed", "4", "--bootstrap", "50"],
            vec![
                "judge-agreement",
                judges,
                "--bootstrap-seed",
                "4",
                "--bootstrap",
                "50",
            ],
            "`repoprobe judges` is now `repoprobe judge-agreement`",
        ),
    ] {
        let (was, is) = (run(&old), run(&new));
        assert_eq!(was.code, is.code, "{old:?}\n{}", was.stderr);
        assert_eq!(was.stdout, is.stdout, "{old:?}");
        let notes: Vec<&str> = was
            .stderr
            .lines()
            .filter(|l| l.starts_with("note: `repoprobe"))
            .collect();
        assert!(notes.iter().any(|l| l.contains(says)), "{old:?}: {notes:?}");
        assert!(
            notes
                .iter()
                .all(|l| l.ends_with("the old spelling still works for now")),
            "{notes:?}"
        );
        assert!(!is.stderr.contains("is now"), "{new:?}: {}", is.stderr);
    }
}
