//! Running policies: every matching policy's rules fire independently; the
//! merged decision takes the most severe action, explains each denial, and
//! honours break-glass.

use std::fmt::Write as _;

use super::compile::{Policy, Rule};
use super::condition::{Condition, Missing, Scope, Truth, Verdict};
use super::message::{self, audit};
use super::reads::Reads;
use super::{EvalInput, context};
use crate::decision::{Action, Decision, PolicyOutcome};
use crate::intent::{Intent, IntentKind};

/// Objects (or oldObjects) annotated with this key and a reason may be force
/// deleted by a member of the break-glass group whatever the policies say.
pub const BREAK_GLASS_ANNOTATION: &str = "forcegate.dev/break-glass";

/// One fired rule: what the decision records of it, and what renders its
/// text. Messages are rendered only where the decision shows them: a
/// Record rule's message under a denial, or any rule's remediation outside
/// one, would be written and dropped.
struct Fired<'p> {
    outcome: PolicyOutcome,
    rule: &'p Rule,
    missing: Vec<Missing>,
}

/// What a rule that could not decide tells the operator to do.
const UNKNOWN_REMEDIATION: &str = "retry once forcegate's cluster view has synced (its /readyz names the stale kind); with `forcegate review`/`test`, add the missing kind to the snapshot";

impl Fired<'_> {
    /// Append the rule's message.
    fn write_message(&self, scope: &Scope<'_>, out: &mut String) {
        if self.outcome.unknown {
            // `write!` to a `String` cannot fail.
            let _ = write!(
                out,
                "could not decide: {}; forcegate does not guess (onUnknown: {:?})",
                Missing::describe(&self.missing),
                self.outcome.action
            );
        } else {
            self.rule.message.render_into(scope, out);
        }
    }

    /// Append `\n  Instead: <remediation>`, when the rule has one.
    fn write_remediation(&self, scope: &Scope<'_>, out: &mut String) {
        if self.outcome.unknown {
            out.push_str("\n  Instead: ");
            out.push_str(UNKNOWN_REMEDIATION);
        } else if let Some(remediation) = &self.rule.remediation {
            out.push_str("\n  Instead: ");
            remediation.render_into(scope, out);
        }
    }

    /// The room its text usually takes in a message.
    fn size_hint(&self) -> usize {
        self.outcome.policy.len()
            + self.outcome.fact.len()
            + self.rule.message.size_hint()
            + self.rule.remediation.as_ref().map_or(0, |r| r.size_hint())
            + if self.outcome.unknown { 256 } else { 0 }
    }

    /// `forcegate <policy>: <message>`, a warning's text.
    fn warning(&self, scope: &Scope<'_>) -> String {
        let mut text = String::with_capacity(
            "forcegate : ".len() + self.outcome.policy.len() + self.rule.message.size_hint(),
        );
        text.push_str("forcegate ");
        text.push_str(&self.outcome.policy);
        text.push_str(": ");
        self.write_message(scope, &mut text);
        text
    }
}

/// Evaluate `policies` (already sorted by name) against one request.
/// `reads` covers what they read of the context.
pub(crate) fn evaluate(policies: &[Policy], reads: &Reads, input: &EvalInput<'_>) -> Decision {
    let context = context::Context::new(input, reads);
    let unknown = context::unknown_groups(input.facts);
    let scope = Scope {
        context: &context,
        unknown: &unknown,
    };
    let mut fired = Vec::new();
    // One pair of buffers for every rule's explanation; a rule that fires
    // takes them along.
    let (mut because, mut missing) = (String::with_capacity(256), Vec::new());
    for policy in policies {
        let applies = policy.matcher.applies(input.intent, &scope);
        if applies.truth == Truth::False {
            continue;
        }
        for rule in &policy.rules {
            because.clear();
            missing.clear();
            let truth =
                Condition::explain_all(&rule.conditions, &scope, &mut because, &mut missing);
            if truth == Truth::False {
                continue;
            }
            let conditions = Verdict::explained(
                truth,
                std::mem::replace(&mut because, String::with_capacity(256)),
                std::mem::take(&mut missing),
            );
            // Selectors decide applicability; only conditions explain a decision.
            let verdict = match applies.truth {
                Truth::True => conditions,
                _ => Verdict::and([
                    Verdict {
                        because: String::new(),
                        ..applies.clone()
                    },
                    conditions,
                ]),
            };
            if let Some(f) = fire(policy, rule, verdict) {
                fired.push(f);
            }
        }
    }
    assemble(input, &scope, fired)
}

fn fire<'p>(policy: &Policy, rule: &'p Rule, verdict: Verdict) -> Option<Fired<'p>> {
    match verdict.truth {
        Truth::False => None,
        Truth::True => Some(Fired {
            outcome: PolicyOutcome {
                policy: policy.name.clone(),
                action: rule.action,
                fact: if verdict.because.is_empty() {
                    "always (no conditions)".into()
                } else {
                    verdict.because
                },
                unknown: false,
            },
            rule,
            missing: Vec::new(),
        }),
        Truth::Unknown => {
            let action = rule.on_unknown.action()?;
            Some(Fired {
                outcome: PolicyOutcome {
                    policy: policy.name.clone(),
                    action,
                    fact: format!("unknown: {}", Missing::describe(&verdict.missing)),
                    unknown: true,
                },
                rule,
                missing: verdict.missing,
            })
        }
    }
}

/// Merge fired rules into one decision.
fn assemble(input: &EvalInput<'_>, scope: &Scope<'_>, fired: Vec<Fired<'_>>) -> Decision {
    let intent = input.intent;
    let denials: Vec<&Fired> = fired
        .iter()
        .filter(|f| f.outcome.action == Action::Deny)
        .collect();
    let member = intent
        .requester
        .groups
        .iter()
        .any(|group| group == input.break_glass_group);
    let glass = break_glass_reason(input.request);

    let mut decision = Decision {
        allowed: denials.is_empty(),
        ..Decision::default()
    };
    let notes = &mut decision.audit_annotations;
    notes.insert(audit::INTENT.into(), intent.kind.name().into());
    if !fired.is_empty() {
        // `policy[/rule]=Action,...`
        let mut list = String::with_capacity(fired.len() * 32);
        for f in &fired {
            if !list.is_empty() {
                list.push(',');
            }
            list.push_str(&f.outcome.policy);
            if let Some(rule) = &f.rule.name {
                list.push('/');
                list.push_str(rule);
            }
            list.push('=');
            list.push_str(f.outcome.action.as_str());
        }
        notes.insert(audit::POLICIES.into(), list);
    }
    let missing: Vec<Missing> = fired.iter().flat_map(|f| f.missing.clone()).collect();
    if !missing.is_empty() {
        notes.insert(audit::UNKNOWN_FACTS.into(), Missing::describe(&missing));
    }

    let mut warnings = Vec::new();
    match (&glass, member) {
        (Some(reason), true) => {
            let overridden: Vec<&str> = denials.iter().map(|f| &*f.outcome.policy).collect();
            decision.allowed = true;
            decision.record = true;
            decision.break_glass = Some(reason.clone());
            let notes = &mut decision.audit_annotations;
            notes.insert(audit::BREAK_GLASS.into(), reason.clone());
            if !overridden.is_empty() {
                notes.insert(audit::BREAK_GLASS_OVERRODE.into(), dedup_join(&overridden));
            }
            warnings.push(format!(
                "forcegate: break-glass by {} (\"{reason}\"){}; a cleanup record will be verified",
                intent.requester.username,
                if overridden.is_empty() {
                    String::new()
                } else {
                    format!(", overriding {}", dedup_join(&overridden))
                }
            ));
        }
        (Some(_), false) if !denials.is_empty() => {
            decision.audit_annotations.insert(
                audit::BREAK_GLASS_REFUSED.into(),
                intent.requester.username.clone(),
            );
        }
        _ => {}
    }

    if decision.allowed {
        decision.record |= fired.iter().any(|f| f.outcome.action == Action::Record);
        for f in &fired {
            if f.outcome.action == Action::Deny {
                continue;
            }
            let mut text = f.warning(scope);
            if f.outcome.action == Action::Record && intent.dry_run {
                text.push_str(" (dry run: nothing recorded)");
            }
            warnings.push(text);
        }
    } else {
        // A policy that denied already explains itself; its Warn rules would
        // describe an outcome (a stripped finalizer) that is not happening.
        let denied_by = |policy: &str| denials.iter().any(|d| *d.outcome.policy == *policy);
        for f in fired
            .iter()
            .filter(|f| f.outcome.action == Action::Warn && !denied_by(&f.outcome.policy))
        {
            warnings.push(f.warning(scope));
        }
        decision.message = denial_message(input, scope, &denials, glass.is_some() && !member);
    }
    decision.audit_annotations.insert(
        audit::DECISION.into(),
        match (decision.allowed, decision.break_glass.is_some()) {
            (true, true) => "allowed-break-glass",
            (true, false) => "allowed",
            (false, _) => "denied",
        }
        .into(),
    );
    decision.warnings = crate::admission::limit_warnings(warnings);
    decision.outcomes = fired.into_iter().map(|f| f.outcome).collect();
    decision
}

fn dedup_join(names: &[&str]) -> String {
    let mut unique: Vec<&str> = Vec::new();
    for n in names {
        if !unique.contains(n) {
            unique.push(n);
        }
    }
    unique.join(", ")
}

/// The break-glass reason on the object or, for DELETE, the oldObject.
fn break_glass_reason(request: &crate::admission::Request) -> Option<String> {
    [request.object.as_ref(), request.old_object.as_ref()]
        .into_iter()
        .flatten()
        .find_map(|object| {
            let reason = object
                .metadata
                .annotations
                .as_ref()?
                .get(BREAK_GLASS_ANNOTATION)?
                .trim();
            (!reason.is_empty()).then(|| message::clean_warning(reason).into_owned())
        })
}

/// "forcegate denied <what>:" then, per denying policy, its message, the
/// fact that triggered it and what to do instead.
fn denial_message(
    input: &EvalInput<'_>,
    scope: &Scope<'_>,
    denials: &[&Fired<'_>],
    refused_glass: bool,
) -> String {
    let intent = input.intent;
    // Sized up front: the message runs to kilobytes, and grown from empty
    // it is copied half a dozen times.
    let parts: usize = denials.iter().map(|f| f.size_hint()).sum();
    let mut text = String::with_capacity(parts + 64 * denials.len() + 256);
    text.push_str("forcegate denied ");
    push_request(&mut text, intent);
    text.push(':');
    for f in denials {
        let o = &f.outcome;
        text.push_str("\n- ");
        text.push_str(&o.policy);
        text.push_str(": ");
        f.write_message(scope, &mut text);
        if !o.unknown {
            for part in [" (because ", &o.fact, ")"] {
                text.push_str(part);
            }
        }
        f.write_remediation(scope, &mut text);
    }
    // Pushed piece by piece, as `push_request` is.
    let group = input.break_glass_group;
    let user = intent.requester.username.as_str();
    let closing: &[&str] = if refused_glass {
        &[
            "\nThe object carries ",
            BREAK_GLASS_ANNOTATION,
            ", but ",
            user,
            " is not in group ",
            group,
            ", so break-glass does not apply.",
        ]
    } else {
        &[
            "\nEmergency only: annotate the object ",
            BREAK_GLASS_ANNOTATION,
            "=\"<reason>\" and retry as a member of ",
            group,
            ".",
        ]
    };
    closing.iter().for_each(|part| text.push_str(part));
    text
}

/// "the force deletion of pod shop/web-0", for messages.
pub fn describe_request(intent: &Intent) -> String {
    let mut text = String::new();
    push_request(&mut text, intent);
    text
}

/// Append [`describe_request`]'s text: pushed piece by piece, as it opens
/// every denial (`format!` per piece costs more than the rest of the message).
fn push_request(out: &mut String, intent: &Intent) {
    let target = &intent.target;
    let push_name = |out: &mut String| {
        if let Some(ns) = target.namespace.as_deref().filter(|ns| !ns.is_empty()) {
            out.push_str(ns);
            out.push('/');
        }
        out.push_str(&target.name);
    };
    let push_kind = |out: &mut String| {
        if target.kind.is_empty() || target.kind == "Eviction" {
            out.push_str(target.resource.trim_end_matches('s'));
        } else {
            out.extend(target.kind.chars().flat_map(char::to_lowercase));
        }
    };
    let lead = match &intent.kind {
        IntentKind::ForceDelete { .. } => "the force deletion of pod ",
        IntentKind::Eviction => "the grace-0 eviction of pod ",
        IntentKind::NamespaceFinalize { .. } => "the force-finalize of namespace ",
        IntentKind::FinalizerRemoval { removed, .. } => {
            out.push_str("the removal of finalizer");
            out.push_str(if removed.len() == 1 { " " } else { "s " });
            for (i, finalizer) in removed.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(finalizer);
            }
            out.push_str(" from ");
            push_kind(out);
            out.push(' ');
            return push_name(out);
        }
        IntentKind::SystemFinalization { .. } | IntentKind::NotGated { .. } => {
            out.push_str("this request on ");
            push_kind(out);
            out.push(' ');
            return push_name(out);
        }
    };
    out.push_str(lead);
    push_name(out);
}
