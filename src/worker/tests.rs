//! The worker's logic, natively: the golden files loaded as the browser glue loads them
//! (streamed in chunks, texts skipped), then asked what the page asks.

use super::question::{ReadSpan, batch_ranges};
use super::testdata::{FILES, golden};
use super::*;
use crate::protocol::{Origin, Snapshot, ViewOptions};

/// Loads what counts under `options` as the glue does, feeding each file in `chunk`-byte
/// pieces; `broken` names a file the "browser" stops reading after its first piece.
fn load(
    w: &mut Worker<Vec<u8>>,
    options: &ViewOptions,
    chunk: usize,
    broken: Option<&str>,
) -> Snapshot {
    let mut load = w.begin_load(options);
    for (name, bytes) in load.files.clone() {
        load.loader.begin_file(&name);
        for (n, piece) in bytes.chunks(chunk).enumerate() {
            if broken == Some(name.as_str()) && n == 1 {
                load.unread(
                    &name,
                    &host::Stopped {
                        read: chunk as u64,
                        error: crate::protocol::ReadError::Browser("gone".into()),
                    },
                );
                break;
            }
            load.loader.feed(piece);
        }
        load.loader.end_file();
    }
    w.finish_load(load)
}

fn golden_worker(origin: Origin) -> Worker<Vec<u8>> {
    let mut w = Worker::default();
    w.add(
        FILES.iter().map(|(n, _)| n.to_string()).collect(),
        &[origin; 4],
        FILES.iter().map(|(_, b)| b.to_vec()).collect(),
    );
    w
}

#[test]
fn a_streamed_load_gives_the_snapshot_of_a_whole_load() {
    let mut w = golden_worker(Origin::Bundled);
    let streamed = load(&mut w, &ViewOptions::default(), 97, None);
    let whole = Snapshot::of(&golden());
    assert_eq!(streamed.counts, whole.counts);
    assert_eq!(streamed.questions, whole.questions);
    // (What each file gave comes from the records' places, which only a streamed load keeps.)
    let gave = |kind: &str, n: usize| vec![(kind.to_string(), n)];
    assert_eq!(
        streamed.per_file,
        [
            gave("benchmark", 3),
            gave("answers", 6),
            gave("judgments", 10),
            gave("scalar_judgments", 2)
        ]
    );
    // The scores are those of the whole load.
    let o = ViewOptions::default();
    assert_eq!(
        scoring::report(w.loaded(), &o, None),
        scoring::report(&golden(), &o, None)
    );
}

#[test]
fn a_file_read_only_in_part_is_an_issue_of_the_load() {
    let mut w = golden_worker(Origin::Dropped);
    let s = load(&mut w, &ViewOptions::default(), 64, Some("answers.jsonl"));
    assert!(s.issues.iter().any(|i| {
        i.file == "answers.jsonl"
            && i.location == repoprobe_core::issue::Place::Byte(64)
            && i.message
                .contains("could not read the file beyond this point: gone")
    }));
}

#[test]
fn added_files_replace_the_bundled_ones_unless_kept() {
    let mut w = golden_worker(Origin::Bundled);
    w.add(vec!["mine.jsonl".into()], &[], vec![b"{}".to_vec()]);
    let names = |w: &mut Worker<Vec<u8>>, keep: bool| -> Vec<String> {
        let o = ViewOptions {
            keep_bundled: keep,
            ..ViewOptions::default()
        };
        w.begin_load(&o).files.into_iter().map(|(n, _)| n).collect()
    };
    assert_eq!(
        names(&mut w, false),
        ["mine.jsonl"],
        "an origin not given is a dropped file"
    );
    assert_eq!(names(&mut w, true).len(), 5);
}

#[test]
fn a_questions_texts_are_read_back_by_range() {
    let mut w = golden_worker(Origin::Bundled);
    load(&mut w, &ViewOptions::default(), 4096, None);
    let before = w.question("q1", &[]);
    assert!(!before.answers.is_empty());
    assert!(
        before
            .answers
            .iter()
            .all(|a| a.answer.as_deref().unwrap_or_default().is_empty())
    );
    let (reads, errors) = w.text_reads("q1");
    assert!(errors.is_empty());
    for r in &reads {
        for (b, wanted) in &r.batches {
            let bytes = r.blob[b.start as usize..b.end as usize].to_vec();
            let mut errors = Vec::new();
            w.fill(b.start, wanted, &bytes, &mut errors);
            assert!(errors.is_empty(), "{errors:?}");
        }
    }
    let after = w.question("q1", &[]);
    assert_eq!(after, QuestionData::of(&golden().dataset, "q1"));
    assert!(after.texts_error.is_none());
    // Once read, nothing more to read; another question still has its own.
    assert!(w.text_reads("q1").0.is_empty());
    assert!(!w.text_reads("q2").0.is_empty());
    // A file changed since: the bytes are another record's, and the question view says so.
    let (reads, _) = w.text_reads("q2");
    let (b, wanted) = &reads[0].batches[0];
    let mut errors = Vec::new();
    w.fill(b.start, wanted, b"{\"nothing\": 1}", &mut errors);
    assert!(!errors.is_empty());
    let q = w.question("q2", &errors);
    assert!(q.texts_error.unwrap().contains("could not be read back"));
}

#[test]
fn every_file_is_hashed_once_in_order() {
    let mut w = golden_worker(Origin::Url);
    let names: Vec<String> = std::iter::from_fn(|| w.next_to_hash().map(|(n, _)| n)).collect();
    assert_eq!(names, FILES.map(|(n, _)| n.to_string()));
    w.add(vec!["late".into()], &[Origin::Dropped], vec![Vec::new()]);
    assert_eq!(w.next_to_hash().map(|(n, _)| n).as_deref(), Some("late"));
    assert!(w.next_to_hash().is_none());
}

#[test]
fn near_ranges_share_one_read_and_far_ones_do_not() {
    // Out of order, overlapping, one far away, one too long to join.
    let ranges = [
        (100, 150),
        (0, 40),
        (45, 90),
        (10_000, 10_010),
        (140, 160),
        (170, 5_000),
    ];
    let b = batch_ranges(&ranges, 10, 1_000);
    assert_eq!(
        b,
        [
            ReadSpan {
                start: 0,
                end: 160,
                members: vec![1, 2, 0, 4]
            },
            ReadSpan {
                start: 170,
                end: 5_000,
                members: vec![5]
            },
            ReadSpan {
                start: 10_000,
                end: 10_010,
                members: vec![3]
            },
        ]
    );
    // Every range lies inside the read that serves it.
    for batch in &b {
        for &i in &batch.members {
            assert!(batch.start <= ranges[i].0 && ranges[i].1 <= batch.end);
        }
    }
    // With no gap allowed only touching ranges join; a reversed range reads nothing.
    let b = batch_ranges(&[(0, 10), (10, 20), (21, 30), (50, 40)], 0, u64::MAX);
    assert_eq!(
        b.iter().map(|b| (b.start, b.end)).collect::<Vec<_>>(),
        [(0, 20), (21, 30), (50, 50)]
    );
    assert!(batch_ranges(&[], 10, 10).is_empty());
    // Near the end of the address space nothing overflows.
    let b = batch_ranges(
        &[(u64::MAX - 5, u64::MAX), (u64::MAX - 2, u64::MAX)],
        u64::MAX,
        u64::MAX,
    );
    assert_eq!(b.len(), 1);
}

#[test]
fn the_snapshot_counts_questions_and_the_report_histograms_over_the_questions_in_force() {
    let s = Snapshot::of(&golden());
    assert_eq!(s.questions.len(), 3);
    assert!(s.counts.contains(&("judgments".to_string(), 10)));
    let a_j = |o: &ViewOptions| {
        let r = crate::worker::scoring::report(&golden(), o, Some(0)).unwrap();
        r.histograms
            .unwrap()
            .into_iter()
            .find(|h| h.model == "A" && h.judge == "J")
            .unwrap()
            .counts
    };
    // A/J totals: 10, 8, 6, 5, 1, 0.
    assert_eq!(
        a_j(&ViewOptions::default()),
        [1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1]
    );
    // A dropped question's judgments leave the histogram as they leave every number.
    let dropped = a_j(&ViewOptions {
        drop: vec!["q1".into()],
        ..ViewOptions::default()
    });
    assert!(dropped.iter().sum::<usize>() < 6, "{dropped:?}");
    assert_eq!(
        s.issues.len(),
        6,
        "every issue of the golden files travels with the snapshot"
    );
}
