//! How long a prompt a self-served model takes, as its server says, and whether a request fits.
//!
//! A local server's context is whatever it was started with (`llama-server -c`, vLLM
//! `--max-model-len`), often far below the model's own. Sent a prompt over it, llama.cpp answers
//! 400 `exceed_context_size_error` and vLLM 400 "maximum context length"; with room for the
//! prompt but not for `max_tokens`, vLLM refuses and llama.cpp writes until the context ends.
//! So before a request that may not fit, the server's own tokenizer counts it, and one that
//! cannot fit is refused before it is sent, with the numbers. Pure functions here: the client
//! makes the calls (`Client::context`).

use serde_json::Value;

/// The model's context in a `GET /v1/models` body: vLLM's `max_model_len`, llama.cpp's
/// `meta.n_ctx` (the context it serves, not `n_ctx_train`). The entry whose `id` is `model`,
/// else the only entry.
pub fn from_models(body: &[u8], model: &str) -> Option<u64> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let data = v.get("data")?.as_array()?;
    let entry = data
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        .or(if data.len() == 1 { data.first() } else { None })?;
    entry
        .get("max_model_len")
        .or_else(|| entry.get("meta").and_then(|m| m.get("n_ctx")))
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
}

/// The context in llama.cpp's `GET /props` body (`default_generation_settings.n_ctx`).
pub fn from_props(body: &[u8]) -> Option<u64> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v.get("default_generation_settings")?
        .get("n_ctx")?
        .as_u64()
        .filter(|&n| n > 0)
}

/// The server's root (where `/props` and `/tokenize` are) from an OpenAI base URL.
pub fn root(base_url: &str) -> &str {
    let b = base_url.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b)
}

/// The text a request's prompt is made of: every message's content (text or parts) and tool
/// call, and the tools' definitions, which templates render into the prompt. Tokenized, it
/// counts no more than the prompt the server builds (the template only adds to it).
pub fn prompt_text(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let mut parts: Vec<String> = Vec::new();
    for m in v.get("messages")?.as_array()? {
        if let Some(t) = m.get("content").and_then(crate::reply::content_text) {
            parts.push(t);
        }
        if let Some(calls) = m.get("tool_calls") {
            parts.push(calls.to_string());
        }
    }
    if let Some(tools) = v.get("tools") {
        parts.push(tools.to_string());
    }
    Some(parts.join("\n"))
}

/// The body of a `POST /tokenize`, in both servers' words: llama.cpp reads `content`, vLLM
/// `prompt` (and `model`); each ignores the other's.
pub fn tokenize_body(model: &str, text: &str) -> Vec<u8> {
    serde_json::json!({"model": model, "prompt": text, "content": text, "add_special": false})
        .to_string()
        .into_bytes()
}

/// The count in a `/tokenize` reply: vLLM's `count`, else the length of `tokens`.
pub fn token_count(body: &[u8]) -> Option<u64> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v.get("count")
        .and_then(Value::as_u64)
        .or_else(|| Some(v.get("tokens")?.as_array()?.len() as u64))
}

/// Whether a request may not fit, on its size alone (about 4 bytes a token, which a prompt of
/// code or prose rarely beats by 2×): only then is it counted exactly.
pub fn may_not_fit(body_bytes: usize, max_tokens: Option<u32>, context: u64) -> bool {
    (body_bytes as u64 / 2) + u64::from(max_tokens.unwrap_or(0)) > context
}

/// Why `prompt` tokens and a reply of up to `max_tokens` cannot fit in `context`, or `None`.
pub fn overflow(prompt: u64, max_tokens: Option<u32>, context: u64) -> Option<String> {
    let reply = u64::from(max_tokens.unwrap_or(0));
    if prompt + reply <= context && prompt < context {
        return None;
    }
    let asked = match max_tokens {
        Some(m) => format!(" and --max-tokens {m}"),
        None => String::new(),
    };
    Some(format!(
        "the prompt is {prompt} tokens (the server's tokenizer){asked}: more than the model's \
         context of {context} tokens (as the server says); not sent. Serve the model with a \
         longer context (llama-server -c, vLLM --max-model-len){}",
        if max_tokens.is_some() {
            ", or lower --max-tokens"
        } else {
            ""
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_is_read_from_vllm_and_llama_cpp_models_and_props() {
        let vllm =
            br#"{"object":"list","data":[{"id":"qwen","object":"model","max_model_len":32768},
                        {"id":"other","max_model_len":4096}]}"#;
        assert_eq!(from_models(vllm, "qwen"), Some(32768));
        assert_eq!(from_models(vllm, "other"), Some(4096));
        // Two models and neither named: no guess.
        assert_eq!(from_models(vllm, "missing"), None);
        // llama.cpp names the model by its path, and serves one: the only entry, its n_ctx.
        let llama =
            br#"{"data":[{"id":"/m/SmolLM2.gguf","meta":{"n_ctx":2048,"n_ctx_train":8192}}]}"#;
        assert_eq!(from_models(llama, "smol"), Some(2048));
        assert_eq!(from_models(br#"{"data":[{"id":"m"}]}"#, "m"), None);
        assert_eq!(from_models(b"<html>", "m"), None);
        let props = br#"{"default_generation_settings":{"n_ctx":8192},"total_slots":1}"#;
        assert_eq!(from_props(props), Some(8192));
        assert_eq!(
            from_props(br#"{"default_generation_settings":{"n_ctx":0}}"#),
            None
        );
        assert_eq!(root("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080");
        assert_eq!(root("http://h/openai"), "http://h/openai");
    }

    #[test]
    fn the_prompt_text_holds_messages_parts_tool_calls_and_tools() {
        let body = br#"{"messages":[{"role":"system","content":"sys"},
            {"role":"user","content":[{"type":"text","text":"part one"}]},
            {"role":"assistant","content":null,"tool_calls":[{"function":{"name":"read_file"}}]}],
            "tools":[{"type":"function","function":{"name":"list_dir"}}]}"#;
        let t = prompt_text(body).unwrap();
        for s in ["sys", "part one", "read_file", "list_dir"] {
            assert!(t.contains(s), "{s} in {t}");
        }
        assert_eq!(token_count(br#"{"count":7,"tokens":[1]}"#), Some(7));
        assert_eq!(token_count(br#"{"tokens":[1,2,3]}"#), Some(3));
        assert_eq!(token_count(b"nope"), None);
    }

    #[test]
    fn a_request_over_the_context_is_refused_with_its_numbers() {
        assert_eq!(overflow(1000, Some(200), 2048), None);
        assert_eq!(overflow(2047, None, 2048), None);
        let e = overflow(3033, None, 2048).unwrap();
        assert!(
            e.contains("3033 tokens") && e.contains("context of 2048"),
            "{e}"
        );
        assert!(!e.contains("--max-tokens"), "{e}");
        let e = overflow(1900, Some(200), 2048).unwrap();
        assert!(
            e.contains("--max-tokens 200") && e.contains("lower --max-tokens"),
            "{e}"
        );
        // The size alone decides when to count: a small body never costs a tokenize call.
        assert!(!may_not_fit(2000, Some(200), 2048));
        assert!(may_not_fit(4000, Some(200), 2048));
    }
}
