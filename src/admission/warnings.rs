//! Warnings as kube-apiserver takes them: HTTP header values (no control
//! characters), at most 256 runes each and 4 KiB in all.

use std::borrow::Cow;

/// The API server truncates each warning past this many runes.
pub const MAX_WARNING_RUNES: usize = 256;
/// The API server drops warnings once their total size passes this.
pub const MAX_WARNINGS_BYTES: usize = 4 * 1024;

/// Clean each warning ([`clean_warning`]), drop blank and repeated ones,
/// and keep the total within 4 KiB, ending with a note saying how many were
/// left out. Already limited warnings come back unchanged.
pub fn limit_warnings<I>(warnings: I) -> Vec<String>
where
    I: IntoIterator,
    I::Item: Into<String>,
{
    let mut cleaned: Vec<String> = Vec::new();
    for warning in warnings {
        let warning = warning.into();
        // Kept as it is when already clean (the usual case), not copied.
        let changed = match clean_warning(&warning) {
            Cow::Borrowed(clean) if clean.len() == warning.len() => None,
            clean => Some(clean.into_owned()),
        };
        let warning = changed.unwrap_or(warning);
        if !warning.is_empty() && !cleaned.contains(&warning) {
            cleaned.push(warning);
        }
    }
    let total = |ws: &[String]| ws.iter().map(String::len).sum::<usize>();
    if total(&cleaned) <= MAX_WARNINGS_BYTES {
        return cleaned;
    }
    let count = cleaned.len();
    loop {
        let omitted = count - cleaned.len() + 1;
        let note = format!("forcegate: {omitted} more warning(s) omitted; see the audit log");
        cleaned.pop();
        if total(&cleaned) + note.len() <= MAX_WARNINGS_BYTES {
            cleaned.push(note);
            return cleaned;
        }
    }
}

/// One warning as kube-apiserver accepts it: no control characters (it is
/// an HTTP header value), spaces condensed, and at most 256 runes.
pub fn clean_warning(text: &str) -> Cow<'_, str> {
    // Printable ASCII, the usual case, has spaces for its only whitespace
    // and no control characters: no chars to decode.
    let plain = text.bytes().all(|b| (b' '..=b'~').contains(&b));
    // Control characters read as spaces, so the ends lose them like spaces.
    let text = if plain {
        text.trim_matches(' ')
    } else {
        text.trim_matches(|c: char| c.is_whitespace() || c.is_control())
    };
    if text.contains("  ") || (!plain && text.contains(|c: char| c.is_control())) {
        Cow::Owned(truncate_runes(&condense_spaces(text), MAX_WARNING_RUNES).into_owned())
    } else {
        truncate_runes(text, MAX_WARNING_RUNES)
    }
}

/// Control characters as spaces, runs of spaces as one.
fn condense_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last_space = false;
    for c in text.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if c != ' ' || !last_space {
            out.push(c);
        }
        last_space = c == ' ';
    }
    out
}

/// `text` if it has at most `max` runes, else its first `max - 1` and `…`.
pub(super) fn truncate_runes(text: &str, max: usize) -> Cow<'_, str> {
    // No rune is shorter than a byte: short texts need no counting.
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    match text.char_indices().nth(max) {
        // More than `max` runes: cut where the last kept one ends.
        Some(_) => {
            let cut = text
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(text.len(), |(at, _)| at);
            Cow::Owned(format!("{}…", &text[..cut]))
        }
        None => Cow::Borrowed(text),
    }
}
