//! `forcegate review`: decide AdmissionReview requests offline.
//!
//! Goes through [`Engine::admit`] exactly as the server does, with a
//! recorder that writes nothing, so `-o json` prints the bytes the server
//! would send. Exit 0: all allowed; 1: any denied; 2: bad input or usage,
//! with a one-line reason on stderr.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::{Output, ReviewArgs};
use crate::cleanup::NoopRecorder;
use crate::cluster::SnapshotCluster;
use crate::engine::{Admitted, Endpoint, Engine, Settings};
use crate::policy::PolicySet;

pub fn run(args: ReviewArgs) -> ExitCode {
    match review(args) {
        Ok(code) => code,
        Err(reason) => {
            eprintln!("forcegate review: {reason}");
            ExitCode::from(2)
        }
    }
}

fn review(args: ReviewArgs) -> Result<ExitCode, String> {
    if args.output == Output::Junit {
        return Err("-o junit is for `forcegate test`; use json, yaml or text".into());
    }
    let endpoint = match args.endpoint.as_str() {
        "mutate" => Endpoint::Mutate,
        _ => Endpoint::Validate,
    };
    if args
        .requests
        .iter()
        .filter(|p| p.as_os_str() == "-")
        .count()
        > 1
    {
        return Err("`-` (standard input) may be given once".into());
    }
    let policies = PolicySet::load_dir(&args.policies)
        .or_else(|err| match err {
            // A single file is fine too.
            crate::policy::PolicyError::Io { .. } if args.policies.is_file() => {
                PolicySet::load_files(std::slice::from_ref(&args.policies))
            }
            other => Err(other),
        })
        .map_err(|e| e.to_string())?;
    let cluster = SnapshotCluster::load(&args.cluster).map_err(|e| e.to_string())?;
    let settings = Settings {
        break_glass_group: args.break_glass_group.clone(),
        ..Settings::default()
    };
    let engine = Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        Arc::new(cluster),
        Arc::new(NoopRecorder),
        settings,
    );
    let runtime = super::one_shot_runtime()?;

    let mut stdout = std::io::stdout().lock();
    let mut bad = None;
    let mut denied = false;
    for path in &args.requests {
        let body = match read_request(path) {
            Ok(body) => body,
            Err(reason) => {
                eprintln!("forcegate review: {reason}");
                bad.get_or_insert(reason);
                continue;
            }
        };
        match runtime.block_on(engine.admit(&body, endpoint)) {
            Ok(admitted) => {
                denied |= !admitted.decision.allowed && endpoint == Endpoint::Validate;
                print(&mut stdout, args.output, path, &admitted).map_err(|e| e.to_string())?;
            }
            Err(err) => {
                let reason = format!("{}: {err}", shown(path));
                eprintln!("forcegate review: {reason}");
                bad.get_or_insert(reason);
            }
        }
    }
    stdout.flush().map_err(|e| e.to_string())?;
    Ok(match (bad, denied) {
        (Some(_), _) => ExitCode::from(2),
        (None, true) => ExitCode::from(1),
        (None, false) => ExitCode::SUCCESS,
    })
}

fn shown(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

fn read_request(path: &PathBuf) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().lock().read_to_end(&mut body).map(|_| ())
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut body).map(|_| ()))
    };
    read.map_err(|e| format!("{}: {e}", shown(path)))?;
    Ok(body)
}

fn print(
    out: &mut impl Write,
    output: Output,
    path: &Path,
    admitted: &Admitted,
) -> std::io::Result<()> {
    match output {
        Output::Json | Output::Junit => {
            out.write_all(&admitted.body)?;
            out.write_all(b"\n")
        }
        Output::Yaml => {
            let value: serde_json::Value =
                serde_json::from_slice(&admitted.body).unwrap_or(serde_json::Value::Null);
            let yaml = serde_saphyr::to_string(&value).unwrap_or_default();
            write!(out, "---\n{yaml}")
        }
        Output::Text => out.write_all(text(path, admitted).as_bytes()),
    }
}

/// A human summary: verdict, what it was, why, and the warnings.
pub fn text(path: &Path, admitted: &Admitted) -> String {
    let decision = &admitted.decision;
    let verdict = match (decision.allowed, decision.break_glass.is_some()) {
        (false, _) => "DENIED",
        (true, true) => "ALLOWED (break-glass)",
        (true, false) => "ALLOWED",
    };
    let intent = &admitted.intent;
    let mut out = format!(
        "{}: {verdict}: {} by {}\n",
        shown(path),
        crate::policy::describe_request(intent).trim_start_matches("the "),
        intent.requester.username
    );
    if let crate::intent::IntentKind::NotGated { reason } = &intent.kind {
        out.push_str(&format!("  not gated: {reason}\n"));
    }
    if let crate::intent::IntentKind::SystemFinalization { actor } = &intent.kind {
        out.push_str(&format!("  system finalization: {actor:?}\n"));
    }
    for line in decision.message.lines().filter(|l| !l.is_empty()) {
        out.push_str(&format!("  {line}\n"));
    }
    for warning in &decision.warnings {
        out.push_str(&format!("  warning: {warning}\n"));
    }
    if let Some(record) = &admitted.record {
        out.push_str(&format!(
            "  cleanup record: {record} (not written by review)\n"
        ));
    }
    out
}
