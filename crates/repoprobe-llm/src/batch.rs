//! The providers' batch APIs (`--batch`): the same request bodies as the live calls, submitted
//! at once and collected later, at half the price. OpenAI: upload a JSONL file of requests
//! (`POST /files`, purpose `batch`), `POST /batches`, poll `GET /batches/{id}`, download
//! `GET /files/{output_file_id}/content` (and the error file). Anthropic: `POST
//! /v1/messages/batches` with the requests inline, poll `GET /v1/messages/batches/{id}`, download
//! its `results_url`. Every call goes through [`Client::exchange`]: retries, rate limits and the
//! key are handled as for live calls.

use super::{CallError, Client, Provider};
use crate::reply::ReplyError;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// One request of a batch: our id for it and the provider's request body (as a live call sends).
pub struct BatchRequest {
    pub custom_id: String,
    pub body: Vec<u8>,
}

/// Where a batch stands.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchState {
    /// The provider's status word (`in_progress`, `completed`, `ended`, …).
    pub status: String,
    /// Whether it will change no more.
    pub ended: bool,
    /// Where the results are: OpenAI's output and error file ids, or Anthropic's results URL.
    pub results: Vec<String>,
}

/// The outcome of one request of a batch: the provider's 2xx response body, or why not.
#[derive(Debug)]
pub struct BatchResult {
    pub custom_id: String,
    pub outcome: Result<Vec<u8>, ResultError>,
}

/// Why one request of a batch gave no reply, as its result line says (bodies cut to an
/// excerpt). Each is worth another attempt in the next round, as a live call's failure is.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    /// OpenAI: the request's response is not a 2xx.
    #[error("HTTP {status}: {body}")]
    Status { status: u16, body: String },
    /// OpenAI: no response, the line's `error` instead.
    #[error("{error}")]
    Failed { error: String },
    /// OpenAI: a line with neither.
    #[error("neither a response nor an error")]
    NoOutcome,
    /// Anthropic: a result of another type than `succeeded` (`errored`, `canceled`,
    /// `expired`), with its error when it has one.
    #[error("{kind}{}", error.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    NotSucceeded { kind: String, error: Option<String> },
    /// Anthropic: `succeeded` without its message.
    #[error("succeeded without a message")]
    NoMessage,
    /// A 2xx body that is not the API's response.
    #[error("the reply is not the API's response ({0})")]
    NotAReply(#[from] ReplyError),
}

/// What the result files of an ended batch held.
#[derive(Debug, Default)]
pub struct BatchResults {
    /// One per request the provider reports on.
    pub results: Vec<BatchResult>,
    /// Why each unreadable line was skipped.
    pub unreadable: Vec<serde_json::Error>,
}

fn json_of(bytes: &[u8]) -> Result<Value, ReplyError> {
    serde_json::from_slice(bytes).map_err(ReplyError::NotJson)
}

fn field(v: &Value, field: &'static str) -> Result<String, ReplyError> {
    v[field]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| ReplyError::NoField {
            field,
            body: super::excerpt(&v.to_string()),
        })
}

impl Client {
    fn api_base(&self) -> String {
        let base = self.settings.base_url.trim_end_matches('/');
        match self.settings.provider {
            Provider::Openai => base.to_string(),
            Provider::Anthropic => format!("{base}/v1/messages/batches"),
        }
    }

    /// Submits the requests as one batch; returns its id.
    pub async fn batch_submit(
        &self,
        requests: &[BatchRequest],
        retries: &mut u32,
    ) -> Result<String, CallError> {
        let base = self.api_base();
        match self.settings.provider {
            Provider::Openai => {
                let mut jsonl = Vec::new();
                for r in requests {
                    let body = RawValue::from_string(String::from_utf8_lossy(&r.body).into())
                        .map_err(|e| CallError::Transport {
                            message: format!("a request body is not JSON: {e}"),
                            retried: 0,
                        })?;
                    let line = json!({"custom_id": r.custom_id, "method": "POST",
                        "url": "/v1/chat/completions", "body": body});
                    jsonl.extend(line.to_string().into_bytes());
                    jsonl.push(b'\n');
                }
                let file = self
                    .exchange(
                        |http| {
                            let part = reqwest::multipart::Part::bytes(jsonl.clone())
                                .file_name("requests.jsonl")
                                .mime_str("application/jsonl")
                                .expect("a valid MIME type");
                            let form = reqwest::multipart::Form::new()
                                .text("purpose", "batch")
                                .part("file", part);
                            http.post(format!("{base}/files")).multipart(form)
                        },
                        0,
                        retries,
                        |b| field(&json_of(b)?, "id"),
                    )
                    .await?;
                let create = json!({"input_file_id": file, "endpoint": "/v1/chat/completions",
                    "completion_window": "24h"})
                .to_string();
                self.exchange(
                    |http| {
                        http.post(format!("{base}/batches"))
                            .header("content-type", "application/json")
                            .body(create.clone())
                    },
                    0,
                    retries,
                    |b| field(&json_of(b)?, "id"),
                )
                .await
            }
            Provider::Anthropic => {
                let mut body = b"{\"requests\":[".to_vec();
                for (i, r) in requests.iter().enumerate() {
                    if i > 0 {
                        body.push(b',');
                    }
                    body.extend(
                        format!("{{\"custom_id\":{},\"params\":", json!(r.custom_id)).bytes(),
                    );
                    body.extend(&r.body);
                    body.push(b'}');
                }
                body.extend(b"]}");
                self.exchange(
                    |http| {
                        http.post(&base)
                            .header("content-type", "application/json")
                            .body(body.clone())
                    },
                    0,
                    retries,
                    |b| field(&json_of(b)?, "id"),
                )
                .await
            }
        }
    }

    /// Where batch `id` stands.
    pub async fn batch_poll(&self, id: &str, retries: &mut u32) -> Result<BatchState, CallError> {
        let url = match self.settings.provider {
            Provider::Openai => format!("{}/batches/{id}", self.api_base()),
            Provider::Anthropic => format!("{}/{id}", self.api_base()),
        };
        let provider = self.settings.provider;
        self.exchange(
            |http| http.get(&url),
            0,
            retries,
            |b| {
                let v = json_of(b)?;
                Ok(match provider {
                    Provider::Openai => {
                        let status = field(&v, "status")?;
                        BatchState {
                            ended: matches!(
                                status.as_str(),
                                "completed" | "failed" | "expired" | "cancelled"
                            ),
                            results: ["output_file_id", "error_file_id"]
                                .iter()
                                .filter_map(|k| v[*k].as_str().map(str::to_string))
                                .collect(),
                            status,
                        }
                    }
                    Provider::Anthropic => {
                        let status = field(&v, "processing_status")?;
                        BatchState {
                            ended: status == "ended",
                            results: v["results_url"]
                                .as_str()
                                .map(str::to_string)
                                .into_iter()
                                .collect(),
                            status,
                        }
                    }
                })
            },
        )
        .await
    }

    /// The results of an ended batch, one per request the provider reports on, and why each line
    /// that could not be read was skipped (for the caller to report).
    pub async fn batch_results(
        &self,
        state: &BatchState,
        retries: &mut u32,
    ) -> Result<BatchResults, CallError> {
        let mut out = BatchResults::default();
        for place in &state.results {
            let url = match self.settings.provider {
                Provider::Openai => format!("{}/files/{place}/content", self.api_base()),
                Provider::Anthropic => place.clone(),
            };
            let text = self
                .exchange(
                    |http| http.get(&url),
                    0,
                    retries,
                    |b| Ok(String::from_utf8_lossy(b).into_owned()),
                )
                .await?;
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                match parse_result_line(self.settings.provider, line) {
                    Ok(r) => out.results.push(r),
                    Err(e) => out.unreadable.push(e),
                }
            }
        }
        Ok(out)
    }
}

#[derive(Deserialize)]
struct OpenaiLine<'a> {
    custom_id: String,
    #[serde(borrow, default)]
    response: Option<OpenaiResponse<'a>>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct OpenaiResponse<'a> {
    status_code: u16,
    #[serde(borrow)]
    body: &'a RawValue,
}

#[derive(Deserialize)]
struct AnthropicLine<'a> {
    custom_id: String,
    #[serde(borrow)]
    result: AnthropicResult<'a>,
}

#[derive(Deserialize)]
struct AnthropicResult<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<Value>,
}

/// One line of a results file.
fn parse_result_line(provider: Provider, line: &str) -> Result<BatchResult, serde_json::Error> {
    match provider {
        Provider::Openai => {
            let l: OpenaiLine<'_> = serde_json::from_str(line)?;
            let outcome = match (l.response, l.error) {
                (Some(r), _) if (200..300).contains(&r.status_code) => {
                    Ok(r.body.get().as_bytes().to_vec())
                }
                (Some(r), _) => Err(ResultError::Status {
                    status: r.status_code,
                    body: super::excerpt(r.body.get()),
                }),
                (None, Some(e)) => Err(ResultError::Failed {
                    error: super::excerpt(&e.to_string()),
                }),
                (None, None) => Err(ResultError::NoOutcome),
            };
            Ok(BatchResult {
                custom_id: l.custom_id,
                outcome,
            })
        }
        Provider::Anthropic => {
            let l: AnthropicLine<'_> = serde_json::from_str(line)?;
            let outcome = match (l.result.kind.as_str(), l.result.message) {
                ("succeeded", Some(m)) => Ok(m.get().as_bytes().to_vec()),
                ("succeeded", None) => Err(ResultError::NoMessage),
                (_, _) => Err(ResultError::NotSucceeded {
                    kind: l.result.kind,
                    error: l.result.error.map(|e| super::excerpt(&e.to_string())),
                }),
            };
            Ok(BatchResult {
                custom_id: l.custom_id,
                outcome,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_of_both_providers_are_read() {
        let ok = parse_result_line(
            Provider::Openai,
            r#"{"id":"b1","custom_id":"k1","response":{"status_code":200,"body":{"choices":[]}},"error":null}"#,
        )
        .unwrap();
        assert_eq!(ok.outcome.unwrap(), br#"{"choices":[]}"#.to_vec());
        let bad = parse_result_line(
            Provider::Openai,
            r#"{"custom_id":"k2","response":{"status_code":400,"body":{"error":"no"}}}"#,
        )
        .unwrap();
        assert!(matches!(
            bad.outcome,
            Err(ResultError::Status { status: 400, .. })
        ));
        let ok = parse_result_line(
            Provider::Anthropic,
            r#"{"custom_id":"k3","result":{"type":"succeeded","message":{"content":[]}}}"#,
        )
        .unwrap();
        assert_eq!(ok.outcome.unwrap(), br#"{"content":[]}"#.to_vec());
        let expired = parse_result_line(
            Provider::Anthropic,
            r#"{"custom_id":"k4","result":{"type":"expired"}}"#,
        )
        .unwrap();
        let expired = expired.outcome.unwrap_err();
        assert!(
            matches!(&expired, ResultError::NotSucceeded { kind, error: None } if kind == "expired"),
            "{expired:?}"
        );
        assert_eq!(expired.to_string(), "expired");
        assert!(parse_result_line(Provider::Anthropic, "{").is_err());
    }
}
