//! Table-driven classification of realistic AdmissionReviews
//! (`tests/fixtures/reviews/*.json`).

use super::*;
use crate::admission::decode;

macro_rules! fixture {
    ($name:literal) => {
        (
            $name,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/reviews/",
                $name,
                ".json"
            )),
        )
    };
}

fn classify_fixture((name, json): (&str, &str)) -> Intent {
    let request = decode(json.as_bytes()).unwrap_or_else(|err| panic!("{name}: {err}"));
    classify(&request)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn controller(name: &str) -> IntentKind {
    IntentKind::SystemFinalization {
        actor: SystemActor::Controller {
            name: name.to_owned(),
        },
    }
}

#[test]
fn gated_and_system_kinds() {
    let table = [
        (
            fixture!("force-delete-leader"),
            IntentKind::ForceDelete {
                already_terminating: false,
            },
        ),
        (
            fixture!("force-delete-terminating"),
            IntentKind::ForceDelete {
                already_terminating: true,
            },
        ),
        (
            fixture!("force-delete-no-object-field"),
            IntentKind::ForceDelete {
                already_terminating: false,
            },
        ),
        (
            fixture!("force-delete-collection"),
            IntentKind::ForceDelete {
                already_terminating: false,
            },
        ),
        (
            fixture!("kubelet-final-delete"),
            IntentKind::SystemFinalization {
                actor: SystemActor::Kubelet {
                    node: "worker-1".into(),
                },
            },
        ),
        // The kubelet of another node is not finishing its own pod.
        (
            fixture!("kubelet-other-node-delete"),
            IntentKind::ForceDelete {
                already_terminating: true,
            },
        ),
        // A node username without the system:nodes group is not a kubelet.
        (
            fixture!("kubelet-name-without-group"),
            IntentKind::ForceDelete {
                already_terminating: true,
            },
        ),
        (
            fixture!("podgc-delete"),
            IntentKind::SystemFinalization {
                actor: SystemActor::PodGc,
            },
        ),
        (
            fixture!("kube-controller-manager-pod-delete"),
            IntentKind::SystemFinalization {
                actor: SystemActor::PodGc,
            },
        ),
        (fixture!("eviction-grace-zero"), IntentKind::Eviction),
        (
            fixture!("namespace-finalize"),
            IntentKind::NamespaceFinalize {
                removed: strings(&["kubernetes"]),
            },
        ),
        (
            fixture!("namespace-finalize-by-controller"),
            controller("namespace-controller"),
        ),
        (
            fixture!("namespace-metadata-finalizer-removal"),
            IntentKind::FinalizerRemoval {
                removed: strings(&["example.com/external-dns"]),
                deleting: true,
            },
        ),
        (
            fixture!("finalizer-strip-pvc"),
            IntentKind::FinalizerRemoval {
                removed: strings(&["kubernetes.io/pvc-protection"]),
                deleting: true,
            },
        ),
        (
            fixture!("finalizer-remove-pvc-by-controller"),
            controller("pvc-protection-controller"),
        ),
        (
            fixture!("job-tracking-removed-by-job-controller"),
            controller("job-controller"),
        ),
        (
            fixture!("job-tracking-stripped-by-user"),
            IntentKind::FinalizerRemoval {
                removed: strings(&["batch.kubernetes.io/job-tracking"]),
                deleting: false,
            },
        ),
        (
            fixture!("pod-status-finalizer-removal"),
            IntentKind::FinalizerRemoval {
                removed: strings(&["example.com/log-shipper"]),
                deleting: true,
            },
        ),
        (
            fixture!("orphan-removed-by-gc"),
            controller("generic-garbage-collector"),
        ),
        // The GC owns `orphan` but not the other finalizer: not all owned.
        (
            fixture!("gc-removing-foreign-finalizer"),
            IntentKind::FinalizerRemoval {
                removed: strings(&["orphan", "example.com/log-shipper"]),
                deleting: true,
            },
        ),
        (
            fixture!("kube-controller-manager-removes-owned"),
            controller("kube-controller-manager"),
        ),
    ];
    for (fixture, expected) in table {
        let intent = classify_fixture(fixture);
        assert_eq!(intent.kind, expected, "{}", fixture.0);
    }
}

#[test]
fn not_gated_kinds_say_why() {
    let table = [
        (fixture!("delete-graceful"), "gracePeriodSeconds=30"),
        (fixture!("delete-no-options"), "no gracePeriodSeconds"),
        (fixture!("delete-unscheduled"), "not scheduled"),
        (fixture!("delete-succeeded"), "Succeeded"),
        (fixture!("delete-failed"), "Failed"),
        (fixture!("eviction-graceful"), "gracePeriodSeconds=30"),
        (fixture!("eviction-default-grace"), "own grace period"),
        (fixture!("namespace-finalize-noop"), "removes no finalizers"),
        (fixture!("update-labels-only"), "removes no finalizers"),
        (fixture!("create-pod"), "not a deletion"),
        (fixture!("delete-deployment"), "deployments.apps"),
    ];
    for (fixture, needle) in table {
        let intent = classify_fixture(fixture);
        match &intent.kind {
            IntentKind::NotGated { reason } => {
                assert!(reason.contains(needle), "{}: {reason}", fixture.0)
            }
            other => panic!("{}: expected NotGated, got {other:?}", fixture.0),
        }
        assert!(!intent.kind.is_gated());
    }
}

#[test]
fn target_of_a_pod_delete() {
    let intent = classify_fixture(fixture!("force-delete-leader"));
    assert_eq!(
        intent.target,
        ObjectRef {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
            resource: "pods".into(),
            subresource: None,
            namespace: Some("db".into()),
            name: "postgres-0".into(),
            uid: Some("c0a8012e-5b1d-4f7a-9c3e-2d6f8a9b0c1d".into()),
        }
    );
    assert_eq!(intent.requester.username, "alice@example.com");
    assert_eq!(
        intent.requester.groups,
        strings(&["oncall", "system:authenticated"])
    );
    assert!(!intent.dry_run);
}

#[test]
fn delete_collection_takes_the_name_from_old_object() {
    let intent = classify_fixture(fixture!("force-delete-collection"));
    assert_eq!(intent.target.name, "postgres-0");
}

#[test]
fn dry_run_is_carried() {
    let intent = classify_fixture(fixture!("force-delete-dry-run"));
    assert!(intent.dry_run);
    assert!(intent.kind.is_gated());
}

#[test]
fn eviction_targets_the_pod() {
    let intent = classify_fixture(fixture!("eviction-grace-zero"));
    assert_eq!(intent.target.kind, "Pod");
    assert_eq!(intent.target.group, "");
    assert_eq!(intent.target.resource, "pods");
    assert_eq!(intent.target.subresource.as_deref(), Some("eviction"));
    assert_eq!(intent.target.name, "postgres-0");
    assert_eq!(intent.target.namespace.as_deref(), Some("db"));
    // Never from the caller's UID precondition: facts take the pod's
    // identity from the cluster view.
    assert_eq!(intent.target.uid, None);
    let graceful = classify_fixture(fixture!("eviction-graceful"));
    assert_eq!(graceful.target.uid, None);
}

#[test]
fn namespace_targets_are_cluster_scoped() {
    let intent = classify_fixture(fixture!("namespace-finalize"));
    assert_eq!(intent.target.kind, "Namespace");
    assert_eq!(intent.target.name, "legacy-payments");
    assert_eq!(intent.target.namespace, None);
    assert_eq!(intent.target.subresource.as_deref(), Some("finalize"));
    assert_eq!(
        intent.target.uid.as_deref(),
        Some("5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9")
    );
}

fn edited(fixture: (&str, &str), edit: impl FnOnce(&mut serde_json::Value)) -> Intent {
    let mut value: serde_json::Value = serde_json::from_str(fixture.1).expect("fixture JSON");
    edit(&mut value);
    let body = serde_json::to_vec(&value).expect("JSON");
    classify(&decode(&body).expect("decodes"))
}

#[test]
fn user_asked_grace_below_zero_is_not_force() {
    // The API server turns negative grace into 1 before admission; whatever
    // arrives that is not exactly 0 is graceful.
    let intent = edited(fixture!("force-delete-leader"), |v| {
        v["request"]["options"]["gracePeriodSeconds"] = serde_json::json!(1);
    });
    assert!(matches!(intent.kind, IntentKind::NotGated { .. }));
}

#[test]
fn kubelet_finishing_a_terminal_pod_is_still_system_finalization() {
    let intent = edited(fixture!("kubelet-final-delete"), |v| {
        v["request"]["oldObject"]["status"]["phase"] = serde_json::json!("Succeeded");
    });
    assert_eq!(
        intent.kind,
        IntentKind::SystemFinalization {
            actor: SystemActor::Kubelet {
                node: "worker-1".into()
            }
        }
    );
}

#[test]
fn human_finalizing_a_namespace_with_a_controller_token_needs_the_right_finalizer() {
    // The namespace controller owns only `kubernetes` in spec.finalizers.
    let intent = edited(fixture!("namespace-finalize-by-controller"), |v| {
        v["request"]["oldObject"]["spec"]["finalizers"] =
            serde_json::json!(["kubernetes", "example.com/federation"]);
    });
    assert_eq!(
        intent.kind,
        IntentKind::NamespaceFinalize {
            removed: strings(&["kubernetes", "example.com/federation"])
        }
    );
}

#[test]
fn finalizers_set_to_null_remove_all() {
    let intent = edited(fixture!("gc-removing-foreign-finalizer"), |v| {
        v["request"]["object"]["metadata"]["finalizers"] = serde_json::Value::Null;
        v["request"]["userInfo"]["username"] = serde_json::json!("bob");
    });
    assert_eq!(
        intent.kind,
        IntentKind::FinalizerRemoval {
            removed: strings(&["orphan", "example.com/log-shipper"]),
            deleting: true
        }
    );
}

#[test]
fn ownership_follows_the_identity_table() {
    let strip = |user: &str, finalizers: serde_json::Value| {
        let user = user.to_owned();
        edited(fixture!("orphan-removed-by-gc"), move |v| {
            v["request"]["oldObject"]["metadata"]["finalizers"] = finalizers;
            v["request"]["userInfo"]["username"] = user.into();
        })
        .kind
    };
    assert_eq!(
        strip(
            "system:cloud-controller-manager",
            serde_json::json!(["service.kubernetes.io/load-balancer-cleanup"])
        ),
        controller("service-controller")
    );
    assert_eq!(
        strip(
            "system:kube-controller-manager",
            serde_json::json!(["kubernetes.io/pv-controller"])
        ),
        controller("kube-controller-manager")
    );
    // The job controller does not own the GC's finalizers.
    assert_eq!(
        strip(
            "system:serviceaccount:kube-system:job-controller",
            serde_json::json!(["orphan"])
        ),
        IntentKind::FinalizerRemoval {
            removed: strings(&["orphan"]),
            deleting: true
        }
    );
    // Nor does kube-controller-manager own the service controller's.
    assert!(matches!(
        strip(
            "system:kube-controller-manager",
            serde_json::json!(["service.kubernetes.io/load-balancer-cleanup"])
        ),
        IntentKind::FinalizerRemoval { .. }
    ));
}

#[test]
fn every_fixture_decodes_and_classifies_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reviews");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("fixtures dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let body = std::fs::read(&path).expect("readable");
        let request = decode(&body).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let intent = classify(&request);
        assert!(!intent.target.name.is_empty(), "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 30, "expected the fixture set, found {seen}");
}

/// Metrics export one series per name in `NAMES`: every kind's name is one.
#[test]
fn names_lists_every_kind_once() {
    let kinds = [
        IntentKind::ForceDelete {
            already_terminating: false,
        },
        IntentKind::Eviction,
        IntentKind::FinalizerRemoval {
            removed: Vec::new(),
            deleting: false,
        },
        IntentKind::NamespaceFinalize {
            removed: Vec::new(),
        },
        IntentKind::SystemFinalization {
            actor: SystemActor::PodGc,
        },
        IntentKind::NotGated {
            reason: String::new(),
        },
    ];
    let names: Vec<&str> = kinds.iter().map(IntentKind::name).collect();
    assert_eq!(names, IntentKind::NAMES);
}

fn status_update(phase: &str, user: &str, groups: &[&str]) -> Intent {
    edited(fixture!("pod-status-finalizer-removal"), |v| {
        let request = &mut v["request"];
        request["object"]["status"]["phase"] = serde_json::json!(phase);
        // Keep the finalizers: only the phase changes.
        request["object"]["metadata"]["finalizers"] =
            request["oldObject"]["metadata"]["finalizers"].clone();
        request["userInfo"] = serde_json::json!({"username": user, "groups": groups});
    })
}

#[test]
fn marking_a_scheduled_pod_terminal_is_a_force_delete() {
    let intent = status_update("Failed", "alice@example.com", &["system:authenticated"]);
    // The fixture's pod is already being deleted.
    assert_eq!(
        intent.kind,
        IntentKind::ForceDelete {
            already_terminating: true
        }
    );
    assert_eq!(intent.target.subresource.as_deref(), Some("status"));
    assert_eq!(intent.target.resource, "pods");
    // Impersonating the kubelets' group without the node's username.
    let forged = status_update("Succeeded", "alice", &["system:nodes"]);
    assert!(matches!(forged.kind, IntentKind::ForceDelete { .. }));
    // Another node's kubelet.
    let other = status_update("Failed", "system:node:worker-9", &["system:nodes"]);
    assert!(matches!(other.kind, IntentKind::ForceDelete { .. }));
}

#[test]
fn the_pods_kubelet_and_pod_gc_may_mark_it_terminal() {
    let kubelet = status_update("Succeeded", "system:node:worker-2", &["system:nodes"]);
    assert_eq!(
        kubelet.kind,
        IntentKind::SystemFinalization {
            actor: SystemActor::Kubelet {
                node: "worker-2".into()
            }
        }
    );
    let gc = status_update("Failed", actors::POD_GC, &["system:serviceaccounts"]);
    assert_eq!(
        gc.kind,
        IntentKind::SystemFinalization {
            actor: SystemActor::PodGc
        }
    );
    let lifecycle = status_update("Failed", actors::NODE_LIFECYCLE, &[]);
    assert!(matches!(
        lifecycle.kind,
        IntentKind::SystemFinalization { .. }
    ));
    // The job controller is trusted with job-tracking, not with phases.
    let job = status_update(
        "Failed",
        "system:serviceaccount:kube-system:job-controller",
        &[],
    );
    assert!(matches!(job.kind, IntentKind::ForceDelete { .. }));
}

#[test]
fn status_updates_that_do_not_end_a_running_pod_are_not_force_deletes() {
    let running = status_update("Running", "alice", &[]);
    assert!(
        matches!(running.kind, IntentKind::NotGated { .. }),
        "{running:?}"
    );
    let unscheduled = edited(fixture!("pod-status-finalizer-removal"), |v| {
        let request = &mut v["request"];
        request["object"]["status"]["phase"] = serde_json::json!("Failed");
        request["object"]["metadata"]["finalizers"] =
            request["oldObject"]["metadata"]["finalizers"].clone();
        request["oldObject"]["spec"]
            .as_object_mut()
            .map(|spec| spec.remove("nodeName"));
    });
    match unscheduled.kind {
        IntentKind::NotGated { reason } => assert!(reason.contains("not scheduled"), "{reason}"),
        other => panic!("expected NotGated, got {other:?}"),
    }
    // Already terminal: the finalizer check decides (the fixture strips one).
    let terminal = edited(fixture!("pod-status-finalizer-removal"), |v| {
        v["request"]["oldObject"]["status"]["phase"] = serde_json::json!("Failed");
        v["request"]["object"]["status"]["phase"] = serde_json::json!("Failed");
    });
    assert!(matches!(terminal.kind, IntentKind::FinalizerRemoval { .. }));
}

#[test]
fn finalizers_stripped_through_any_status_subresource_are_removals() {
    let intent = edited(fixture!("finalizer-strip-pvc"), |v| {
        v["request"]["subResource"] = serde_json::json!("status");
        v["request"]["requestSubResource"] = serde_json::json!("status");
    });
    match &intent.kind {
        IntentKind::FinalizerRemoval { removed, .. } => {
            assert!(removed.contains(&"kubernetes.io/pvc-protection".to_owned()))
        }
        other => panic!("expected FinalizerRemoval, got {other:?}"),
    }
    assert_eq!(intent.target.subresource.as_deref(), Some("status"));
    assert_eq!(intent.target.kind, "PersistentVolumeClaim");
}

fn namespace_finalize_with(
    metadata_before: &[&str],
    metadata_after: &[&str],
    user: &str,
) -> Intent {
    edited(fixture!("namespace-finalize-noop"), |v| {
        let request = &mut v["request"];
        request["oldObject"]["metadata"]["finalizers"] = serde_json::json!(metadata_before);
        request["object"]["metadata"]["finalizers"] = serde_json::json!(metadata_after);
        request["userInfo"] = serde_json::json!({"username": user, "groups": []});
    })
}

#[test]
fn metadata_finalizers_removed_through_namespaces_finalize_are_gated() {
    let intent = namespace_finalize_with(&["example.com/dns", "orphan"], &["orphan"], "alice");
    assert_eq!(intent.target.subresource.as_deref(), Some("finalize"));
    assert!(matches!(
        &intent.kind,
        IntentKind::FinalizerRemoval { removed, .. } if removed == &strings(&["example.com/dns"])
    ));
    // The garbage collector removing its own finalizer there is its job.
    let gc = namespace_finalize_with(
        &["orphan"],
        &[],
        "system:serviceaccount:kube-system:generic-garbage-collector",
    );
    assert_eq!(gc.kind, controller("generic-garbage-collector"));
    // But not someone else's.
    let foreign = namespace_finalize_with(
        &["example.com/dns"],
        &[],
        "system:serviceaccount:kube-system:generic-garbage-collector",
    );
    assert!(matches!(foreign.kind, IntentKind::FinalizerRemoval { .. }));
}

#[test]
fn spec_and_metadata_finalizers_removed_together_list_both() {
    let intent = edited(fixture!("namespace-finalize"), |v| {
        let request = &mut v["request"];
        request["oldObject"]["metadata"]["finalizers"] = serde_json::json!(["example.com/dns"]);
        request["object"]["metadata"]["finalizers"] = serde_json::json!([]);
    });
    match &intent.kind {
        IntentKind::FinalizerRemoval { removed, .. } => {
            assert_eq!(removed[0], "example.com/dns");
            assert!(removed.contains(&"kubernetes".to_owned()), "{removed:?}");
        }
        other => panic!("expected FinalizerRemoval, got {other:?}"),
    }
}

#[test]
fn an_impersonated_kubelet_group_is_not_a_kubelet() {
    let intent = edited(fixture!("kubelet-final-delete"), |v| {
        v["request"]["userInfo"] =
            serde_json::json!({"username": "alice", "groups": ["system:nodes"]});
    });
    assert!(matches!(intent.kind, IntentKind::ForceDelete { .. }));
}
