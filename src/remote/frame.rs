//! The framing of a document from the other machine (issue 41's contract): whatever
//! its login scripts print first, the answer is one line `treebox-remote <protocol>
//! <length>` and exactly that many bytes of JSON after it, then a newline; a document
//! with `"payload": N` is followed by exactly N bytes (a bundle). Read as hostile data: the
//! whole output is capped before it is looked at, the length must fit what is there,
//! and the JSON is parsed at most [`MAX_DOCUMENT`] bytes.

use serde_json::Value;

/// The word that starts a frame's line.
pub const MARKER: &str = "treebox-remote";

/// The largest document taken from another machine.
pub const MAX_DOCUMENT: usize = 4 << 20;

/// Why a machine's output is not a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("it answered no treebox document")]
    NoFrame,
    #[error("its document is cut short or longer than it says")]
    Length,
    #[error("its document is over {MAX_DOCUMENT} bytes")]
    TooLarge,
    #[error("its document is not JSON")]
    NotJson,
}

/// `doc` framed, as the other machine writes it.
pub fn write(protocol: u32, doc: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(doc).expect("a JSON value serializes");
    let mut out = format!("\n{MARKER} {protocol} {}\n", body.len()).into_bytes();
    out.extend_from_slice(&body);
    out.push(b'\n');
    out
}

/// The protocol and document of the first frame in `out` (a machine's whole stdout,
/// already capped by the reader).
pub fn read(out: &[u8]) -> Result<(u32, Value), FrameError> {
    read_at(out).map(|(p, doc, _)| (p, doc))
}

/// [`read`], and where the bytes after the frame start: past the newline that ends
/// the document, or `None` when `out` ends with the document (a payload, if the
/// document names one, is what follows that newline).
pub fn read_at(out: &[u8]) -> Result<(u32, Value, Option<usize>), FrameError> {
    let head = format!("{MARKER} ");
    let mut at = 0;
    while at <= out.len() {
        let line_end = out[at..].iter().position(|&b| b == b'\n').map(|p| at + p);
        let line = &out[at..line_end.unwrap_or(out.len())];
        if let Some(rest) = line.strip_prefix(head.as_bytes()) {
            let rest = std::str::from_utf8(rest).map_err(|_| FrameError::NoFrame)?;
            let mut words = rest.split(' ');
            let (Some(p), Some(n), None) = (words.next(), words.next(), words.next()) else {
                return Err(FrameError::NoFrame);
            };
            let protocol: u32 = p.parse().map_err(|_| FrameError::NoFrame)?;
            let len: usize = n.parse().map_err(|_| FrameError::Length)?;
            if len > MAX_DOCUMENT {
                return Err(FrameError::TooLarge);
            }
            let start = line_end.ok_or(FrameError::Length)? + 1;
            let body = out.get(start..start + len).ok_or(FrameError::Length)?;
            let after = match out.get(start + len) {
                None => None,
                Some(b'\n') => Some(start + len + 1),
                Some(_) => return Err(FrameError::Length),
            };
            let doc = serde_json::from_slice(body).map_err(|_| FrameError::NotJson)?;
            return Ok((protocol, doc, after));
        }
        match line_end {
            Some(e) => at = e + 1,
            None => break,
        }
    }
    Err(FrameError::NoFrame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_frame_reads_back_whatever_came_before_it() {
        let doc = json!({"schemaVersion": 1, "name": "x\ny"});
        let framed = write(1, &doc);
        assert_eq!(read(&framed), Ok((1, doc.clone())));
        let mut noisy = b"Welcome to big!\ntreebox-remotely yours\n".to_vec();
        noisy.extend_from_slice(&framed);
        assert_eq!(read(&noisy), Ok((1, doc)));
    }

    #[test]
    fn a_frame_that_lies_is_refused() {
        assert_eq!(read(b"hello\n"), Err(FrameError::NoFrame));
        assert_eq!(read(b"treebox-remote 1 10\n{}"), Err(FrameError::Length));
        assert_eq!(read(b"treebox-remote 1 2\n{}}\n"), Err(FrameError::Length));
        assert_eq!(read(b"treebox-remote 1 2"), Err(FrameError::Length));
        assert_eq!(read(b"treebox-remote 1 3\n{x}"), Err(FrameError::NotJson));
        assert_eq!(read(b"treebox-remote x 2\n{}"), Err(FrameError::NoFrame));
        assert_eq!(read(b"treebox-remote 1 -1\n{}"), Err(FrameError::Length));
        let big = format!("treebox-remote 1 {}\n", MAX_DOCUMENT + 1);
        assert_eq!(read(big.as_bytes()), Err(FrameError::TooLarge));
    }
}
