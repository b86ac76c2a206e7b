//! The only way out of a sealed agent run: the model's API, and the key added outside.
//!
//! A confined run has a network namespace of its own, with nothing in it but loopback. Its one
//! door is a Unix socket bound into the sandbox; behind it, in repoprobe's own process,
//! [`ApiProxy`] takes each HTTP/1.1 request and sends it on to one configured origin (scheme,
//! host and port of the API's base URL; the path as asked), speaking TLS to it itself. Inside,
//! agent CLIs that need a TCP address get one from [`bridge_main`] (repoprobe's own binary,
//! started first in the sandbox), which relays `127.0.0.1:`[`BRIDGE_PORT`] to that socket and
//! then runs the agent.
//!
//! Refused, each with a 403 that says why: `CONNECT`; an absolute request URI naming any other
//! origin, or a host with NUL or control characters. The `Host` header is never followed
//! (requests go to the configured origin with its own `Host`) and no redirect is followed
//! (a 3xx goes back to the agent as it came).
//!
//! The agent's environment holds placeholders instead of keys ([`placeholder`]); the proxy puts
//! the real value back wherever a placeholder appears in a header value or the query string
//! (`x-api-key`, `Authorization: Bearer …`, `x-goog-api-key`, `?key=`: whatever the provider
//! uses), on the way out only.

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full, Limited, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The TCP port the bridge listens on inside the sandbox (its own network namespace: nothing
/// else can hold it).
pub const BRIDGE_PORT: u16 = 41873;
/// The first argument that makes repoprobe's binary the bridge.
pub const BRIDGE_SUBCOMMAND: &str = "__agent-bridge";
/// Most bytes of one request body (a long tool conversation is a few MiB).
const MAX_REQUEST_BODY: usize = 64 << 20;
/// Headers of one hop only, never forwarded either way.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// The one origin a sealed run may reach, from the API's base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// `https://api.anthropic.com/v1`: the base URL as configured.
    base: reqwest::Url,
}

/// Why an API URL is refused (`--agent-api-url`, a preset's base URL): each message names the
/// URL and what to change in it.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    #[error("the API URL {0:?} holds a control character")]
    Control(String),
    #[error("the API URL {url:?} is not a URL: {reason}")]
    NotUrl {
        url: String,
        reason: <reqwest::Url as std::str::FromStr>::Err,
    },
    #[error("the API URL {0:?} is not http or https")]
    Scheme(String),
    #[error("the API URL {0:?} names no host")]
    NoHost(String),
    #[error("the API URL {0:?} holds credentials")]
    Credentials(String),
}

impl Upstream {
    /// An `http` or `https` URL with a host, and no user, password, NUL or control character.
    pub fn parse(url: &str) -> Result<Upstream, UrlError> {
        if url.chars().any(|c| c.is_control()) {
            return Err(UrlError::Control(url.into()));
        }
        let base = reqwest::Url::parse(url.trim()).map_err(|reason| UrlError::NotUrl {
            url: url.into(),
            reason,
        })?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(UrlError::Scheme(url.into()));
        }
        if base.host_str().is_none_or(str::is_empty) {
            return Err(UrlError::NoHost(url.into()));
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err(UrlError::Credentials(url.into()));
        }
        Ok(Upstream { base })
    }

    /// `https://api.anthropic.com:443`: what the records name as the one place reached.
    pub fn origin(&self) -> String {
        format!(
            "{}://{}:{}",
            self.base.scheme(),
            self.base.host_str().unwrap_or(""),
            self.base.port_or_known_default().unwrap_or(0)
        )
    }

    /// The base URL as the agent inside sees it: the bridge's address, the same path.
    pub fn inside_url(&self) -> String {
        let path = self.base.path().trim_end_matches('/');
        format!("http://127.0.0.1:{BRIDGE_PORT}{path}")
    }

    /// Whether an absolute request URI's scheme and authority are this origin's.
    fn is_origin_of(&self, uri: &hyper::Uri) -> bool {
        let (Some(scheme), Some(auth)) = (uri.scheme_str(), uri.authority()) else {
            return false;
        };
        let default = match scheme {
            "http" => 80,
            "https" => 443,
            _ => return false,
        };
        scheme == self.base.scheme()
            && auth
                .host()
                .eq_ignore_ascii_case(self.base.host_str().unwrap_or(""))
            && auth.port_u16().unwrap_or(default) == self.base.port_or_known_default().unwrap_or(0)
    }
}

/// A key's stand-in in the agent's environment: unguessable, so that text which happens to
/// hold it is no way to make the proxy write the key anywhere the agent chose.
pub fn placeholder(name: &str) -> String {
    let mut bytes = [0u8; 12];
    let random = std::fs::read("/proc/sys/kernel/random/uuid")
        .ok()
        .map(|u| String::from_utf8_lossy(&u).replace(['-', '\n'], ""));
    let suffix = random.unwrap_or_else(|| {
        // No procfs: the clock and our pid, which is still unknown to the agent.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (t >> (i * 8)) as u8 ^ (std::process::id() >> (i % 4 * 8)) as u8;
        }
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    });
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("repoprobe-placeholder-{name}-{suffix}")
}

/// Whether a variable holds a credential the proxy must keep outside: its name says so.
pub fn is_credential(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    !n.starts_with("REPOPROBE_")
        && ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH"]
            .iter()
            .any(|w| n.contains(w))
}

struct State {
    upstream: Upstream,
    /// (placeholder, real value), longest placeholder first.
    secrets: Vec<(String, String)>,
    client: reqwest::Client,
}

/// A running proxy: its socket lives in a private directory of ours until it is dropped.
pub struct ApiProxy {
    socket: PathBuf,
    _dir: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl ApiProxy {
    /// Listens on a fresh Unix socket; `secrets` are (placeholder, real value). Must be called
    /// within a tokio runtime with I/O enabled.
    pub fn start(upstream: Upstream, secrets: Vec<(String, String)>) -> io::Result<ApiProxy> {
        let dir = tempfile::Builder::new()
            .prefix("repoprobe-proxy-")
            .tempdir()?;
        let socket = dir.path().join("api.sock");
        let listener = tokio::net::UnixListener::bind(&socket)?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(io::Error::other)?;
        let mut secrets = secrets;
        secrets.sort_by_key(|s| std::cmp::Reverse(s.0.len()));
        let state = Arc::new(State {
            upstream,
            secrets,
            client,
        });
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, Infallible>(handle(req, &state).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(ApiProxy {
            socket,
            _dir: dir,
            task,
        })
    }

    /// The socket to bind into the sandbox.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Whether it still serves (its task ended only if it panicked).
    pub fn is_alive(&self) -> bool {
        !self.task.is_finished()
    }
}

impl Drop for ApiProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Body = BoxBody<Bytes, io::Error>;

fn refuse(status: StatusCode, why: &str) -> Response<Body> {
    let text = format!("repoprobe's API proxy refused this request: {why}\n");
    Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).map_err(|e| match e {}).boxed()))
}

/// Why a request may not go out, or `None`.
fn refusal(req: &Request<Incoming>, up: &Upstream) -> Option<String> {
    if req.method() == Method::CONNECT {
        return Some(format!(
            "CONNECT is not served; only {} is reached, through plain requests",
            up.origin()
        ));
    }
    let uri = req.uri();
    if let Some(auth) = uri.authority() {
        if auth.as_str().chars().any(|c| c.is_control()) {
            return Some("a host with a control character".into());
        }
        if !up.is_origin_of(uri) {
            return Some(format!(
                "{}://{} is not the API ({})",
                uri.scheme_str().unwrap_or("?"),
                auth,
                up.origin()
            ));
        }
    }
    if !uri.path().starts_with('/') {
        return Some("a request target that is not a path".into());
    }
    None
}

fn put_back(secrets: &[(String, String)], text: &str) -> String {
    let mut out = text.to_string();
    for (ph, real) in secrets {
        if out.contains(ph.as_str()) {
            out = out.replace(ph.as_str(), real);
        }
    }
    out
}

async fn handle(req: Request<Incoming>, st: &State) -> Response<Body> {
    if let Some(why) = refusal(&req, &st.upstream) {
        return refuse(StatusCode::FORBIDDEN, &why);
    }
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let mut url = st.upstream.base.clone();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    url.set_path(path);
    url.set_query(
        (!query.is_empty())
            .then(|| put_back(&st.secrets, query))
            .as_deref(),
    );
    let method = req.method().clone();
    let mut headers = HeaderMap::new();
    for (name, value) in req.headers() {
        if HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        }
        let v = String::from_utf8_lossy(value.as_bytes());
        let v = put_back(&st.secrets, &v);
        if let Ok(v) = HeaderValue::from_str(&v) {
            headers.append(name.clone(), v);
        }
    }
    let body = match Limited::new(req.into_body(), MAX_REQUEST_BODY)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => return refuse(StatusCode::PAYLOAD_TOO_LARGE, &format!("request body: {e}")),
    };
    let sent = st
        .client
        .request(method, url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            return refuse(
                StatusCode::BAD_GATEWAY,
                &format!("{} could not be reached: {e}", st.upstream.origin()),
            );
        }
    };
    let mut out = Response::builder().status(resp.status());
    for (name, value) in resp.headers() {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            out = out.header(HeaderName::from(name), value);
        }
    }
    let stream = resp
        .bytes_stream()
        .map(|chunk| chunk.map(Frame::data).map_err(io::Error::other));
    out.body(BodyExt::boxed(StreamBody::new(stream)))
        .unwrap_or_else(|e| refuse(StatusCode::BAD_GATEWAY, &e.to_string()))
}

/// The bridge inside the sandbox: `__agent-bridge SOCKET PORT PROGRAM ARGS…` listens on
/// `127.0.0.1:PORT`, relays each connection to the Unix socket `SOCKET`, and runs `PROGRAM`
/// with its stdio and environment; returns its exit code (128 + the signal that ended it).
pub fn bridge_main(args: &[std::ffi::OsString]) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    let [socket, port, program, rest @ ..] = args else {
        eprintln!("repoprobe {BRIDGE_SUBCOMMAND}: SOCKET PORT PROGRAM [ARGS…] expected");
        return 2;
    };
    let Some(port) = port.to_str().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("repoprobe {BRIDGE_SUBCOMMAND}: {port:?} is not a port");
        return 2;
    };
    let listener = match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("repoprobe {BRIDGE_SUBCOMMAND}: cannot listen on 127.0.0.1:{port}: {e}");
            return 125;
        }
    };
    let socket = PathBuf::from(socket);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let socket = socket.clone();
            std::thread::spawn(move || relay(conn, &socket));
        }
    });
    match std::process::Command::new(program).args(rest).status() {
        Ok(s) => s.code().or(s.signal().map(|n| 128 + n)).unwrap_or(1),
        Err(e) => {
            eprintln!("repoprobe {BRIDGE_SUBCOMMAND}: cannot run {program:?}: {e}");
            127
        }
    }
}

/// Copies both ways between a TCP connection and a new connection to `socket`.
fn relay(tcp: std::net::TcpStream, socket: &Path) {
    let Ok(unix) = std::os::unix::net::UnixStream::connect(socket) else {
        return;
    };
    let (Ok(mut tcp_r), Ok(mut unix_w)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut tcp_r, &mut unix_w);
        let _ = unix_w.shutdown(std::net::Shutdown::Write);
    });
    let (mut unix_r, mut tcp_w) = (unix, tcp);
    let _ = io::copy(&mut unix_r, &mut tcp_w);
    let _ = tcp_w.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_is_an_http_origin_without_credentials_or_control_characters() {
        let up = Upstream::parse("https://api.anthropic.com").unwrap();
        assert_eq!(up.origin(), "https://api.anthropic.com:443");
        assert_eq!(up.inside_url(), format!("http://127.0.0.1:{BRIDGE_PORT}"));
        let up = Upstream::parse("http://127.0.0.1:8080/v1/").unwrap();
        assert_eq!(
            up.inside_url(),
            format!("http://127.0.0.1:{BRIDGE_PORT}/v1")
        );
        for bad in [
            "file:///etc/passwd",
            "https://user:pw@api.example",
            "https://api\0.example",
            "https://api.example\n.evil",
            "not a url",
            "http://",
        ] {
            assert!(Upstream::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn only_the_upstreams_own_scheme_host_and_port_match() {
        let up = Upstream::parse("https://api.example.com/v1").unwrap();
        let uri = |s: &str| s.parse::<hyper::Uri>().unwrap();
        assert!(up.is_origin_of(&uri("https://api.example.com/v1/x")));
        assert!(up.is_origin_of(&uri("https://API.example.com:443/")));
        for other in [
            "http://api.example.com/",
            "https://api.example.com:444/",
            "https://api.example.com.evil.net/",
            "https://evil.net/",
            "/v1/x",
        ] {
            assert!(!up.is_origin_of(&uri(other)), "{other} matched");
        }
    }

    #[test]
    fn placeholders_are_unguessable_and_credentials_are_told_by_name() {
        let a = placeholder("ANTHROPIC_API_KEY");
        assert!(
            a.starts_with("repoprobe-placeholder-anthropic-api-key-"),
            "{a}"
        );
        assert_ne!(a, placeholder("ANTHROPIC_API_KEY"));
        for k in [
            "OPENAI_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "GEMINI_API_KEY",
            "MY_SECRET",
        ] {
            assert!(is_credential(k), "{k}");
        }
        for k in [
            "PATH",
            "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
            "REPOPROBE_API_KEY",
            "HOME",
        ] {
            assert!(!is_credential(k), "{k}");
        }
        let s = vec![(a.clone(), "sk-real".to_string())];
        assert_eq!(put_back(&s, &format!("Bearer {a}")), "Bearer sk-real");
        assert_eq!(put_back(&s, "key=other"), "key=other");
    }
}
