//! JSON strings written without serde, escaped exactly as serde_json
//! escapes them (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other control
//! characters as `\u00xx`; everything else verbatim).
//!
//! serde_json tests every byte against a table; the texts forcegate writes
//! per request (a denial's kilobytes, the decision log line) are nearly all
//! plain, so this passes them sixty-four bytes at a time while they stay
//! plain, sixteen around a byte to escape. On a leader's denial
//! serde_json's string escaping was a fifth of the whole request's
//! instructions beyond the baseline's.

use std::fmt::{self, Write};

/// Append `text` as a JSON string, quotes included.
pub fn write_string<W: Write + ?Sized>(out: &mut W, text: &str) -> fmt::Result {
    out.write_char('"')?;
    write_escaped(out, text)?;
    out.write_char('"')
}

/// Append `text` escaped for the inside of a JSON string.
pub fn write_escaped<W: Write + ?Sized>(out: &mut W, text: &str) -> fmt::Result {
    let bytes = text.as_bytes();
    // Short and plain (field names, most log values): a few table lookups
    // cost less than padding a chunk.
    if bytes.len() < CHUNK && bytes.iter().all(|&b| ESCAPE[usize::from(b)] == 0) {
        return out.write_str(text);
    }
    let mut plain = 0;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        // Four chunks in one test: a denial's kilobytes hold a special
        // byte (a line break) every few hundred.
        if let Some(block) = rest.first_chunk::<BLOCK>()
            && !any_special(block)
        {
            i += BLOCK;
            continue;
        }
        let window = rest.len().min(CHUNK);
        let clean = match rest.first_chunk::<CHUNK>() {
            Some(chunk) => !any_special(chunk),
            // The tail of a longer text, or a short one that needs
            // escaping, padded with spaces: one test for the chunk.
            None => {
                let mut padded = [b' '; CHUNK];
                padded[..window].copy_from_slice(rest);
                !any_special(&padded)
            }
        };
        let special = if clean {
            None
        } else {
            rest[..window]
                .iter()
                .position(|&b| ESCAPE[usize::from(b)] != 0)
        };
        let Some(at) = special else {
            i += window;
            continue;
        };
        i += at;
        let byte = bytes[i];
        // `byte` is ASCII, so both slices end on a char boundary.
        out.write_str(&text[plain..i])?;
        match ESCAPE[usize::from(byte)] {
            b'u' => write!(out, "\\u{byte:04x}")?,
            escape => {
                out.write_char('\\')?;
                out.write_char(char::from(escape))?;
            }
        }
        i += 1;
        plain = i;
    }
    out.write_str(&text[plain..])
}

/// Bytes tested at once: one SSE2 register (`any_special` compiles to
/// about fifteen instructions for the sixteen, against ~4 a byte for a
/// table walk).
const CHUNK: usize = 16;

/// Bytes skipped at once while a long text stays plain: four registers
/// tested and folded together, one branch.
const BLOCK: usize = 4 * CHUNK;

/// Whether any byte of a chunk is a control character, `"` or `\`.
/// Written as a branch-free fold over a fixed-size array so LLVM
/// vectorizes it; no `unsafe`, no target-specific code.
#[inline(always)]
fn any_special<const N: usize>(chunk: &[u8; N]) -> bool {
    let mut any = 0u8;
    for &byte in chunk {
        any |= u8::from((byte < 0x20) | (byte == b'"') | (byte == b'\\'));
    }
    any != 0
}

/// For each byte, what follows the backslash of its escape: 0 for none,
/// `u` for `\u00xx`.
static ESCAPE: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every control character comes out escaped, everything else verbatim.
    #[test]
    fn escapes_every_character_class_as_serde_json() {
        let text: String = (0u32..0x80)
            .chain([0xe9, 0x65e5, 0x1f600])
            .filter_map(char::from_u32)
            .collect();
        let mut out = String::new();
        write_string(&mut out, &text).unwrap();
        assert_eq!(out, serde_json::to_string(&text).unwrap());
        let back: String = serde_json::from_str(&out).expect("valid JSON string");
        assert_eq!(back, text);
    }

    proptest::proptest! {
        /// Byte for byte what serde_json writes for the same string, however
        /// the special characters fall across the sixteen-byte chunks.
        #[test]
        fn matches_serde_json(text in "(?s)[\\x00-\\x7f\"\\\\é日😀]{0,40}|.{0,80}") {
            let mut out = String::new();
            write_string(&mut out, &text).unwrap();
            proptest::prop_assert_eq!(out, serde_json::to_string(&text).unwrap());
        }

        /// Long texts, plain for a block or more between special bytes,
        /// as a denial's message is.
        #[test]
        fn matches_serde_json_across_blocks(
            text in "(?s)([a-z .`:-]{0,150}[\\x00-\\x1f\"\\\\é日]?){0,6}"
        ) {
            let mut out = String::new();
            write_string(&mut out, &text).unwrap();
            proptest::prop_assert_eq!(out, serde_json::to_string(&text).unwrap());
        }
    }
}
