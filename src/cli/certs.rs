//! `forcegate certs`: a CA and a serving certificate for the webhook Service.
//!
//! Prints the base64 `caBundle` on stdout (and nothing else) so it can be
//! captured straight into a webhook configuration:
//! `CA_BUNDLE=$(forcegate certs --service forcegate -n forcegate --out certs)`.

use std::process::ExitCode;

use super::CertsArgs;
use crate::certs::{self, CertError};

pub fn run(args: CertsArgs) -> ExitCode {
    let bundle = match certs::generate(&args.service, &args.namespace, args.days) {
        Ok(bundle) => bundle,
        Err(err) => return fail(&err),
    };
    if let Err(err) = certs::write(&args.out, &bundle) {
        return fail(&err);
    }
    eprintln!(
        "wrote {ca}, {ca_key}, {crt}, {key} to {dir} for {names}",
        ca = certs::CA_CERT_FILE,
        ca_key = certs::CA_KEY_FILE,
        crt = certs::CERT_FILE,
        key = certs::KEY_FILE,
        dir = args.out.display(),
        names = certs::service_names(&args.service, &args.namespace).join(", "),
    );
    println!("{}", bundle.ca_bundle());
    ExitCode::SUCCESS
}

fn fail(err: &CertError) -> ExitCode {
    eprintln!("forcegate certs: {err}");
    match err {
        // Bad arguments: usage error.
        CertError::Validity { .. } | CertError::Generate(_) => ExitCode::from(2),
        CertError::Io { .. } | CertError::Symlink { .. } => ExitCode::FAILURE,
    }
}
