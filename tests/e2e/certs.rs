//! Self-managed certificates (`serve --manage-certs`) on the real API
//! server, each test with its own chart release (tests/e2e/release.rs):
//! Secrets created and the caBundle injected, a forced CA rotation under
//! load, two writers at once, and a Secret forcegate did not create.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fixtures::{NodeState, PodSpec, denied_by};
use crate::force_delete::{force_delete, leader};
use crate::harness::{free_port, harness, http_get, read_from, tail};
use crate::kubectl::eventually;
use crate::release::{
    Forcegate, Install, ca_bundle, certs, data, force_delete_dry_run, installed, resource_version,
};
#[test]
fn forcegate_creates_its_secrets_injects_the_ca_bundle_and_is_called() {
    let h = harness();
    let _running = h.shared();
    let (scene, install, port) = installed(h, "deny");
    let mut forcegate = install.start("fgc-deny-a", port);
    forcegate.wait_ready();

    let ca = install.secret("ca").expect("CA Secret created");
    let tls = install.secret("tls").expect("serving Secret created");
    assert_eq!(
        ca.pointer("/metadata/labels/forcegate.dev~1certificate"),
        Some(&json!("ca"))
    );
    assert_eq!(
        tls.pointer("/metadata/labels/forcegate.dev~1certificate"),
        Some(&json!("serving"))
    );
    let bundle = certs(&data(&ca, "ca.crt"));
    assert_eq!(bundle, certs(&data(&ca, "tls.crt")), "one CA, trusted");
    assert!(certs(&data(&tls, "tls.crt"))[0].signed_by(&bundle[0]));
    for config in install.live_webhooks() {
        for webhook in config["webhooks"].as_array().expect("webhooks") {
            assert_eq!(ca_bundle(webhook), bundle, "{}", webhook["name"]);
        }
    }

    leader(&scene);
    let mine = install.webhook("force-delete.pods.forcegate.dev");
    scene.until_forcegate_sees(&force_delete("db-0", &["--dry-run=server"]), |run| {
        denied_by(run, &mine, "statefulset-leader")
    });
    let denied = forcegate.metric(
        "forcegate_admission_requests_total",
        &["endpoint=\"validate\"", "decision=\"denied\""],
    );
    assert!(
        denied >= 1.0,
        "forcegate counted no denial:\n{}",
        forcegate.log_tail()
    );
    let run = scene.run(&force_delete("db-0", &[]));
    assert!(
        !run.success()
            && run
                .stderr
                .contains("forcegate denied the force deletion of pod"),
        "{}",
        run.describe()
    );
    assert!(scene.pod("db-0").is_some(), "the leader must still exist");
}

#[test]
fn a_forced_ca_rotation_under_a_stream_of_force_deletes_fails_no_call() {
    let h = harness();
    let _running = h.shared();
    let (scene, install, port) = installed(h, "rotate");
    let mut forcegate = install.start("fgc-rotate-a", port);
    forcegate.wait_ready();
    // A fenced node: the force delete is allowed, so any failed call shows.
    let node = scene.node("n1", NodeState::OutOfService);
    scene.running_pod("web-0", &node, PodSpec::default());
    eventually("the dry run to pass", Duration::from_secs(20), || {
        let run = force_delete_dry_run(scene.k(), &scene.ns, "web-0");
        if run.success() {
            Ok(())
        } else {
            Err(run.describe())
        }
    });
    let old_ca = certs(&data(&install.secret("ca").expect("CA"), "tls.crt")).remove(0);
    let old_key = data(&install.secret("tls").expect("pair"), "tls.key");

    let stop = Arc::new(AtomicBool::new(false));
    let stream = {
        let stop = stop.clone();
        let ns = scene.ns.clone();
        thread::spawn(move || {
            let (mut calls, mut failures) = (0, Vec::new());
            while !stop.load(Ordering::SeqCst) {
                let run = force_delete_dry_run(&h.admin, &ns, "web-0");
                calls += 1;
                if !run.success() {
                    failures.push(run.describe());
                }
            }
            (calls, failures)
        })
    };
    thread::sleep(Duration::from_secs(2));
    let ca_name = format!("{}-ca", install.fullname);
    h.admin.ok(&[
        "-n",
        &install.release,
        "annotate",
        "secret",
        &ca_name,
        "forcegate.dev/rotate=e2e",
    ]);
    let new_ca = eventually("a pair from a new CA", Duration::from_secs(60), || {
        let ca = certs(&data(&install.secret("ca").ok_or("no CA")?, "tls.crt")).remove(0);
        let leaf = certs(&data(&install.secret("tls").ok_or("no pair")?, "tls.crt")).remove(0);
        match ca != old_ca && leaf.signed_by(&ca) {
            true => Ok(ca),
            false => Err("not rotated yet".to_owned()),
        }
    });
    eventually(
        "forcegate to serve the new pair",
        Duration::from_secs(30),
        || match forcegate.metric("forcegate_tls_reloads_total", &["result=\"success\""]) >= 1.0 {
            true => Ok(()),
            false => Err(forcegate.log_tail()),
        },
    );
    thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::SeqCst);
    let (calls, failures) = stream.join().expect("stream thread");
    assert!(
        failures.is_empty(),
        "{} of {calls} calls failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(calls >= 10, "only {calls} calls during the rotation");
    eprintln!("e2e: {calls} force-delete dry runs through the rotation, none failed");
    assert!(
        forcegate.metric(
            "forcegate_admission_requests_total",
            &["endpoint=\"validate\""]
        ) >= 10.0
    );

    // Both CAs in every bundle, written before the pair from the new CA.
    let tls = install.secret("tls").expect("pair");
    assert_ne!(data(&tls, "tls.key"), old_key);
    for config in install.live_webhooks() {
        assert!(
            resource_version(&config) < resource_version(&tls),
            "bundle after the pair"
        );
        for webhook in config["webhooks"].as_array().expect("webhooks") {
            assert_eq!(
                ca_bundle(webhook),
                vec![new_ca.clone(), old_ca.clone()],
                "{}",
                webhook["name"]
            );
        }
    }
}

#[test]
fn two_processes_started_at_once_write_one_ca_and_one_pair() {
    let h = harness();
    let _running = h.shared();
    let (_scene, install, port) = installed(h, "pair");
    let watch = {
        let ns = install.release.clone();
        thread::spawn(move || {
            h.admin.run(&[
                "-n",
                &ns,
                "get",
                "secrets",
                "--watch",
                "--output-watch-events",
                "-o",
                "json",
                "--request-timeout=40s",
            ])
        })
    };
    thread::sleep(Duration::from_secs(2));
    let mut a = install.start("fgc-pair-a", port);
    let mut b = install.start("fgc-pair-b", free_port().expect("a free port"));
    a.wait_ready();
    b.wait_ready();
    let events = watch.join().expect("watch thread").stdout;

    let mut keys: BTreeMap<String, BTreeSet<Vec<u8>>> = BTreeMap::new();
    for event in serde_json::Deserializer::from_str(&events).into_iter::<Value>() {
        let object = &event.expect("watch event JSON")["object"];
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        keys.entry(name)
            .or_default()
            .insert(data(object, "tls.key"));
    }
    for suffix in ["ca", "tls"] {
        let name = format!("{}-{suffix}", install.fullname);
        let written = keys.get(&name).map_or(0, BTreeSet::len);
        assert_eq!(
            written, 1,
            "{name} written with {written} keys; events:\n{events}"
        );
    }
    let lease = h
        .admin
        .get(&["-n", &install.release, "lease", "forcegate-certs"])
        .expect("the certificate Lease");
    let holder = lease["spec"]["holderIdentity"].as_str().unwrap_or_default();
    assert!(
        ["fgc-pair-a", "fgc-pair-b"].contains(&holder),
        "holder {holder:?}"
    );
    let expiry =
        |f: &Forcegate| f.metric("forcegate_tls_certificate_expiry_timestamp_seconds", &[]);
    assert_eq!(expiry(&a), expiry(&b), "both serve the one pair");
}

#[test]
fn a_secret_forcegate_did_not_create_is_left_untouched() {
    let h = harness();
    let install = Install::new(h, "foreign");
    let name = format!("{}-tls", install.fullname);
    h.admin.ok(&[
        "-n",
        &install.release,
        "create",
        "secret",
        "generic",
        &name,
        "--from-literal=tls.crt=mine",
    ]);
    let before = install.secret("tls").expect("the foreign Secret");
    let forcegate = install.start("fgc-foreign-a", free_port().expect("a free port"));
    let expected = format!(
        "Secret {}/{name} exists but is not forcegate's",
        install.release
    );
    eventually(
        "forcegate to refuse the Secret",
        Duration::from_secs(60),
        || {
            let log = read_from(&forcegate.log, 0);
            match log.contains(&expected)
                && log.contains("never overwrites a Secret it did not create")
            {
                true => Ok(()),
                false => Err(tail(&log, 20)),
            }
        },
    );
    assert!(
        !matches!(http_get(forcegate.metrics_port, "/readyz"), Ok((200, _))),
        "forcegate must not be ready without its own pair"
    );
    let after = install.secret("tls").expect("still there");
    assert_eq!(
        after["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
    assert_eq!(after["data"], before["data"]);
    assert!(after.pointer("/metadata/labels").is_none());
}
