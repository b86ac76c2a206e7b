//! The fetcher against servers these tests start on loopback. No test connects outside
//! 127.0.0.0/8: the refusals of private, link-local and metadata addresses are the pure tests
//! of `repoprobe_curate::address`, and a refused address here is one nothing listens on or
//! one whose listener counts what reached it (nothing must).

use super::*;
use repoprobe_test_support::{FakeServer, Request, Response};
use std::net::{SocketAddr, TcpListener};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn allow(addr: SocketAddr) -> HostPort {
    addr.to_string().parse().unwrap()
}

fn fetcher(limits: FetchLimits, allowed: &[&FakeServer]) -> Fetcher {
    Fetcher::new(limits, allowed.iter().map(|s| allow(s.addr())).collect()).unwrap()
}

fn fetch(f: &Fetcher, url: &str) -> Fetched {
    run(f.fetch(url))
}

fn sha_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A listener that only counts the connections made to it.
struct Counting {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl Counting {
    fn bind(addr: &str) -> Counting {
        let listener = TcpListener::bind(addr).expect("a loopback address");
        let addr = listener.local_addr().unwrap();
        let accepted: Arc<AtomicUsize> = Arc::default();
        let seen = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                seen.fetch_add(1, Ordering::SeqCst);
                drop(conn);
            }
        });
        Counting { addr, accepted }
    }

    fn count(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

const PAGE: &str = "<!doctype html><html><head><title>Guide</title>\
    <style>.secret-style { color: red }</style>\
    <script>var secretScript = 'leak';</script></head>\
    <body><h1>Installing the widget</h1><p>Run <code>widget init</code> first.</p>\
    <script>document.write('injected')</script></body></html>";

#[test]
fn an_allowed_loopback_page_is_read_as_text_without_its_script_and_style() {
    let server = FakeServer::start(|_| {
        Response::new(200, PAGE).header("content-type", "text/html; charset=utf-8")
    });
    let f = fetcher(FetchLimits::default(), &[&server]);
    let url = format!("{}/guide", server.origin());
    let got = fetch(&f, &url);
    assert_eq!(got.error, None, "{got:?}");
    let text = got.text.as_deref().unwrap();
    assert!(text.contains("Installing the widget"), "{text}");
    assert!(text.contains("Run widget init first."), "{text}");
    assert!(text.contains("# Installing the widget"), "{text}");
    for gone in ["secretScript", "secret-style", "injected", "<"] {
        assert!(!text.contains(gone), "{gone} in {text}");
    }
    assert_eq!(got.url, url);
    assert_eq!(got.final_url.as_deref(), Some(url.as_str()));
    assert_eq!(got.status, Some(200));
    assert_eq!(
        got.content_type.as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(got.bytes, Some(PAGE.len() as u64));
    assert_eq!(got.sha256, Some(sha_hex(PAGE.as_bytes())));
    assert!(!got.text_cut);
    assert_eq!(server.hits(), 1);
}

#[test]
fn without_allow_host_a_loopback_server_is_refused_before_connecting() {
    let server =
        FakeServer::start(|_| Response::new(200, "x").header("content-type", "text/plain"));
    let f = Fetcher::new(FetchLimits::default(), Vec::new()).unwrap();
    let got = fetch(&f, &format!("{}/", server.origin()));
    let e = got.error.unwrap();
    assert!(
        e.contains("127.0.0.1 is a loopback address: refused"),
        "{e}"
    );
    assert!(e.contains("--allow-host HOST:PORT"), "{e}");
    assert_eq!((got.status, got.text, got.final_url), (None, None, None));
    assert_eq!(server.hits(), 0);
    // Allowing another port of the same address allows nothing.
    let other: HostPort = format!("127.0.0.1:{}", server.addr().port().wrapping_add(1))
        .parse()
        .unwrap();
    let f = Fetcher::new(FetchLimits::default(), vec![other]).unwrap();
    assert!(
        fetch(&f, &server.origin())
            .error
            .unwrap()
            .contains("refused")
    );
    assert_eq!(server.hits(), 0);
}

#[test]
fn an_allowed_server_redirecting_to_another_loopback_address_is_refused() {
    // Linux routes all of 127/8 to lo: a listener on 127.0.0.2 counts what would reach it.
    let elsewhere = Counting::bind("127.0.0.2:0");
    let to = format!("http://{}/", elsewhere.addr);
    let target = to.clone();
    let server = FakeServer::start(move |_| Response::new(302, "").header("location", &target));
    let f = fetcher(FetchLimits::default(), &[&server]);
    let got = fetch(&f, &format!("{}/start", server.origin()));
    let e = got.error.unwrap();
    assert!(e.contains("after 1 redirect(s)"), "{e}");
    assert!(e.contains(&to), "{e}");
    assert!(
        e.contains("127.0.0.2 is a loopback address: refused"),
        "{e}"
    );
    assert_eq!(got.status, Some(302));
    assert_eq!(got.text, None);
    assert_eq!(server.hits(), 1);
    assert_eq!(elsewhere.count(), 0);
}

#[test]
fn an_allowed_server_redirecting_to_localhost_is_refused_for_the_address_it_resolves_to() {
    let second =
        FakeServer::start(|_| Response::new(200, "x").header("content-type", "text/plain"));
    let to = format!("http://localhost:{}/", second.addr().port());
    let target = to.clone();
    let first = FakeServer::start(move |_| Response::new(302, "").header("location", &target));
    let f = fetcher(FetchLimits::default(), &[&first]);
    let got = fetch(&f, &first.origin());
    let e = got.error.unwrap();
    assert!(e.contains("localhost resolves to "), "{e}");
    assert!(e.contains("a loopback address: refused"), "{e}");
    assert_eq!((first.hits(), second.hits()), (1, 0));

    // Allowing localhost on one port does not allow it on another.
    let third = FakeServer::start(move |_| Response::new(302, "").header("location", &to));
    let name: HostPort = format!("localhost:{}", third.addr().port())
        .parse()
        .unwrap();
    let f = Fetcher::new(FetchLimits::default(), vec![name]).unwrap();
    let got = fetch(&f, &format!("http://localhost:{}/", third.addr().port()));
    let e = got.error.unwrap();
    assert!(e.contains("after 1 redirect(s)"), "{e}");
    assert!(e.contains("localhost resolves to "), "{e}");
    assert_eq!((third.hits(), second.hits()), (1, 0));
}

#[test]
fn a_redirect_chain_longer_than_the_cap_stops_at_the_cap() {
    let server = FakeServer::start(|req| {
        let n: u32 = req.path.trim_start_matches('/').parse().unwrap_or(0);
        Response::new(301, "").header("location", &format!("/{}", n + 1))
    });
    let limits = FetchLimits {
        max_redirects: 3,
        ..FetchLimits::default()
    };
    let f = fetcher(limits, &[&server]);
    let got = fetch(&f, &format!("{}/0", server.origin()));
    let e = got.error.unwrap();
    assert!(e.contains("more than 3 redirects (the cap)"), "{e}");
    assert_eq!(server.hits(), 4);
    assert_eq!(got.final_url, Some(format!("{}/3", server.origin())));
    assert_eq!(got.text, None);
}

#[test]
fn redirects_to_file_and_ftp_are_refused() {
    for (location, scheme) in [
        ("file:///etc/passwd", "not file:"),
        ("ftp://127.0.0.1/x", "not ftp:"),
        ("javascript:alert(1)", "not javascript:"),
    ] {
        let server =
            FakeServer::start(move |_| Response::new(307, "").header("location", location));
        let f = fetcher(FetchLimits::default(), &[&server]);
        let got = fetch(&f, &server.origin());
        let e = got.error.unwrap();
        assert!(e.contains("only http and https are fetched"), "{e}");
        assert!(e.contains(scheme), "{e}");
        assert_eq!((got.text, server.hits()), (None, 1));
    }
}

#[test]
fn a_relative_location_on_the_allowed_host_is_followed() {
    let server = FakeServer::start(|req| match req.path.as_str() {
        "/docs/start" => Response::new(302, "").header("location", "../page?x=1#top"),
        "/page?x=1" => {
            Response::new(200, "# The page\n\nhello").header("content-type", "text/markdown")
        }
        _ => Response::new(404, ""),
    });
    let f = fetcher(FetchLimits::default(), &[&server]);
    let got = fetch(&f, &format!("{}/docs/start", server.origin()));
    assert_eq!(got.error, None, "{got:?}");
    assert_eq!(
        got.final_url,
        Some(format!("{}/page?x=1#top", server.origin()))
    );
    assert_eq!(got.text.as_deref(), Some("# The page\n\nhello"));
    assert_eq!(server.hits(), 2);
}

#[test]
fn a_body_larger_than_the_cap_is_read_to_the_cap_and_has_no_text() {
    let big = vec![b'a'; 1 << 20];
    let body = big.clone();
    let server = FakeServer::start(move |_| {
        Response::new(200, body.clone()).header("content-type", "text/plain")
    });
    let cap = 64 << 10;
    let limits = FetchLimits {
        max_bytes: cap,
        ..FetchLimits::default()
    };
    let f = fetcher(limits, &[&server]);
    let got = fetch(&f, &server.origin());
    let e = got.error.unwrap();
    assert!(e.contains("larger than 65536 bytes (the cap)"), "{e}");
    let read = got.bytes.unwrap();
    assert!(read <= cap, "{read}");
    assert_eq!(got.sha256, Some(sha_hex(&big[..read as usize])));
    assert_eq!((got.text, got.status), (None, Some(200)));
}

#[test]
fn a_content_type_that_is_not_text_or_none_at_all_is_not_read() {
    let server = FakeServer::start(|req| match req.path.as_str() {
        "/png" => {
            Response::new(200, b"\x89PNG\r\n\x1a\n".to_vec()).header("content-type", "image/png")
        }
        _ => Response::new(200, "plain words"),
    });
    let f = fetcher(FetchLimits::default(), &[&server]);
    let got = fetch(&f, &format!("{}/png", server.origin()));
    let e = got.error.unwrap();
    assert!(
        e.contains("the content type \"image/png\" is not text"),
        "{e}"
    );
    assert_eq!((got.text, got.bytes, got.status), (None, None, Some(200)));
    let got = fetch(&f, &format!("{}/none", server.origin()));
    let e = got.error.unwrap();
    assert!(e.contains("no Content-Type"), "{e}");
    assert_eq!((got.text, got.content_type), (None, None));
}

#[test]
fn an_http_error_status_is_recorded_and_said() {
    let server = FakeServer::start(|_| {
        Response::new(404, "<h1>Not found</h1>").header("content-type", "text/html")
    });
    let f = fetcher(FetchLimits::default(), &[&server]);
    let got = fetch(&f, &format!("{}/gone", server.origin()));
    assert_eq!(got.status, Some(404));
    let e = got.error.unwrap();
    assert!(e.contains("/gone\": HTTP 404: no page to read"), "{e}");
    assert_eq!(got.text, None);
}

#[test]
fn a_server_that_never_answers_is_given_up_on_at_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            keep.lock().unwrap().push(conn);
        }
    });
    let limits = FetchLimits {
        timeout: Duration::from_millis(300),
        ..FetchLimits::default()
    };
    let f = Fetcher::new(limits, vec![allow(addr)]).unwrap();
    let started = std::time::Instant::now();
    let got = fetch(&f, &format!("http://{addr}/slow"));
    let e = got.error.unwrap();
    assert!(e.contains("no complete answer within 0.3 s"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(got.status, None);
    assert_eq!(held.lock().unwrap().len(), 1);
}

#[test]
fn no_credentials_cookies_or_referer_are_sent_and_the_agent_is_named() {
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let log = Arc::clone(&seen);
    let server = FakeServer::start(move |req| {
        log.lock().unwrap().push(req.clone());
        match req.path.as_str() {
            "/" => Response::new(302, "")
                .header("set-cookie", "session=abc; Path=/")
                .header("www-authenticate", "Basic realm=x")
                .header("location", "/next"),
            _ => Response::new(200, "ok").header("content-type", "text/plain"),
        }
    });
    let f = fetcher(FetchLimits::default(), &[&server]);
    assert_eq!(fetch(&f, &server.origin()).text.as_deref(), Some("ok"));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for req in seen.iter() {
        for header in ["authorization", "cookie", "referer", "proxy-authorization"] {
            assert_eq!(req.header(header), None, "{header} sent to {}", req.path);
        }
        assert_eq!(
            req.header("user-agent"),
            Some(concat!("repoprobe/", env!("CARGO_PKG_VERSION")))
        );
    }
    // A user name and password in the address are refused, not sent.
    let port = server.addr().port();
    let got = fetch(&f, &format!("http://user:pw@127.0.0.1:{port}/"));
    assert!(got.error.unwrap().contains("user name or password"));
    assert_eq!(server.hits(), 2);
}

#[test]
fn odd_urls_locations_and_bodies_give_errors_or_text_never_a_panic() {
    let server = FakeServer::start(|req| match req.path.as_str() {
        "/bad-location" => Response::new(302, "").header("location", "http://[zz/"),
        "/empty-location" => Response::new(302, "").header("location", ""),
        "/no-location" => Response::new(303, ""),
        "/latin1" => Response::new(200, b"caf\xe9 \xff".to_vec())
            .header("content-type", "text/plain; charset=iso-8859-1"),
        "/not-utf8" => {
            Response::new(200, b"a\xffb\x00c".to_vec()).header("content-type", "text/plain")
        }
        "/huge-header" => Response::new(200, "x")
            .header("content-type", "text/plain")
            .header("x-big", &"a".repeat(1 << 20)),
        "/deep" => Response::new(200, "<div>".repeat(20_000)).header("content-type", "text/html"),
        _ => Response::new(200, "").header("content-type", "text/html"),
    });
    let f = fetcher(FetchLimits::default(), &[&server]);
    let at = |p: &str| fetch(&f, &format!("{}{p}", server.origin()));
    assert!(
        at("/bad-location")
            .error
            .unwrap()
            .contains("which is not a URL")
    );
    // An empty Location is the same URL again: followed until the cap.
    assert!(
        at("/empty-location")
            .error
            .unwrap()
            .contains("more than 5 redirects")
    );
    assert!(
        at("/no-location")
            .error
            .unwrap()
            .contains("without a Location header")
    );
    assert_eq!(at("/latin1").text.as_deref(), Some("café ÿ"));
    assert_eq!(at("/not-utf8").text.as_deref(), Some("a\u{fffd}bc"));
    let huge = at("/huge-header");
    assert!(huge.error.is_some() || huge.text.is_some(), "{huge:?}");
    // Nested too deep for html2text (its time grows with depth): read in one pass instead.
    let started = std::time::Instant::now();
    assert_eq!(at("/deep").text.as_deref(), Some(""));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(at("/empty").text.as_deref(), Some(""));
    for url in ["", "not a url", "http://", "http://[::1", "//example.com"] {
        let got = fetch(&f, url);
        assert!(got.error.unwrap().contains("not a URL"), "{url}");
    }
    let got = fetch(&f, "data:text/plain,hello");
    assert!(got.error.unwrap().contains("not data:"));
}

#[test]
fn a_long_text_is_cut_and_says_so() {
    let server = FakeServer::start(|_| {
        Response::new(200, "é".repeat(100)).header("content-type", "text/plain; charset=utf-8")
    });
    let limits = FetchLimits {
        max_text_chars: 10,
        ..FetchLimits::default()
    };
    let got = fetch(&fetcher(limits, &[&server]), &server.origin());
    assert_eq!(got.text, Some("é".repeat(10)));
    assert!(got.text_cut);
    assert_eq!(got.error, None);
    assert_eq!(got.bytes, Some(200));
}

#[test]
fn the_fetcher_and_its_future_can_be_shared_across_threads() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: T) {}
    let f = Fetcher::new(FetchLimits::default(), Vec::new()).unwrap();
    send_sync(&f);
    send(f.fetch("http://127.0.0.1:9/"));
}

/// The fetcher sends no credential: it does not even build on the LLM client, whose keys and
/// client are the only credentials in the workspace (its text helpers are `repoprobe-text`'s).
#[test]
fn the_fetcher_does_not_build_on_the_llm_client() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let toml = std::fs::read_to_string(&manifest).unwrap();
    assert!(toml.contains("repoprobe-text"), "{}", manifest.display());
    assert!(!toml.contains("repoprobe-llm"), "{}", manifest.display());
}
