//! The one fake API server of every test that needs one (the client's, the built-in agent's,
//! the CLI's end-to-end tests and the throughput bench).
//!
//! [`FakeServer`] is a small HTTP/1.1 server on `std::net` — a thread per connection, one
//! request per connection, `Connection: close` — rather than axum or hyper: it needs no async
//! runtime in the tests and gives byte-level control over what goes back (status,
//! `retry-after`, a body that is not JSON), which is the point of fault injection. What a
//! request is answered with is the test's [`Handler`]; a [`Fault`] queued with
//! [`FakeServer::fault`] answers the next request instead. [`reply`] has the OpenAI-compatible
//! and Anthropic envelopes of a model's reply.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub mod github;
pub mod reply;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// What the server answers: a status, header lines and a body; `content-length` and
/// `connection: close` are always added.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// A response with no header of its own.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// A response of type `application/json` (whatever `body` holds).
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response::new(status, body).header("content-type", "application/json")
    }

    /// Adds a header line.
    pub fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The bytes on the wire.
    fn to_bytes(&self) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            307 => "Temporary Redirect",
            400 => "Bad Request",
            401 => "Unauthorized",
            404 => "Not Found",
            429 => "Too Many Requests",
            _ => "Error",
        };
        let mut head = format!("HTTP/1.1 {} {reason}\r\n", self.status);
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            self.body.len()
        ));
        let mut out = head.into_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

/// A transport-level fault, answered instead of what the handler would say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// 429 with `retry-after: 1`.
    RateLimited,
    /// 500.
    ServerError,
    /// 429 saying the quota is exhausted (`retry-after: 0`): waiting does not help.
    QuotaExhausted,
    /// 200 whose body is an HTML page, not the API's JSON.
    HtmlBody,
}

impl Fault {
    /// The response that plays this fault.
    pub fn response(self) -> Response {
        match self {
            Fault::RateLimited => {
                Response::json(429, r#"{"error":"slow down"}"#).header("retry-after", "1")
            }
            Fault::ServerError => Response::json(500, "upstream exploded"),
            Fault::QuotaExhausted => Response::json(
                429,
                r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#,
            )
            .header("retry-after", "0"),
            Fault::HtmlBody => Response::json(200, "<html><body>Bad gateway</body></html>"),
        }
    }
}

/// What a test answers each request with (called on the connection's thread).
pub type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A loopback HTTP/1.1 server; it runs until the test process ends.
pub struct FakeServer {
    addr: SocketAddr,
    faults: Arc<Mutex<VecDeque<Fault>>>,
    hits: Arc<AtomicUsize>,
    /// Connections accepted, whether or not a request came on them.
    connections: Arc<AtomicUsize>,
}

impl FakeServer {
    /// Starts a server on 127.0.0.1 (a free port) answering with `handler`.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("the port bound");
        let faults: Arc<Mutex<VecDeque<Fault>>> = Arc::default();
        let hits: Arc<AtomicUsize> = Arc::default();
        let connections: Arc<AtomicUsize> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let (f, h, c) = (
            Arc::clone(&faults),
            Arc::clone(&hits),
            Arc::clone(&connections),
        );
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let (handler, f, h) = (Arc::clone(&handler), Arc::clone(&f), Arc::clone(&h));
                std::thread::spawn(move || serve(conn, &*handler, &f, &h));
            }
        });
        FakeServer {
            addr,
            faults,
            hits,
            connections,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answers the next request not yet answered with `fault` (faults queue up in order).
    pub fn fault(&self, fault: Fault) {
        self.faults.lock().unwrap().push_back(fault);
    }

    /// Requests received so far (connections that sent a request line).
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Connections accepted so far, a request sent on them or not (a dry run opens none).
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn serve(
    mut conn: TcpStream,
    handler: &Handler,
    faults: &Mutex<VecDeque<Fault>>,
    hits: &AtomicUsize,
) {
    let Some(request) = read_request(&conn) else {
        return;
    };
    hits.fetch_add(1, Ordering::SeqCst);
    let fault = faults.lock().unwrap().pop_front();
    let response = match fault {
        Some(f) => f.response(),
        None => handler(&request),
    };
    let _ = conn.write_all(&response.to_bytes());
    let _ = conn.flush();
}

fn read_request(conn: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(conn.try_clone().ok()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    let mut words = request_line.split_whitespace();
    Some(Request {
        method: words.next().unwrap_or("").to_string(),
        path: words.next().unwrap_or("").to_string(),
        headers,
        body,
    })
}
