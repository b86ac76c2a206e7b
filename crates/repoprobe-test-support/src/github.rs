//! A fake GitHub GraphQL API over [`FakeServer`]: it answers the operations `repoprobe curate`
//! sends (by their `operationName`: `SearchRepositories`, `Repository`, `AnsweredCount`,
//! `AnsweredDiscussions`, `PinnedCommit`) from a small in-memory [`World`], with GitHub's
//! envelopes — `rateLimit` in every data, `NOT_FOUND` as null data and an error, the primary
//! limit as HTTP 200 with a `RATE_LIMITED` error, a secondary limit as 403 with
//! `retry-after` — and it keeps a [`Logged`] line per request, so that a test can tell that
//! nothing was asked for twice. It does not parse GraphQL: the variables say what is asked (the
//! queries' fields are checked against GitHub's schema once, see `repoprobe_github::queries`).
//!
//! [`World::standard`] is the world of the CLI's tests: repositories with and without
//! Discussions, categories answerable and not, a category over more than one page, 1,100
//! repositories of filler so that the whole range's search counts over 1,000, an unanswered
//! thread, an answer that is gone, threads relying on images and one pinned before any commit.

use crate::{FakeServer, Request, Response};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A repository of the world.
#[derive(Debug, Clone)]
pub struct Repo {
    pub name_with_owner: String,
    pub id: String,
    pub stars: u64,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub created_at: String,
    pub discussions_enabled: bool,
    pub default_branch: Option<String>,
    /// `primaryLanguage { name }`, `description`, `repositoryTopics`.
    pub language: Option<String>,
    pub description: Option<String>,
    pub topics: Vec<String>,
    /// (oid, committed date) of the default branch, oldest first.
    pub commits: Vec<(String, String)>,
    pub categories: Vec<Cat>,
    pub discussions: Vec<Disc>,
}

#[derive(Debug, Clone)]
pub struct Cat {
    pub id: String,
    pub name: String,
    pub answerable: bool,
}

/// A discussion; `answered` with no `answer` is an accepted answer that was deleted.
#[derive(Debug, Clone)]
pub struct Disc {
    pub number: u64,
    pub category_id: String,
    pub title: String,
    pub body: String,
    pub created_at: String,
    pub upvotes: i64,
    pub author: Option<String>,
    pub answered: bool,
    pub answer: Option<Ans>,
}

#[derive(Debug, Clone)]
pub struct Ans {
    pub body: String,
    pub author: Option<String>,
    pub association: String,
    pub chosen_at: String,
}

/// What the fake knows.
#[derive(Debug, Clone, Default)]
pub struct World {
    pub repos: Vec<Repo>,
}

/// A fault played instead of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GhFault {
    /// HTTP 200 with `errors: [{type: RATE_LIMITED}]`, `x-ratelimit-remaining: 0` and a reset
    /// one second away.
    RateLimited,
    /// 403 "secondary rate limit" with `retry-after: 1`.
    Secondary,
    /// 502, as GitHub answers a query that took too long.
    Gateway,
    /// 200 whose body is an HTML page.
    Html,
    /// 200 JSON whose data is of another shape than asked.
    WrongShape,
}

/// How a request was answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// With data: the request was served.
    Data,
    Fault(GhFault),
    /// Refused (bad token, unknown operation).
    Refused,
}

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub op: String,
    pub variables: Value,
    pub outcome: Outcome,
}

/// A request to hold unanswered until [`FakeGitHub::release`] (a test kills its client
/// meanwhile): the first whose operation is `op` and whose variable `var` is `value`.
#[derive(Debug, Clone)]
pub struct Gate {
    pub op: String,
    pub var: String,
    pub value: Value,
}

/// The fake's state; tests change it between runs.
pub struct GhState {
    pub world: World,
    /// The token the server accepts (`authorization: bearer TOKEN`).
    pub token: String,
    pub log: Vec<Logged>,
    /// (operation, n, fault): the n-th request (1-based) of that operation gets the fault.
    pub faults: Vec<(String, usize, GhFault)>,
    /// `AnsweredDiscussions` asking for more nodes than this gets a 502.
    pub slow_above: Option<u64>,
    pub gate: Option<Gate>,
    /// The gate's request has arrived (and is being held).
    pub held: bool,
    pub released: bool,
}

/// The fake GitHub, on 127.0.0.1.
pub struct FakeGitHub {
    pub state: Arc<Mutex<GhState>>,
    server: FakeServer,
}

impl FakeGitHub {
    pub fn start(world: World, token: &str) -> FakeGitHub {
        let state = Arc::new(Mutex::new(GhState {
            world,
            token: token.to_string(),
            log: Vec::new(),
            faults: Vec::new(),
            slow_above: None,
            gate: None,
            held: false,
            released: false,
        }));
        let s = Arc::clone(&state);
        let server = FakeServer::start(move |req| serve(req, &s));
        FakeGitHub { state, server }
    }

    /// `http://127.0.0.1:PORT/graphql`.
    pub fn url(&self) -> String {
        format!("{}/graphql", self.server.origin())
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut GhState) -> R) -> R {
        f(&mut self.state.lock().unwrap())
    }

    /// Lets a held request go (answered 503: its client is gone).
    pub fn release(&self) {
        self.with(|s| s.released = true);
    }

    /// The requests served with data, as (operation, variables) text.
    pub fn served(&self) -> Vec<String> {
        self.with(|s| {
            s.log
                .iter()
                .filter(|l| l.outcome == Outcome::Data)
                .map(|l| format!("{} {}", l.op, l.variables))
                .collect()
        })
    }
}

fn serve(req: &Request, state: &Mutex<GhState>) -> Response {
    let body = req.json();
    let op = body["operationName"].as_str().unwrap_or("").to_string();
    let vars = body["variables"].clone();
    let mut s = state.lock().unwrap();
    let auth_ok = req.header("authorization") == Some(&format!("bearer {}", s.token));
    if !auth_ok || req.method != "POST" {
        s.log.push(Logged {
            op,
            variables: vars,
            outcome: Outcome::Refused,
        });
        return Response::json(
            401,
            r#"{"message":"Bad credentials","documentation_url":"https://docs.github.com/graphql"}"#,
        );
    }
    if let Some(g) = &s.gate
        && !s.held
        && g.op == op
        && vars.get(&g.var) == Some(&g.value)
    {
        s.held = true;
        drop(s);
        loop {
            std::thread::sleep(Duration::from_millis(20));
            if state.lock().unwrap().released {
                return Response::json(503, "{}");
            }
        }
    }
    let n = s.log.iter().filter(|l| l.op == op).count() + 1;
    let fault = s
        .faults
        .iter()
        .find(|(o, k, _)| *o == op && *k == n)
        .map(|f| f.2);
    let slow = op == "AnsweredDiscussions"
        && s.slow_above
            .is_some_and(|limit| vars["first"].as_u64().unwrap_or(0) > limit);
    let fault = fault.or(slow.then_some(GhFault::Gateway));
    if let Some(f) = fault {
        s.log.push(Logged {
            op,
            variables: vars,
            outcome: Outcome::Fault(f),
        });
        return fault_response(f);
    }
    let answer = answer(&s.world, &op, &vars);
    let outcome = match answer {
        Some(_) => Outcome::Data,
        None => Outcome::Refused,
    };
    s.log.push(Logged {
        op: op.clone(),
        variables: vars,
        outcome,
    });
    match answer {
        Some(body) => Response::json(200, body.to_string())
            .header("x-ratelimit-limit", "5000")
            .header("x-ratelimit-remaining", "4990")
            .header("x-ratelimit-reset", &(unix_now() + 3600).to_string()),
        None => Response::json(
            200,
            json!({"errors": [{"message": format!("unknown operation {op:?}")}]}).to_string(),
        ),
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn fault_response(f: GhFault) -> Response {
    match f {
        GhFault::RateLimited => Response::json(
            200,
            json!({"errors": [{"type": "RATE_LIMITED", "code": "graphql_rate_limit",
                "message": "API rate limit already exceeded for user ID 1."}]})
            .to_string(),
        )
        .header("x-ratelimit-limit", "5000")
        .header("x-ratelimit-remaining", "0")
        .header("x-ratelimit-reset", &(unix_now() + 1).to_string()),
        GhFault::Secondary => Response::json(
            403,
            r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}"#,
        )
        .header("retry-after", "1"),
        GhFault::Gateway => Response::json(
            502,
            r#"{"data":null,"errors":[{"message":"Something went wrong while executing your query. This may be the result of a timeout."}]}"#,
        ),
        GhFault::Html => Response::new(200, "<html><body><h1>Unicorn!</h1></body></html>")
            .header("content-type", "text/html"),
        GhFault::WrongShape => Response::json(
            200,
            r#"{"data":{"rateLimit":{"cost":1,"remaining":4000,"resetAt":"2099-01-01T00:00:00Z"},"search":{"repositoryCount":"many","nodes":{}},"repository":{"discussions":[]}}}"#,
        ),
    }
}

const RATE: &str = "2099-01-01T00:00:00Z";

fn data(mut d: Value) -> Value {
    d["rateLimit"] = json!({"cost": 1, "remaining": 4990, "resetAt": RATE});
    json!({ "data": d })
}

fn find<'w>(world: &'w World, vars: &Value) -> Option<&'w Repo> {
    let name = format!(
        "{}/{}",
        vars["owner"].as_str().unwrap_or(""),
        vars["name"].as_str().unwrap_or("")
    )
    .to_lowercase();
    world
        .repos
        .iter()
        .find(|r| r.name_with_owner.to_lowercase() == name)
}

fn not_found(vars: &Value) -> Value {
    let mut d = data(json!({"repository": null}));
    d["errors"] = json!([{"type": "NOT_FOUND", "path": ["repository"],
        "message": format!("Could not resolve to a Repository with the name '{}/{}'.",
            vars["owner"].as_str().unwrap_or(""), vars["name"].as_str().unwrap_or(""))}]);
    d
}

fn repo_node(r: &Repo) -> Value {
    json!({
        "__typename": "Repository",
        "id": r.id, "nameWithOwner": r.name_with_owner,
        "url": format!("https://github.com/{}", r.name_with_owner),
        "stargazerCount": r.stars, "createdAt": r.created_at,
        "hasDiscussionsEnabled": r.discussions_enabled,
        "defaultBranchRef": r.default_branch.as_ref().map(|b| json!({"name": b})),
        "primaryLanguage": r.language.as_ref().map(|l| json!({"name": l})),
        "description": r.description,
        "repositoryTopics": {"nodes": r.topics.iter().map(|t| json!({"topic": {"name": t}})).collect::<Vec<_>>()},
        "discussionCategories": {"nodes": r.categories.iter().map(|c| json!({
            "id": c.id, "name": c.name, "isAnswerable": c.answerable})).collect::<Vec<_>>()}
    })
}

/// `cursor` `p:N` → N.
fn offset(cursor: &Value) -> usize {
    cursor
        .as_str()
        .and_then(|c| c.strip_prefix("p:"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The first 19 characters of a time (`YYYY-MM-DDTHH:MM:SS`): comparable as text.
fn t19(s: &str) -> &str {
    &s[..s.len().min(19)]
}

fn answer(world: &World, op: &str, vars: &Value) -> Option<Value> {
    Some(match op {
        "SearchRepositories" => search_repositories(world, vars),
        "Repository" => match find(world, vars) {
            Some(r) => data(json!({"repository": repo_node(r)})),
            None => not_found(vars),
        },
        "AnsweredCount" => match find(world, vars) {
            Some(r) => {
                let n = r
                    .discussions
                    .iter()
                    .filter(|d| {
                        d.answered && d.category_id == vars["category"].as_str().unwrap_or("")
                    })
                    .count();
                data(json!({"repository": {"discussions": {"totalCount": n}}}))
            }
            None => not_found(vars),
        },
        "AnsweredDiscussions" => match find(world, vars) {
            Some(r) => answered_discussions(r, vars),
            None => not_found(vars),
        },
        "PinnedCommit" => match find(world, vars) {
            Some(r) => {
                let until = vars["until"].as_str().unwrap_or("");
                let last = r.commits.iter().rev().find(|(_, at)| t19(at) <= t19(until));
                let branch = r.default_branch.as_ref().map(|b| json!({
                    "name": b,
                    "target": {"__typename": "Commit", "history": {"nodes":
                        last.map(|(oid, at)| vec![json!({"oid": oid, "committedDate": at})]).unwrap_or_default()}}
                }));
                data(json!({"repository": {"defaultBranchRef": branch}}))
            }
            None => not_found(vars),
        },
        _ => return None,
    })
}

/// `SearchRepositories`: the repositories created in the query's range with enough stars, by
/// creation time, a page of them (at most 1,000 listed, as GitHub's search).
fn search_repositories(world: &World, vars: &Value) -> Value {
    let q = vars["q"].as_str().unwrap_or("");
    let (mut from, mut to, mut stars) = ("", "9999", 0u64);
    for term in q.split_whitespace() {
        if let Some(range) = term.strip_prefix("created:") {
            let (a, b) = range.split_once("..").unwrap_or((range, "9999"));
            (from, to) = (a, b);
        } else if let Some(n) = term.strip_prefix("stars:>=") {
            stars = n.parse().unwrap_or(0);
        }
    }
    let mut hits: Vec<&Repo> = world
        .repos
        .iter()
        .filter(|r| {
            r.stars >= stars && t19(&r.created_at) >= t19(from) && t19(&r.created_at) <= t19(to)
        })
        .collect();
    hits.sort_by(|a, b| {
        (&a.created_at, &a.name_with_owner).cmp(&(&b.created_at, &b.name_with_owner))
    });
    let listed = hits.len().min(1000);
    let first = vars["first"].as_u64().unwrap_or(10) as usize;
    let start = offset(&vars["after"]).min(listed);
    let end = (start + first).min(listed);
    data(json!({"search": {
        "repositoryCount": hits.len(),
        "pageInfo": {"endCursor": format!("p:{end}"), "hasNextPage": end < listed},
        "nodes": hits[start..end].iter().map(|r| repo_node(r)).collect::<Vec<_>>()
    }}))
}

/// `AnsweredDiscussions`: a page of the repository's answered discussions of a category, by
/// creation time.
fn answered_discussions(r: &Repo, vars: &Value) -> Value {
    let cat = vars["category"].as_str().unwrap_or("");
    let mut ds: Vec<&Disc> = r
        .discussions
        .iter()
        .filter(|d| d.answered && d.category_id == cat)
        .collect();
    ds.sort_by(|a, b| (&a.created_at, a.number).cmp(&(&b.created_at, b.number)));
    let first = vars["first"].as_u64().unwrap_or(10) as usize;
    let start = offset(&vars["after"]).min(ds.len());
    let end = (start + first).min(ds.len());
    let cat_name = r
        .categories
        .iter()
        .find(|c| c.id == cat)
        .map_or("", |c| c.name.as_str());
    let nodes: Vec<Value> = ds[start..end]
        .iter()
        .map(|d| {
            let url = format!(
                "https://github.com/{}/discussions/{}",
                r.name_with_owner, d.number
            );
            json!({
                "id": format!("D_{}_{}", r.id, d.number), "number": d.number,
                "url": url, "title": d.title, "body": d.body,
                "createdAt": d.created_at, "upvoteCount": d.upvotes,
                "author": d.author.as_ref().map(|a| json!({"login": a})),
                "category": {"id": cat, "name": cat_name},
                "answerChosenAt": d.answer.as_ref().map(|a| a.chosen_at.clone()),
                "answer": d.answer.as_ref().map(|a| json!({
                    "id": format!("DC_{}_{}", r.id, d.number),
                    "url": format!("{url}#discussioncomment-{}", d.number * 100),
                    "body": a.body, "authorAssociation": a.association,
                    "author": a.author.as_ref().map(|l| json!({"login": l}))
                }))
            })
        })
        .collect();
    data(json!({"repository": {"discussions": {
        "totalCount": ds.len(),
        "pageInfo": {"endCursor": (end > 0).then(|| format!("p:{end}")), "hasNextPage": end < ds.len()},
        "nodes": nodes
    }}}))
}

fn disc(number: u64, cat: &str, body: &str, answer: Option<(&str, &str)>) -> Disc {
    Disc {
        number,
        category_id: cat.to_string(),
        title: format!("Question {number}"),
        body: body.to_string(),
        created_at: format!("2024-05-{:02}T10:00:00Z", number.min(28)),
        upvotes: number as i64,
        author: Some(format!("asker{number}")),
        answered: answer.is_some(),
        answer: answer.map(|(body, chosen_at)| Ans {
            body: body.to_string(),
            author: Some("maintainer".into()),
            association: "MEMBER".into(),
            chosen_at: chosen_at.to_string(),
        }),
    }
}

fn commits(seed: char) -> Vec<(String, String)> {
    [
        "2024-04-01T00:00:00Z",
        "2024-06-01T00:00:00Z",
        "2024-08-01T00:00:00Z",
    ]
    .iter()
    .enumerate()
    .map(|(i, at)| {
        (
            format!("{}{i}", seed.to_string().repeat(39)),
            at.to_string(),
        )
    })
    .collect()
}

fn repo(name: &str, id: &str, stars: u64, created: &str, discussions: bool) -> Repo {
    Repo {
        name_with_owner: name.to_string(),
        id: id.to_string(),
        stars,
        created_at: created.to_string(),
        discussions_enabled: discussions,
        default_branch: Some("main".into()),
        language: None,
        description: None,
        topics: Vec::new(),
        commits: Vec::new(),
        categories: Vec::new(),
        discussions: Vec::new(),
    }
}

fn cat(id: &str, name: &str, answerable: bool) -> Cat {
    Cat {
        id: id.to_string(),
        name: name.to_string(),
        answerable,
    }
}

impl World {
    /// The tests' world (with `--min-answered 3 --min-stars 1000 --created-since 2024-01-01
    /// --created-until 2025-12-31`):
    ///
    /// - `acme/rocket`, kept: Q&A answerable with 8 answered threads over pages of 3 when the
    ///   server is slow (#1–#8): #3's question is an image only, #5's answer an attachment
    ///   link, #7's answer was deleted (harvest drops it), #8's answer was chosen before the
    ///   first commit (harvest drops it); #9 is unanswered; General and Ideas are not
    ///   answerable.
    /// - `acme/helpdesk`, kept: Help with 3 answered (#2 quotes an image in a code fence and is
    ///   kept by the filter); its Q&A has 1 answered (too few: not harvested).
    /// - dropped: `solo/no-discussions` (Discussions off), `solo/ideas-only` (a "Q&A" that is
    ///   not answerable), `solo/quiet` (Q&A with 2 answered).
    /// - not found by the search: `small/repo` (500 stars), `old/repo` (created in 2023).
    /// - 1,100 `filler/fNNNN` repositories with Discussions off, created through 2024 and 2025,
    ///   so that the whole range counts 1,105 and the search must be split.
    pub fn standard() -> World {
        let ok = OK;
        let mut ideas = repo(
            "solo/ideas-only",
            "R_ideas",
            3000,
            "2024-02-02T00:00:00Z",
            true,
        );
        ideas.categories = vec![cat("DIC_ii", "Ideas", false), cat("DIC_iq", "Q&A", false)];
        let mut quiet = repo("solo/quiet", "R_quiet", 2000, "2025-01-05T00:00:00Z", true);
        quiet.categories = vec![cat("DIC_qq", "Q&A", true)];
        quiet.discussions = vec![
            disc(1, "DIC_qq", "a", Some(("b", ok))),
            disc(2, "DIC_qq", "c", Some(("d", ok))),
        ];
        let mut repos = vec![
            rocket(),
            helpdesk(),
            repo(
                "solo/no-discussions",
                "R_nod",
                9000,
                "2024-06-06T00:00:00Z",
                false,
            ),
            ideas,
            quiet,
            repo("small/repo", "R_small", 500, "2024-04-04T00:00:00Z", true),
            repo("old/repo", "R_old", 50_000, "2023-12-31T23:59:59Z", true),
        ];
        repos.extend((0..1100).map(filler));
        World { repos }
    }
}

/// When most answers were chosen.
const OK: &str = "2024-07-01T00:00:00Z";

/// `acme/rocket`: answered Q&A threads of the kinds the stages tell apart (images in a question
/// or an answer, an answer without a body, answers chosen at other times), an unanswered one
/// and a General thread.
fn rocket() -> Repo {
    let ok = OK;
    let mut rocket = repo(
        "acme/rocket",
        "R_rocket",
        5000,
        "2024-03-01T12:00:00Z",
        true,
    );
    rocket.categories = vec![
        cat("DIC_rg", "General", false),
        cat("DIC_rq", "Q&A", true),
        cat("DIC_ri", "Ideas", false),
    ];
    rocket.commits = commits('a');
    rocket.language = Some("Rust".into());
    rocket.description = Some("A rocket for agents built on language models.".into());
    rocket.topics = vec!["llm".into(), "agents".into()];
    rocket.discussions = vec![
        disc(
            1,
            "DIC_rq",
            "How does the loader pick a backend?",
            Some((
                "It reads `src/backend.rs`: the first that answers wins.",
                ok,
            )),
        ),
        disc(
            2,
            "DIC_rq",
            "Where are retries configured?",
            Some(("In `src/retry.rs`, see `Policy`.", "2024-05-15T00:00:00Z")),
        ),
        disc(
            3,
            "DIC_rq",
            "![screenshot](https://github.com/user-attachments/assets/11111111-2222)",
            Some(("Your screen shows the old version.", ok)),
        ),
        disc(
            4,
            "DIC_rq",
            "Why is `parse` recursive?",
            Some(("Because the grammar nests; see `src/parse.rs`.", ok)),
        ),
        disc(
            5,
            "DIC_rq",
            "What does this trace mean?",
            Some((
                "See https://user-images.githubusercontent.com/1/trace.png",
                ok,
            )),
        ),
        disc(
            6,
            "DIC_rq",
            "How are plugins found?",
            Some(("`plugins/mod.rs` walks the directory.", ok)),
        ),
        Disc {
            answered: true,
            answer: None,
            ..disc(7, "DIC_rq", "Is the cache shared?", None)
        },
        disc(
            8,
            "DIC_rq",
            "Which version started this?",
            Some(("The first one.", "2024-03-02T00:00:00Z")),
        ),
        disc(9, "DIC_rq", "Nobody answered this", None),
        disc(10, "DIC_rg", "General chatter", None),
    ];
    rocket
}

/// `acme/helpdesk`: two answerable categories (Help and Q&A), an image in a code fence.
fn helpdesk() -> Repo {
    let ok = OK;
    let mut helpdesk = repo(
        "acme/helpdesk",
        "R_help",
        1200,
        "2024-09-10T08:30:00Z",
        true,
    );
    helpdesk.categories = vec![cat("DIC_hh", "Help", true), cat("DIC_hq", "Q&A", true)];
    helpdesk.commits = commits('b');
    helpdesk.language = Some("TypeScript".into());
    helpdesk.discussions = vec![
        disc(
            1,
            "DIC_hh",
            "How do I add a route?",
            Some(("Register it in `src/routes.rs`.", ok)),
        ),
        disc(
            2,
            "DIC_hh",
            "Why is this not an image?\n\n```md\n![logo](logo.png)\n```",
            Some(("Because it is in a code fence.", ok)),
        ),
        disc(
            3,
            "DIC_hh",
            "Where do tickets live?",
            Some(("In `src/tickets/`.", "2024-09-01T00:00:00Z")),
        ),
        disc(4, "DIC_hq", "A lone Q&A", Some(("Yes.", ok))),
    ];
    helpdesk
}

/// Filler repository `i` of 1,100: spread over 2024-01-01 … 2025-12-31 (730 days), about 1.5 a
/// day, no discussions and no default branch (the search's slices are what they are for).
fn filler(i: u64) -> Repo {
    let day = i * 730 / 1100;
    let (y, doy) = if day < 366 {
        (2024, day)
    } else {
        (2025, day - 366)
    };
    let (m, d) = month_day(y, doy);
    let mut f = repo(
        &format!("filler/f{i:04}"),
        &format!("R_f{i}"),
        1000 + i,
        &format!("{y}-{m:02}-{d:02}T{:02}:00:00Z", i % 24),
        false,
    );
    f.default_branch = None;
    f
}

fn month_day(y: u64, mut doy: u64) -> (u64, u64) {
    let leap = y.is_multiple_of(4);
    let lengths = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    for (i, len) in lengths.iter().enumerate() {
        if doy < *len {
            return (i as u64 + 1, doy + 1);
        }
        doy -= len;
    }
    (12, 31)
}
