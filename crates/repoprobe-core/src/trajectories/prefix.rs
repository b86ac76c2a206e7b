//! A run's first steps from its line's first bytes, so that a 50 MB trajectory shows its start
//! before the rest is read (the site's first paint). The line is walked field by field with
//! serde_json reading each value; where the bytes end, what was read whole is kept and the rest
//! is left to the whole line's read ([`super::read_line`]), which always follows.
//!
//! Our writer puts `steps` last in a trajectory (see `Trajectory`'s field order), so the fields
//! the view needs first (`agent`, `extra.worktree`) are read before any step. Another writer's
//! order still works where every field a `Trajectory` needs precedes `steps`; where one does
//! not, there is no prefix and the caller waits for the whole line.

use super::{TrajectoryError, TrajectoryKey};
use crate::model::trajectory::{Step, Trajectory};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// What the first bytes of a line hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Prefix {
    pub key: TrajectoryKey,
    /// The fields read, and the steps read whole, in order.
    pub trajectory: Trajectory,
    /// The bytes held the whole line.
    pub complete: bool,
}

/// Why the walk stopped early.
enum Stop {
    /// The bytes end here.
    End,
    /// The bytes are not a trajectory line.
    Bad(String),
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<u8> {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.at += 1;
        }
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), Stop> {
        match self.peek() {
            Some(b) if b == c => {
                self.at += 1;
                Ok(())
            }
            Some(b) => Err(Stop::Bad(format!(
                "byte {}: {:?} where {:?} was expected",
                self.at, b as char, c as char
            ))),
            None => Err(Stop::End),
        }
    }

    /// After a member: `true` at the container's `close`, `false` after a comma.
    fn next_or_close(&mut self, close: u8) -> Result<bool, Stop> {
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(false)
            }
            Some(b) if b == close => {
                self.at += 1;
                Ok(true)
            }
            Some(b) => Err(Stop::Bad(format!(
                "byte {}: {:?} where ',' or {:?} was expected",
                self.at, b as char, close as char
            ))),
            None => Err(Stop::End),
        }
    }

    /// One JSON value. A value that ends where the bytes do may have been cut (a number), and
    /// counts as not read: in a whole line the object's `}` always follows it.
    fn value<T: DeserializeOwned>(&mut self) -> Result<T, Stop> {
        let rest = &self.bytes[self.at..];
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
        match values.next() {
            Some(Ok(v)) if values.byte_offset() < rest.len() => {
                self.at += values.byte_offset();
                Ok(v)
            }
            Some(Ok(_)) | None => Err(Stop::End),
            Some(Err(e)) if e.is_eof() => Err(Stop::End),
            Some(Err(e)) => Err(Stop::Bad(format!("byte {}: {e}", self.at))),
        }
    }
}

/// The key, the trajectory's fields and its whole steps that `bytes`, the start of a
/// trajectories line, holds. An error when they are not a line's start, or hold no key or not
/// the fields a trajectory needs before its steps.
pub fn read_prefix(bytes: &[u8]) -> Result<Prefix, TrajectoryError> {
    let mut key = Map::new();
    let mut fields = Map::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut c = Cursor { bytes, at: 0 };
    let walked = walk(&mut c, &mut key, &mut fields, &mut steps);
    let complete = match walked {
        Ok(()) => true,
        Err(Stop::End) => false,
        Err(Stop::Bad(why)) => return Err(TrajectoryError::NotALine(why)),
    };
    let key: TrajectoryKey = serde_json::from_value(Value::Object(key))
        .map_err(|e| TrajectoryError::NoHead(format!("hold no whole key: {e}")))?;
    fields.insert("steps".into(), Value::Array(Vec::new()));
    let mut trajectory: Trajectory = serde_json::from_value(Value::Object(fields))
        .map_err(|e| TrajectoryError::NoHead(format!("do not start a trajectory: {e}")))?;
    trajectory.steps = steps;
    Ok(Prefix {
        key,
        trajectory,
        complete,
    })
}

fn walk(
    c: &mut Cursor,
    key: &mut Map<String, Value>,
    fields: &mut Map<String, Value>,
    steps: &mut Vec<Step>,
) -> Result<(), Stop> {
    c.expect(b'{')?;
    if c.peek() == Some(b'}') {
        return Err(Stop::Bad("an empty object".into()));
    }
    loop {
        let name: String = c.value()?;
        c.expect(b':')?;
        if name == "trajectory" {
            trajectory(c, fields, steps)?;
        } else {
            let v: Value = c.value()?;
            key.insert(name, v);
        }
        if c.next_or_close(b'}')? {
            return Ok(());
        }
    }
}

fn trajectory(
    c: &mut Cursor,
    fields: &mut Map<String, Value>,
    steps: &mut Vec<Step>,
) -> Result<(), Stop> {
    c.expect(b'{')?;
    if c.peek() == Some(b'}') {
        c.at += 1;
        return Ok(());
    }
    loop {
        let name: String = c.value()?;
        c.expect(b':')?;
        if name == "steps" {
            c.expect(b'[')?;
            if c.peek() == Some(b']') {
                c.at += 1;
            } else {
                loop {
                    steps.push(c.value()?);
                    if c.next_or_close(b']')? {
                        break;
                    }
                }
            }
        } else {
            let v: Value = c.value()?;
            fields.insert(name, v);
        }
        if c.next_or_close(b'}')? {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectories::{line, read_line};

    fn run(steps: usize) -> (TrajectoryKey, Trajectory) {
        let key = TrajectoryKey {
            question_id: "q-1".into(),
            model: "m \"quoted\" }".into(),
            attempt: 2,
        };
        let steps: Vec<Value> = (1..=steps)
            .map(|i| {
                serde_json::json!({
                    "step_id": i,
                    "source": if i == 1 { "user" } else { "agent" },
                    "message": format!("step {i}: a brace }} a bracket ] a quote \" and {}", "x".repeat(i * 7)),
                })
            })
            .collect();
        let t: Trajectory = serde_json::from_value(serde_json::json!({
            "schema_version": "ATIF-v1.8",
            "session_id": "s",
            "agent": {"name": "builtin", "version": "1"},
            "steps": steps,
            "final_metrics": {"total_steps": 1},
            "extra": {"worktree": "/w", "n": 12345},
        }))
        .unwrap();
        (key, t)
    }

    #[test]
    fn every_cut_of_a_line_gives_its_whole_steps_and_the_whole_line_gives_all() {
        let (key, t) = run(12);
        let text = line(&key, &t).unwrap();
        let bytes = text.trim_end().as_bytes();
        let whole = read_prefix(bytes).unwrap();
        assert!(whole.complete);
        assert_eq!(
            (whole.key.clone(), whole.trajectory.clone()),
            read_line(bytes).unwrap()
        );
        let key_end = text.find("\"trajectory\"").unwrap();
        let steps_at = text.find("\"steps\"").unwrap();
        let mut seen = 0;
        for cut in 0..bytes.len() {
            match read_prefix(&bytes[..cut]) {
                Ok(p) => {
                    assert!(!p.complete, "cut {cut}");
                    assert_eq!(p.key, key);
                    assert_eq!(p.trajectory.agent.name, "builtin");
                    // Steps come in order, each one whole, never more as the cut grows less.
                    assert_eq!(p.trajectory.steps[..], t.steps[..p.trajectory.steps.len()]);
                    assert!(p.trajectory.steps.len() >= seen, "cut {cut}");
                    seen = p.trajectory.steps.len();
                    // Written last, the steps follow every other field.
                    if cut > steps_at {
                        assert_eq!(p.trajectory.extra, t.extra, "cut {cut}");
                    }
                }
                Err(e) => assert!(cut < key_end + 200, "cut {cut}: {e}"),
            }
        }
        assert_eq!(seen, 12);
        let last_cut = read_prefix(&bytes[..bytes.len() - "]}}".len()]).unwrap();
        assert_eq!(
            last_cut.trajectory.steps.len(),
            11,
            "a step ending where the bytes do"
        );
    }

    #[test]
    fn another_writers_order_and_foreign_bytes_are_told_apart() {
        let (_, t) = run(3);
        // Steps before the agent: no trajectory can be made before the steps end.
        let text = format!(
            r#"{{"question_id":"q","model":"m","attempt":0,"trajectory":{{"steps":{},"schema_version":"ATIF-v1.8","agent":{}}}}}"#,
            serde_json::to_string(&t.steps).unwrap(),
            serde_json::to_string(&t.agent).unwrap(),
        );
        let cut = &text.as_bytes()[..text.len() - 40];
        let e = read_prefix(cut).unwrap_err();
        assert!(e.to_string().contains("do not start a trajectory"), "{e}");
        assert!(read_prefix(text.as_bytes()).unwrap().complete);
        assert!(
            read_prefix(b"[1,2]")
                .unwrap_err()
                .to_string()
                .contains("not a trajectory line")
        );
        assert!(
            read_prefix(b"{\"question_id\" 1")
                .unwrap_err()
                .to_string()
                .contains("':' was expected")
        );
        assert!(
            read_prefix(b"")
                .unwrap_err()
                .to_string()
                .contains("no whole key")
        );
    }
}
