//! Three-valued truth, and the verdicts that carry its reasons: what made
//! a condition true, or what it needed and could not read.

/// Three-valued truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Unknown,
}

impl Truth {
    /// Kleene conjunction: false wins, then unknown.
    pub fn all(truths: impl IntoIterator<Item = Truth>) -> Truth {
        let mut unknown = false;
        for truth in truths {
            match truth {
                Truth::False => return Truth::False,
                Truth::Unknown => unknown = true,
                Truth::True => {}
            }
        }
        if unknown { Truth::Unknown } else { Truth::True }
    }

    /// Kleene disjunction: true wins, then unknown (De Morgan over `all`).
    pub fn any(truths: impl IntoIterator<Item = Truth>) -> Truth {
        !Truth::all(truths.into_iter().map(|truth| !truth))
    }
}

/// Kleene negation: unknown stays unknown.
impl std::ops::Not for Truth {
    type Output = Truth;

    fn not(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }
}

/// Something a condition needed but could not read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Missing {
    /// e.g. `facts.node.ready`.
    pub what: String,
    /// e.g. `Node: not in the snapshot`.
    pub why: String,
}

impl Missing {
    /// "facts.node.ready, facts.node.fenced (Node: not in the snapshot); ..."
    /// grouped by reason, in first-seen order.
    pub fn describe(missing: &[Missing]) -> String {
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for m in missing {
            match groups.iter_mut().find(|(why, _)| *why == m.why) {
                Some((_, whats)) => {
                    if !whats.contains(&m.what.as_str()) {
                        whats.push(&m.what);
                    }
                }
                None => groups.push((&m.why, vec![&m.what])),
            }
        }
        groups
            .iter()
            .map(|(why, whats)| format!("{} ({why})", whats.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A condition's result and why: what made it true, or what was missing.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub truth: Truth,
    /// For `True`: the facts that made it hold, joined by " and ", e.g.
    /// `facts.node.ready is true and facts.node.fenced is false`.
    pub because: String,
    /// For `Unknown`: what could not be known and why.
    pub missing: Vec<Missing>,
}

impl Verdict {
    pub fn yes(because: String) -> Self {
        Self {
            truth: Truth::True,
            because,
            missing: Vec::new(),
        }
    }

    pub fn no() -> Self {
        Self {
            truth: Truth::False,
            because: String::new(),
            missing: Vec::new(),
        }
    }

    pub fn unknown(missing: Vec<Missing>) -> Self {
        Self {
            truth: Truth::Unknown,
            because: String::new(),
            missing,
        }
    }

    /// The verdict [`Condition::explain_all`](super::Condition::explain_all)
    /// reached, from its buffers.
    pub fn explained(truth: Truth, because: String, mut missing: Vec<Missing>) -> Self {
        match truth {
            Truth::True => Verdict::yes(because),
            Truth::False => Verdict::no(),
            Truth::Unknown => {
                dedup(&mut missing);
                Verdict::unknown(missing)
            }
        }
    }

    /// Kleene conjunction, keeping the reasons.
    pub fn and(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut because = String::new();
        let mut missing = Vec::new();
        for verdict in verdicts {
            match verdict.truth {
                Truth::False => return Verdict::no(),
                // The first reason moves in rather than being copied.
                Truth::True if because.is_empty() => because = verdict.because,
                Truth::True => push_part(&mut because, &verdict.because),
                Truth::Unknown => missing.extend(verdict.missing),
            }
        }
        if missing.is_empty() {
            Verdict::yes(because)
        } else {
            dedup(&mut missing);
            Verdict::unknown(missing)
        }
    }

    /// Kleene disjunction: the first true part explains it.
    pub fn or(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut missing = Vec::new();
        for verdict in verdicts {
            match verdict.truth {
                Truth::True => return verdict,
                Truth::False => {}
                Truth::Unknown => missing.extend(verdict.missing),
            }
        }
        if missing.is_empty() {
            Verdict::no()
        } else {
            dedup(&mut missing);
            Verdict::unknown(missing)
        }
    }
}

/// Append one part of an explanation, " and " after the parts before it.
pub(super) fn push_part(because: &mut String, part: &str) {
    if part.is_empty() {
        return;
    }
    start_part(because);
    because.push_str(part);
}

pub(super) fn start_part(because: &mut String) {
    if !because.is_empty() {
        because.push_str(" and ");
    }
}

fn dedup<T: Clone + Ord>(items: &mut Vec<T>) {
    let mut seen = std::collections::BTreeSet::new();
    items.retain(|item| seen.insert(item.clone()));
}
