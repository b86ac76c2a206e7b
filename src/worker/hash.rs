//! The files' SHA-256, computed in the worker (the browser's digest copies the bytes on the
//! calling thread, which blocked the page for ~100 ms on a 73 MB file), chunk by chunk as the
//! worker reads them.

pub use sha2::Digest;

/// The running digest of one file.
pub type Hasher = sha2::Sha256;

/// Hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

/// Lower-case hex of a digest.
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut h = Hasher::new();
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(hex(&h.finalize()), sha256_hex(b"abc"));
    }
}
